"""Cold start, from source, offscreen, each measured in a fresh interpreter against a baseline of the same run.

- `yupana --version` (python -m app --version) against `python -c pass`: goal ≤ 2× (issue 33).
- The main window, from spawning the process to the window shown (engine opened on a new data folder, window built,
  shown and exposed), against a bare Qt window (QApplication and an empty QMainWindow of the same size, shown the
  same way): goal ≤ 3× (issue 33), and ≤ 1.5 s.

The four are measured in alternating rounds (the order flips every round, so a change of load falls on both sides);
a ratio is the median of the rounds' ratios. The children keep their bytecode in a private cache, compiled in a
warm-up round that is not counted, as an installed app has its own (PYTHONDONTWRITEBYTECODE would make every start
compile the whole app). Prints one JSON object last.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _sizes import size

ROOT = Path(__file__).resolve().parent.parent
RUNS = size(5, 1)
WARM_UP = size(1, 0)  # a round that compiles the bytecode; quick mode's figures mean nothing anyway
VERSION_GOAL, WINDOW_GOAL, TARGET_SECONDS = 2.0, 3.0, 1.5

# Both window children print: the wall-clock time the window was shown, seconds spent in Python, peak RSS in MB.
WINDOW = r"""
import time
t0 = time.perf_counter()
import resource, sys
from app.gui.app import application
from app.core.api import Engine
from app.gui.main_window import MainWindow
from PySide6.QtTest import QTest

app = application()
engine = Engine()
window = MainWindow(engine, first_run=False)
window.show()
QTest.qWaitForWindowExposed(window, 5000)
app.processEvents()
shown_at = time.time()
seconds = time.perf_counter() - t0
window.close()
engine.close()
rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(shown_at, seconds, rss_kb / 1024)
"""

BARE_WINDOW = r"""
import time
t0 = time.perf_counter()
import resource, sys
from PySide6.QtWidgets import QApplication, QMainWindow
from PySide6.QtTest import QTest

app = QApplication(sys.argv[:1])
window = QMainWindow()
window.resize(1180, 760)
window.show()
QTest.qWaitForWindowExposed(window, 5000)
app.processEvents()
shown_at = time.time()
seconds = time.perf_counter() - t0
window.close()
rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(shown_at, seconds, rss_kb / 1024)
"""


def child_env(root: Path, home: str, bytecode: str) -> dict[str, str]:
    env = dict(os.environ, YUPANA_HOME=home, YUPANA_PASSPHRASE="bench", YUPANA_KEYRING="0",
               QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(root), PYTHONPYCACHEPREFIX=bytecode)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def process_seconds(root: Path, bytecode: str, *args: str) -> float:
    """Seconds from spawning `python ARGS` to its end."""
    with tempfile.TemporaryDirectory(prefix="yupana-bench-") as home:
        spawned = time.perf_counter()
        subprocess.run([sys.executable, *args], cwd=root, env=child_env(root, home, bytecode), capture_output=True,
                       timeout=60, check=True)
        return time.perf_counter() - spawned


def window_run(root: Path, bytecode: str, code: str) -> tuple[float, float, float]:
    """(seconds from spawning the process to the window shown, of which in Python code, peak RSS MB)."""
    with tempfile.TemporaryDirectory(prefix="yupana-bench-") as home:
        spawned = time.time()
        done = subprocess.run([sys.executable, "-c", code], cwd=root, env=child_env(root, home, bytecode),
                              capture_output=True, text=True, timeout=60, check=True)
        shown_at, in_python, rss = done.stdout.split()[-3:]
        return float(shown_at) - spawned, float(in_python), float(rss)


def one_round(root: Path, bytecode: str, flip: bool) -> dict[str, tuple[float, ...]]:
    """Every measurement once; `flip` runs each pair (and the pairs) in the other order."""
    pairs: list[list[tuple[str, Callable[[], tuple[float, ...]]]]] = [
        [("pass", lambda: (process_seconds(root, bytecode, "-c", "pass"),)),
         ("version", lambda: (process_seconds(root, bytecode, "-m", "app", "--version"),))],
        [("bare_window", lambda: window_run(root, bytecode, BARE_WINDOW)),
         ("window", lambda: window_run(root, bytecode, WINDOW))],
    ]
    figures = {}
    for pair in reversed(pairs) if flip else pairs:
        for name, measure in reversed(pair) if flip else pair:
            figures[name] = measure()
    return figures


def measure(root: Path, bytecode: str, runs: int, warm_up: int) -> list[dict[str, tuple[float, ...]]]:
    for _ in range(warm_up):
        one_round(root, bytecode, flip=False)
    return [one_round(root, bytecode, flip=bool(i % 2)) for i in range(runs)]


def summary(rounds: list[dict[str, tuple[float, ...]]]) -> dict[str, float | int]:
    def median(name: str, field: int = 0) -> float:
        return statistics.median(r[name][field] for r in rounds)

    def ratio(name: str, baseline: str) -> float:
        return statistics.median(r[name][0] / r[baseline][0] for r in rounds)

    return {
        "seconds": round(median("window"), 3), "python_seconds": round(median("window", 1), 3),
        "best_seconds": round(min(r["window"][0] for r in rounds), 3),
        "peak_rss_mb": round(max(r["window"][2] for r in rounds), 1),
        "bare_window_seconds": round(median("bare_window"), 3),
        "bare_window_peak_rss_mb": round(max(r["bare_window"][2] for r in rounds), 1),
        "window_ratio": round(ratio("window", "bare_window"), 2),
        "version_seconds": round(median("version"), 3), "pass_seconds": round(median("pass"), 3),
        "version_ratio": round(ratio("version", "pass"), 2),
    }


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="yupana-bytecode-") as bytecode:
        rounds = measure(ROOT, bytecode, RUNS, WARM_UP)
    for r in rounds:
        window, bare = r["window"], r["bare_window"]
        print(f"arranque: ventana {window[0]:.3f} s (código Python {window[1]:.3f} s, memoria máxima {window[2]:.0f} MB)"
              f", ventana Qt vacía {bare[0]:.3f} s ({window[0] / bare[0]:.1f}×); --version {r['version'][0]:.3f} s, "
              f"python -c pass {r['pass'][0]:.3f} s ({r['version'][0] / r['pass'][0]:.1f}×)")
    print(json.dumps({"benchmark": "startup", **summary(rounds), "runs": RUNS, "target_seconds": TARGET_SECONDS,
                      "version_goal_ratio": VERSION_GOAL, "window_goal_ratio": WINDOW_GOAL}))


if __name__ == "__main__":
    main()
