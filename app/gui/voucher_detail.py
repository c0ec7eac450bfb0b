"""One voucher in detail: its data, XML, CDR, the printed copy; resend, export and send by WhatsApp."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.errors import not_found
from app.core.invoicing import statuses
from app.core.invoicing.statuses import ACEPTADO, OBSERVADO
from app.core.platform import formatting as fmt

from .context import Context
from .dialogs import choose_path
from .emission import cdr_text, export, plain_outcome, resend
from .printing import PrintPanel
from .voucher_form import TYPES
from .widgets import Badge, MessageBanner, heading
from .xml_view import XmlView

if TYPE_CHECKING:
    from app.core.engine import Engine

BANNER_TONES = {ACEPTADO: "success", OBSERVADO: "warning"}  # any other outcome is shown as an error
TYPE_NAMES = {**{code: name for code, (name, _) in TYPES.items()}, "07": "Nota de crédito", "08": "Nota de débito"}


def status_badge(status: str | None, badge: Badge | None = None) -> Badge:
    """A voucher's status as a badge: its Spanish label on its colour (app.core.invoicing.statuses)."""
    badge = badge or Badge()
    badge.set(statuses.label(status), statuses.colour(status))
    badge.setProperty("status", status or "")
    return badge


def load_voucher(engine: Engine, voucher_id: int) -> dict[str, Any]:
    """The voucher with SUNAT's latest answer (CDR) merged in, when there is one."""
    record = engine.voucher(voucher_id)
    if record is None:
        raise not_found("voucher_id", f"No existe el comprobante {voucher_id}.")
    record = dict(record)
    answer = engine.voucher_cdr(voucher_id)
    if answer:
        record.update(cdr=answer["cdr_zip"], codigo_respuesta=answer["codigo"], descripcion=answer["descripcion"],
                      observaciones=answer["notas"], hash_cdr=answer["hash_cdr"])
    return record


