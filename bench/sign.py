"""Benchmark: generate and sign ten-line facturas, next to the raw RSA-2048 signing rate of the same key on one
core, measured in the same run.

    python bench/sign.py [COUNT]

Two ways, COUNT vouchers each (docs/signing.md «Velocidad»):
- batch (`engine.invoicing.issue_batch`, the figures `vouchers_per_s` and `ratio`): what a point of sale or an
  accountant sends as a file, in one call; made by the engine's signing workers (one process per core, started by
  a warm-up batch before the clock runs) and stored already signed, one durable transaction per block. It runs
  unpinned: it is meant to use every core;
- per call (`engine.invoicing.generate_xml` then `.sign` for each voucher, the `per_call_*` figures): two
  operations, each durable before it answers, as an API client calls them one by one.
Then «Emitir» one voucher at a time up to the send (bench/_emitir.py, its own engine and SUNAT sandbox; the
`emitir_*`, `op1_*`, `op2_*` and `fsync_*` figures): goals emitir_ratio >= 0.4, «Emitir» p99 <= 3 ms + fsync p99.
Target (issue 33): ratio = vouchers_per_s / rsa_sign_per_s >= 0.8 on a 2-core machine (the limit is the number of
cores: one RSA stream per core). The RSA baseline (RSA_BASELINE raw signatures) runs in a thread of its own pinned to
one core (only that thread: the workers, spawned from the main thread, are never pinned), before the batch and
again after it, once the checkpoint is done, and the mean of the two rates is the baseline; both samples are
printed: their spread shows how much the shared machine's load drifted during the run. Commits are durable where
operation 1 hands out a number (synchronous=FULL: one sync per batch block, one per voucher per call).
Prints a few lines, then one JSON object of figures as the last line.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from decimal import Decimal
from pathlib import Path

import _emitir  # noqa: E402 - bench/ is the script's folder
from _sizes import size  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RUC = "20100066603"
RSA_BASELINE = 300


def ten_line_factura(numero: int) -> dict:
    return {"tipo": "01", "serie": "F001", "numero": numero, "emisor": {"ruc": RUC},
            "receptor": {"ruc": "20601030013", "razon_social": "DISTRIBUIDORA ANDINA S.A.C."},
            "items": [{"descripcion": f"Producto {n}", "cantidad": Decimal(n), "precio_unitario":
                       Decimal(f"{n * 3}.75"), "codigo": f"P{n:03d}"} for n in range(1, 11)]}


def pin_this_thread() -> str:
    """Pin the calling thread (Linux: affinity is per thread) to one core; what was done, in words."""
    if hasattr(os, "sched_setaffinity"):
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
        return f"core {core}"
    return "not pinned (no sched_setaffinity here)"


def raw_rsa_seconds(key, count: int) -> float:
    """Time of `count` RSA-2048 PKCS#1 v1.5 SHA-1 signatures over a SignedInfo-sized message, nothing else."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    message = b"<ds:SignedInfo>" + b"x" * 900 + b"</ds:SignedInfo>"
    started = time.perf_counter()
    for n in range(count):
        key.sign(message + n.to_bytes(4, "big"), padding.PKCS1v15(), hashes.SHA1())
    return time.perf_counter() - started


def rsa_rate(engine, key) -> tuple[float, str]:
    """Raw RSA signatures per second on one core with nothing else running (the storage's checkpoint done first),
    in a thread pinned to that core; and where it ran."""
    engine._storage.checkpoint("PASSIVE")
    found: dict[str, object] = {}

    def measure() -> None:
        found["pinned"] = pin_this_thread()
        cpu = time.thread_time()
        found["rate"] = RSA_BASELINE / raw_rsa_seconds(key, RSA_BASELINE)
        found["cpu"] = (time.thread_time() - cpu) / RSA_BASELINE

    thread = threading.Thread(target=measure, name="rsa-baseline")
    thread.start()
    thread.join()
    RSA_CPU.append(float(found["cpu"]))  # type: ignore[arg-type]
    return float(found["rate"]), str(found["pinned"])  # type: ignore[arg-type]


RSA_CPU: list[float] = []  # processor seconds per raw signature, each baseline's


def processor_seconds(engine) -> float:
    """Processor time so far of this process (all its threads) and of the engine's signing workers."""
    return time.process_time() + sum(worker["cpu_s"] for worker in engine._batches.pool.about())


