"""The part of the voucher form a credit or debit note adds: the voucher it modifies and the reason."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QGridLayout, QGroupBox, QLabel, QLineEdit, QSpinBox, QWidget

from app.core.api import CREDIT_REASONS, DEBIT_REASONS, SERIE_LETTER, fmt, statuses, sunat_catalogues

from .widgets import FieldErrors

if TYPE_CHECKING:
    from app.core.api import Engine, Voucher

NOTA_CREDITO = sunat_catalogues.NOTA_CREDITO
REFERENCE_TYPES = sunat_catalogues.SHORT_NAMES  # catalogue 01: the vouchers a note modifies
REASONS = {NOTA_CREDITO: CREDIT_REASONS, sunat_catalogues.NOTA_DEBITO: DEBIT_REASONS}  # catalogue 09 (NC) and 10 (ND)
TYPE_IT_IN = "— escribir los datos a mano —"


def issued_vouchers(engine: Engine) -> list[Voucher]:
    """Facturas and boletas a note may modify, newest first (all issuers; the form filters by issuer). A note can
    only modify a voucher SUNAT has (or will have): not one it rejected or that was never sent."""
    return [voucher for voucher in engine.invoicing.vouchers(limit=500)
            if voucher.tipo in REFERENCE_TYPES and voucher.status in statuses.ISSUED]


def describe_voucher(voucher: Voucher) -> str:
    name = voucher.receptor_nombre or "sin nombre"
    total = voucher.total
    amount = f" · {fmt.money(total, voucher.moneda or 'PEN')}" if total is not None else ""
    return f"{REFERENCE_TYPES[voucher.tipo]} {voucher.serie_numero} · {name}{amount}"


class NoteReferenceBox(QGroupBox):
    """Modified voucher (picked from the issued ones or typed in), reason code and description."""

    reference_chosen = Signal(object)  # a Voucher of engine.invoicing.vouchers: the customer comes from it
    letter_changed = Signal(str)  # F or B: the note's serie follows the modified voucher

    def __init__(self, errors: FieldErrors, parent: QWidget | None = None) -> None:
        super().__init__("Documento que modifica", parent)
        self.rows: list[Voucher] = []
        self.note_type = NOTA_CREDITO
        self.pick = QComboBox()
        self.pick.setMinimumContentsLength(30)
        self.ref_tipo = QComboBox()
        for code, label in REFERENCE_TYPES.items():
            self.ref_tipo.addItem(label, code)
        self.ref_serie = QLineEdit()
        self.ref_serie.setMaxLength(4)
        self.ref_serie.setPlaceholderText("F001, o 0001 si es de papel")
        self.ref_serie.setToolTip("Serie del comprobante que modifica: electrónica (F001, B001), de uno impreso en "
                                  "papel o de contingencia (1 a 4 dígitos, p. ej. 0001) o del sistema de SUNAT "
                                  "(E001, EB01).")
        self.ref_numero = QSpinBox()
        self.ref_numero.setRange(0, 99_999_999)
        self.ref_numero.setSpecialValueText(" ")  # 0 means «not typed yet»
        self.motivo = QComboBox()
        self.descripcion = QLineEdit()
        self.descripcion.setMaxLength(499)
        grid = QGridLayout(self)
        grid.addWidget(QLabel("Comprobante emitido:"), 0, 0)
        grid.addWidget(self.pick, 0, 1, 1, 5)
        grid.addWidget(QLabel("Tipo:"), 1, 0)
        grid.addWidget(self.ref_tipo, 1, 1)
        grid.addWidget(QLabel("Serie:"), 1, 2)
        grid.addWidget(self.ref_serie, 1, 3)
        grid.addWidget(QLabel("Número:"), 1, 4)
        grid.addWidget(self.ref_numero, 1, 5)
        grid.addWidget(errors.label_for("documento_referencia"), 2, 0, 1, 6)
        grid.addWidget(QLabel("Motivo:"), 0, 6)
        grid.addWidget(self.motivo, 0, 7)
        grid.addWidget(errors.label_for("codigo_motivo"), 1, 7)
        grid.addWidget(QLabel("Sustento:"), 2, 6)
        grid.addWidget(self.descripcion, 2, 7)
        grid.addWidget(errors.label_for("descripcion_motivo"), 3, 7)
        grid.setColumnStretch(7, 1)
        self.pick.currentIndexChanged.connect(self._picked)
        self.ref_tipo.currentIndexChanged.connect(self._type_typed)
        self.ref_serie.textEdited.connect(self._typed)
        self.ref_numero.valueChanged.connect(self._typed)
        self.motivo.currentIndexChanged.connect(self._reason_changed)
        self.set_note_type(NOTA_CREDITO)
        self.set_issued([])

    def set_note_type(self, tipo: str) -> None:
        """Catalogue 09 for a credit note, 10 for a debit note."""
        self.note_type = tipo
        self.motivo.blockSignals(True)
        self.motivo.clear()
        for code, label in REASONS[tipo].items():
            self.motivo.addItem(f"{code} · {label}", code)
        self.motivo.blockSignals(False)
        self._reason_changed()

    def set_issued(self, rows: list[Voucher]) -> None:
        self.rows = rows
        self.pick.blockSignals(True)
        self.pick.clear()
        self.pick.addItem(TYPE_IT_IN, None)
        for index, row in enumerate(rows):
            self.pick.addItem(describe_voucher(row), index)
        self.pick.blockSignals(False)

    def clear(self) -> None:
        """For the next note: no modified voucher, the first reason, no description."""
        for widget in (self.pick, self.ref_serie, self.ref_numero):
            widget.blockSignals(True)
        self.pick.setCurrentIndex(0)
        self.ref_serie.clear()
        self.ref_numero.setValue(0)
        for widget in (self.pick, self.ref_serie, self.ref_numero):
            widget.blockSignals(False)
        self.motivo.setCurrentIndex(0)
        self.descripcion.clear()

    def choose(self, row_index: int) -> None:
        """Pick the `row_index`-th issued voucher (as the user would in the list)."""
        self.pick.setCurrentIndex(self.pick.findData(row_index))

    def letter(self) -> str:
        return SERIE_LETTER[self.ref_tipo.currentData()]

    def fields(self) -> dict[str, Any]:
        """The note's part of the request, as the contract names it."""
        return {
            "documento_referencia": {"tipo": self.ref_tipo.currentData(),
                                     "serie": self.ref_serie.text().strip().upper(),
                                     "numero": self.ref_numero.value()},
            "codigo_motivo": self.motivo.currentData(),
            "descripcion_motivo": self.descripcion.text().strip() or None,  # the engine names the reason
        }

    def _picked(self) -> None:
        index = self.pick.currentData()
        if index is None:
            return
        voucher = self.rows[index]
        for widget in (self.ref_tipo, self.ref_serie, self.ref_numero):
            widget.blockSignals(True)
        self.ref_tipo.setCurrentIndex(self.ref_tipo.findData(voucher.tipo))
        self.ref_serie.setText(voucher.serie)
        self.ref_numero.setValue(int(voucher.numero))
        for widget in (self.ref_tipo, self.ref_serie, self.ref_numero):
            widget.blockSignals(False)
        self.letter_changed.emit(self.letter())
        self.reference_chosen.emit(voucher)

    def _typed(self) -> None:
        """Typing the reference by hand leaves the picked voucher behind."""
        self.pick.blockSignals(True)
        self.pick.setCurrentIndex(0)
        self.pick.blockSignals(False)

    def _type_typed(self) -> None:
        self._typed()
        self.letter_changed.emit(self.letter())

    def _reason_changed(self) -> None:
        self.descripcion.setPlaceholderText(REASONS[self.note_type].get(self.motivo.currentData() or "", ""))
