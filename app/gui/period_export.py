"""«Exportar XML y CDR…» on Comprobantes: the period's zip for the accountant (engine.invoicing.export_period_steps,
docs/backups.md), written on a worker with a progress bar and cancel; the result in the page's banner."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QPushButton, QWidget

from app.core.api import fmt

from .context import Context
from .dialogs import choose_path
from .widgets import MessageBanner, show_progress
from .workers import Job


def zip_name(desde: date, hasta: date) -> str:
    return f"Comprobantes-{desde:%Y%m%d}-{hasta:%Y%m%d}.zip"


class PeriodExport(QWidget):
    """The button, its progress bar and cancel. `period()` says which dates (the page's filter, or this month)."""

    finished = Signal(object)  # the PeriodExport record, or None when cancelled

    def __init__(self, context: Context, banner: MessageBanner, period: Callable[[], tuple[date, date]]) -> None:
        super().__init__()
        self.context = context
        self.banner = banner
        self.period = period
        self.job: Job | None = None
        self.start_button = QPushButton("Exportar XML y CDR…")
        self.start_button.setToolTip("Un zip para el contador con el XML firmado y el CDR de cada comprobante del "
                                     "periodo (el filtro de fechas, o este mes) y el registro de ventas en CSV y "
                                     "Excel, con las columnas del RVIE de SIRE.")
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancelar exportación")
        self.cancel_button.hide()
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.progress)
        row.addWidget(self.cancel_button)
        row.addWidget(self.start_button)
        self.start_button.clicked.connect(self.choose_folder)
        self.cancel_button.clicked.connect(self.cancel)

    def choose_folder(self) -> None:
        choose_path(self, "Elegir la carpeta donde guardar el zip", self.export_to, folder=True)

    def export_to(self, folder: str) -> Job:
        desde, hasta = self.period()
        target = Path(folder) / zip_name(desde, hasta)
        self.banner.clear()
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.show()
        self.cancel_button.setEnabled(True)
        engine = self.context.engine

        def work(job: Job) -> Any:
            for step in engine.invoicing.export_period_steps(desde, hasta, target):
                job.report(step.done, step.total)
                if step.result is not None:
                    return step.result
                if job.cancelled.is_set():
                    return None  # leaving the loop closes the export: its partial zip is removed
            return None

        self.job = self.context.workers.run(self, work, pass_job=True, done=self._done, failed=self._failed,
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

    def _done(self, result: Any) -> None:
        self._ended()
        if result is None:
            self.banner.show_message("Exportación cancelada: no se escribió ningún archivo.", "warning")
        else:
            self.banner.show_message(
                f"Exportados {result.vouchers} comprobantes y {result.cdrs} CDR con el registro de ventas (total "
                f"{fmt.money(result.total)}) en {result.path}", "success")
        self.finished.emit(result)

    def _failed(self, exc: BaseException) -> None:
        self._ended()
        self.banner.show_error(exc)
