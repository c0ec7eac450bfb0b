"""Cold start to the main window shown, from source, offscreen.

Spawns a fresh interpreter (so nothing is imported yet), which opens an engine on a new data folder,
builds the main window, shows it and waits until it is exposed. Prints one JSON object last.
Target: ≤ 1.5 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _sizes import size

ROOT = Path(__file__).resolve().parent.parent
RUNS = size(5, 1)

CHILD = r"""
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


def one_run() -> tuple[float, float, float]:
    """(seconds from spawning the process to the window shown, of which in Python code, peak RSS MB)."""
    with tempfile.TemporaryDirectory(prefix="yupana-bench-") as home:
        env = dict(os.environ, YUPANA_HOME=home, YUPANA_PASSPHRASE="bench", YUPANA_KEYRING="0",
                   QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
        spawned = time.time()
        done = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=60, check=True)
        shown_at, in_python, rss = done.stdout.split()[-3:]
        return float(shown_at) - spawned, float(in_python), float(rss)


def main() -> None:
    runs = [one_run() for _ in range(RUNS)]
    for seconds, in_python, rss in runs:
        print(f"arranque: {seconds:.3f} s (código Python {in_python:.3f} s), memoria máxima {rss:.0f} MB")
    median = sorted(runs)[len(runs) // 2]
    print(json.dumps({"benchmark": "startup", "seconds": round(median[0], 3), "python_seconds": round(median[1], 3),
                      "best_seconds": round(min(r[0] for r in runs), 3), "peak_rss_mb": round(max(r[2] for r in runs), 1),
                      "runs": RUNS, "target_seconds": 1.5}))


if __name__ == "__main__":
    main()
