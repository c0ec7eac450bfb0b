"""«Exportar XML y CDR…» on Comprobantes: the period's zip for the accountant (engine.invoicing.export_period_steps,
docs/backups.md), written on a worker with a progress bar and cancel; the result in the page's banner."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal

from app.core.api import fmt

from .context import Context
from .dialogs import choose_path
from .progress_run import ProgressRun
from .widgets import MessageBanner
from .workers import Job


def zip_name(desde: date, hasta: date) -> str:
    return f"Comprobantes-{desde:%Y%m%d}-{hasta:%Y%m%d}.zip"


class PeriodExport(ProgressRun):
    """The button, its progress bar and cancel. `period()` says which dates (the page's filter, or this month)."""

    finished = Signal(object)  # the PeriodExport record, or None when cancelled

    def __init__(self, context: Context, banner: MessageBanner, period: Callable[[], tuple[date, date]]) -> None:
        super().__init__(context, banner, "Exportar XML y CDR…",
                         "Un zip para el contador con el XML firmado y el CDR de cada comprobante del periodo (el "
                         "filtro de fechas, o este mes) y el registro de ventas en CSV y Excel, con las columnas del "
                         "RVIE de SIRE.", "Cancelar exportación")
        self.period = period
        self.start_button.clicked.connect(self.choose_folder)

    def choose_folder(self) -> None:
        choose_path(self, "Elegir la carpeta donde guardar el zip", self.export_to, folder=True)

    def export_to(self, folder: str) -> Job:
        desde, hasta = self.period()
        target = Path(folder) / zip_name(desde, hasta)
        engine = self.context.engine

        def work(job: Job) -> Any:
            for step in engine.invoicing.export_period_steps(desde, hasta, target):
                job.report(step.done, step.total)
                if step.result is not None:
                    return step.result
                if job.cancelled.is_set():
                    return None  # leaving the loop closes the export: its partial zip is removed
            return None

        return self.begin(work, self._done)

    def _done(self, result: Any) -> None:
        if result is None:
            self.banner.show_message("Exportación cancelada: no se escribió ningún archivo.", "warning")
        else:
            self.banner.show_message(
                f"Exportados {result.vouchers} comprobantes y {result.cdrs} CDR con el registro de ventas (total "
                f"{fmt.money(result.total)}) en {result.path}", "success")
        self.finished.emit(result)
