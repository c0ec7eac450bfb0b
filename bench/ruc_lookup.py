"""Benchmark: RUC lookups through the engine (`engine.lookups.ruc`) on a big offline register.

    python bench/ruc_lookup.py [--rows 5000000] [--lookups 20000]

../shared/tools/make_padron.py is pure Python and keeps the whole file in memory, too slow for millions of rows, so
this benchmark writes its own file in the same layout (header, fifteen '|' fields and a trailing '|',
ISO-8859-1, RUC order, valid check digits) straight to disk, imports it (not timed), then times
lookups of random known RUCs (and a share of valid RUCs that are not in the register).
Last line: {"rows", "lookups", "p50_ms", "p99_ms", "max_ms", "p99_cpu_ms", "miss_p99_ms", …}; p99_cpu_ms
(the lookup's own CPU time) tells the cost apart from preemption on a loaded machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _sizes import size  # noqa: E402 - bench/ is the script's folder

from app.core.platform.identifiers import ruc_check_digit  # noqa: E402

HEADER = ("RUC|NOMBRE O RAZÓN SOCIAL|ESTADO DEL CONTRIBUYENTE|CONDICIÓN DE DOMICILIO|UBIGEO|TIPO DE VÍA|"
          "NOMBRE DE VÍA|CÓDIGO DE ZONA|TIPO DE ZONA|NÚMERO|INTERIOR|LOTE|DEPARTAMENTO|MANZANA|KILÓMETRO|")
NAMES = ["COMERCIAL PEÑA S.A.C.", "INVERSIONES NÚÑEZ E.I.R.L.", "QUISPE MAMANI ROSA", "TRANSPORTES CASTAÑEDA S.A."]
TAILS = ["ACTIVO|HABIDO|150101|AV.|GRAU|-|URB.|123|-|-|-|-|-|", "ACTIVO|HABIDO|080101|JR.|SAN MARTÍN|-|-|45|B|-|-|-|-|",
         "BAJA DE OFICIO|NO HABIDO|130101|-|-|-|-|-|-|7|-|C|-|"]


def write_register(path: Path, rows: int) -> list[str]:
    """Write `rows` taxpayers in RUC order; returns every 97th RUC written (the known ones)."""
    known = []
    half = rows // 2
    step = max(1, 10 ** 8 // (rows - half + 1))
    with open(path, "w", encoding="latin-1", newline="\n") as out:
        out.write(HEADER + "\n")
        batch = []
        for i in range(rows):
            prefix, j = ("10", i) if i < half else ("20", i - half)  # each half in increasing order
            first10 = f"{prefix}{j * step:08d}"
            ruc = first10 + ruc_check_digit(first10)
            batch.append(f"{ruc}|{NAMES[i % 4]}|{TAILS[i % 3]}\n")
            if i % 97 == 0:
                known.append(ruc)
            if len(batch) == 10000:
                out.write("".join(batch))
                batch.clear()
        out.write("".join(batch))
    return known


def missing_rucs(count: int, rng: random.Random) -> list[str]:
    """Valid RUCs with prefix 17, which the written register never has."""
    out = []
    for _ in range(count):
        first10 = f"17{rng.randrange(10 ** 8):08d}"
        out.append(first10 + ruc_check_digit(first10))
    return out


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=size(5_000_000, 20_000))
    parser.add_argument("--lookups", type=int, default=size(20_000, 500))
    args = parser.parse_args()
    os.environ.setdefault("YUPANA_PASSPHRASE", "benchmark")
    os.environ["YUPANA_KEYRING"] = "0"
    from app.core.api import Engine

    rng = random.Random(5)
    with tempfile.TemporaryDirectory(prefix="yupana-bench-") as tmp:
        source = Path(tmp) / "padron_reducido_ruc.txt"
        print(f"writing {args.rows:,} rows…", file=sys.stderr)
        known = write_register(source, args.rows)
        with Engine(Path(tmp) / "home") as engine:
            summary = engine.lookups.import_padron(source)
            source.unlink()
            print(f"imported: {summary}", file=sys.stderr)
            for ruc in known[:200]:  # warm the connections and the ubigeo table
                engine.lookups.ruc(ruc)
            hits, cpu = [], []
            for ruc in rng.choices(known, k=args.lookups):
                started, started_cpu = time.perf_counter_ns(), time.thread_time_ns()
                record = engine.lookups.ruc(ruc)
                hits.append((time.perf_counter_ns() - started) / 1e6)
                cpu.append((time.thread_time_ns() - started_cpu) / 1e6)
                assert record.ruc == ruc
            misses = []
            for ruc in missing_rucs(args.lookups // 10, rng):
                started = time.perf_counter_ns()
                status, _ = engine.call("ruc", numero=ruc)
                misses.append((time.perf_counter_ns() - started) / 1e6)
                assert status == 404
    print(json.dumps({"benchmark": "ruc_lookup", "rows": summary.rows_loaded, "lookups": len(hits),
                      "p50_ms": round(statistics.median(hits), 4), "p99_ms": round(percentile(hits, 0.99), 4),
                      "max_ms": round(max(hits), 3), "p99_cpu_ms": round(percentile(cpu, 0.99), 4), "miss_p99_ms": round(percentile(misses, 0.99), 4),
                      "import_rows_per_s": round((summary.rows_loaded + summary.rows_skipped)
                                                 / summary.seconds),
                      "load_avg_1m": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
