"""Live totals of the voucher form: a preview only; the engine computes the amounts that are signed."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from app.core.invoicing.amounts import IGV_RATE, money
from app.core.invoicing.catalog import prices

AFFECTATIONS = {  # catalogue 07 code: label
    "10": "Gravado (IGV)",
    "20": "Exonerado",
    "30": "Inafecto",
}


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


@dataclass
class Line:
    cantidad: Decimal
    valor_unitario: Decimal  # the price typed: without IGV, or with it when `con_igv`
    afectacion: str = "10"
    con_igv: bool = False  # «Precios incluyen IGV»: the engine derives the value as catalog.prices does

    @property
    def valor_venta(self) -> Decimal:
        if self.con_igv:
            return self._derived().valor_venta
        return money(self.cantidad * self.valor_unitario)

    @property
    def igv(self) -> Decimal:
        if self.con_igv:
            return self._derived().igv_linea
        return money(self.valor_venta * IGV_RATE) if self.afectacion == "10" else Decimal("0.00")

    def _derived(self) -> prices.LinePrice:
        if self.cantidad <= 0 or self.valor_unitario < 0:
            return prices.LinePrice(Decimal(0), None, Decimal("0.00"), Decimal("0.00"), Decimal("0.00"))
        return prices.from_price_with_igv(self.valor_unitario, self.cantidad, prices.rate_for(self.afectacion))


@dataclass
class Totals:
    gravadas: Decimal = Decimal("0.00")
    exoneradas: Decimal = Decimal("0.00")
    inafectas: Decimal = Decimal("0.00")
    igv: Decimal = Decimal("0.00")
    lines: list[Line] = field(default_factory=list)

    @property
    def total(self) -> Decimal:
        return self.gravadas + self.exoneradas + self.inafectas + self.igv


def compute(lines: list[Line]) -> Totals:
    totals = Totals(lines=lines)
    for line in lines:
        if line.afectacion == "10":
            totals.gravadas += line.valor_venta
        elif line.afectacion == "20":
            totals.exoneradas += line.valor_venta
        else:
            totals.inafectas += line.valor_venta
        totals.igv += line.igv
    return totals
