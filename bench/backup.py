"""Benchmark: a backup of a large data folder while vouchers are issued (issue 35).

    python bench/backup.py [--n 300000]     (YUPANA_BENCH_QUICK=1: 300 vouchers and short windows)

A data folder is filled with N three-line facturas (the batch path, signed with a test certificate, the synthetic
data of bench/vouchers_scale.py). Then, in one process as in the app (a scheduled backup runs on a background
thread of the same engine that issues):
- «Emitir» one voucher at a time in a loop on a thread (generate, sign, store, send to the SUNAT sandbox on
  loopback), for a window alone, during a backup made as the app makes it («Hacer copia ahora»,
  `engine.admin.backup_now`, on the backups' loop thread: VACUUM INTO, the zip, its verification and rotation), and for another window alone: the baseline is the rate of both windows alone, the ratio is the rate
  during the backup over it;
- the same for `yupana lote`'s path (`issue_batch` fed without end until stopped) during a second backup: its rate
  during the backup over the rate alone is printed, with no goal.
Goals: the backup ≤ 60 s, its zip ≤ 1 GB, «Emitir» during the backup ≥ 0.8 of its rate alone.
Last line: {"benchmark": "backup", "vouchers", "backup_s", "backup_bytes", "emitir_per_s_alone",
"emitir_per_s_during", "emitir_ratio", "lote_per_s_alone", "lote_per_s_during", "lote_ratio", "*_goal_met"}.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

from _sizes import size  # noqa: E402 - bench/ is the script's folder
from vouchers_scale import ISSUER, PRODUCTS, UNITS, customers, factura  # noqa: E402 - the same synthetic data

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

clock = time.perf_counter


class Pace:
    """Completion times of work done on a thread until stopped; the rate inside any window of them."""

    def __init__(self, work: Callable[[Callable[[], bool], Callable[[], None]], None]) -> None:
        self.done: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=work, args=(self._stop.is_set, self._mark), daemon=True)

    def _mark(self) -> None:
        self.done.append(clock())

    def __enter__(self) -> Pace:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def rate(self, start: float, end: float) -> float:
        return sum(start <= when < end for when in self.done) / (end - start)


def measured(pace: Pace, window_s: float, backup: Callable[[], object]) -> tuple[float, float, float, object]:
    """(rate alone, rate during the backup, the backup's seconds, what it returned): a window alone, the backup,
    a window alone again, so the machine's drift falls on both sides."""
    time.sleep(window_s)  # the thread warms up: caches, connection, the sandbox's first answer
    first = clock()
    time.sleep(window_s)
    started = clock()
    result = backup()
    ended = clock()
    time.sleep(window_s)
    last = clock()
    alone = (pace.rate(first, started) * (started - first) + pace.rate(ended, last) * (last - ended)) / (
        (started - first) + (last - ended))
    return alone, pace.rate(started, ended), ended - started, result


def scheduled(engine):
    """One backup as the app makes it: «Hacer copia ahora» on the backups' loop; its result once done."""
    before = engine.admin.backup_status().last_run
    engine.admin.backup_now()
    while (run := engine.admin.backup_status().last_run) is before:
        time.sleep(0.01)
    assert run.ok, run.message
    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=size(300_000, 300))
    args = parser.parse_args()
    window_s = size(10.0, 0.5)
    rng = random.Random(35)
    pool = customers(rng, 5000)
    products = [(f"{name} {unit}", Decimal(f"{rng.randint(1, 400)}.{rng.randint(0, 99):02d}"))
                for name in PRODUCTS for unit in UNITS]
    os.environ.setdefault("YUPANA_PASSPHRASE", "bench")
    os.environ["YUPANA_KEYRING"] = "0"
    from app.core.api import Company, Engine
    from app.sandbox.sunat import SunatSandbox

    with tempfile.TemporaryDirectory() as root, SunatSandbox() as sandbox:
        home, usb = Path(root) / "datos", Path(root) / "usb"
        home.mkdir()
        usb.mkdir()
        engine = Engine(home)
        try:
            sandbox.configure(engine)
            engine.admin.config_set("backup_every_vouchers", "0")  # only the backups measured here
            engine.admin.config_set("backup_hour", "23")
            engine.admin.config_set("backup_folder", str(usb))
            engine.admin.set_company(Company(ruc=ISSUER, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                             direccion="AV. ABANCAY 123"))
            certificado_id = engine.invoicing.create_test_certificate(ISSUER).certificado_id
            started = clock()
            requests = (factura(rng, numero, pool, products) for numero in range(1, args.n + 1))
            assert all(item.success for item in engine.invoicing.issue_batch(requests, certificado_id))
            print(f"{args.n} facturas issued in {clock() - started:.1f} s", file=sys.stderr)

            def emitir(stopped: Callable[[], bool], mark: Callable[[], None]) -> None:
                numero = 0
                while not stopped():
                    numero += 1
                    request = {**factura(rng, numero, pool, products), "serie": "F002"}
                    emission = engine.invoicing.issue(request)
                    assert emission.sent is not None and emission.sent.estado == "aceptado", emission
                    mark()

            def lote(stopped: Callable[[], bool], mark: Callable[[], None]) -> None:
                def endless() -> Iterator[dict]:
                    numero = 0
                    while not stopped():
                        numero += 1
                        yield {**factura(rng, numero, pool, products), "serie": "F003"}

                for item in engine.invoicing.issue_batch(endless(), certificado_id):
                    assert item.success, item
                    mark()

            with Pace(emitir) as pace:
                emitir_alone, emitir_during, backup_s, run = measured(pace, window_s, lambda: scheduled(engine))
            backup_bytes = Path(run.path).stat().st_size  # type: ignore[attr-defined]
            print(f"backup: {backup_s:.1f} s, {backup_bytes / 1e6:.1f} MB; emitir {emitir_alone:.1f}/s alone, "
                  f"{emitir_during:.1f}/s during the backup", file=sys.stderr)
            with Pace(lote) as pace:
                lote_alone, lote_during, lote_backup_s, _ = measured(pace, window_s, lambda: scheduled(engine))
            print(f"lote {lote_alone:.1f}/s alone, {lote_during:.1f}/s during a backup of {lote_backup_s:.1f} s",
                  file=sys.stderr)
        finally:
            engine.close()
    emitir_ratio = emitir_during / emitir_alone if emitir_alone else 0.0
    print(json.dumps({
        "benchmark": "backup", "vouchers": args.n,
        "backup_s": round(backup_s, 2), "backup_s_goal_met": backup_s <= 60,
        "backup_bytes": backup_bytes, "backup_bytes_goal_met": backup_bytes <= 1_000_000_000,
        "emitir_per_s_alone": round(emitir_alone, 2), "emitir_per_s_during": round(emitir_during, 2),
        "emitir_ratio": round(emitir_ratio, 3), "emitir_ratio_goal_met": emitir_ratio >= 0.8,
        "lote_per_s_alone": round(lote_alone, 2), "lote_per_s_during": round(lote_during, 2),
        "lote_ratio": round(lote_during / lote_alone, 3) if lote_alone else 0.0,
    }))


if __name__ == "__main__":
    main()
