"""Comprobantes: the list with search and filters, the form («Nuevo») and the detail view."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.errors import not_found
from app.core.invoicing import statuses
from app.core.invoicing.statuses import ACEPTADO, OBSERVADO, VOUCHER_STATUSES
from app.core.platform import formatting as fmt
from app.core.platform.events import SETTINGS_CHANGED, SUNAT_CDR, VOUCHER_CHANGED

from .batch_issue import BatchIssuer
from .context import Context
from .dialogs import choose_path
from .emission import cdr_text, export, plain_outcome, resend
from .printing import PrintPanel
from .voucher_form import TYPES, open_form
from .widgets import Badge, MessageBanner, heading
from .xml_view import XmlView

if TYPE_CHECKING:
    from app.core.engine import Engine

# What refreshes the list: a voucher's status, a CDR, and the environment (each has its own list).
REFRESH_EVENTS = (VOUCHER_CHANGED, SUNAT_CDR)
BANNER_TONES = {ACEPTADO: "success", OBSERVADO: "warning"}  # any other outcome is shown as an error
COLUMNS = ["Tipo", "Serie-número", "Cliente", "Total", "Fecha", "Estado"]
TYPE_NAMES = {**{code: name for code, (name, _) in TYPES.items()}, "07": "Nota de crédito", "08": "Nota de débito"}


class VouchersPage(QWidget):
    def __init__(self, context: Context) -> None:
        super().__init__()
        self.context = context
        self.engine = context.engine
        self.rows: list[dict[str, Any]] = []
        self.generation = 0
        self.form = None
        self.detail = None
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        top.addWidget(heading("Comprobantes"), 1)
        self.banner = MessageBanner()
        self.batch = BatchIssuer(context, self.banner)
        top.addWidget(self.batch)
        self.new_button = QPushButton("Nuevo comprobante")
        self.new_button.setStyleSheet("font-weight: bold;")
        top.addWidget(self.new_button)
        layout.addLayout(top)
        layout.addWidget(self.banner)
        filters = QHBoxLayout()
        self.search = QLineEdit()
        self.search.setPlaceholderText("Buscar por cliente, RUC/DNI o serie-número…")
        self.search.setClearButtonEnabled(True)
        self.status = QComboBox()
        self.status.addItem("Todos los estados", None)
        for status in VOUCHER_STATUSES:
            self.status.addItem(statuses.label(status), status)
        self.refresh_button = QPushButton("Actualizar")
        filters.addWidget(self.search, 1)
        filters.addWidget(self.status)
        filters.addWidget(self.refresh_button)
        layout.addLayout(filters)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        layout.addWidget(self.table, 1)
        self.empty = QLabel("")
        layout.addWidget(self.empty)
        # typing searches after a short pause, not on every key
        self.search_timer = QTimer(self)
        self.search_timer.setSingleShot(True)
        self.search_timer.setInterval(250)
        self.search_timer.timeout.connect(self.reload)
        self.search.textChanged.connect(self.search_timer.start)
        self.status.currentIndexChanged.connect(self.reload)
        self.refresh_button.clicked.connect(self.reload)
        self.new_button.clicked.connect(self.new_voucher)
        self.table.cellDoubleClicked.connect(lambda row, _: self.open_detail(row))
        self.context.events.event.connect(self._on_event)
        self.reload()

    def _on_event(self, name: str, payload: dict) -> None:
        if name in REFRESH_EVENTS or (
                name == SETTINGS_CHANGED and payload.get("key") == "environment"):  # the other environment's list
            self.reload()

    def reload(self) -> None:
        search, status = self.search.text().strip() or None, self.status.currentData()
        self.generation += 1
        generation = self.generation

        def show_if_latest(rows: list[dict[str, Any]]) -> None:
            if generation == self.generation:  # an older, slower answer must not overwrite a newer one
                self._show(rows)

        self.context.workers.run(self, lambda: self.engine.list_vouchers(search=search, status=status),
                                 done=show_if_latest, failed=self._unavailable)

    def _unavailable(self, exc: BaseException) -> None:
        self.rows = []
        self.table.setRowCount(0)
        self.banner.show_error(exc)

    def _show(self, rows: list[dict[str, Any]]) -> None:
        self.rows = list(rows)
        self.table.setRowCount(len(self.rows))
        for row, voucher in enumerate(self.rows):
            customer = voucher.get("receptor_nombre") or voucher.get("receptor_numero_documento") or "—"
            values = [TYPE_NAMES.get(voucher.get("tipo"), voucher.get("tipo")),
                      f"{voucher.get('serie')}-{voucher.get('numero')}", customer,
                      fmt.money(voucher.get("total"), voucher.get("moneda")),
                      fmt.day(voucher.get("fecha_emision"))]
            for column, text in enumerate(values):
                item = QTableWidgetItem(text)
                if column == 3:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, item)
            self.table.setCellWidget(row, 5, status_badge(voucher.get("status")))
        filtered = self.search.text() or self.status.currentData()
        self.empty.setText("" if self.rows else
                           "Ningún comprobante coincide con la búsqueda." if filtered else
                           "Todavía no hay comprobantes. Pulse «Nuevo comprobante» para emitir el primero.")

    def status_of(self, row: int) -> str:
        """The status shown on a row (its name, e.g. «aceptado»; the badge reads «Aceptado»)."""
        badge = self.table.cellWidget(row, 5)
        return badge.property("status") or "" if badge else ""

    def new_voucher(self) -> Any:
        self.form = open_form(self.context, self)
        self.form.emitted.connect(lambda _: self.reload())
        return self.form

    def open_detail(self, row: int) -> VoucherDetail:
        self.detail = VoucherDetail(self.context, self.rows[row]["id"], self)
        self.detail.show()
        return self.detail


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
