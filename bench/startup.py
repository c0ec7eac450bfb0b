"""Cold start, from source, offscreen, each measured in a fresh interpreter against a baseline of the same run.

- `yupana --version` (python -m app --version) against `python -c pass`: goal ≤ 2× (issue 33).
- The main window through the app's own start path (app.gui.app.start), from spawning the process to its first paint
  (the frame saying «Abriendo sus datos…»; the engine is imported and opened on a worker after it), against a bare
  Qt window (QApplication and an empty QMainWindow of the same size, shown the same way): goal ≤ 3× (issue 33), and
  ≤ 1.5 s. The time until the engine is attached (a new data folder opened, the window filled) is printed beside it
  (`engine_attached_seconds`, and its ratio to the bare window), so nothing is hidden.

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

# Both window children print: the wall-clock time the window was first painted, seconds spent in Python until then,
# peak RSS in MB, and the wall-clock time its engine was attached (the bare window has none: its paint time again).
# The app's own start path (app.gui.app.start): the window is shown and painted saying «Abriendo sus datos…», the
# engine is imported and opened on a worker, then attached. What the app starts beside the engine once attached (the
# webhook listener on its configured port, the sandboxes, the local API) is left out: a bench takes no fixed port.
WINDOW = r"""
import time
t0 = time.perf_counter()
import resource, sys
import app.gui.app as gui
from PySide6.QtTest import QTest

gui.start_services = lambda window: None  # no listener, sandboxes or local API (no port bound)
app = gui.application()
window = gui.start()
QTest.qWaitForWindowExposed(window, 5000)
deadline = time.monotonic() + 60
while not window.painted and time.monotonic() < deadline:
    app.processEvents()
shown_at = time.time()
seconds = time.perf_counter() - t0
# The event loop runs as in the app (app.exec releases the interpreter's lock while idle: a polling loop here would
# hold it and slow the worker's import two- or threefold).
window.engine_attached.connect(app.quit)
window.engine_open_failed.connect(lambda exc: app.quit())
if not (window.attached or window.open_error is not None):
    app.exec()
if not window.attached:
    raise SystemExit(f"the engine was not attached: {window.open_error!r}")
attached_at = time.time()
gui.shutdown(window)
rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(shown_at, seconds, rss_kb / 1024, attached_at)
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
print(shown_at, seconds, rss_kb / 1024, shown_at)
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


def window_run(root: Path, bytecode: str, code: str) -> tuple[float, float, float, float]:
    """(seconds from spawning the process to the window's first paint, of which in Python code, peak RSS MB, seconds
    from spawning to the engine attached)."""
    with tempfile.TemporaryDirectory(prefix="yupana-bench-") as home:
        spawned = time.time()
        done = subprocess.run([sys.executable, "-c", code], cwd=root, env=child_env(root, home, bytecode),
                              capture_output=True, text=True, timeout=60, check=True)
        shown_at, in_python, rss, attached_at = done.stdout.split()[-4:]
        return float(shown_at) - spawned, float(in_python), float(rss), float(attached_at) - spawned


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
        "engine_attached_seconds": round(median("window", 3), 3),
        "engine_attached_ratio": round(statistics.median(r["window"][3] / r["bare_window"][0] for r in rounds), 2),
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
        print(f"arranque: ventana pintada {window[0]:.3f} s (código Python {window[1]:.3f} s, memoria máxima "
              f"{window[2]:.0f} MB), datos abiertos {window[3]:.3f} s"
              f", ventana Qt vacía {bare[0]:.3f} s ({window[0] / bare[0]:.1f}×); --version {r['version'][0]:.3f} s, "
              f"python -c pass {r['pass'][0]:.3f} s ({r['version'][0] / r['pass'][0]:.1f}×)")
    print(json.dumps({"benchmark": "startup", **summary(rounds), "runs": RUNS, "target_seconds": TARGET_SECONDS,
                      "version_goal_ratio": VERSION_GOAL, "window_goal_ratio": WINDOW_GOAL}))


if __name__ == "__main__":
    main()
