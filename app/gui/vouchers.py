"""Comprobantes: the list with search and filters; «Nuevo» opens the form and a row the detail (voucher_detail)."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QDate, QRegularExpression, Qt, QTimer
from PySide6.QtGui import QRegularExpressionValidator
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.core.api import clock, events, statuses

from .batch_issue import BatchIssuer
from .context import Context
from .period_export import PeriodExport
from .voucher_list import COLUMNS, STATUS_COLUMN, STATUS_ROLE, StatusDelegate, VoucherListModel
from .voucher_types import LISTED_NAMES
from .widgets import MessageBanner, heading

if TYPE_CHECKING:
    from app.core.api import Event, Voucher

    from .guia_form import GuiaForm
    from .voucher_detail import VoucherDetail
    from .voucher_form import VoucherForm

# What refreshes the list: a voucher's status, a CDR, and the environment (each has its own list).
REFRESH_EVENTS = (events.VOUCHER_CHANGED, events.SUNAT_CDR, events.SUMMARY_CHANGED, events.DESK_RECONNECTED)  # a baja: «Baja por confirmar»
__all__ = ["COLUMNS", "VouchersPage"]


def _qdate(day: date) -> QDate:
    return QDate(day.year, day.month, day.day)


class VouchersPage(QWidget):
    """The list pages through every voucher of the environment (app.gui.voucher_list), searched and filtered by the
    database: search, state, type, customer's RUC/DNI and a range of fechas de emisión."""

    def __init__(self, context: Context) -> None:
        super().__init__()
        self.context = context
        self.engine = context.engine
        self.form: VoucherForm | None = None
        self.detail: VoucherDetail | None = None
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        top.addWidget(heading("Comprobantes"), 1)
        self.banner = MessageBanner()
        self.batch = BatchIssuer(context, self.banner)
        top.addWidget(self.batch)
        self.export = PeriodExport(context, self.banner, self.export_period)
        top.addWidget(self.export)
        self.validity_button = QPushButton("Consultar validez")
        self.validity_button.setToolTip("Consulta a SUNAT si un comprobante, propio o de un proveedor, es válido")
        top.addWidget(self.validity_button)
        self.guia_button = QPushButton("Nueva guía de remisión")
        top.addWidget(self.guia_button)
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
        for status in statuses.VOUCHER_STATUSES:
            self.status.addItem(statuses.label(status), status)
        self.tipo = QComboBox()
        self.tipo.addItem("Todos los tipos", None)
        for code, name in LISTED_NAMES.items():
            self.tipo.addItem(name, code)
        self.refresh_button = QPushButton("Actualizar")
        filters.addWidget(self.search, 1)
        filters.addWidget(self.tipo)
        filters.addWidget(self.status)
        filters.addWidget(self.refresh_button)
        layout.addLayout(filters)
        more = QHBoxLayout()
        self.cliente = QLineEdit()
        self.cliente.setPlaceholderText("RUC/DNI del cliente")
        self.cliente.setClearButtonEnabled(True)
        self.cliente.setMinimumWidth(170)
        self.cliente.setValidator(QRegularExpressionValidator(QRegularExpression(r"[0-9A-Za-z-]{0,15}"), self.cliente))
        self.by_date = QCheckBox("Por fecha de emisión")
        today = clock.today()
        self.desde = QDateEdit(_qdate(today.replace(day=1)))
        self.hasta = QDateEdit(_qdate(today))
        for edit in (self.desde, self.hasta):
            edit.setCalendarPopup(True)
            edit.setDisplayFormat("dd/MM/yyyy")
            edit.setEnabled(False)
        more.addWidget(QLabel("Cliente:"))
        more.addWidget(self.cliente)
        more.addSpacing(12)
        more.addWidget(self.by_date)
        more.addWidget(QLabel("Desde"))
        more.addWidget(self.desde)
        more.addWidget(QLabel("Hasta"))
        more.addWidget(self.hasta)
        more.addStretch(1)
        layout.addLayout(more)
        self.model = VoucherListModel(context, self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setItemDelegateForColumn(STATUS_COLUMN, StatusDelegate(self.table))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(STATUS_COLUMN, QHeaderView.ResizeMode.Fixed)
        self.table.horizontalHeader().resizeSection(STATUS_COLUMN, 130)
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
        self.cliente.textChanged.connect(self.search_timer.start)
        self.status.currentIndexChanged.connect(self.reload)
        self.tipo.currentIndexChanged.connect(self.reload)
        self.by_date.toggled.connect(self._date_toggled)
        self.desde.dateChanged.connect(self._date_changed)
        self.hasta.dateChanged.connect(self._date_changed)
        self.refresh_button.clicked.connect(self.model.refresh)
        self.new_button.clicked.connect(self.new_voucher)
        self.guia_button.clicked.connect(self.new_guia)
        self.validity_button.clicked.connect(lambda: self.consult_validity())
        self.table.doubleClicked.connect(lambda index: self.open_detail(index.row()))
        self.model.loaded.connect(self._loaded)
        self.model.failed.connect(self._unavailable)
        self.context.events.occurred.connect(self._on_event)
        self.reload()

    @property
    def rows(self) -> list[Voucher]:
        """The vouchers read so far, as shown."""
        return self.model.rows

    def _on_event(self, name: str, payload: Event) -> None:
        if name in REFRESH_EVENTS:
            self.model.refresh()
        elif isinstance(payload, events.SettingsChanged) and payload.key == "environment":  # the other list
            self.reload()

    def _date_toggled(self, on: bool) -> None:
        self.desde.setEnabled(on)
        self.hasta.setEnabled(on)
        self.reload()

    def _date_changed(self) -> None:
        if self.by_date.isChecked():
            self.reload()

    def export_period(self) -> tuple[date, date]:
        """What «Exportar XML y CDR» writes: the dates of the filter when it is on, else this month so far."""
        if self.by_date.isChecked():
            first, last = self.desde.date(), self.hasta.date()
            return date(first.year(), first.month(), first.day()), date(last.year(), last.month(), last.day())
        today = clock.today()
        return today.replace(day=1), today

    def filters(self) -> dict[str, Any]:
        """What the user chose, as the arguments of engine.invoicing.vouchers."""
        chosen: dict[str, Any] = {"search": self.search.text().strip() or None, "status": self.status.currentData(),
                                  "tipo": self.tipo.currentData(), "cliente": self.cliente.text().strip() or None}
        if self.by_date.isChecked():
            chosen["desde"] = self.desde.date().toString("yyyy-MM-dd")
            chosen["hasta"] = self.hasta.date().toString("yyyy-MM-dd")
        return chosen

    def reload(self) -> None:
        """The list from its newest voucher for the filters shown."""
        self.search_timer.stop()
        self.model.set_filters(**self.filters())

    def _unavailable(self, exc: BaseException) -> None:
        self.banner.show_error(exc)

    def _loaded(self) -> None:
        filtered = any(self.filters().values())
        period = (f" entre el {self.desde.date().toString('dd/MM/yyyy')} y el {self.hasta.date().toString('dd/MM/yyyy')}"
                  if self.by_date.isChecked() else "")
        self.empty.setText("" if self.model.rows else
                           f"Ningún comprobante coincide con la búsqueda{period}." if filtered else
                           "Todavía no hay comprobantes. Pulse «Nuevo comprobante» para emitir el primero.")

    def text_of(self, row: int, column: int) -> str:
        """The text shown in a cell."""
        return self.model.index(row, column).data() or ""

    def status_of(self, row: int) -> str:
        """The status shown on a row (its name, e.g. «aceptado»; the pill reads «Aceptado»)."""
        return self.model.index(row, STATUS_COLUMN).data(STATUS_ROLE) or ""

    def new_voucher(self) -> VoucherForm:
        from .voucher_form import open_form  # the form (and its printing) loads when first opened: a quicker start

        form = self.form = open_form(self.context, self)
        form.emitted.connect(lambda _: self.reload())
        return form

    def consult_validity(self) -> QDialog:
        """«Consultar validez»: SUNAT's consulta integrada of any voucher (non-modal)."""
        from .validity import ValidityDialog

        dialog = ValidityDialog(self.context, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def new_guia(self) -> GuiaForm:
        from .guia_form import open_guia_form

        form = self.guia_form = open_guia_form(self.context, self.open_voucher, self)
        form.emitted.connect(lambda _: self.reload())
        return form

    def open_detail(self, row: int) -> VoucherDetail:
        return self.open_voucher(self.model.record(row).id)

    def open_voucher(self, voucher_id: int) -> VoucherDetail:
        from .voucher_detail import VoucherDetail

        detail = self.detail = VoucherDetail(self.context, voucher_id, self)
        detail.show()
        return detail
