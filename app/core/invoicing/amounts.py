"""Decimal money arithmetic for vouchers and the amount in words of SUNAT's legend 1000.

Amounts are `Decimal`, never float; rounding is half-up to 2 places, and only where SUNAT's
rules round (line values, taxes, totals). Unit prices and quantities keep their decimals.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")
ZERO = Decimal("0.00")
IGV_RATE = Decimal("0.18")
IGV_PERCENT = Decimal("18")

# ICBPER (Ley 30884, impuesto al consumo de las bolsas de plástico), per bag, by the year of emission. In force
# from 2019-08-01; the rate of 2023 holds from then on.
ICBPER_FROM = (2019, 8, 1)
ICBPER_RATES = {2019: Decimal("0.10"), 2020: Decimal("0.20"), 2021: Decimal("0.30"), 2022: Decimal("0.40"),
                2023: Decimal("0.50")}
MAX_BAGS = 99_999  # SUNAT writes the number of bags with up to 5 digits (2892)


def icbper_rate(year: int, month: int, day: int) -> Decimal | None:
    """The tax per bag on that date of emission; None before the tax existed."""
    if (year, month, day) < ICBPER_FROM:
        return None
    return ICBPER_RATES[min(year, 2023)]

# Currency names as SUNAT vouchers spell them in the legend.
CURRENCY_WORDS = {"PEN": "SOLES", "USD": "DÓLARES AMERICANOS"}

_UNITS = ["CERO", "UNO", "DOS", "TRES", "CUATRO", "CINCO", "SEIS", "SIETE", "OCHO", "NUEVE", "DIEZ",
          "ONCE", "DOCE", "TRECE", "CATORCE", "QUINCE", "DIECISÉIS", "DIECISIETE", "DIECIOCHO", "DIECINUEVE",
          "VEINTE", "VEINTIUNO", "VEINTIDÓS", "VEINTITRÉS", "VEINTICUATRO", "VEINTICINCO", "VEINTISÉIS",
          "VEINTISIETE", "VEINTIOCHO", "VEINTINUEVE"]
_TENS = ["", "", "", "TREINTA", "CUARENTA", "CINCUENTA", "SESENTA", "SETENTA", "OCHENTA", "NOVENTA"]
_HUNDREDS = ["", "CIENTO", "DOSCIENTOS", "TRESCIENTOS", "CUATROCIENTOS", "QUINIENTOS", "SEISCIENTOS",
             "SETECIENTOS", "OCHOCIENTOS", "NOVECIENTOS"]


def money(value: Decimal) -> Decimal:
    """Round half-up to cents, as SUNAT's rules do."""
    return value.quantize(CENT, ROUND_HALF_UP)  # positional: a few times cheaper than the keyword


def plain(value: Decimal) -> str:
    """A Decimal as plain text, never in exponent form, without needless trailing zeros."""
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text or "0"


def _below_hundred(n: int) -> str:
    if n < 30:
        return _UNITS[n]
    tens, unit = divmod(n, 10)
    return _TENS[tens] + (f" Y {_UNITS[unit]}" if unit else "")


def _below_thousand(n: int) -> str:
    if n == 100:
        return "CIEN"
    hundreds, rest = divmod(n, 100)
    parts = [_HUNDREDS[hundreds]] if hundreds else []
    if rest:
        parts.append(_below_hundred(rest))
    return " ".join(parts)


def _apocope(words: str) -> str:
    """'UNO' becomes 'UN' (or 'VEINTIÚN') before 'MIL' and 'MILLONES'."""
    if words.endswith("VEINTIUNO"):
        return words[:-len("VEINTIUNO")] + "VEINTIÚN"
    if words.endswith("UNO"):
        return words[:-1]
    return words


def integer_words(n: int) -> str:
    """Spanish words of a non-negative integer, upper case, in the "UN MIL" style of Peruvian vouchers."""
    if n < 0:
        raise ValueError("negative amount")
    if n < 1000:
        return _below_thousand(n) if n else "CERO"
    if n < 1_000_000:
        thousands, rest = divmod(n, 1000)
        head = _apocope(_below_thousand(thousands)) + " MIL"
        return head + (f" {_below_thousand(rest)}" if rest else "")
    millions, rest = divmod(n, 1_000_000)
    head = "UN MILLÓN" if millions == 1 else _apocope(integer_words(millions)) + " MILLONES"
    return head + (f" {integer_words(rest)}" if rest else "")


def amount_in_words(total: Decimal, currency: str = "PEN") -> str:
    """Legend 1000: 'CIENTO DIECIOCHO CON 00/100 SOLES'."""
    total = money(total)
    whole = int(total)
    cents = int((total - whole) * 100)
    return f"{integer_words(whole)} CON {cents:02d}/100 {CURRENCY_WORDS.get(currency, currency)}"
