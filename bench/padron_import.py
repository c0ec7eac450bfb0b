"""Benchmark: import of SUNAT's padrón reducido through the engine (`Engine.import_padron`).

    python bench/padron_import.py [--rows 1000000] [--bad 1000] [--file EXISTING.zip]

The file is written by ../shared/tools/make_padron.py in a temporary folder (not timed). The import
runs in a fresh process of its own so its peak memory (with the parsing process it starts) is
measured alone. Last line: {"rows", "rows_loaded", "rows_skipped", "seconds", "rows_per_s", "peak_rss_mb"}.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAKE_PADRON = ROOT.parent / "shared" / "tools" / "make_padron.py"


def peak_rss_mb() -> float:
    """Peak resident memory of this process and of its finished children, in MB (Linux/macOS)."""
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is bytes on macOS, KiB on Linux
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale
    return round(max(own, children) / 1e6, 1)


def run_import(path: str, home: str) -> dict:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("YUPANA_PASSPHRASE", "benchmark")
    os.environ["YUPANA_KEYRING"] = "0"
    from app.core.engine import Engine

    with Engine(home) as engine:
        before = cpu_seconds(resource.RUSAGE_SELF)
        started = time.perf_counter()
        summary = engine.import_padron(path)
        seconds = time.perf_counter() - started
        main_cpu = cpu_seconds(resource.RUSAGE_SELF) - before
    # CPU time tells the cost apart from the load of a shared machine: on idle cores the wall time
    # is close to the larger of the two processes' CPU times.
    return {**summary, "seconds": round(seconds, 3), "peak_rss_mb": peak_rss_mb(),
            "cpu_s_main": round(main_cpu, 2), "cpu_s_parser": round(cpu_seconds(resource.RUSAGE_CHILDREN), 2)}


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--bad", type=int, default=1000)
    parser.add_argument("--file", help="an existing padrón file (skips generation)")
    parser.add_argument("--run", nargs=2, metavar=("FILE", "HOME"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        print(json.dumps(run_import(*args.run)))
        return
    with tempfile.TemporaryDirectory(prefix="yupana-bench-") as tmp:
        path = args.file
        if path is None:
            path = str(Path(tmp) / "padron_reducido_ruc.zip")
            print(f"generating {args.rows:,} rows with make_padron…", file=sys.stderr)
            subprocess.run([sys.executable, str(MAKE_PADRON), str(args.rows), path, "--bad", str(args.bad)],
                           check=True, stderr=subprocess.DEVNULL)
        done = subprocess.run([sys.executable, __file__, "--run", path, str(Path(tmp) / "home")],
                              check=True, capture_output=True, text=True)
        result = json.loads(done.stdout.strip().splitlines()[-1])
    rows = result["rows_loaded"] + result["rows_skipped"]
    print(json.dumps({"rows": rows, "rows_loaded": result["rows_loaded"], "rows_skipped": result["rows_skipped"],
                      "seconds": result["seconds"], "rows_per_s": round(rows / result["seconds"]),
                      "peak_rss_mb": result["peak_rss_mb"], "cpu_s_main": result["cpu_s_main"],
                      "cpu_s_parser": result["cpu_s_parser"], "cpus": os.cpu_count(),
                      "load_avg_1m": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