def issuing_engine(home: str):
    """An engine on `home` with the issuer's company and a test certificate: (engine, certificado_id). The caller
    closes the engine."""
    os.environ.setdefault("YUPANA_PASSPHRASE", "bench")
    os.environ["YUPANA_KEYRING"] = "0"
    from app.core.api import Company, Engine

    engine = Engine(home)
    try:
        engine.admin.set_company(Company(ruc=RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                         direccion="AV. ABANCAY 123"))
        return engine, engine.invoicing.create_test_certificate(RUC).certificado_id
    except BaseException:
        engine.close()
        raise


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else size(2000, 80)
    with tempfile.TemporaryDirectory() as home:
        from app.core.invoicing import batches

        engine, certificado_id = issuing_engine(home)
        try:
            warm = engine.invoicing.generate_xml(ten_line_factura(99_999_999))
            engine.invoicing.sign({"xml": warm.xml, "certificado_id": certificado_id})  # loads the key once
            # A warm-up batch large enough for the workers: they start (and learn the key) before the clock runs.
            warm_up = [ten_line_factura(n) for n in range(90_000_000, 90_000_000 + batches.POOL_FROM)]
            assert all(result.success for result in engine.invoicing.issue_batch(warm_up, certificado_id))
            workers = len(engine._batches.pool.workers)
            key, _certificate = engine._certificates.signing_material(certificado_id)
            clock = time.perf_counter
            generating = signing = 0.0
            batch_requests = [ten_line_factura(n) for n in range(1, count + 1)]
            call_requests = [ten_line_factura(n) for n in range(count + 1, 2 * count + 1)]
            rsa_before, pinned = rsa_rate(engine, key)
            cpu_started = processor_seconds(engine)
            started = clock()
            results = engine.invoicing.issue_batch(batch_requests, certificado_id)
            issued = sum(result.success for result in results)
            batch = clock() - started
            batch_cpu = processor_seconds(engine) - cpu_started
            assert issued == count, f"{count - issued} vouchers were refused"
            rsa_between, _ = rsa_rate(engine, key)  # after the batch, before the calls
            for request in call_requests:
                started = clock()
                xml = engine.invoicing.generate_xml(request).xml
                generated = clock()
                engine.invoicing.sign({"xml": xml, "certificado_id": certificado_id})
                generating += generated - started
                signing += clock() - generated
            rsa_after, _ = rsa_rate(engine, key)
        finally:
            engine.close()
    batch_rsa = (rsa_before + rsa_between) / 2
    call_rsa = (rsa_between + rsa_after) / 2
    vouchers_per_s = count / batch
    ratio = vouchers_per_s / batch_rsa
    call_rate = count / (generating + signing)
    call_ratio = call_rate / call_rsa
    # Load-independent: the processor time a voucher costs (this process and the workers) against one raw RSA
    # signature's. On a shared machine the scheduler may give the whole run less than its cores (Linux's autogroups
    # share a session's processes), and `ratio` then shows it; `ratio_on_free_cores` is what `cores` free cores would
    # give at this cost.
    cores = min(workers, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
    cpu_per_voucher = batch_cpu / count
    rsa_cpu = sum(RSA_CPU[:2]) / 2
    free_ratio = cores * rsa_cpu / cpu_per_voucher
    print(f"{count} ten-line facturas each way; raw RSA-2048 sign on one core ({pinned}) before the batch "
          f"{rsa_before:.0f}/s, after it {rsa_between:.0f}/s, after the calls {rsa_after:.0f}/s")
    print(f"batch (issue_batch, {workers} signing workers, blocks of {batches.BLOCK}): {vouchers_per_s:.0f}/s; RSA "
          f"baseline (mean) {batch_rsa:.0f}/s; ratio {ratio:.2f} (target 0.80)")
    print(f"processor time per voucher {cpu_per_voucher * 1e6:.0f} µs (this process and the workers), per raw RSA "
          f"signature {rsa_cpu * 1e6:.0f} µs: on {cores} free cores the ratio would be {free_ratio:.2f}")
    print(f"per call (generate_xml + sign): generated {count / generating:.0f}/s, signed {count / signing:.0f}/s, "
          f"both {call_rate:.0f}/s; RSA baseline (mean) {call_rsa:.0f}/s; ratio {call_ratio:.2f}")
    emitir = _emitir.measure(size(400, 8))
    emitir = {f"emitir_{key}" if key.startswith("rsa_") else key: value for key, value in emitir.items()
              if key not in ("benchmark", "vouchers", "lines_each", "app")}  # its RSA baseline named apart
    print(json.dumps({**emitir, "benchmark": "sign", "vouchers": count, "lines_each": 10, "workers": workers,
                      "seconds": round(batch, 3), "ms_per_voucher": round(batch / count * 1000, 4),
                      "vouchers_per_s": round(vouchers_per_s, 1), "rsa_sign_per_s": round(batch_rsa, 1),
                      "rsa_before_per_s": round(rsa_before, 1), "rsa_after_per_s": round(rsa_between, 1),
                      "ratio": round(ratio, 3), "cpu_us_per_voucher": round(cpu_per_voucher * 1e6, 1),
                      "rsa_cpu_us": round(rsa_cpu * 1e6, 1), "ratio_on_free_cores": round(free_ratio, 3),
                      "per_call_vouchers_per_s": round(call_rate, 1),
                      "per_call_ratio": round(call_ratio, 3), "per_call_rsa_sign_per_s": round(call_rsa, 1),
                      "per_call_generate_per_s": round(count / generating, 1),
                      "per_call_sign_per_s": round(count / signing, 1), "durable_numbers": True}))


if __name__ == "__main__":
    main()
