"""Benchmark: «Emitir» one voucher at a time up to the send, next to the single-core RSA-2048 signing rate and the
bare 4 KiB fsync of the same run (issue 33).

    python bench/_emitir.py [COUNT]     (bench/sign.py runs it and prints its figures in its own JSON line)

COUNT ten-line facturas go through `engine.invoicing.issue` (generate, sign, store, send) against the SUNAT sandbox
running in this process on 127.0.0.1 (port 0); the sandbox notes when each sendBill arrives, so «up to the send» is
everything the app does before SUNAT has the voucher: building, signing, the durable commit(s), the zip and the
HTTP request. Beside it, in the same rounds (alternating, so the machine's drift falls on all of them alike):
- the RSA baseline: raw RSA-2048 PKCS#1 v1.5 signatures on a thread pinned to one core;
- operations 1 and 2 called separately (`generate_xml`, then `sign`), one voucher at a time;
- a bare fsync: 4 KiB written and fsynced to a file in the same folder as the database.
Goals: `emitir_ratio` (the «Emitir» rate up to the send / the RSA rate) >= 0.4; «Emitir» p99 <= 3 ms + the fsync
p99. The send waits for one durable commit, so on a disk whose fsync takes milliseconds the ratio is bounded by
the disk: `emitir_beyond_fsync_ms` (the mean less one bare fsync) estimates the rest. When the storage can be watched (Storage.watch), the transactions and syncs of one «Emitir» are counted too.
Prints a few lines, then one JSON object of figures as the last line.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import threading
import time
from decimal import Decimal
from pathlib import Path

from _sizes import size  # noqa: E402 - bench/ is the script's folder

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RUC = "20100066603"
ROUNDS = 4
RSA_PER_ROUND = 150
clock = time.perf_counter


def ten_line_factura(numero: int, serie: str = "F001") -> dict:
    return {"tipo": "01", "serie": serie, "numero": numero, "emisor": {"ruc": RUC},
            "receptor": {"ruc": "20601030013", "razon_social": "DISTRIBUIDORA ANDINA S.A.C."},
            "items": [{"descripcion": f"Producto {n}", "cantidad": Decimal(n), "precio_unitario":
                       Decimal(f"{n * 3}.75"), "codigo": f"P{n:03d}"} for n in range(1, 11)]}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


# ---------------------------------------------------------------- baselines

def rsa_seconds(key, count: int) -> float:
    """`count` raw RSA signatures over a SignedInfo-sized message on a thread pinned to one core (only that
    thread: the rest of the process runs unpinned)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    message = b"<ds:SignedInfo>" + b"x" * 900 + b"</ds:SignedInfo>"
    took: list[float] = []

    def run() -> None:
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # 0: this thread
        started = clock()
        for n in range(count):
            key.sign(message + n.to_bytes(4, "big"), padding.PKCS1v15(), hashes.SHA1())
        took.append(clock() - started)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return took[0]


def fsync_seconds(folder: Path, count: int) -> list[float]:
    """Each of `count` bare 4 KiB writes and fsyncs of one file (rewritten in place) in `folder`."""
    path = folder / "fsync-probe"
    block = os.urandom(4096)
    times = []
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        for _ in range(count):
            started = clock()
            os.pwrite(fd, block, 0)
            os.fsync(fd)
            times.append(clock() - started)
    finally:
        os.close(fd)
        path.unlink()
    return times


# ---------------------------------------------------------------- the sandbox and its clock

def watched_sandbox():
    """The SUNAT sandbox, noting when each sendBill arrives (this process's clock)."""
    from app.sandbox.sunat import SunatSandbox

    class Watched(SunatSandbox):
        arrivals: list[float] = []

        def handle_soap(self, request, body: bytes) -> None:
            if b"sendBill" in body[:2000]:
                self.arrivals.append(clock())
            super().handle_soap(request, body)

    return Watched(hold_limit_s=20)


class Counter:
    """Transactions and syncs of the engine's database, from its statement watch (when it has one)."""

    def __init__(self) -> None:
        self.commits = self.syncs = 0
        self._full: set[int] = set()
        self._lock = threading.Lock()

    def statement(self, conn: int, sql: str) -> None:
        words = sql.lstrip()[:24].upper()
        with self._lock:
            if words.startswith("PRAGMA SYNCHRONOUS"):
                (self._full.add if "FULL" in sql.upper() else self._full.discard)(conn)
            elif words.startswith("COMMIT"):
                self.commits += 1
                self.syncs += conn in self._full
            elif words.startswith("-- FSYNC"):
                self.syncs += 1


# ---------------------------------------------------------------- the rounds

def emit_round(engine, sandbox, requests: list[dict]) -> tuple[list[float], list[float]]:
    """(up to the send, whole «Emitir») of each request, one at a time."""
    to_send, whole = [], []
    for request in requests:
        arrived = len(sandbox.arrivals)
        started = clock()
        emission = engine.invoicing.issue(request)
        done = clock()
        assert emission.sent is not None and emission.sent.estado == "aceptado", emission
        assert len(sandbox.arrivals) == arrived + 1
        to_send.append(sandbox.arrivals[-1] - started)
        whole.append(done - started)
    return to_send, whole


def operations_round(engine, certificado_id: str, requests: list[dict]) -> tuple[list[float], list[float]]:
    """(operation 1, operation 2) of each request, called separately, one voucher at a time."""
    op1, op2 = [], []
    for request in requests:
        started = clock()
        xml = engine.invoicing.generate_xml(request).xml
        generated = clock()
        engine.invoicing.sign({"xml": xml, "certificado_id": certificado_id})
        op1.append(generated - started)
        op2.append(clock() - generated)
    return op1, op2


