"""One voucher in detail: its data, XML, CDR, the printed copy; resend, export, send by WhatsApp, «Anular» (RA/RC,
followed to SUNAT's answer through the `summary.changed` event) and «Consultar CDR en SUNAT»."""

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
from app.core.invoicing.statuses import ACCEPTED, ACEPTADO, ANULADO, OBSERVADO, SUBMISSION_DONE, SUBMISSION_PENDING
from app.core.platform import formatting as fmt
from app.core.platform.events import SUMMARY_CHANGED, VOUCHER_CHANGED

from .context import Context
from .dialogs import choose_path
from .emission import cdr_text, export, plain_outcome, resend
from .printing import PrintPanel
from .void_voucher import DOCUMENT_NAMES, WITH_ARTICLE, VoidDialog, void_kind
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
    record["resumenes"] = engine.voucher_summaries(voucher_id)  # the RA/RC it was put in, newest first
    record["baja"] = engine.void_kind(str(record.get("tipo") or ""), str(record.get("serie") or ""))  # RA, RC, None
    return record


def pending_summary(record: dict[str, Any]) -> dict[str, Any] | None:
    """The RA/RC of this voucher still waiting for SUNAT's ticket, if any."""
    return next((s for s in record.get("resumenes") or [] if s["state"] == SUBMISSION_PENDING), None)


def can_void(record: dict[str, Any]) -> bool:
    """Accepted (or observed) by SUNAT, of a type a RA or RC voids, and not already in a summary being processed."""
    return (record.get("status") in ACCEPTED and void_kind(record) is not None
            and pending_summary(record) is None)


SUMMARY_STATES = {SUBMISSION_PENDING: "esperando la respuesta de SUNAT", SUBMISSION_DONE: "aceptado por SUNAT"}


def summary_line(summary: dict[str, Any]) -> str:
    """«RA-20261124-1 (ticket 123…): aceptado por SUNAT. Motivo: …» for the detail's summary tab."""
    state = SUMMARY_STATES.get(summary["state"]) or (
        f"rechazado por SUNAT (código {summary.get('codigo') or 'sin código'}: {summary.get('descripcion') or ''})")
    motivo = f" Motivo: {summary['motivo']}" if summary.get("motivo") else ""
    return f"• {summary['ident']} (ticket {summary.get('ticket') or 'por asignar'}): {state}.{motivo}"


def summary_words(summary: dict[str, Any]) -> str:
    """«la comunicación de baja RA-20261124-1»."""
    return f"{WITH_ARTICLE.get(summary.get('kind') or 'RA', 'la baja')} {summary.get('ident')}"


