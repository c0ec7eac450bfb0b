"""«Emitir lote…»: generate and sign a file of vouchers (JSON Lines or a JSON array) with each issuer's default
certificate, with a progress bar and cancel; the result says how many were issued and why the others were not."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal

from .context import Context
from .dialogs import choose_path
from .progress_run import ProgressRun
from .widgets import MessageBanner
from .workers import Job

SHOWN_ERRORS = 8
# Requests handed to the engine at a time (engine.invoicing.issue_batch), as many as the engine stores in one block:
# «Cancelar lote» takes effect between them, and the progress bar moves after each.
CHUNK = 250


class BatchIssuer(ProgressRun):
    """The button, its progress bar and cancel; results go to `banner`."""

    finished = Signal(dict)  # {"emitidos", "con_error", "cancelado"}

    def __init__(self, context: Context, banner: MessageBanner) -> None:
        super().__init__(context, banner, "Emitir lote…",
                         "Genera y firma los comprobantes de un archivo JSON Lines (una solicitud por línea) o de un "
                         "arreglo JSON, con el certificado predeterminado de cada emisor.", "Cancelar lote")
        self.start_button.clicked.connect(self.choose_file)

    def choose_file(self) -> None:
        choose_path(self, "Elegir el archivo del lote", self.issue_file,
                    name_filter="Lotes de comprobantes (*.jsonl *.json);;Todos los archivos (*)")

    def issue_file(self, path: str) -> Job:
        engine = self.context.engine

        def work(job: Job) -> dict[str, Any]:
            requests = engine.invoicing.read_batch(path).requests
            total, answered = len(requests), 0
            errors: list[tuple[int, str]] = []
            for first in range(0, total, CHUNK):
                for item in engine.invoicing.issue_batch(requests[first:first + CHUNK]):
                    answered += 1
                    if item.refusal is not None:
                        errors.append((first + item.index + 1, item.refusal.message))
                job.report(answered, total)
                if job.cancelled.is_set():  # between chunks: each one handed to the engine is issued whole
                    break
            return {"emitidos": answered - len(errors), "con_error": len(errors), "errores": errors,
                    "total": total, "cancelado": answered < total}

        return self.begin(work, self._done)

    def _done(self, summary: dict[str, Any]) -> None:
        issued, failed = summary["emitidos"], summary["con_error"]
        noun = "comprobante emitido y firmado" if issued == 1 else "comprobantes emitidos y firmados"
        text = f"Lote: {issued} {noun}."
        if summary["cancelado"]:
            text += (f" Cancelado: quedaron sin emitir {summary['total'] - issued - failed}; vuelva a emitir el mismo "
                     "archivo para continuar (lo ya emitido no se repite).")
        details = "\n".join(f"Comprobante {number} del archivo: {message}"
                            for number, message in summary["errores"][:SHOWN_ERRORS])
        if failed:
            more = failed - SHOWN_ERRORS
            text += f" {failed} con error; ver el detalle."
            details += f"\n… y {more} más." if more > 0 else ""
        self.banner.show_message(text, "warning" if failed or summary["cancelado"] else "success", details)
        self.finished.emit({key: summary[key] for key in ("emitidos", "con_error", "cancelado")})
