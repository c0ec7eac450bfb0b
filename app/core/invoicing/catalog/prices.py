"""Prices with IGV: the line a voucher needs so that its payable amount is what was typed.

The contract's `items[].precio_unitario` is the unit value without IGV, and the voucher builder computes
(app/core/invoicing/builder.py, docs/vouchers.md):

    valor_venta = round_half_up(cantidad × precio_unitario, 2)
    igv         = round_half_up(valor_venta × 18 %, 2)      unless `items[].igv` is given (within 0.01)
    line total  = valor_venta + igv;   payable = Σ line totals

A shop types the price with IGV (S/ 2.50) and expects `round_half_up(cantidad × 2.50, 2)` per line. This module
derives `precio_unitario` (and, when needed, `igv`) for that. The rule, and why `igv` is sometimes needed, is in
docs/catalog.md («Prices with IGV»):

1. T = round_half_up(cantidad × precio_con_igv, 2), the line total wanted.
2. v₀ = round_half_up(T / (1 + rate), 2). Of v₀, v₀ − 0.01, v₀ + 0.01 (in that order) take the first v whose
   computed IGV gives v + round_half_up(v × rate, 2) = T: then `igv` is left to the builder.
3. If none does (about 15 % of totals: v + round(0.18 v) skips those values for every v), take v = v₀ and send
   igv = T − v₀, which is always within 0.01 of the computed figure (within Yupana's and SUNAT's tolerance).
4. precio_unitario = the decimal with the fewest places (at most 10) such that
   round_half_up(cantidad × precio_unitario, 2) = v. With cantidad = 1 that is v itself («2.12»).

Pure: no storage, Decimal only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

from app.core.invoicing.amounts import CENT, IGV_RATE, ZERO, money
from app.core.invoicing.sunat_catalogues import GRAVADO

MAX_PLACES = 10  # SUNAT's sheets accept unit values with up to 10 decimals (errors 2369, 2367)
_HALF_CENT = Fraction(1, 200)


@dataclass(frozen=True)
class LinePrice:
    """What a voucher line gets from a price with IGV, and what the builder will compute from it."""

    precio_unitario: Decimal  # the unit value without IGV: the contract's items[].precio_unitario
    igv: Decimal | None  # the contract's items[].igv when it must be sent; None: the builder's own figure is right
    valor_venta: Decimal  # the line's value without IGV, as the builder computes it
    igv_linea: Decimal  # the line's IGV in the voucher
    total: Decimal  # valor_venta + igv_linea = round_half_up(cantidad × precio_con_igv, 2)

    def item_fields(self) -> dict[str, Decimal]:
        """The contract item's amount fields: `precio_unitario`, and `igv` when it must be sent."""
        fields = {"precio_unitario": self.precio_unitario}
        if self.igv is not None:
            fields["igv"] = self.igv
        return fields


def rate_for(afectacion: str) -> Decimal:
    """The IGV rate of a catalogue 07 affectation Yupana issues: 18 % for «10» (gravado), none otherwise."""
    return IGV_RATE if afectacion == GRAVADO else ZERO


def line_total(cantidad: Decimal, precio_con_igv: Decimal) -> Decimal:
    """What the customer pays for the line: quantity × price typed, half-up to cents."""
    return money(cantidad * precio_con_igv)


def computed_igv(valor_venta: Decimal, rate: Decimal = IGV_RATE) -> Decimal:
    """The IGV the voucher builder computes for a line value."""
    return (valor_venta * rate).quantize(CENT, ROUND_HALF_UP)


def from_price_with_igv(precio_con_igv: Decimal, cantidad: Decimal, rate: Decimal = IGV_RATE) -> LinePrice:
    """The line for `cantidad` units sold at `precio_con_igv` (IGV included) with IGV at `rate` (0.18).

    `rate` 0 (exonerado, inafecto, exportación) gives the price typed as the unit value. The rate is a parameter
    (another one, e.g. IVAP's 4 %, works the same way for rates below 100 %)."""
    if cantidad <= 0:
        raise ValueError("the quantity must be positive")
    if precio_con_igv < 0 or not 0 <= rate < 1:
        raise ValueError("the price must be non-negative and the rate between 0 and 1")
    total = line_total(cantidad, precio_con_igv)
    if rate == 0:
        return LinePrice(precio_con_igv, None, total, ZERO, total)
    base = money(total / (1 + rate))
    for valor in (base, base - CENT, base + CENT):
        if valor >= 0 and valor + computed_igv(valor, rate) == total:
            igv, sent = computed_igv(valor, rate), None
            break
    else:  # no line value reaches this total with the computed IGV: send the IGV, one cent off the computed
        valor = base
        igv = sent = total - base
        assert abs(igv - computed_igv(base, rate)) <= CENT, (total, base)
    return LinePrice(shortest_unit_value(valor, cantidad), sent, valor, igv, total)


def shortest_unit_value(valor_venta: Decimal, cantidad: Decimal) -> Decimal:
    """The unit value with the fewest decimals (at most MAX_PLACES) that the builder turns into `valor_venta`:
    round_half_up(cantidad × u, 2) = valor_venta, i.e. valor_venta − 0.005 ≤ cantidad × u < valor_venta + 0.005.
    Exact (fractions): such a u exists for any quantity below 10⁸."""
    quantity = Fraction(cantidad)
    low = (Fraction(valor_venta) - _HALF_CENT) / quantity
    high = (Fraction(valor_venta) + _HALF_CENT) / quantity
    low = max(low, Fraction(0))
    for places in range(MAX_PLACES + 1):
        scale = 10 ** places
        units = math.ceil(low * scale)
        if Fraction(units, scale) < high:
            return Decimal(units).scaleb(-places)
    raise ValueError(f"no unit value of {MAX_PLACES} decimals gives {valor_venta} for {cantidad} units")