class VoucherDetail(QDialog):
    """One voucher: its data, XML, CDR, the signature's hash; resend and export."""

    def __init__(self, context: Context, voucher_id: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.engine = context.engine
        self.voucher_id = voucher_id
        self.record: dict[str, Any] = {}
        self.generation = 0
        self.setWindowTitle("Comprobante")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.resize(900, 640)
        layout = QVBoxLayout(self)
        self.title = heading("…")
        self.status_badge = Badge()
        self.void_state = Badge()  # «Baja pendiente» while SUNAT's ticket is pending
        self.void_state.hide()
        self.awaiting: int | None = None  # the summary sent from this window, until SUNAT answers it
        self.consulted: dict[str, Any] | None = None  # the last «Consultar CDR en SUNAT» answer
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.void_state)
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
        self.void_button = QPushButton("Anular")
        self.void_button.setEnabled(False)
        self.consult_button = QPushButton("Consultar CDR en SUNAT")
        self.consult_button.setEnabled(False)
        self.export_buttons = {what: QPushButton(label) for what, label in
                               [("xml", "Exportar XML"), ("cdr", "Exportar CDR"), ("zip", "Exportar ZIP")]}
        self.pdf_button = QPushButton("PDF")
        self.whatsapp_button = QPushButton("Enviar por WhatsApp")
        buttons.addWidget(self.resend_button)
        buttons.addWidget(self.void_button)
        buttons.addWidget(self.consult_button)
        for what, button in self.export_buttons.items():
            buttons.addWidget(button)
            button.clicked.connect(lambda _=False, w=what: self.choose_export(w))
        buttons.addStretch(1)
        buttons.addWidget(self.pdf_button)
        buttons.addWidget(self.whatsapp_button)
        layout.addLayout(buttons)
        self._pdf_and_whatsapp_state()
        self.resend_button.clicked.connect(self.resend)
        self.void_button.clicked.connect(self.void)
        self.consult_button.clicked.connect(self.consult_cdr)
        self.context.events.event.connect(self._on_event)
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
        self.generation += 1
        generation = self.generation

        def show_if_latest(record: dict[str, Any]) -> None:
            if generation == self.generation:  # events may ask for several reloads: the newest answer wins
                self.show_record(record)

        self.context.workers.run(self, load_voucher, self.engine, self.voucher_id, done=show_if_latest,
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
        if record.get("resumenes"):  # the RA/RC it was put in: «Anular» leaves its trace here
            lines = QLabel("\n".join(summary_line(s) for s in record["resumenes"]))
            lines.setWordWrap(True)
            self.summary_form.addRow("Bajas y resúmenes:", lines)
        self.xml_view.set_xml(record.get("xml_firmado") or record.get("xml") or "")
        consulted = cdr_text({"cdr": self.consulted["cdr_zip"]}) if self.consulted and self.consulted["cdr_zip"] else ""
        self.cdr_view.set_xml(consulted or cdr_text(record) or "Todavía no hay respuesta (CDR) de SUNAT.")
        self.resend_button.setEnabled(bool(record.get("xml_firmado")) and status not in statuses.ACCEPTED
                                      and status != ANULADO)
        self._void_state(record)
        self.consult_button.setEnabled(bool(record.get("xml_firmado")))
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

    # ------------------------------------------------------------ «Anular» (app.gui.void_voucher)

    def _void_state(self, record: dict[str, Any]) -> None:
        """The button, the «Baja pendiente» badge and, once SUNAT answered a baja sent from here, its outcome."""
        self.void_button.setEnabled(can_void(record))
        kind = void_kind(record)
        self.void_button.setToolTip(
            "" if kind is None else f"Anular con {'una' if kind == 'RA' else 'un'} {DOCUMENT_NAMES[kind]} ({kind}), con "
                                    "el motivo que escriba")
        pending = pending_summary(record)
        if pending is not None:
            self.void_state.set("Baja pendiente" if pending["condition"] == "3" else "Resumen pendiente",
                                statuses.colour(statuses.PENDIENTE))
            self.void_state.setToolTip(f"{pending['ident']}, ticket {pending['ticket'] or '(por enviar)'}: "
                                       "esperando la respuesta de SUNAT")
            self.void_state.show()
        else:
            self.void_state.hide()
        mine = next((s for s in record.get("resumenes") or [] if s["id"] == self.awaiting), None)
        if mine is None or mine["state"] == SUBMISSION_PENDING:
            return
        self.awaiting = None
        name = f"{record.get('serie')}-{record.get('numero')}"
        if mine["state"] == SUBMISSION_DONE:
            self.banner.show_message(f"SUNAT aceptó {summary_words(mine)}: el comprobante {name} está anulado.",
                                     "success")
        else:
            self.banner.show_message(
                f"SUNAT rechazó {summary_words(mine)} (código {mine['codigo'] or 'sin código'}): "
                f"{mine['descripcion'] or 'sin descripción'}. El comprobante {name} sigue "
                f"«{statuses.label(record.get('status'))}».", "error")

    def void(self) -> VoidDialog:
        self.void_dialog = VoidDialog(self.context, self.voucher_id, self.record, self)
        self.void_dialog.accepted.connect(lambda: self._void_sent(self.void_dialog.outcome))
        self.void_dialog.open()
        return self.void_dialog

    def _void_sent(self, outcome: Any) -> None:
        self.awaiting = outcome.summary_id
        document = WITH_ARTICLE.get(outcome.kind, "la baja")
        self.banner.show_message(
            f"Se envió {document} {outcome.ident} a SUNAT (ticket {outcome.ticket or 'por asignar'}). El "
            "comprobante quedará «Anulado» cuando SUNAT responda; puede cerrar esta ventana mientras tanto.", "info")
        self.reload()

    def _on_event(self, name: str, payload: dict) -> None:
        if name == SUMMARY_CHANGED and (payload.get("id") == self.awaiting or payload.get("id") in
                                        {s["id"] for s in self.record.get("resumenes") or []}):
            self.reload()
        elif name == VOUCHER_CHANGED and (payload.get("id") == self.voucher_id
                                          or self.voucher_id in (payload.get("ids") or [])):
            self.reload()

    # ------------------------------------------------------------ «Consultar CDR en SUNAT»

    def consult_cdr(self) -> None:
        record = self.record
        self.context.workers.run(self, self.engine.consultar_cdr, record["emisor_ruc"], record["tipo"],
                                 record["serie"], int(record["numero"]), done=self._consulted,
                                 failed=self.banner.show_error, busy=[self.consult_button])

    def _consulted(self, answer: dict[str, Any]) -> None:
        name = f"{self.record.get('serie')}-{self.record.get('numero')}"
        if answer["codigo"] is None:
            self.banner.show_message(f"SUNAT no tiene un CDR de {name} ({answer['status_code']}: "
                                     f"{answer['status_message'] or 'sin mensaje'}).", "warning")
            return
        self.consulted = answer
        stored = " El CDR se guardó en Yupana (pestaña «CDR de SUNAT»)." if answer["guardado"] else ""
        self.banner.show_message(f"SUNAT sobre {name}: código {answer['codigo']}, {answer['descripcion']}.{stored}",
                                 BANNER_TONES.get(answer.get("estado") or "", "error"))
        self.cdr_view.set_xml(cdr_text({"cdr": answer["cdr_zip"]}))
