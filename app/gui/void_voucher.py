"""«Anular» from the voucher detail: the reason asked, the document SUNAT takes for the voucher's type explained.

The comunicación de baja (RA) or resumen diario (RC) is built, signed and sent on a worker without waiting for
SUNAT's ticket (`engine.invoicing.void(..., wait=False)`): the engine follows the ticket in the background and tells
its outcome with the `summary.changed` event, which the detail listens to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.api import MAX_REASON

from .context import Context
from .widgets import FieldErrors, MessageBanner, fits_width

if TYPE_CHECKING:
    from app.core.api import SummaryOutcome, Voucher

DOCUMENT_NAMES = {"RA": "comunicación de baja", "RC": "resumen diario"}
WITH_ARTICLE = {"RA": "la comunicación de baja", "RC": "el resumen diario"}


def explanation(voucher: Voucher, kind: str) -> str:
    name = voucher.serie_numero
    if kind == "RA":
        return (f"{name} se anulará con una comunicación de baja (RA) enviada a SUNAT, como se anulan las facturas "
                "y sus notas. SUNAT la acepta hasta 7 días después de la emisión; cuando responda, el comprobante "
                "quedará «Anulado».")
    return (f"{name} se anulará con un resumen diario (RC) que lo informa con estado 3 (anulado), como se anulan "
            "las boletas y sus notas. SUNAT lo acepta hasta 7 días después de la emisión; cuando responda, el "
            "comprobante quedará «Anulado».")


class VoidDialog(QDialog):
    """Asks the reason and sends the RA/RC; `outcome` holds the summary (its ticket pending) once sent. `kind` is
    the engine's answer for the voucher (engine.invoicing.void_kind, read with the detail): RA or RC."""

    def __init__(self, context: Context, voucher_id: int, voucher: Voucher, kind: str | None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context, self.voucher_id = context, voucher_id
        self.kind = kind or "RA"
        self.outcome: SummaryOutcome | None = None
        self.setWindowTitle(f"Anular {voucher.serie_numero}")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        fits_width(self, 520)
        self.banner = MessageBanner()
        self.errors = FieldErrors()
        self.explanation = QLabel(explanation(voucher, self.kind))
        self.explanation.setWordWrap(True)
        self.motivo = QLineEdit()
        self.motivo.setMaxLength(MAX_REASON)
        self.motivo.setPlaceholderText("p. ej. ERROR EN EL RUC DEL CLIENTE")
        form = QFormLayout()
        form.addRow("Motivo de la baja:", self.errors.wrap(self.motivo, "motivo"))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.send_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.send_button.setText(f"Enviar {WITH_ARTICLE[self.kind]}")
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText("Cancelar")
        self.buttons.accepted.connect(self.send)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addWidget(self.explanation)
        layout.addLayout(form)
        layout.addWidget(self.buttons)

    def send(self) -> None:
        self.errors.clear()
        self.banner.clear()
        motivo = self.motivo.text().strip()
        if not motivo:
            label = self.errors.labels["motivo"]
            label.setText("Escriba el motivo de la baja: SUNAT lo pide (hasta 100 caracteres).")
            label.show()
            return
        engine = self.context.engine
        self.context.workers.run(self, engine.invoicing.void, self.voucher_id, motivo, wait=False, done=self._sent,
                                 failed=self._failed, busy=[self.send_button, self.motivo])

    def _sent(self, outcome: SummaryOutcome) -> None:
        self.outcome = outcome
        self.accept()

    def _failed(self, exc: BaseException) -> None:
        self.errors.show(exc)
        self.banner.show_error(exc)
