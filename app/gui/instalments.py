"""Sale on credit: the instalments (cuotas) table of the voucher form."""

from __future__ import annotations

from datetime import date
from decimal import ROUND_DOWN, Decimal
from typing import Any

from PySide6.QtCore import QDate, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QDateEdit,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.api import ErrorDetail, clock, fmt

from .numbers import parse_decimal
from .widgets import FieldErrors, cell, cell_widget

CENT = Decimal("0.01")
DAYS_BETWEEN = 30  # a new cuota falls due a month after the previous one
ERROR_BRUSH = QBrush(QColor("#f8d7da"))
WARNING_STYLE = "color: #8a5300;"


def split_evenly(total: Decimal, count: int) -> list[Decimal]:
    """`count` amounts to the cent summing exactly to `total`; the last one takes the leftover cents."""
    if count <= 0:
        return []
    share = (total / count).quantize(CENT, rounding=ROUND_DOWN)
    return [share] * (count - 1) + [total - share * (count - 1)]


class InstalmentsBox(QGroupBox):
    """One row per cuota (amount, due date). Until the user types an amount, the cuotas share the total
    evenly and follow it as lines change; one cuota for the whole amount by default."""

    def __init__(self, errors: FieldErrors, parent: QWidget | None = None) -> None:
        super().__init__("Cuotas (venta al crédito)", parent)
        self.total = Decimal("0.00")
        self.follow_total = True
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["Monto", "Vence"])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        self.table.setMaximumHeight(130)
        self.add_button = QPushButton("Agregar cuota")
        self.remove_button = QPushButton("Quitar cuota")
        self.sum_label = QLabel("")
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(self.sum_label)
        layout.addWidget(errors.label_for("forma_pago"))
        layout.addLayout(buttons)
        self.table.itemChanged.connect(self._amount_typed)
        self.add_button.clicked.connect(lambda: self.add_cuota())
        self.remove_button.clicked.connect(self.remove_cuota)
        self.add_cuota()

    # ------------------------------------------------------------ rows

    def count(self) -> int:
        return self.table.rowCount()

    def add_cuota(self, monto: str | None = None, due: date | None = None) -> int:
        row = self.count()
        if due is None:
            previous = self._due_edit(row - 1).date() if row else QDate(clock.today())
            due_date = previous.addDays(DAYS_BETWEEN)
        else:
            due_date = QDate(due.year, due.month, due.day)
        self.table.blockSignals(True)
        self.table.insertRow(row)
        item = QTableWidgetItem("")
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.table.setItem(row, 0, item)
        edit = QDateEdit(due_date)
        edit.setCalendarPopup(True)
        edit.setDisplayFormat("dd/MM/yyyy")
        self.table.setCellWidget(row, 1, edit)
        self.table.blockSignals(False)
        if monto is not None:
            self.follow_total = False
            self._set_amount(row, monto)
        elif self.follow_total:
            self._share_total()
        else:
            self._set_amount(row, f"{max(self.total - self._typed_sum(), Decimal('0.00')):.2f}")
        self._show_sum()
        return row

    def remove_cuota(self) -> None:
        if self.count() <= 1:
            return  # a sale on credit has at least one cuota
        row = self.table.currentRow()
        self.table.removeRow(row if row >= 0 else self.count() - 1)
        if self.follow_total:
            self._share_total()
        self._show_sum()

    def reset(self) -> None:
        """Back to one cuota for the whole amount."""
        self.table.setRowCount(0)
        self.follow_total = True
        self.add_cuota()

    def set_total(self, total: Decimal) -> None:
        self.total = total
        if self.follow_total:
            self._share_total()
        self._show_sum()

    # ------------------------------------------------------------ reading

    def read(self) -> tuple[list[dict[str, Any]], list[ErrorDetail]]:
        """The cuotas as the contract's `forma_pago.cuotas`, plus amounts that are not numbers."""
        cuotas, problems = [], []
        for row in range(self.count()):
            amount = parse_decimal(self._amount_text(row))
            if amount is None or amount <= 0:
                problems.append(ErrorDetail(f"forma_pago.cuotas[{row}].monto",
                                            f"Cuota {row + 1}: el monto debe ser un número mayor que cero."))
            cuotas.append({"monto": amount or Decimal(0), "fecha_vencimiento": self._due_edit(row).date().toPython()})
        return cuotas, problems

    def mark(self, details: list[ErrorDetail]) -> None:
        """Colour the cuotas the engine (or `read`) complained about."""
        for row in range(self.count()):
            amount = cell(self.table, row, 0)
            amount.setBackground(QBrush())
            amount.setToolTip("")
        for detail in details:
            field = detail.field or ""
            if field.startswith("forma_pago.cuotas[") and "]" in field:
                row = int(field[len("forma_pago.cuotas["):field.index("]")])
                if row < self.count():
                    amount = cell(self.table, row, 0)
                    amount.setBackground(ERROR_BRUSH)
                    amount.setToolTip(detail.message)

    # ------------------------------------------------------------ internals

    def _due_edit(self, row: int) -> QDateEdit:
        return cell_widget(self.table, row, 1, QDateEdit)

    def _amount_text(self, row: int) -> str:
        item = self.table.item(row, 0)
        return item.text().strip() if item else ""

    def _set_amount(self, row: int, text: str) -> None:
        self.table.blockSignals(True)
        cell(self.table, row, 0).setText(text)
        self.table.blockSignals(False)

    def _share_total(self) -> None:
        for row, amount in enumerate(split_evenly(self.total, self.count())):
            self._set_amount(row, f"{amount:.2f}")

    def _typed_sum(self) -> Decimal:
        return sum((parse_decimal(self._amount_text(row)) or Decimal(0) for row in range(self.count())),
                   Decimal("0.00"))

    def _amount_typed(self) -> None:
        self.follow_total = False  # the user's amounts are kept as they are
        self._show_sum()

    def _show_sum(self) -> None:
        total = self._typed_sum()
        self.sum_label.setText(f"Suma de las cuotas: {fmt.number(total)} de {fmt.number(self.total)}")
        self.sum_label.setStyleSheet("" if total == self.total else WARNING_STYLE)
