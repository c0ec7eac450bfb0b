"""The sale's terms a shop adds to a factura or boleta (issue 37): the advances paid before and deducted now
(anticipos), the percepción, the retención by a customer who is a retention agent, the due date and the delivery
address. Each reads into the contract's request fields (docs/contract.md: `anticipos`, `percepcion`, `retencion`,
`fecha_vencimiento`, `lugar_entrega`) and shows the engine's errors under the field they name."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QDate, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDateEdit,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from app.core.api import ErrorDetail, sunat_catalogues

from .numbers import parse_decimal
from .widgets import FieldErrors, python_date

cat = sunat_catalogues
NO_PERCEPTION = "Sin percepción"
ADVANCE_COLUMNS = ["Comprobante del anticipo", "Monto pagado (con IGV)"]
# The serie's letter of an advance voucher → its catalogue 12 type (02 factura, 03 boleta por anticipos).
ADVANCE_TYPES = {letter: code for code, letter in cat.PREPAYMENT_VOUCHERS.items()}
ADVANCES_HEIGHT = 84  # the advances' table: a header and two rows in view, it scrolls beyond


class SaleTermsBox(QGroupBox):
    """Anticipos, percepción, retención, vencimiento and lugar de entrega of a factura or boleta."""

    changed = Signal()

    def __init__(self, errors: FieldErrors, parent: QWidget | None = None) -> None:
        super().__init__("Anticipos, percepción, retención y entrega", parent)
        self.anticipos = QTableWidget(0, len(ADVANCE_COLUMNS))
        self.anticipos.setHorizontalHeaderLabels(ADVANCE_COLUMNS)
        self.anticipos.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.anticipos.verticalHeader().hide()
        self.anticipos.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.anticipos.setMaximumHeight(ADVANCES_HEIGHT)
        self.anticipos.setToolTip("El comprobante emitido por el anticipo (serie-número, p. ej. F001-5) y lo que "
                                  "el cliente pagó con él, IGV incluido: se descuenta del importe a pagar.")
        self.anticipos.hide()
        self.add_advance = QPushButton("Agregar anticipo")
        self.remove_advance = QPushButton("Quitar anticipo")
        self.remove_advance.hide()
        self.percepcion = QComboBox()
        self.percepcion.addItem(NO_PERCEPTION, None)
        for code, (name, rate) in cat.PERCEPCIONES.items():
            self.percepcion.addItem(f"{code} — {name} ({rate} %)", code)
        self.percepcion.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.percepcion.setMinimumContentsLength(24)
        self.percepcion.setToolTip("Solo al contado: el IGV que se percibe se suma a lo que paga el cliente.")
        self.retencion = QCheckBox(f"El cliente es agente de retención del IGV ({cat.RETENCION_RATE} %)")
        self.vence = QCheckBox("Vence el:")
        self.vencimiento = QDateEdit(QDate.currentDate())
        self.vencimiento.setCalendarPopup(True)
        self.vencimiento.setDisplayFormat("dd/MM/yyyy")
        self.vencimiento.setEnabled(False)
        self.entrega = QLineEdit()
        self.entrega.setMaxLength(200)
        self.entrega.setPlaceholderText("dirección de entrega de los bienes (opcional)")
        self.entrega_ubigeo = QLineEdit()
        self.entrega_ubigeo.setMaxLength(6)
        self.entrega_ubigeo.setPlaceholderText("ubigeo 150101")
        grid = QGridLayout(self)  # across the form, under the customer: short rows, the advances below them
        grid.addWidget(QLabel("Percepción:"), 0, 0)
        grid.addWidget(errors.wrap(self.percepcion, "percepcion"), 0, 1)
        grid.addWidget(self.vence, 0, 2)
        grid.addWidget(errors.wrap(self.vencimiento, "fecha_vencimiento"), 0, 3)
        grid.addWidget(errors.wrap(self.retencion, "retencion"), 0, 4, 1, 2)
        grid.addWidget(QLabel("Lugar de entrega:"), 1, 0)
        grid.addWidget(errors.wrap(self.entrega, "lugar_entrega"), 1, 1, 1, 4)
        grid.addWidget(errors.wrap(self.entrega_ubigeo, "lugar_entrega.ubigeo"), 1, 5)
        grid.addWidget(QLabel("Anticipos:"), 2, 0)
        advance_buttons = QHBoxLayout()
        advance_buttons.addWidget(self.add_advance)
        advance_buttons.addWidget(self.remove_advance)
        advance_buttons.addStretch(1)
        grid.addLayout(advance_buttons, 2, 1, 1, 5)
        grid.addWidget(errors.wrap(self.anticipos, "anticipos"), 3, 0, 1, 6)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(4, 1)
        self.add_advance.clicked.connect(lambda: self.add_anticipo())
        self.remove_advance.clicked.connect(self.remove_anticipo)
        self.anticipos.itemChanged.connect(self.changed)
        self.percepcion.currentIndexChanged.connect(self.changed)
        self.retencion.toggled.connect(self.changed)
        self.vence.toggled.connect(self.vencimiento.setEnabled)

    # ------------------------------------------------------------ the advances

    def add_anticipo(self, comprobante: str = "", monto: str = "") -> int:
        row = self.anticipos.rowCount()
        self.anticipos.insertRow(row)
        first = QTableWidgetItem(comprobante)
        self.anticipos.setItem(row, 0, first)
        self.anticipos.setItem(row, 1, QTableWidgetItem(monto))
        self.anticipos.show()
        self.remove_advance.show()
        if not comprobante:
            self.anticipos.setCurrentCell(row, 0)
            self.anticipos.editItem(first)
        self.changed.emit()
        return row

    def remove_anticipo(self) -> None:
        row = self.anticipos.currentRow()
        self.anticipos.removeRow(row if row >= 0 else self.anticipos.rowCount() - 1)
        self.anticipos.setVisible(self.anticipos.rowCount() > 0)
        self.remove_advance.setVisible(self.anticipos.rowCount() > 0)
        self.changed.emit()

    def _advances(self, tipo: str) -> tuple[list[dict[str, Any]], list[ErrorDetail]]:
        advances, problems = [], []
        for row in range(self.anticipos.rowCount()):
            name = f"anticipos[{row}]"
            typed, amount_text = self._cell(row, 0).upper(), self._cell(row, 1)
            if not typed and not amount_text:
                continue
            serie, _, numero = typed.rpartition("-")
            letter = serie[:1]
            if serie.isdigit():  # a paper advance voucher (0001-5): of the same kind as this voucher
                letter = "F" if tipo == cat.FACTURA else "B"
            code = ADVANCE_TYPES.get(letter)
            if not serie or not numero.isdigit() or code is None:
                problems.append(ErrorDetail(f"{name}.serie", f"El anticipo «{typed}» debe escribirse como la "
                                            "serie-número del comprobante del anticipo, p. ej. F001-5."))
                continue
            monto = parse_decimal(amount_text)
            if monto is None or monto <= 0:
                problems.append(ErrorDetail(f"{name}.monto", f"El monto del anticipo {typed} «{amount_text}» debe ser "
                                            "lo pagado con IGV, mayor que cero, p. ej. 236.00."))
                continue
            advances.append({"tipo": code, "serie": serie, "numero": int(numero), "monto": monto})
        return advances, problems

    def _cell(self, row: int, column: int) -> str:
        found = self.anticipos.item(row, column)
        return found.text().strip() if found is not None else ""

    # ------------------------------------------------------------ the request

    def set_type(self, tipo: str) -> None:
        """A factura takes all; a boleta no retención (its customer is no retention agent); a note none."""
        sale = tipo in cat.SALES
        self.setVisible(sale)
        self.retencion.setEnabled(tipo == cat.FACTURA)
        if tipo != cat.FACTURA:
            self.retencion.setChecked(False)

    def fields(self, tipo: str) -> tuple[dict[str, Any], list[ErrorDetail]]:
        """The request's fields this box holds (only those given), and what cannot be sent as typed."""
        if tipo not in cat.SALES:
            return {}, []
        fields: dict[str, Any] = {}
        advances, problems = self._advances(tipo)
        if advances:
            fields["anticipos"] = advances
        if self.percepcion.currentData():
            fields["percepcion"] = {"codigo": self.percepcion.currentData()}
        if self.retencion.isChecked() and tipo == cat.FACTURA:
            fields["retencion"] = {}
        if self.vence.isChecked():
            fields["fecha_vencimiento"] = python_date(self.vencimiento.date())
        direccion, ubigeo = self.entrega.text().strip(), self.entrega_ubigeo.text().strip()
        if direccion or ubigeo:
            fields["lugar_entrega"] = {"direccion": direccion, "ubigeo": ubigeo}
        return fields, problems

    def amounts(self, tipo: str) -> dict[str, Any]:
        """What bears on the totals (for the engine's preview), read as far as it reads."""
        fields, _ = self.fields(tipo)
        return {key: fields[key] for key in ("anticipos", "percepcion", "retencion") if key in fields}

    def draft(self) -> dict[str, Any]:
        """What the box holds as typed, for the form's draft (`load` fills it back)."""
        return {"anticipos": [[self._cell(row, 0), self._cell(row, 1)] for row in range(self.anticipos.rowCount())],
                "percepcion": self.percepcion.currentData(), "retencion": self.retencion.isChecked(),
                "vencimiento": python_date(self.vencimiento.date()).isoformat() if self.vence.isChecked() else None,
                "entrega": self.entrega.text().strip(), "entrega_ubigeo": self.entrega_ubigeo.text().strip()}

    def load(self, draft: dict[str, Any]) -> None:
        self.clear()
        for comprobante, monto in draft.get("anticipos") or []:
            self.add_anticipo(str(comprobante), str(monto))
        self.percepcion.setCurrentIndex(max(self.percepcion.findData(draft.get("percepcion")), 0))
        self.retencion.setChecked(bool(draft.get("retencion")) and self.retencion.isEnabled())
        due = QDate.fromString(str(draft.get("vencimiento") or ""), "yyyy-MM-dd")
        self.vence.setChecked(due.isValid())
        if due.isValid():
            self.vencimiento.setDate(due)
        self.entrega.setText(str(draft.get("entrega") or ""))
        self.entrega_ubigeo.setText(str(draft.get("entrega_ubigeo") or ""))

    def watch(self, schedule: Any) -> None:
        """Call `schedule` at every change (the form's autosave)."""
        self.changed.connect(schedule)
        self.entrega.textChanged.connect(schedule)
        self.entrega_ubigeo.textChanged.connect(schedule)
        self.vence.toggled.connect(schedule)
        self.vencimiento.dateChanged.connect(schedule)

    def clear(self) -> None:
        self.anticipos.setRowCount(0)
        self.anticipos.hide()
        self.remove_advance.hide()
        self.percepcion.setCurrentIndex(0)
        self.retencion.setChecked(False)
        self.vence.setChecked(False)
        self.vencimiento.setDate(QDate.currentDate())
        self.entrega.clear()
        self.entrega_ubigeo.clear()
