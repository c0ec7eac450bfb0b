"""«Consultar validez»: SUNAT's consulta integrada de validez of any voucher, ours or a supplier's (issue 37), asked
in the background (engine.invoicing.check_validity) and answered in plain words: the voucher's state, the issuer's
taxpayer state and address condition, SUNAT's observations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QDate, QRegularExpression
from PySide6.QtGui import QRegularExpressionValidator
from PySide6.QtWidgets import (
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.api import ErrorDetail, invalid_many, sunat_catalogues

from .numbers import parse_decimal
from .widgets import Badge, FieldErrors, MessageBanner, python_date

if TYPE_CHECKING:
    from app.core.api import VoucherValidity

    from .context import Context

VALID_COLOUR, INVALID_COLOUR = "#1e7e34", "#b02a37"


class ValidityDialog(QDialog):
    def __init__(self, context: Context, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.answer: VoucherValidity | None = None
        self.setWindowTitle("Consultar validez de un comprobante en SUNAT")
        self.errors = FieldErrors()
        self.banner = MessageBanner()
        self.ruc = QLineEdit()
        self.ruc.setPlaceholderText("RUC del emisor: 11 dígitos")
        self.ruc.setValidator(QRegularExpressionValidator(QRegularExpression(r"\d{0,11}"), self.ruc))
        self.tipo = QComboBox()
        for code, name in sunat_catalogues.VALIDITY_DOCUMENT_TYPES.items():
            self.tipo.addItem(f"{code} — {name}", code)
        self.serie = QLineEdit()
        self.serie.setMaxLength(4)
        self.serie.setPlaceholderText("F001, o 0001 en papel")
        self.numero = QSpinBox()
        self.numero.setRange(1, 99_999_999)
        self.fecha = QDateEdit(QDate.currentDate())
        self.fecha.setCalendarPopup(True)
        self.fecha.setDisplayFormat("dd/MM/yyyy")
        self.total = QLineEdit()
        self.total.setPlaceholderText("opcional, p. ej. 118.00")
        form = QFormLayout()
        form.addRow("RUC del emisor:", self.errors.wrap(self.ruc, "ruc"))
        form.addRow("Tipo:", self.errors.wrap(self.tipo, "tipo"))
        form.addRow("Serie:", self.errors.wrap(self.serie, "serie"))
        form.addRow("Número:", self.errors.wrap(self.numero, "numero"))
        form.addRow("Fecha de emisión:", self.errors.wrap(self.fecha, "fecha"))
        form.addRow("Importe total:", self.errors.wrap(self.total, "total"))
        self.consult_button = QPushButton("Consultar en SUNAT")
        self.consult_button.setDefault(True)
        self.consult_button.clicked.connect(self.consult)
        self.badge = Badge()
        self.badge.hide()
        self.answer_text = QLabel("")
        self.answer_text.setWordWrap(True)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addLayout(form)
        layout.addWidget(self.consult_button)
        layout.addWidget(self.badge)
        layout.addWidget(self.answer_text)
        layout.addStretch(1)
        layout.addWidget(close)

    def consult(self) -> None:
        self.banner.clear()
        self.errors.clear()
        self.badge.hide()
        self.answer_text.clear()
        typed = self.total.text().strip()
        total = parse_decimal(typed) if typed else None
        if typed and (total is None or total < 0):
            self.errors.show(invalid_many([ErrorDetail("total", f"El importe total «{typed}» debe ser un monto, p. "
                                                                "ej. 118.00.")]))
            return
        self.context.workers.run(self, self.context.engine.invoicing.check_validity, self.ruc.text().strip(),
                                 self.tipo.currentData(), self.serie.text().strip(), self.numero.value(),
                                 python_date(self.fecha.date()), total, done=self.show_answer,
                                 failed=self._failed, busy=[self.consult_button])

    def _failed(self, exc: BaseException) -> None:
        self.errors.show_or_tell(exc, self.banner)

    def show_answer(self, answer: VoucherValidity) -> None:
        self.answer = answer
        name = f"{answer.serie}-{answer.numero}"
        self.badge.set(f"{name}: {answer.estado}", VALID_COLOUR if answer.valido else INVALID_COLOUR)
        self.badge.show()
        lines = [f"{'Válido' if answer.valido else 'No válido'}: {answer.detalle}.",
                 f"Contribuyente {answer.ruc}: {answer.estado_ruc_nombre}; domicilio fiscal: "
                 f"{answer.cond_domicilio_nombre}."]
        lines += [f"Observación de SUNAT: {note}" for note in answer.observaciones]
        self.answer_text.setText("\n".join(lines))
