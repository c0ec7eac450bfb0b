"""What the voucher form adds beyond the plain sale (issue 17): the global discount, the references (guías de
remisión, orden de compra), the operation type and exchange rate, and the detracción (SPOT) section with its
suggestion. Each reads into the contract's request fields (docs/contract.md) and shows the engine's errors under
the field they name."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.api import (
    DETRACCION_OPERATION,
    DETRACCION_THRESHOLD,
    DETRACCIONES,
    OPERATION_TYPES,
    ErrorDetail,
    sunat_catalogues,
)

from .numbers import parse_decimal
from .widgets import FieldErrors

HINT_STYLE = "color: #8a5300;"
AUTOMATIC_OPERATION = "Automático (según las líneas y la detracción)"
# Catalogue 59 (means of payment of the detracción deposit): the ones a small business uses; 001 by default.
PAYMENT_MEANS = {code: sunat_catalogues.MEANS_OF_PAYMENT[code] for code in sunat_catalogues.MEANS_OF_PAYMENT_OFFERED}
DEFAULT_SERVICE_CODE = "037"  # «Demás servicios gravados con el IGV»: the suggestion when no product says otherwise
THRESHOLD = Decimal(DETRACCION_THRESHOLD)


def read_guias(text: str) -> tuple[list[dict[str, Any]], list[ErrorDetail]]:
    """«T001-123, T001-124» as the contract's `guias`; a piece without «serie-número» is named back."""
    guias, problems = [], []
    for index, piece in enumerate(p.strip() for p in text.replace(";", ",").split(",") if p.strip()):
        serie, _, numero = piece.upper().rpartition("-")
        if not serie or not numero.isdigit():
            problems.append(ErrorDetail(f"guias[{index}].serie", f"La guía «{piece}» debe escribirse como "
                                        "serie-número, p. ej. T001-123."))
            continue
        guias.append({"serie": serie, "numero": int(numero)})
    return guias, problems