def counted_emission(engine, sandbox, request: dict) -> dict | None:
    storage = engine._storage
    if not hasattr(storage, "watch"):
        return None
    counter = Counter()
    storage.watch(counter.statement)
    try:
        engine.invoicing.issue(request)
    finally:
        storage.watch(None)
    return {"transactions": counter.commits, "syncs": counter.syncs}


def measure(count: int) -> dict:
    """The figures (printed as they come, with a few lines); bench/sign.py adds them to its JSON line."""
    per_round = max(1, count // ROUNDS)
    rsa_count = size(RSA_PER_ROUND, 10)
    with tempfile.TemporaryDirectory() as home:
        os.environ.setdefault("YUPANA_PASSPHRASE", "bench")
        os.environ["YUPANA_KEYRING"] = "0"
        import app
        from app.core.api import Company, Engine

        engine = Engine(home)
        sandbox = watched_sandbox()
        sandbox.start()
        try:
            sandbox.configure(engine)
            engine.admin.set_company(Company(ruc=RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                             direccion="AV. ABANCAY 123"))
            certificado_id = engine.invoicing.create_test_certificate(RUC).certificado_id
            key, _certificate = engine._certificates.signing_material(certificado_id)
            emit_round(engine, sandbox, [ten_line_factura(90_000_001, "F009")])  # warm: key, caches, connection
            operations_round(engine, certificado_id, [ten_line_factura(90_000_002, "F009")])
            counted = counted_emission(engine, sandbox, ten_line_factura(90_000_003, "F009"))
            folder = Path(home)
            rsa, fsyncs, to_send, whole, op1, op2 = [], [], [], [], [], []
            for r in range(ROUNDS):
                first = 1 + r * per_round
                rsa.append(rsa_count / rsa_seconds(key, rsa_count))
                sent, done = emit_round(engine, sandbox, [ten_line_factura(n, "F001")
                                                          for n in range(first, first + per_round)])
                to_send += sent
                whole += done
                one, two = operations_round(engine, certificado_id, [ten_line_factura(n, "F002")
                                                                     for n in range(first, first + per_round)])
                op1 += one
                op2 += two
                fsyncs += fsync_seconds(folder, per_round)
            rsa.append(rsa_count / rsa_seconds(key, rsa_count))
        finally:
            sandbox.stop()
            engine.close()
    rsa_rate = statistics.fmean(rsa)
    emit_rate = 1 / statistics.fmean(to_send)
    figures = {
        "benchmark": "emitir", "vouchers": len(to_send), "lines_each": 10, "app": str(Path(app.__file__).parent),
        "rsa_sign_per_s": round(rsa_rate, 1), "rsa_min_per_s": round(min(rsa), 1), "rsa_max_per_s": round(max(rsa), 1),
        "emitir_per_s": round(emit_rate, 1), "emitir_ratio": round(emit_rate / rsa_rate, 3),
        "emitir_ms_mean": ms(statistics.fmean(to_send)), "emitir_ms_p50": ms(statistics.median(to_send)),
        "emitir_ms_p99": ms(percentile(to_send, 0.99)),
        "emitir_with_cdr_ms_mean": ms(statistics.fmean(whole)),
        "op1_ms_mean": ms(statistics.fmean(op1)), "op1_ms_p99": ms(percentile(op1, 0.99)),
        "op2_ms_mean": ms(statistics.fmean(op2)), "op2_ms_p99": ms(percentile(op2, 0.99)),
        "fsync_ms_mean": ms(statistics.fmean(fsyncs)), "fsync_ms_p50": ms(statistics.median(fsyncs)),
        "fsync_ms_p99": ms(percentile(fsyncs, 0.99)),
    }
    figures["emitir_p99_goal_ms"] = round(3 + figures["fsync_ms_p99"], 3)
    # An estimate of the part that is not the disk: one bare fsync taken off the mean (the durable commit writes
    # more than 4 KiB, so this still holds some of the disk's time)
    beyond = statistics.fmean(to_send) - statistics.fmean(fsyncs)
    figures["emitir_beyond_fsync_ms"] = ms(beyond)
    figures["emitir_ratio_beyond_fsync"] = round(1 / beyond / rsa_rate, 3) if beyond > 0 else None
    if counted is not None:
        figures["emitir_transactions"] = counted["transactions"]
        figures["emitir_syncs"] = counted["syncs"]
    print(f"«Emitir» up to the send, one at a time ({len(to_send)} ten-line facturas): {emit_rate:.0f}/s, mean "
          f"{figures['emitir_ms_mean']} ms, p99 {figures['emitir_ms_p99']} ms (goal <= 3 ms + fsync p99 = "
          f"{figures['emitir_p99_goal_ms']} ms); with the CDR {figures['emitir_with_cdr_ms_mean']} ms")
    print(f"RSA-2048 on one core: {rsa_rate:.0f}/s (rounds {min(rsa):.0f}-{max(rsa):.0f}); emitir_ratio "
          f"{figures['emitir_ratio']} (goal >= 0.4); beyond one bare fsync {figures['emitir_beyond_fsync_ms']} ms, "
          f"ratio {figures['emitir_ratio_beyond_fsync']}")
    print(f"operation 1 {figures['op1_ms_mean']} ms (p99 {figures['op1_ms_p99']}), operation 2 "
          f"{figures['op2_ms_mean']} ms (p99 {figures['op2_ms_p99']}); bare 4 KiB fsync {figures['fsync_ms_mean']} ms "
          f"(p99 {figures['fsync_ms_p99']})")
    if counted is not None:
        print(f"one «Emitir» with its send: {counted['transactions']} transactions, {counted['syncs']} syncs")
    return figures


def main() -> None:
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else size(400, 8))))


if __name__ == "__main__":
    main()
