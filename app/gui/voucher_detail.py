"""One voucher in detail: its data, XML, CDR, the printed copy; resend, export, send by WhatsApp, «Anular» (RA/RC,
followed to SUNAT's answer through the `summary.changed` event) and «Consultar CDR en SUNAT»."""

from __future__ import annotations

from dataclasses import dataclass
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

from app.core.api import events, fmt, not_found, statuses, sunat_catalogues

from .context import Context
from .dialogs import choose_path
from .emission import export, plain_outcome, resend
from .printing import PrintPanel
from .void_voucher import DOCUMENT_NAMES, WITH_ARTICLE, VoidDialog
from .voucher_types import LISTED_NAMES
from .widgets import Badge, MessageBanner, fit_to_screen, heading
from .xml_view import XmlView

if TYPE_CHECKING:
    from app.core.api import ConsultedCdr, EmissionOutcome, Engine, Event, VoucherCdr, VoucherSummary
    from app.core.api import VoucherDetail as VoucherRecord

BANNER_TONES = {statuses.ACEPTADO: "success", statuses.OBSERVADO: "warning"}  # any other outcome is an error


def status_badge(status: str | None, badge: Badge | None = None) -> Badge:
    """A voucher's status as a badge: its Spanish label on its colour (app.core.api.statuses)."""
    badge = badge or Badge()
    badge.set(statuses.label(status), statuses.colour(status))
    badge.setProperty("status", status or "")
    return badge


@dataclass(frozen=True)
class LoadedVoucher:
    """What the detail shows of a voucher: the voucher, SUNAT's latest answer (CDR) when there is one, the RA/RC it
    was put in (newest first) and which of them voids it (RA, RC or None)."""

    voucher: VoucherRecord
    cdr: VoucherCdr | None
    summaries: list[VoucherSummary]
    baja: str | None


def load_voucher(engine: Engine, voucher_id: int) -> LoadedVoucher:
    """The voucher with SUNAT's latest answer and its bajas (read on a worker)."""
    voucher = engine.invoicing.voucher(voucher_id)
    if voucher is None:
        raise not_found("voucher_id", f"No existe el comprobante {voucher_id}.")
    return LoadedVoucher(voucher, engine.invoicing.voucher_cdr(voucher_id),
                         engine.invoicing.voucher_summaries(voucher_id),
                         engine.invoicing.void_kind(voucher.tipo or "", voucher.serie or ""))


def export_files(voucher: VoucherRecord, cdr: VoucherCdr | None) -> dict[str, Any]:
    """What «Exportar» writes (app.gui.emission.export): the voucher's name, its XML and SUNAT's CDR."""
    return {"id": voucher.id, "nombre_archivo": voucher.nombre_archivo, "xml_firmado": voucher.xml_firmado,
            "xml": voucher.xml, "cdr": cdr.cdr_zip if cdr else None}


def pending_summary(summaries: list[VoucherSummary]) -> VoucherSummary | None:
    """The RA/RC of this voucher still waiting for SUNAT's ticket, if any."""
    return next((s for s in summaries if s.state == statuses.SUBMISSION_PENDING), None)


def can_void(loaded: LoadedVoucher) -> bool:
    """Accepted (or observed) by SUNAT, of a type a RA or RC voids, and not already in a summary being processed."""
    return (loaded.voucher.status in statuses.ACCEPTED and loaded.baja is not None
            and pending_summary(loaded.summaries) is None)


SUMMARY_STATES = {statuses.SUBMISSION_PENDING: "esperando la respuesta de SUNAT",
                  statuses.SUBMISSION_DONE: "aceptado por SUNAT"}


def summary_line(summary: VoucherSummary) -> str:
    """«RA-20261124-1 (ticket 123…): aceptado por SUNAT. Motivo: …» for the detail's summary tab."""
    if summary.state == statuses.SUMMARY_UNCONFIRMED:
        state = f"sin confirmar ({summary.descripcion or 'SUNAT no confirmó su resultado'})"
    elif summary.state == statuses.SUBMISSION_PENDING and not summary.ticket and summary.codigo:
        state = f"por confirmar ({summary.descripcion or 'SUNAT ya la tiene'})"  # SUNAT holds it, its ticket lost
    else:
        state = SUMMARY_STATES.get(summary.state) or (
            f"rechazado por SUNAT (código {summary.codigo or 'sin código'}: {summary.descripcion or ''})")
    motivo = f" Motivo: {summary.motivo}" if summary.motivo else ""
    return f"• {summary.ident} (ticket {summary.ticket or 'por asignar'}): {state}.{motivo}"


