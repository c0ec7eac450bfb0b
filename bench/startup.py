"""Cold start to the main window shown, from source, offscreen.

Runs a fresh interpreter (so nothing is imported yet), which opens an engine on a new data folder,
builds the main window, shows it and waits until it is exposed. Prints one JSON object last.
Target: ≤ 1.5 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 3

CHILD = r"""
import time
t0 = time.perf_counter()
import resource, sys
from app.gui.app import application
from app.core.engine import Engine
from app.gui.main_window import MainWindow
from PySide6.QtTest import QTest
app = application()
engine = Engine()
window = MainWindow(engine, first_run=False)
window.show()
QTest.qWaitForWindowExposed(window, 5000)
app.processEvents()
seconds = time.perf_counter() - t0
window.close()
engine.close()
rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(seconds, rss_kb / 1024)
"""


def one_run() -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="yupana-bench-") as home:
        env = dict(os.environ, YUPANA_HOME=home, YUPANA_PASSPHRASE="bench", YUPANA_KEYRING="0",
                   QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
        done = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=60, check=True)
        seconds, rss = done.stdout.split()[-2:]
        return float(seconds), float(rss)


def main() -> None:
    runs = [one_run() for _ in range(RUNS)]
    for seconds, rss in runs:
        print(f"arranque: {seconds:.3f} s, memoria máxima {rss:.0f} MB")
    seconds = sorted(r[0] for r in runs)[len(runs) // 2]
    print(json.dumps({"benchmark": "startup", "seconds": round(seconds, 3),
                      "peak_rss_mb": round(max(r[1] for r in runs), 1), "runs": RUNS, "target_seconds": 1.5}))


if __name__ == "__main__":
    main()
