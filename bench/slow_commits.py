"""Benchmark: a batch on a disk whose commits are slow (a laptop's disk, an antivirus that scans the database).

    python bench/slow_commits.py [COUNT] [DELAY_MS]

The same batch of COUNT ten-line facturas (`engine.invoicing.issue_batch`, the engine's signing workers) is made
ROUNDS times each way, alternating, in one engine: with the commits as the disk gives them, and with each COMMIT
held DELAY_MS longer (30 by default) through the storage's statement watch, the only fault injected. Both are
printed as wall time and processor time per voucher (this process and the workers), and `efficiency`: the
processor time spread over the cores, against the wall time (1.0: every core busy all along). The workers hold
the next block while the engine commits (docs/signing.md «Velocidad»): the slower the commit, the more that
matters. `slow_vs_normal` is the slow wall time against the normal one of the same run (lower is better; the
delay alone adds DELAY_MS per block of `batches.BLOCK`).
Prints a few lines, then one JSON object of figures as the last line.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _sizes import size  # noqa: E402 - bench/ is the script's folder
from sign import issuing_engine, processor_seconds, ten_line_factura  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROUNDS = 3


def timed_batch(engine, certificado_id: str, first: int, count: int) -> tuple[float, float]:
    """(wall seconds, processor seconds) of one batch of `count` facturas numbered from `first`."""
    requests = [ten_line_factura(n) for n in range(first, first + count)]
    cpu = processor_seconds(engine)
    started = time.perf_counter()
    issued = sum(result.success for result in engine.invoicing.issue_batch(requests, certificado_id))
    wall = time.perf_counter() - started
    assert issued == count, f"{count - issued} vouchers were refused"
    return wall, processor_seconds(engine) - cpu


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else size(2000, 80)
    delay_s = (float(sys.argv[2]) if len(sys.argv) > 2 else 30.0) / 1000
    rounds = size(ROUNDS, 1)
    with tempfile.TemporaryDirectory() as home:
        from app.core.invoicing import batches

        engine, certificado_id = issuing_engine(home)
        try:
            timed_batch(engine, certificado_id, 90_000_000, max(batches.POOL_FROM, count // 4))  # workers started
            workers = len(engine._batches.pool.workers)
            cores = min(workers, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                        else (os.cpu_count() or 1))
            held = {"commits": 0}

            def slow_commit(_conn: int, sql: str) -> None:
                if sql.lstrip()[:6].upper() == "COMMIT":
                    held["commits"] += 1
                    time.sleep(delay_s)  # the disk's slowness: injected, on the writer's own thread

            runs: dict[str, list[tuple[float, float]]] = {"normal": [], "slow": []}
            first = 1
            for _ in range(rounds):
                for way in ("normal", "slow"):
                    engine._storage.watch(slow_commit if way == "slow" else None)
                    try:
                        runs[way].append(timed_batch(engine, certificado_id, first, count))
                    finally:
                        engine._storage.watch(None)
                    first += count
        finally:
            engine.close()
    figures: dict[str, float] = {}
    for way, measured in runs.items():
        wall = statistics.median(w for w, _ in measured) / count
        cpu = statistics.median(c for _, c in measured) / count
        figures[f"{way}_us_per_voucher"] = round(wall * 1e6, 1)
        figures[f"{way}_cpu_us_per_voucher"] = round(cpu * 1e6, 1)
        figures[f"{way}_efficiency"] = round(cpu / cores / wall, 3)
        print(f"{way} commits: {wall * 1e6:.0f} µs per voucher, processor {cpu * 1e6:.0f} µs, efficiency "
              f"{cpu / cores / wall:.2f} on {cores} cores (median of {len(measured)})")
    ratio = figures["slow_us_per_voucher"] / figures["normal_us_per_voucher"]
    print(f"each COMMIT held {delay_s * 1000:.0f} ms longer ({held['commits']} of them): wall time x{ratio:.2f}")
    print(json.dumps({"benchmark": "slow_commits", "vouchers": count, "lines_each": 10, "workers": workers,
                      "block": batches.BLOCK, "delay_ms": round(delay_s * 1000, 1), "rounds": rounds, **figures,
                      "slow_vs_normal": round(ratio, 3)}))


if __name__ == "__main__":
    main()