class VoucherDetail(QDialog):
    """One voucher: its data, XML, CDR, the signature's hash; resend and export."""

    def __init__(self, context: Context, voucher_id: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.engine = context.engine
        self.voucher_id = voucher_id
        self.record: dict[str, Any] = {}
        self.setWindowTitle("Comprobante")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.resize(900, 640)
        layout = QVBoxLayout(self)
        self.title = heading("…")
        self.status_badge = Badge()
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.status_badge)
        layout.addLayout(top)
        self.banner = MessageBanner()
        layout.addWidget(self.banner)
        self.tabs = QTabWidget()
        self.summary = QWidget()
        self.summary_form = QFormLayout(self.summary)
        self.xml_view = XmlView()
        self.cdr_view = XmlView()
        self.print_panel = PrintPanel(context, self.banner)
        self.tabs.addTab(self.summary, "Resumen")
        self.tabs.addTab(self.print_panel, "Representación impresa")
        self.tabs.addTab(self.xml_view, "XML firmado")
        self.tabs.addTab(self.cdr_view, "CDR de SUNAT")
        layout.addWidget(self.tabs, 1)
        buttons = QHBoxLayout()
        self.resend_button = QPushButton("Reenviar a SUNAT")
        self.export_buttons = {what: QPushButton(label) for what, label in
                               [("xml", "Exportar XML"), ("cdr", "Exportar CDR"), ("zip", "Exportar ZIP")]}
        self.pdf_button = QPushButton("PDF")
        self.whatsapp_button = QPushButton("Enviar por WhatsApp")
        buttons.addWidget(self.resend_button)
        for what, button in self.export_buttons.items():
            buttons.addWidget(button)
            button.clicked.connect(lambda _=False, w=what: self.choose_export(w))
        buttons.addStretch(1)
        buttons.addWidget(self.pdf_button)
        buttons.addWidget(self.whatsapp_button)
        layout.addLayout(buttons)
        self._pdf_and_whatsapp_state()
        self.resend_button.clicked.connect(self.resend)
        self.pdf_button.clicked.connect(lambda: self.tabs.setCurrentWidget(self.print_panel))
        self.whatsapp_button.clicked.connect(self.send_by_whatsapp)
        self.reload()

    def _pdf_and_whatsapp_state(self) -> None:
        has_pdf = bool(self.record.get("xml_firmado"))
        self.pdf_button.setEnabled(has_pdf)
        self.pdf_button.setToolTip("Vista previa, «Guardar PDF» e «Imprimir»" if has_pdf else
                                   "La representación impresa lleva la firma: disponible cuando el comprobante "
                                   "esté firmado.")
        self.whatsapp_button.setEnabled(has_pdf)
        self.whatsapp_button.setToolTip("El PDF y un mensaje corto al número del cliente" if has_pdf else
                                        "Disponible cuando el comprobante esté firmado.")

    def send_by_whatsapp(self) -> Any:
        from .send_voucher import SendVoucherDialog

        formato = self.print_panel.format_box.currentData()
        self.send_dialog = SendVoucherDialog(self.context, self.voucher_id, self.record,
                                             TYPE_NAMES.get(self.record.get("tipo"), "Comprobante"), formato, self)
        self.send_dialog.accepted.connect(lambda: self.banner.show_message(
            f"Enviado por WhatsApp a {self.send_dialog.sent.to}, con el PDF.", "success"))
        self.send_dialog.open()
        return self.send_dialog

    def reload(self) -> None:
        self.context.workers.run(self, load_voucher, self.engine, self.voucher_id, done=self.show_record,
                                 failed=self.banner.show_error)

    def show_record(self, record: dict[str, Any]) -> None:
        self.record = dict(record)
        name = record.get("nombre_archivo") or f"{record.get('serie')}-{record.get('numero')}"
        self.title.setText(f"{TYPE_NAMES.get(record.get('tipo'), '')} {record.get('serie')}-{record.get('numero')}")
        self.setWindowTitle(f"Comprobante {name}")
        status = record.get("status") or ""
        status_badge(status, self.status_badge)
        while self.summary_form.rowCount():
            self.summary_form.removeRow(0)
        for label, key in [("Archivo", "nombre_archivo"), ("Emisor", "emisor_ruc"), ("Cliente", "receptor_nombre"),
                           ("Documento del cliente", "receptor_numero_documento"), ("Fecha", "fecha_emision"),
                           ("Moneda", "moneda"), ("Total", "total"), ("Hash de la firma (DigestValue)", "digest_value"),
                           ("Código de respuesta SUNAT", "codigo_respuesta"), ("Respuesta de SUNAT", "descripcion"),
                           ("Hash del CDR", "hash_cdr")]:
            if record.get(key) not in (None, ""):
                value = QLabel(fmt.money(record[key], record.get("moneda")) if key == "total" else
                               fmt.day(record[key]) if key == "fecha_emision" else str(record[key]))
                value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                value.setWordWrap(True)
                self.summary_form.addRow(label + ":", value)
        if record.get("observaciones"):
            notes = QLabel("\n".join(f"• {note}" for note in record["observaciones"]))
            notes.setWordWrap(True)
            self.summary_form.addRow("Observaciones de SUNAT:", notes)
        self.xml_view.set_xml(record.get("xml_firmado") or record.get("xml") or "")
        self.cdr_view.set_xml(cdr_text(record) or "Todavía no hay respuesta (CDR) de SUNAT.")
        self.resend_button.setEnabled(bool(record.get("xml_firmado")) and status not in statuses.ACCEPTED)
        self._pdf_and_whatsapp_state()
        if record.get("xml_firmado") and self.print_panel.voucher_id is None:
            self.print_panel.load(self.voucher_id)
        elif not record.get("xml_firmado"):
            self.print_panel.status.setText("El comprobante todavía no está firmado: la representación impresa "
                                            "lleva el código hash de la firma.")
        self.export_buttons["cdr"].setEnabled(bool(record.get("cdr")))

    def resend(self) -> None:
        self.context.workers.run(self, resend, self.engine, self.record, done=self._resent, failed=self.banner.show_error,
                                 busy=[self.resend_button])

    def _resent(self, outcome: dict[str, Any]) -> None:
        headline, text = plain_outcome(outcome)
        tone = BANNER_TONES.get(outcome.get("estado", ""), "error")
        self.banner.show_message(f"{headline}. {text}", tone)
        self.reload()

    def choose_export(self, what: str) -> None:
        choose_path(self, "Elegir la carpeta donde guardar", lambda folder: self.export_to(what, folder), folder=True)

    def export_to(self, what: str, folder: str) -> None:
        self.context.workers.run(self, export, self.record, folder, what,
                                 done=lambda path: self.banner.show_message(f"Guardado en {path}", "success"),
                                 failed=self.banner.show_error, busy=list(self.export_buttons.values()))
