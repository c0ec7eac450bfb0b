"""Comprobantes: the list with search and filters; «Nuevo» opens the form and a row the detail (voucher_detail)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.invoicing import statuses
from app.core.invoicing.statuses import VOUCHER_STATUSES
from app.core.platform import formatting as fmt
from app.core.platform.events import SETTINGS_CHANGED, SUNAT_CDR, VOUCHER_CHANGED

from .batch_issue import BatchIssuer
from .context import Context
from .voucher_detail import TYPE_NAMES, VoucherDetail, status_badge
from .voucher_form import open_form
from .widgets import MessageBanner, heading

# What refreshes the list: a voucher's status, a CDR, and the environment (each has its own list).
REFRESH_EVENTS = (VOUCHER_CHANGED, SUNAT_CDR)
COLUMNS = ["Tipo", "Serie-número", "Cliente", "Total", "Fecha", "Estado"]


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
