"""«Resúmenes y bajas»: every comunicación de baja (RA) and resumen diario (RC) of the environment in use, with its
ticket and SUNAT's outcome, refreshed as the engine follows the tickets (event `summary.changed`); and «Enviar
resumen diario» for a chosen day (engine.invoicing.daily_summary, sent on a worker without waiting for the ticket)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QDate
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDateEdit,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.api import ErrorCode, YupanaError, clock, events, fmt, statuses

from .context import Context
from .widgets import Badge, MessageBanner, heading, python_date

if TYPE_CHECKING:
    from app.core.api import Event, Summary, SummaryOutcome

COLUMNS = ["Identificador", "Documento", "Fecha", "Comprobantes", "Ticket", "Estado", "Respuesta de SUNAT"]
KINDS = {"RA": "Comunicación de baja", "RC": "Resumen diario"}
# A summary's state as a person reads it: the label and colour of the matching voucher status.
STATES = {statuses.SUBMISSION_PENDING: statuses.PENDIENTE, statuses.SUBMISSION_DONE: statuses.ACEPTADO,
          statuses.SUBMISSION_FAILED: statuses.RECHAZADO,
          statuses.SUMMARY_UNCONFIRMED: statuses.SUMMARY_UNCONFIRMED}  # received, its outcome never learnt
STATE_COLUMN = 5


def state_badge(state: str | None) -> Badge:
    status = STATES.get(state or "", state)
    badge = Badge()
    badge.set(statuses.label(status), statuses.colour(status))
    badge.setProperty("state", state or "")
    return badge


class SummariesPage(QWidget):
    def __init__(self, context: Context) -> None:
        super().__init__()
        self.context = context
        self.engine = context.engine
        self.rows: list[Summary] = []
        self.generation = 0
        self.waiting: set[str] = set()  # the summaries sent whose answer the banner still awaits
        self.sent_text = ""  # what the banner said of them
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Resúmenes y bajas"))
        self.banner = MessageBanner()
        layout.addWidget(self.banner)
        intro = QLabel("Las comunicaciones de baja (RA) anulan facturas y sus notas; los resúmenes diarios (RC) "
                       "informan o anulan boletas y sus notas. SUNAT responde con un ticket, que Yupana consulta "
                       "hasta tener su respuesta. Para anular un comprobante, ábralo en Comprobantes y pulse «Anular».")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Boletas del día:"))
        today = QDate(clock.today())  # the app's wall clock (frozen for `make screenshots`)
        self.day = QDateEdit(today)
        self.day.setCalendarPopup(True)
        self.day.setDisplayFormat("dd/MM/yyyy")
        self.day.setMaximumDate(today)
        self.send_button = QPushButton("Enviar resumen diario")
        self.send_button.setToolTip("Informa a SUNAT, en un resumen diario (RC), las boletas firmadas de ese día que "
                                    "no se enviaron una por una")
        self.refresh_button = QPushButton("Actualizar")
        controls.addWidget(self.day)
        controls.addWidget(self.send_button)
        controls.addStretch(1)
        controls.addWidget(self.refresh_button)
        layout.addLayout(controls)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        for column in range(len(COLUMNS) - 1):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        layout.addWidget(self.table, 1)
        self.empty = QLabel("")
        layout.addWidget(self.empty)
        self.send_button.clicked.connect(self.send_summary)
        self.refresh_button.clicked.connect(self.reload)
        self.context.events.occurred.connect(self._on_event)
        self.reload()

    def _on_event(self, name: str, payload: Event) -> None:
        if name in (events.SUMMARY_CHANGED, events.DESK_RECONNECTED) or (isinstance(payload, events.SettingsChanged)
                                              and payload.key == "environment"):
            self.reload()

    def reload(self) -> None:
        self.generation += 1
        generation = self.generation

        def show_if_latest(rows: list[Summary]) -> None:
            if generation == self.generation:  # an older, slower answer must not overwrite a newer one
                self._show(rows)

        self.context.workers.run(self, self.engine.invoicing.summaries, done=show_if_latest,
                                 failed=self.banner.show_error)

    def _show(self, rows: list[Summary]) -> None:
        self.rows = list(rows)
        self.table.setRowCount(len(self.rows))
        for row, summary in enumerate(self.rows):
            answer = ": ".join(part for part in (summary.codigo, summary.descripcion) if part)
            values = [summary.ident, KINDS.get(summary.kind, summary.kind), fmt.day(summary.issue_date),
                      summary.comprobantes or "", summary.ticket or "—", "", answer]
            for column, text in enumerate(values):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.table.setItem(row, column, item)
            self.table.setCellWidget(row, STATE_COLUMN, state_badge(summary.state))
        self.empty.setText("" if self.rows else "Todavía no hay comunicaciones de baja ni resúmenes diarios en este "
                                                "entorno.")
        self._answered()

    def state_of(self, row: int) -> str:
        """The state shown on a row (pendiente, terminado, fallido or sin_confirmar)."""
        badge = self.table.cellWidget(row, STATE_COLUMN)
        return badge.property("state") or "" if badge else ""

    def send_summary(self) -> None:
        fecha = python_date(self.day.date())
        self.banner.clear()
        self.waiting = set()
        self.context.workers.run(self, self.engine.invoicing.daily_summary, fecha, wait=False, done=self._sent,
                                 failed=self._send_failed, busy=[self.send_button])

    def _sent(self, outcomes: list[SummaryOutcome]) -> None:
        sent = "; ".join(f"{o.ident} (ticket {o.ticket or 'por asignar'}): {len(o.vouchers)} comprobante(s)"
                         for o in outcomes)
        self.sent_text = f"Resumen diario enviado a SUNAT: {sent}."
        self.banner.show_message(f"{self.sent_text} El estado se actualiza cuando SUNAT responda.", "info")
        self.waiting = {o.ident for o in outcomes}
        self.reload()

    def _send_failed(self, exc: BaseException) -> None:
        """No boletas to report that day is normal news, not a red error."""
        if isinstance(exc, YupanaError) and exc.code == ErrorCode.NOT_FOUND and \
                any(detail.field == "fecha" for detail in exc.details):
            self.banner.show_message(exc.message, "info")
        else:
            self.banner.show_error(exc)

    def _answered(self) -> None:
        """Once SUNAT answered the summaries just sent, the banner says so instead of «se actualiza cuando…»."""
        done = [s for s in self.rows if s.ident in self.waiting and s.state != statuses.SUBMISSION_PENDING]
        if not self.waiting or len(done) < len(self.waiting):
            return
        self.waiting = set()
        answers = "; ".join(f"{s.ident}: {statuses.label(STATES.get(s.state or '', s.state))}" for s in done)
        accepted = all(s.state == statuses.SUBMISSION_DONE for s in done)
        self.banner.show_message(f"{self.sent_text} SUNAT respondió: {answers}.", "success" if accepted else "warning")