def pending_tooltip(summary: VoucherSummary) -> str:
    """Where a pending RA/RC stands, for the «Baja por confirmar» badge's tooltip."""
    if summary.ticket:
        return f"{summary.ident}, ticket {summary.ticket}: esperando la respuesta de SUNAT"
    if summary.codigo:  # SUNAT holds it and its ticket was lost: confirmed through SUNAT's voucher status query
        return f"{summary.ident}: {summary.descripcion or 'SUNAT ya la tiene'}"
    return f"{summary.ident}, ticket (por enviar): esperando la respuesta de SUNAT"


def summary_words(summary: VoucherSummary) -> str:
    """«la comunicación de baja RA-20261124-1»."""
    return f"{WITH_ARTICLE.get(summary.kind or 'RA', 'la baja')} {summary.ident}"


class VoucherDetail(QDialog):
    """One voucher: its data, XML, CDR, the signature's hash; resend and export."""

    def __init__(self, context: Context, voucher_id: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.engine = context.engine
        self.voucher_id = voucher_id
        self.record: VoucherRecord | None = None  # the voucher as last read
        self.loaded: LoadedVoucher | None = None  # with its CDR and bajas
        self.generation = 0
        self.setWindowTitle("Comprobante")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        fit_to_screen(self, 900, 640)
        layout = QVBoxLayout(self)
        self.title = heading("…")
        self.status_badge = Badge()
        self.void_state = Badge()  # «Baja por confirmar» while SUNAT has not told the outcome of its baja
        self.void_state.hide()
        self.awaiting: int | None = None  # the summary sent from this window, until SUNAT answers it
        self.consulted: ConsultedCdr | None = None  # the last «Consultar CDR en SUNAT» answer
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
        self.guia_button = QPushButton("Emitir guía de remisión")
        self.guia_button.setToolTip("Una guía de remisión con el cliente, las direcciones y las líneas de este "
                                    "comprobante")
        self.guia_button.hide()  # shown for a factura or a boleta
        buttons.addWidget(self.resend_button)
        buttons.addWidget(self.void_button)
        buttons.addWidget(self.consult_button)
        for what, button in self.export_buttons.items():
            buttons.addWidget(button)
            button.clicked.connect(lambda _=False, w=what: self.choose_export(w))
        buttons.addStretch(1)
        buttons.addWidget(self.pdf_button)
        buttons.addWidget(self.whatsapp_button)
        buttons.addWidget(self.guia_button)
        layout.addLayout(buttons)
        self._pdf_and_whatsapp_state()
        self.resend_button.clicked.connect(self.resend)
        self.void_button.clicked.connect(self.void)
        self.consult_button.clicked.connect(self.consult_cdr)
        self.context.events.occurred.connect(self._on_event)
        self.pdf_button.clicked.connect(lambda: self.tabs.setCurrentWidget(self.print_panel))
        self.whatsapp_button.clicked.connect(self.send_by_whatsapp)
        self.guia_button.clicked.connect(self.new_guia)
        self.reload()

    def _pdf_and_whatsapp_state(self) -> None:
        has_pdf = bool(self.record and self.record.xml_firmado)
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
        assert self.record is not None  # the button waits for the voucher
        dialog = self.send_dialog = SendVoucherDialog(self.context, self.voucher_id, self.record,
                                                      LISTED_NAMES.get(self.record.tipo, "Comprobante"), formato, self)

        def sent() -> None:
            if dialog.sent is not None:  # accepted once sent
                self.banner.show_message(f"Enviado por WhatsApp a {dialog.sent.to}, con el PDF.", "success")

        dialog.accepted.connect(sent)
        dialog.open()
        return dialog

    def new_guia(self) -> QDialog:
        """«Emitir guía de remisión» desde este comprobante (app.gui.guia_form)."""
        from .guia_form import open_guia_form

        form = self.guia_form = open_guia_form(self.context, self.open_voucher, self, voucher_id=self.voucher_id)
        return form

    def open_voucher(self, voucher_id: int) -> QDialog:
        detail = VoucherDetail(self.context, voucher_id, self)
        detail.show()
        return detail

    def reload(self) -> None:
        self.generation += 1
        generation = self.generation

        def show_if_latest(loaded: LoadedVoucher) -> None:
            if generation == self.generation:  # events may ask for several reloads: the newest answer wins
                self.show_record(loaded)

        self.context.workers.run(self, load_voucher, self.engine, self.voucher_id, done=show_if_latest,
                                 failed=self.banner.show_error)

    def show_record(self, loaded: LoadedVoucher) -> None:
        self.loaded = loaded
        self.record = voucher = loaded.voucher
        cdr = loaded.cdr
        name = voucher.nombre_archivo or voucher.serie_numero
        self.title.setText(f"{LISTED_NAMES.get(voucher.tipo, '')} {voucher.serie_numero}")
        self.setWindowTitle(f"Comprobante {name}")
        status = voucher.status or ""
        status_badge(status, self.status_badge)
        while self.summary_form.rowCount():
            self.summary_form.removeRow(0)
        for label, value in [("Archivo", voucher.nombre_archivo), ("Emisor", voucher.emisor_ruc),
                             ("Cliente", voucher.receptor_nombre),
                             ("Documento del cliente", voucher.receptor_numero_documento),
                             ("Fecha", voucher.fecha_emision), ("Moneda", voucher.moneda), ("Total", voucher.total),
                             ("Hash de la firma (DigestValue)", voucher.digest_value),
                             ("Código de respuesta SUNAT", cdr.codigo if cdr else None),
                             ("Respuesta de SUNAT", cdr.descripcion if cdr else None),
                             ("Hash del CDR", cdr.hash_cdr if cdr else None)]:
            if value not in (None, ""):
                shown = QLabel(fmt.money(value, voucher.moneda) if label == "Total" else
                               fmt.day(str(value)) if label == "Fecha" else str(value))
                shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                shown.setWordWrap(True)
                self.summary_form.addRow(label + ":", shown)
        if cdr and cdr.notas:
            notes = QLabel("\n".join(f"• {note}" for note in cdr.notas))
            notes.setWordWrap(True)
            self.summary_form.addRow("Observaciones de SUNAT:", notes)
        if loaded.summaries:  # the RA/RC it was put in: «Anular» leaves its trace here
            lines = QLabel("\n".join(summary_line(s) for s in loaded.summaries))
            lines.setWordWrap(True)
            self.summary_form.addRow("Bajas y resúmenes:", lines)
        self.xml_view.set_xml(voucher.xml_firmado or voucher.xml or "")
        consulted = self.consulted.xml_text if self.consulted else ""
        stored = cdr.xml_text if cdr else ""
        self.cdr_view.set_xml(consulted or stored or "Todavía no hay respuesta (CDR) de SUNAT.")
        signed = bool(voucher.xml_firmado)
        self.resend_button.setEnabled(signed and status not in statuses.ACCEPTED and status != statuses.ANULADO)
        self._void_state(loaded)
        self.consult_button.setEnabled(signed)
        self._pdf_and_whatsapp_state()
        self.guia_button.setVisible(voucher.tipo in sunat_catalogues.SALES)
        if signed and self.print_panel.voucher_id is None:
            self.print_panel.load(self.voucher_id)
        elif not signed:
            self.print_panel.status.setText("El comprobante todavía no está firmado: la representación impresa "
                                            "lleva el código hash de la firma.")
        self.export_buttons["cdr"].setEnabled(bool(cdr and cdr.cdr_zip))

    def resend(self) -> None:
        if self.record is None:  # not read yet
            return
        self.context.workers.run(self, resend, self.engine, self.record, done=self._resent,
                                 failed=self.banner.show_error, busy=[self.resend_button])

    def _resent(self, outcome: EmissionOutcome) -> None:
        headline, text = plain_outcome(outcome)
        tone = BANNER_TONES.get(outcome.estado, "error")
        self.banner.show_message(f"{headline}. {text}", tone)
        self.reload()

    def choose_export(self, what: str) -> None:
        choose_path(self, "Elegir la carpeta donde guardar", lambda folder: self.export_to(what, folder), folder=True)

    def export_to(self, what: str, folder: str) -> None:
        if self.loaded is None:  # not read yet
            return
        files = export_files(self.loaded.voucher, self.loaded.cdr)
        self.context.workers.run(self, export, files, folder, what,
                                 done=lambda path: self.banner.show_message(f"Guardado en {path}", "success"),
                                 failed=self.banner.show_error, busy=list(self.export_buttons.values()))

    # ------------------------------------------------------------ «Anular» (app.gui.void_voucher)

    def _void_state(self, loaded: LoadedVoucher) -> None:
        """The button, the «Baja por confirmar» badge (or «Baja sin confirmar», with the engine's warning, when an
        earlier baja was taken as not made) and, once SUNAT answered a baja sent from here, its outcome."""
        self.void_button.setEnabled(can_void(loaded))
        kind = loaded.baja
        self.void_button.setToolTip(
            "" if kind is None else f"Anular con {'una' if kind == 'RA' else 'un'} {DOCUMENT_NAMES[kind]} ({kind}), con "
                                    "el motivo que escriba")
        pending = pending_summary(loaded.summaries)
        if pending is not None:
            voiding = loaded.voucher.void_pending is not None
            self.void_state.set(statuses.label(statuses.BAJA_POR_CONFIRMAR) if voiding else "Resumen pendiente",
                                statuses.colour(statuses.BAJA_POR_CONFIRMAR if voiding else statuses.PENDIENTE))
            self.void_state.setToolTip(pending_tooltip(pending))
            self.void_state.show()
        elif loaded.voucher.void_warning:
            self.void_state.set("Baja sin confirmar", statuses.colour(statuses.SUMMARY_UNCONFIRMED))
            self.void_state.setToolTip(loaded.voucher.void_warning)
            self.void_state.show()
        else:
            self.void_state.hide()
        mine = next((s for s in loaded.summaries if s.id == self.awaiting), None)
        if mine is None or mine.state == statuses.SUBMISSION_PENDING:
            return
        self.awaiting = None
        voucher = loaded.voucher
        name = voucher.serie_numero
        if mine.state == statuses.SUBMISSION_DONE:
            self.banner.show_message(f"SUNAT aceptó {summary_words(mine)}: el comprobante {name} está anulado.",
                                     "success")
        elif mine.state == statuses.SUMMARY_UNCONFIRMED:
            self.banner.show_message(f"{mine.descripcion or 'SUNAT no confirmó la baja'}. El comprobante {name} sigue "
                                     f"«{statuses.label(voucher.status)}».", "warning")
        else:
            self.banner.show_message(
                f"SUNAT rechazó {summary_words(mine)} (código {mine.codigo or 'sin código'}): "
                f"{mine.descripcion or 'sin descripción'}. El comprobante {name} sigue "
                f"«{statuses.label(voucher.status)}».", "error")

    def void(self) -> VoidDialog:
        assert self.loaded is not None  # the button waits for the voucher
        self.void_dialog = VoidDialog(self.context, self.voucher_id, self.loaded.voucher, self.loaded.baja, self)
        if self.loaded.voucher.void_warning:  # an earlier baja SUNAT received was taken as not made: say which
            self.void_dialog.banner.show_message(self.loaded.voucher.void_warning, "warning")
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

    def _on_event(self, name: str, payload: Event) -> None:
        if isinstance(payload, events.SummaryChanged):
            summaries = self.loaded.summaries if self.loaded else []
            if payload.id == self.awaiting or payload.id in {s.id for s in summaries}:
                self.reload()
        elif isinstance(payload, events.VoucherChanged) and self.voucher_id in payload.ids:
            self.reload()

    # ------------------------------------------------------------ «Consultar CDR en SUNAT»

    def consult_cdr(self) -> None:
        voucher = self.record
        assert voucher is not None  # the button waits for the voucher
        self.context.workers.run(self, self.engine.invoicing.query_cdr, voucher.emisor_ruc, voucher.tipo,
                                 voucher.serie, int(voucher.numero), done=self._consulted,
                                 failed=self.banner.show_error, busy=[self.consult_button])

    def _consulted(self, answer: ConsultedCdr) -> None:
        name = self.record.serie_numero if self.record else ""
        if answer.codigo is None:
            self.banner.show_message(f"SUNAT no tiene un CDR de {name} ({answer.status_code}: "
                                     f"{answer.status_message or 'sin mensaje'}).", "warning")
            return
        self.consulted = answer
        stored = " El CDR se guardó en Yupana (pestaña «CDR de SUNAT»)." if answer.guardado else ""
        self.banner.show_message(f"SUNAT sobre {name}: código {answer.codigo}, {answer.descripcion}.{stored}",
                                 BANNER_TONES.get(answer.estado or "", "error"))
        self.cdr_view.set_xml(answer.xml_text)
