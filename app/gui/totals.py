"""Live totals of the voucher form: a preview only; the engine computes the amounts that are signed.

The preview follows the voucher builder's arithmetic step by step (app/core/invoicing/builder.py, docs/contract.md):
a line's value is round_half_up(cantidad × valor unitario, 2) minus its discount, its IGV 18 % of that (a price with
IGV is turned into a value as catalog.prices does); free lines (gratuitas) have their value and IGV stated but not
charged; the global discount reduces the gravado base and its IGV is recomputed; bags pay the rate of the year per
bag; the detracción is its rate of the payable total, in soles. tests/gui/test_voucher_content.py checks the panel
against the signed XML of the vouchers it issues."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation

from app.core.api import FREE_AFFECTATIONS, FREE_GRAVADO, IGV_RATE, clock, icbper_rate, prices, round_money

ZERO = Decimal("0.00")
AFFECTATIONS = {  # catalogue 07 code: label (the onerous ones the catalogue's products take)
    "10": "Gravado (IGV)",
    "20": "Exonerado",
    "30": "Inafecto",
}
# Catalogue 07, free transfers (transferencias gratuitas): the price typed is the reference value.
FREE_AFFECTATION_NAMES = {
    "11": "Gratuito gravado – Retiro por premio",
    "12": "Gratuito gravado – Retiro por donación",
    "13": "Gratuito gravado – Retiro",
    "14": "Gratuito gravado – Retiro por publicidad",
    "15": "Gratuito gravado – Bonificaciones",
    "16": "Gratuito gravado – Retiro por entrega a trabajadores",
    "21": "Gratuito exonerado – Transferencia gratuita",
    "31": "Gratuito inafecto – Retiro por bonificación",
    "32": "Gratuito inafecto – Retiro",
    "33": "Gratuito inafecto – Retiro por muestras médicas",
    "34": "Gratuito inafecto – Retiro por convenio colectivo",
    "35": "Gratuito inafecto – Retiro por premio",
    "36": "Gratuito inafecto – Retiro por publicidad",
    "37": "Gratuito inafecto – Transferencia gratuita",
}
LINE_AFFECTATIONS = {**AFFECTATIONS, "40": "Exportación", **FREE_AFFECTATION_NAMES}  # what a form line offers
assert set(FREE_AFFECTATION_NAMES) == set(FREE_AFFECTATIONS)
PERCENT = Decimal(100)


def parse_decimal(text: str) -> Decimal | None:
    """A number typed by a person: «1,5» and «1.5» both work; None when it is not a number."""
    cleaned = (text or "").strip().replace(" ", "")
    if "," in cleaned and "." not in cleaned:
        cleaned = cleaned.replace(",", ".")
    cleaned = cleaned.replace(",", "")
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def is_free(afectacion: str) -> bool:
    return afectacion in FREE_AFFECTATIONS


@dataclass
class Line:
    cantidad: Decimal
    valor_unitario: Decimal  # the price typed: without IGV, or with it when `con_igv`; a free line's reference value
    afectacion: str = "10"
    con_igv: bool = False  # «Precios incluyen IGV»: the engine derives the value as catalog.prices does
    descuento: Decimal = ZERO  # the line's discount, without IGV
    bolsas: bool = False  # a line of plastic bags (ICBPER)

    @property
    def valor_venta(self) -> Decimal:
        if self.con_igv and not is_free(self.afectacion):
            return self._derived().valor_venta - self.descuento
        return round_money(self.cantidad * self.valor_unitario) - self.descuento

    @property
    def igv(self) -> Decimal:
        if self.con_igv and not self.descuento and not is_free(self.afectacion):
            return self._derived().igv_linea
        taxed = self.afectacion == "10" or self.afectacion in FREE_GRAVADO
        return round_money(self.valor_venta * IGV_RATE) if taxed else ZERO

    def icbper(self, fecha: date) -> Decimal:
        if not self.bolsas:
            return ZERO
        rate = icbper_rate(fecha.year, fecha.month, fecha.day) or ZERO
        return round_money(int(self.cantidad) * rate)

    def _derived(self) -> prices.LinePrice:
        if self.cantidad <= 0 or self.valor_unitario < 0:
            return prices.LinePrice(Decimal(0), None, ZERO, ZERO, ZERO)
        return prices.from_price_with_igv(self.valor_unitario, self.cantidad, prices.rate_for(self.afectacion))


@dataclass
class Totals:
    gravadas: Decimal = ZERO
    exoneradas: Decimal = ZERO
    inafectas: Decimal = ZERO
    exportacion: Decimal = ZERO
    gratuitas: Decimal = ZERO  # the free lines' reference value: stated, not charged
    descuentos: Decimal = ZERO  # the lines' discounts and the global one, without IGV
    descuento_global: Decimal = ZERO
    icbper: Decimal = ZERO
    igv: Decimal = ZERO
    detraccion: Decimal = ZERO  # in soles
    lines: list[Line] = field(default_factory=list)

    @property
    def total(self) -> Decimal:
        return self.gravadas + self.exoneradas + self.inafectas + self.exportacion + self.igv + self.icbper


def compute(lines: list[Line], descuento_global: Decimal = ZERO, fecha: date | None = None,
            detraccion_porcentaje: Decimal | None = None, tipo_cambio: Decimal = Decimal(1)) -> Totals:
    totals = Totals(lines=lines)
    fecha = fecha or clock.today()  # the ICBPER rate of the day in Peru
    for line in lines:
        totals.descuentos += line.descuento
        totals.icbper += line.icbper(fecha)
        if is_free(line.afectacion):
            totals.gratuitas += line.valor_venta  # its IGV is computed but not charged
            continue
        if line.afectacion == "10":
            totals.gravadas += line.valor_venta
        elif line.afectacion == "20":
            totals.exoneradas += line.valor_venta
        elif line.afectacion == "40":
            totals.exportacion += line.valor_venta
        else:
            totals.inafectas += line.valor_venta
        totals.igv += line.igv
    if descuento_global and 0 < descuento_global < totals.gravadas:  # the engine refuses any other
        gravado_igv = sum((line.igv for line in lines if line.afectacion == "10"), ZERO)
        totals.gravadas -= descuento_global
        totals.igv += round_money(totals.gravadas * IGV_RATE) - gravado_igv
        totals.descuento_global = descuento_global
        totals.descuentos += descuento_global
    if detraccion_porcentaje is not None:
        totals.detraccion = round_money(totals.total * tipo_cambio * detraccion_porcentaje / PERCENT)
    return totals
