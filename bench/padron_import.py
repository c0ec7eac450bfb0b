"""Benchmark: import of SUNAT's padrón reducido through the engine (`engine.lookups.import_padron`).

    python bench/padron_import.py [--rows 1000000] [--bad 1000] [--file EXISTING.zip] [--fast]

The file is written by ../shared/tools/make_padron.py in a temporary folder (not timed); without the project's
shared/ folder (tests/helpers/shared.py finds it: ../shared or YUPANA_TESTS_SHARED) by bench/ruc_lookup.py's fast
generator, which writes the same layout, with one line saying so. The import
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
import threading
import time
from pathlib import Path

from _sizes import size  # noqa: E402 - bench/ is the script's folder

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.helpers import shared  # noqa: E402 - SUNAT's files found as the tests find them


def peak_rss_mb() -> float:
    """Peak resident memory of this process and of its finished children, in MB (Linux/macOS)."""
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is bytes on macOS, KiB on Linux
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale
    return round(max(own, children) / 1e6, 1)


def tree_rss_bytes(pid: int) -> int:
    """Resident memory of a process and all its descendants right now (Linux /proc), in bytes."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/status") as status:
                total += next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    stack += [int(child) for child in children.read().split()]
        except (OSError, StopIteration):
            continue
    return total


class TreeMemory:
    """Samples the summed RSS of this process and its workers every 20 ms; `peak_mb` after `stop()`."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, tree_rss_bytes(os.getpid()))

    def __enter__(self) -> TreeMemory:
        if os.path.isdir("/proc"):
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


def run_import(path: str, home: str) -> dict:
    os.environ.setdefault("YUPANA_PASSPHRASE", "benchmark")
    os.environ["YUPANA_KEYRING"] = "0"
    from app.core.api import Engine

    with Engine(home) as engine:
        before = cpu_seconds(resource.RUSAGE_SELF)
        started = time.perf_counter()
        with TreeMemory() as memory:
            summary = engine.lookups.import_padron(path)
        seconds = time.perf_counter() - started
        main_cpu = cpu_seconds(resource.RUSAGE_SELF) - before
    # CPU time tells the cost apart from the load of a shared machine: on idle cores the wall time
    # is close to the larger of the two processes' CPU times.
    # peak_rss_mb: the summed RSS of the main process and its parsing workers at their highest.
    return {"rows_loaded": summary.rows_loaded, "rows_skipped": summary.rows_skipped, "seconds": round(seconds, 3),
            "peak_rss_mb": max(peak_rss_mb(), round(memory.peak / 1e6, 1)),
            "cpu_s_main": round(main_cpu, 2), "cpu_s_parser": round(cpu_seconds(resource.RUSAGE_CHILDREN), 2)}


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=size(1_000_000, 20_000))
    parser.add_argument("--bad", type=int, default=size(1000, 20))
    parser.add_argument("--file", help="an existing padrón file (skips generation)")
    parser.add_argument("--fast", action="store_true",
                        help="write the file with bench/ruc_lookup.py's fast generator (same layout, plain .txt) "
                             "instead of make_padron, for the full 18 million rows")
    parser.add_argument("--run", nargs=2, metavar=("FILE", "HOME"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        print(json.dumps(run_import(*args.run)))
        return
    if args.file is None and not args.fast and shared.MISSING:
        print(f"{shared.MISSING}; the file is written by the fast generator instead", file=sys.stderr)
        args.fast = True
    with tempfile.TemporaryDirectory(prefix="yupana-bench-") as tmp:
        path = args.file
        if path is None and args.fast:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from ruc_lookup import write_register

            path = str(Path(tmp) / "padron_reducido_ruc.txt")
            print(f"generating {args.rows:,} rows with the fast generator…", file=sys.stderr)
            write_register(Path(path), args.rows)
        if path is None:
            path = str(Path(tmp) / "padron_reducido_ruc.zip")
            print(f"generating {args.rows:,} rows with make_padron…", file=sys.stderr)
            subprocess.run([sys.executable, str(shared.MAKE_PADRON), str(args.rows), path, "--bad", str(args.bad)],
                           check=True, stderr=subprocess.DEVNULL)
        done = subprocess.run([sys.executable, __file__, "--run", path, str(Path(tmp) / "home")],
                              check=True, capture_output=True, text=True)
        result = json.loads(done.stdout.strip().splitlines()[-1])
    rows = result["rows_loaded"] + result["rows_skipped"]
    print(json.dumps({"benchmark": "padron_import", "rows": rows, "rows_loaded": result["rows_loaded"], "rows_skipped": result["rows_skipped"],
                      "seconds": result["seconds"], "rows_per_s": round(rows / result["seconds"]),
                      "peak_rss_mb": result["peak_rss_mb"], "cpu_s_main": result["cpu_s_main"],
                      "cpu_s_parser": result["cpu_s_parser"], "cpus": os.cpu_count(),
                      "load_avg_1m": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
