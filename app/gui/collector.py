"""Python's cyclic garbage collector, run on the GUI thread only.

Automatic collection can start on whichever thread allocates; if it frees a cycle that holds a Qt
widget on a worker thread, Qt crashes. In the app, automatic collection is switched off and this
timer collects on the GUI thread, with the same generation thresholds.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer


def collect_if_due(thresholds: tuple[int, int, int] | None = None) -> None:
    """Collect the oldest generation whose count passed its threshold, as automatic collection would."""
    counts, limits = gc.get_count(), thresholds or gc.get_threshold()
    generation = max((g for g in range(3) if counts[g] > limits[g]), default=None)
    if generation is not None:
        gc.collect(generation)


class GuiThreadCollector(QObject):
    def __init__(self, parent: QObject, interval_ms: int = 500) -> None:
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        gc.disable()
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.check)
        self.timer.start()

    def check(self) -> None:
        collect_if_due(self.thresholds)

    def stop(self) -> None:
        self.timer.stop()
        gc.enable()