class ExtrasBox(QGroupBox):
    """Descuento global, guías de remisión, orden de compra, tipo de operación and tipo de cambio."""

    changed = Signal()

    def __init__(self, errors: FieldErrors, parent: QWidget | None = None) -> None:
        super().__init__("Descuento global y referencias", parent)
        self.descuento_global = QLineEdit()
        self.descuento_global.setPlaceholderText("sin IGV, p. ej. 10.00")
        self.guias = QLineEdit()
        self.guias.setPlaceholderText("serie-número, p. ej. T001-123, T001-124")
        self.orden_compra = QLineEdit()
        self.orden_compra.setMaxLength(20)
        self.orden_compra.setPlaceholderText("opcional")
        self.tipo_operacion = QComboBox()
        self.tipo_operacion.addItem(AUTOMATIC_OPERATION, None)
        for code, name in OPERATION_TYPES.items():
            # set by the detracción section; the percepción (2001) is asked through operation 1 only
            if code not in (DETRACCION_OPERATION, sunat_catalogues.PERCEPCION_OPERATION):
                self.tipo_operacion.addItem(f"{code} — {name}", code)
        self.tipo_cambio = QLineEdit()
        self.tipo_cambio.setPlaceholderText("soles por dólar, p. ej. 3.750")
        self.tipo_cambio_label = QLabel("Tipo de cambio:")
        self.tipo_cambio_label.setToolTip("SUNAT recibe el monto de la detracción en soles.")
        self.tipo_operacion.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.tipo_operacion.setMinimumContentsLength(24)
        grid = self.grid = QGridLayout(self)
        grid.addWidget(QLabel("Descuento global:"), 0, 0)
        grid.addWidget(errors.wrap(self.descuento_global, "descuento_global"), 0, 1)
        grid.addWidget(QLabel("Orden de compra:"), 0, 2)
        grid.addWidget(errors.wrap(self.orden_compra, "orden_compra"), 0, 3)
        grid.addWidget(QLabel("Guías de remisión:"), 1, 0)
        grid.addWidget(errors.wrap(self.guias, "guias"), 1, 1, 1, 3)
        grid.addWidget(QLabel("Tipo de operación:"), 2, 0)
        grid.addWidget(errors.wrap(self.tipo_operacion, "tipo_operacion"), 2, 1, 1, 3)
        grid.addWidget(self.tipo_cambio_label, 3, 0)
        grid.addWidget(errors.wrap(self.tipo_cambio, "tipo_cambio"), 3, 1)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        self.descuento_global.textChanged.connect(self.changed)
        self.tipo_operacion.currentIndexChanged.connect(self.changed)
        self.tipo_cambio.textChanged.connect(self.changed)
        self.set_currency("PEN")

    def add_row(self, widget: QWidget) -> None:
        """`widget` across the box, under its fields."""
        self.grid.addWidget(widget, self.grid.rowCount(), 0, 1, 4)

    def set_currency(self, moneda: str) -> None:
        """The exchange rate is asked only of a voucher in dollars (SUNAT wants the detracción in soles)."""
        self.tipo_cambio_label.setVisible(moneda != "PEN")
        self.tipo_cambio.setVisible(moneda != "PEN")

    def discount(self) -> Decimal:
        value = parse_decimal(self.descuento_global.text())
        return value if value is not None and value > 0 else Decimal("0.00")

    def exchange_rate(self) -> Decimal | None:
        value = parse_decimal(self.tipo_cambio.text()) if self.tipo_cambio.isVisible() or self.tipo_cambio.text() \
            else None
        return value if value is not None and value > 0 else None

    def fields(self, moneda: str, invoice: bool) -> tuple[dict[str, Any], list[ErrorDetail]]:
        """The request's fields this box holds (only those typed), and what cannot be sent as typed."""
        fields: dict[str, Any] = {}
        problems: list[ErrorDetail] = []
        typed = self.descuento_global.text().strip()
        if typed and invoice:
            value = parse_decimal(typed)
            if value is None or value < 0:
                problems.append(ErrorDetail("descuento_global", f"El descuento global «{typed}» debe ser un monto "
                                            "sin IGV, p. ej. 10.00."))
            elif value:
                fields["descuento_global"] = value
        guias, guia_problems = read_guias(self.guias.text())
        problems += guia_problems
        if guias:
            fields["guias"] = guias
        if self.orden_compra.text().strip():
            fields["orden_compra"] = self.orden_compra.text().strip()
        if invoice and self.tipo_operacion.currentData():
            fields["tipo_operacion"] = self.tipo_operacion.currentData()
        typed = self.tipo_cambio.text().strip()
        if typed and moneda != "PEN":
            value = parse_decimal(typed)
            if value is None or value <= 0:
                problems.append(ErrorDetail("tipo_cambio", f"El tipo de cambio «{typed}» debe ser un número mayor "
                                            "que cero (soles por dólar), p. ej. 3.750."))
            else:
                fields["tipo_cambio"] = value
        return fields, problems

    def clear(self) -> None:
        for widget in (self.descuento_global, self.guias, self.orden_compra, self.tipo_cambio):
            widget.clear()
        self.tipo_operacion.setCurrentIndex(0)


