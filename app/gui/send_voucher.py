"""«Enviar por WhatsApp»: the voucher's PDF and a short text to the customer's number (operation 4); a guía de
remisión's to its destinatario, with a text of its own (no amount).

Everything is editable before sending; the instances are read and the message sent on a worker, so the
window never waits on the gateway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.api import fmt
from app.core.api import sunat_catalogues as cat

from .context import Context
from .messages import whatsapp_number
from .widgets import FieldErrors, MessageBanner, fits_width

if TYPE_CHECKING:
    from app.core.api import ChatSendResult, Customer, Instance, Voucher


GUIAS = (cat.GUIA_REMITENTE, cat.GUIA_TRANSPORTISTA)


def default_text(voucher: Voucher, type_name: str) -> str:
    serie_numero = voucher.serie_numero
    if voucher.tipo in GUIAS:  # a guía has no amount: it goes with the goods
        return (f"Hola, le enviamos la {type_name.lower()} electrónica {serie_numero} de los bienes que se le "
                "trasladan. Adjuntamos la representación impresa (PDF).")
    total = fmt.money(voucher.total, voucher.moneda)
    return (f"Hola, le enviamos su {type_name.lower()} electrónica {serie_numero} por {total}. "
            "Adjuntamos la representación impresa (PDF). ¡Gracias por su compra!")


class SendVoucherDialog(QDialog):
    def __init__(self, context: Context, voucher_id: int, voucher: Voucher, type_name: str,
                 formato: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context, self.voucher_id, self.formato = context, voucher_id, formato
        self.sent: ChatSendResult | None = None
        self.setWindowTitle(f"Enviar {voucher.serie_numero} por WhatsApp")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        fits_width(self, 520)
        self.banner = MessageBanner()
        self.errors = FieldErrors()
        self.instance = QComboBox()
        self.number = QLineEdit()
        self.number.setPlaceholderText("987654321 (celular de Perú) o +34 612 345 678 (otro país)")
        self.text = QPlainTextEdit(default_text(voucher, type_name))
        self.text.setMaximumHeight(110)
        form = QFormLayout()
        form.addRow("Enviar desde:", self.errors.wrap(self.instance, "instance"))
        form.addRow("Número del cliente:", self.errors.wrap(self.number, "to"))
        form.addRow("Mensaje:", self.errors.wrap(self.text, "message"))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.send_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.send_button.setText("Enviar con el PDF")
        self.send_button.setEnabled(False)
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText("Cancelar")
        self.buttons.accepted.connect(self.send)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addLayout(form)
        layout.addWidget(self.buttons)
        context.workers.run(self, context.engine.messaging.instances, done=self._instances,
                            failed=self.banner.show_error)
        tipo, numero = voucher.receptor_tipo_documento, voucher.receptor_numero_documento
        if tipo and numero:  # the customer's WhatsApp saved in «Clientes»
            context.workers.run(self, context.engine.catalog.customer, tipo, numero, done=self._customer,
                                failed=lambda exc: None)

    def _customer(self, customer: Customer | None) -> None:
        if customer is not None and customer.whatsapp and not self.number.text().strip():
            self.number.setText(customer.whatsapp)

    def _instances(self, instances: list[Instance]) -> None:
        for instance in instances:
            self.instance.addItem(instance.name, instance.name)
        if not instances:
            self.banner.show_message("WhatsApp no está configurado: pida a quien instaló Yupana que lo configure "
                                     "(Mensajes → Avanzado).", "warning")
        self.send_button.setEnabled(bool(instances))

    def send(self) -> None:
        self.errors.clear()
        self.banner.clear()
        engine = self.context.engine
        voucher_id, instance, typed = self.voucher_id, self.instance.currentData(), self.number.text()
        text, formato = self.text.toPlainText().strip(), self.formato
        self.context.workers.run(self, lambda: engine.messaging.send_voucher(  # normalised as in Mensajes, Clientes
            voucher_id, instance, whatsapp_number(typed), text, formato),
            done=self._sent, failed=self._failed, busy=[self.send_button])

    def _sent(self, result: ChatSendResult) -> None:
        self.sent = result
        self.accept()

    def _failed(self, exc: BaseException) -> None:
        self.errors.show(exc)
        self.banner.show_error(exc)
