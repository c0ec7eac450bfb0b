"""A button that starts long work on a worker, with its progress bar and cancel beside it (what «Emitir lote…» and
«Exportar XML y CDR…» share); the outcome goes to a page's banner."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QPushButton, QWidget

from .context import Context
from .widgets import MessageBanner, show_progress
from .workers import Job


class ProgressRun(QWidget):
    """`start_button`, `progress` and `cancel_button`; `begin(work)` runs `work(job)` on the pool (it reports
    `job.report(done, total)` and looks at `job.cancelled`), `cancel()` asks it to stop."""

    def __init__(self, context: Context, banner: MessageBanner, start: str, tip: str, cancel: str) -> None:
        super().__init__()
        self.context = context
        self.banner = banner
        self.job: Job | None = None
        self.start_button = QPushButton(start)
        self.start_button.setToolTip(tip)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.hide()
        self.cancel_button = QPushButton(cancel)
        self.cancel_button.hide()
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.progress)
        row.addWidget(self.cancel_button)
        row.addWidget(self.start_button)
        self.cancel_button.clicked.connect(self.cancel)

    def begin(self, work: Callable[[Job], Any], done: Callable[[Any], object]) -> Job:
        self.banner.clear()
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.show()
        self.cancel_button.setEnabled(True)

        def finished(value: Any) -> None:
            self._ended()
            done(value)

        self.job = self.context.workers.run(self, work, pass_job=True, done=finished, failed=self._failed,
                                            progress=lambda value: show_progress(self.progress, value),
                                            busy=[self.start_button])
        return self.job

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.cancel_button.setEnabled(False)

    def _ended(self) -> None:
        self.job = None
        self.progress.hide()
        self.cancel_button.hide()

    def _failed(self, exc: BaseException) -> None:
        self._ended()
        self.banner.show_error(exc)
