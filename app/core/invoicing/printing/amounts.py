"""The amounts a printed voucher shows, worked out so the paper adds up (docs/pdf.md, «Importes»).

- A boleta (and a note of a boleta) is read by a final consumer: its lines show prices **with** IGV, as SUNAT's
  printed boleta does, and amounts that add up to what was paid: the line amounts, less the discounts and anticipos,
  plus ICBPER and charges, are the total. Each line's amount is what its line costs before its own discount (the
  line's value and taxes from the XML, plus the discount with its taxes), so no amount is rounded twice.
- A factura's lines show the unit value without IGV with as many decimals as it takes (2 to 10) for
  round(quantity × unit value, 2) to be the line's printed amount: 2 × 8.305 prints 16.61, not 2 × 8.30.
- A free line prints 0.00, with its reference value beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from app.core.invoicing.amounts import ZERO, money
from app.core.invoicing.printing.document import ICBPER, Line, PrintedVoucher
from app.core.invoicing.sunat_catalogues import BOLETA, UNITS

MIN_DECIMALS, MAX_DECIMALS = 2, 10


def with_taxes(voucher: PrintedVoucher) -> bool:
    """Whether the voucher shows prices with IGV: a boleta, or a note that modifies one."""
    return voucher.tipo == BOLETA or voucher.referencia_tipo == BOLETA


def unit_name(code: str) -> str:
    """A unit of catalogue 03 by its Spanish name; another code as the code."""
    return UNITS.get(code, code)


def unit_price(amount: Decimal, quantity: Decimal, written: Decimal | None = None) -> str:
    """The unit price to print for a line of `amount`: the fewest decimals (2 to 10) for which
    round(quantity × price, 2) == amount; the price the XML writes when it is one of those."""
    if not quantity:
        return f"{money(written or ZERO):,.2f}"
    candidates = [written] if written is not None else []
    candidates.append(amount / quantity)
    for value in candidates:
        for places in range(MIN_DECIMALS, MAX_DECIMALS + 1):
            shown = value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
            if money(quantity * shown) == amount:
                return _grouped(shown)
    return _grouped((amount / quantity).quantize(Decimal(1).scaleb(-MAX_DECIMALS), rounding=ROUND_HALF_UP))


def _grouped(value: Decimal) -> str:
    """«1,234.5678»: thousands separated, the decimals as they are (at least two)."""
    sign = "-" if value < 0 else ""
    whole, _, decimals = f"{abs(value):f}".partition(".")
    return f"{sign}{int(whole):,}.{decimals.ljust(2, '0')}"


@dataclass(frozen=True)
class PrintedLine:
    """One line as printed: its amounts already chosen so that the paper adds up."""

    line: Line
    unidad: str  # the unit's Spanish name
    unitario: str  # factura: unit value without IGV; boleta: unit price with IGV (2 to 10 decimals)
    importe: Decimal  # the line before its discount: quantity × unitario, rounded to cents
    descuento: Decimal  # the line's discount as printed (with IGV on a boleta)
    cargo: Decimal  # the line's charge as printed (with IGV on a boleta)
    referencia: Decimal | None  # a free line's reference value

    @property
    def pagado(self) -> Decimal:
        """What the line adds to the voucher: its amount less its discount, plus its charge."""
        return self.importe - self.descuento + self.cargo


def printed_line(line: Line, taxes_in: bool) -> PrintedLine:
    unidad = unit_name(line.unidad)
    if line.gratuito:
        return PrintedLine(line, unidad, "0.00", ZERO, ZERO, ZERO, line.valor_venta)
    if taxes_in:
        paid = line.valor_venta + line.impuestos
        ratio = paid / line.valor_venta if line.valor_venta else Decimal(1)
        descuento, cargo = money(line.descuento * ratio), money(line.cargo * ratio)
        importe = paid + descuento - cargo
        return PrintedLine(line, unidad, unit_price(importe, line.cantidad), importe, descuento, cargo, None)
    importe = line.valor_venta + line.descuento - line.cargo
    return PrintedLine(line, unidad, unit_price(importe, line.cantidad, line.valor_unitario), importe,
                       line.descuento, line.cargo, None)


def printed_lines(voucher: PrintedVoucher) -> list[PrintedLine]:
    taxes_in = with_taxes(voucher)
    return [printed_line(line, taxes_in) for line in voucher.lines]


@dataclass(frozen=True)
class Summary:
    """A boleta's totals as printed: subtotal − descuentos − anticipos + icbper + cargos + redondeo = total."""

    subtotal: Decimal
    descuentos: Decimal
    anticipos: Decimal
    icbper: Decimal
    cargos: Decimal
    redondeo: Decimal
    total: Decimal


def summary(voucher: PrintedVoucher, lines: list[PrintedLine]) -> Summary:
    """The totals of a voucher printed with taxes in its prices. The global discounts (with their IGV) are what is
    left between the lines and the total the XML states, so the printed figures always add up to it."""
    subtotal = sum((line.importe for line in lines), ZERO)
    line_discounts = sum((line.descuento for line in lines), ZERO)
    cargos = voucher.cargos + sum((line.cargo for line in lines), ZERO)
    icbper = voucher.taxes.get(ICBPER, ZERO)
    paid = sum((line.pagado for line in lines), ZERO)
    remainder = paid + icbper + voucher.cargos - voucher.anticipos + voucher.redondeo - voucher.total
    if remainder < 0:  # a charge the lines do not show
        cargos -= remainder
        remainder = ZERO
    return Summary(subtotal, line_discounts + remainder, voucher.anticipos, icbper, cargos, voucher.redondeo,
                   voucher.total)