class DetraccionBox(QGroupBox):
    """The detracción (SPOT) of a factura: hidden until asked for («Agregar detracción», or the suggestion's
    button); código of catalogue 54 with its default rate, porcentaje, Banco de la Nación account, means of payment
    (catalogue 59, 001 by default) and the amount in soles."""

    changed = Signal()

    def __init__(self, errors: FieldErrors, parent: QWidget | None = None) -> None:
        super().__init__("Detracción (SPOT)", parent)
        self.codigo = QComboBox()
        for code, (name, rate) in DETRACCIONES.items():
            self.codigo.addItem(f"{code} — {name} ({rate} %)", code)
        self.porcentaje = QLineEdit()
        self.porcentaje.setMaximumWidth(80)
        self.cuenta = QLineEdit()
        self.cuenta.setPlaceholderText("cuenta de detracciones, p. ej. 00-000-123456")
        self.medio_pago = QComboBox()
        for code, name in PAYMENT_MEANS.items():
            self.medio_pago.addItem(f"{code} — {name}", code)
        self.amount = QLabel("")
        self.remove_button = QPushButton("Quitar detracción")
        self.codigo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.codigo.setMinimumContentsLength(30)
        grid = QGridLayout(self)
        grid.addWidget(QLabel("Código (catálogo 54):"), 0, 0)
        grid.addWidget(errors.wrap(self.codigo, "detraccion.codigo"), 0, 1, 1, 3)
        grid.addWidget(QLabel("Porcentaje:"), 1, 0)
        grid.addWidget(errors.wrap(self.porcentaje, "detraccion.porcentaje"), 1, 1)
        grid.addWidget(QLabel("Medio de pago:"), 1, 2)
        grid.addWidget(errors.wrap(self.medio_pago, "detraccion.medio_pago"), 1, 3)
        grid.addWidget(QLabel("Cuenta del Banco de la Nación:"), 2, 0)
        grid.addWidget(errors.wrap(self.cuenta, "detraccion.cuenta"), 2, 1, 1, 3)
        grid.addWidget(self.amount, 3, 0, 1, 3)
        grid.addWidget(self.remove_button, 3, 3)
        grid.setColumnStretch(3, 1)
        self.codigo.currentIndexChanged.connect(self._code_changed)
        self.porcentaje.textChanged.connect(self.changed)
        self.remove_button.clicked.connect(self.close_section)
        self._code_changed()
        self.hide()

    def open_with(self, codigo: str) -> None:
        """Show the section with `codigo` chosen (its default rate filled in)."""
        self.codigo.setCurrentIndex(max(self.codigo.findData(codigo), 0))
        self._code_changed()
        self.show()
        self.changed.emit()
        self.cuenta.setFocus()

    def close_section(self) -> None:
        self.hide()
        self.changed.emit()

    def active(self) -> bool:
        return not self.isHidden()

    def rate(self) -> Decimal | None:
        value = parse_decimal(self.porcentaje.text())
        return value if self.active() and value is not None and value > 0 else None

    def fields(self) -> tuple[dict[str, Any], list[ErrorDetail]]:
        if not self.active():
            return {}, []
        typed = self.porcentaje.text().strip()
        porcentaje = parse_decimal(typed)
        if porcentaje is None:
            return {}, [ErrorDetail("detraccion.porcentaje", f"El porcentaje de la detracción «{typed}» debe ser un "
                                    "número, p. ej. 12.")]
        return {"detraccion": {"codigo": self.codigo.currentData(), "porcentaje": porcentaje,
                               "cuenta": self.cuenta.text().strip(), "medio_pago": self.medio_pago.currentData()}}, []

    def show_amount(self, amount: Decimal) -> None:
        self.amount.setText(f"Monto de la detracción: S/ {amount:,.2f}")

    def _code_changed(self) -> None:
        code = self.codigo.currentData()
        self.porcentaje.setText(DETRACCIONES[code][1] if code in DETRACCIONES else "")
        self.changed.emit()


class DetraccionHint(QWidget):
    """The suggestion: a factura above S/ 700 (a product of the catalogue subject to detracción, or a sale that may
    be a service) gets a hint and a button that opens the section with the code filled in."""

    def __init__(self, errors: FieldErrors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = QLabel("")
        self.text.setWordWrap(True)
        self.text.setStyleSheet(HINT_STYLE)
        self.button = QPushButton("Agregar detracción")
        self.codigo = DEFAULT_SERVICE_CODE
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.text, 1)
        row.addWidget(self.button)
        column.addLayout(row)
        # The engine's «detraccion» errors (a factura above S/ 700 with a line subject to it, and none) show here,
        # next to the button that adds it; the section's own fields have their labels in the section.
        column.addWidget(errors.label_for("detraccion"))

    def suggest(self, invoice: bool, total_pen: Decimal | None, product_codes: list[tuple[str, str]],
                active: bool) -> None:
        """`total_pen`: the payable total in soles (None when a USD voucher has no exchange rate yet, and for an
        export, which is not subject to the detracción);
        `product_codes`: (description, catálogo 54 code) of the lines that come from such products."""
        self.codigo = product_codes[0][1] if product_codes else DEFAULT_SERVICE_CODE
        if not invoice or active:
            self.text.setText("")
            self.button.setText("Agregar detracción")
            self.setVisible(invoice and not active)
            return
        above = total_pen is not None and total_pen > THRESHOLD
        if above and product_codes:
            description, code = product_codes[0]
            name, rate = DETRACCIONES.get(code, ("", ""))
            self.text.setText(f"Esta factura supera S/ {THRESHOLD} y «{description}» está sujeto a detracción "
                              f"(código {code}, {name}, {rate} %): agregue la detracción con la cuenta del Banco de la "
                              "Nación.")
        elif above:
            self.text.setText(f"Esta factura supera S/ {THRESHOLD}: si es un servicio o un bien sujeto a detracción "
                              "(SPOT), agregue la detracción con la cuenta del Banco de la Nación.")
        else:
            self.text.setText("")
        self.button.setText("Agregar detracción (sugerida)" if above else "Agregar detracción")
        self.show()

    def suggested(self) -> bool:
        return bool(self.text.text())
