"""Peruvian formats for whatever a person reads: «S/ 1,234.50», «US$ 99.00», «23/11/2026».

One home for them: the windows and the printed voucher (app.core.invoicing.printing) use these, so a total reads
the same everywhere. Amounts stay Decimal; formatting never rounds other than to the cents shown.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CURRENCY_SYMBOLS = {"PEN": "S/", "USD": "US$"}
CURRENCY_NAMES = {"PEN": "SOLES", "USD": "DÓLARES AMERICANOS"}
_CENT = Decimal("0.01")


def currency_symbol(moneda: str | None) -> str:
    """«S/» for PEN (also when missing), «US$» for USD, the code itself for anything else."""
    code = (moneda or "PEN").upper()
    return CURRENCY_SYMBOLS.get(code, code)


def _finite(value: Decimal | str | int) -> Decimal | None:
    """The value as a finite Decimal, or None when it is not a number (it is then shown as given)."""
    try:
        amount = value if isinstance(value, Decimal) else Decimal(str(value))
    except InvalidOperation:
        return None
    return amount if amount.is_finite() else None


def number(value: Decimal | str | int | None, places: int = 2) -> str:
    """«1,234.50»: thousands with commas, a point for decimals, as Peruvian vouchers write them."""
    if value is None or value == "":
        return ""
    amount = _finite(value)
    if amount is None:
        return str(value)
    return f"{amount.quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP):,.{places}f}"


def money(value: Decimal | str | int | None, moneda: str | None = "PEN") -> str:
    """«S/ 1,234.50» or «US$ 1,234.50»; empty when there is no amount."""
    text = number(value)
    return f"{currency_symbol(moneda)} {text}" if text else ""


def quantity(value: Decimal | str | int) -> str:
    """A quantity as given, without needless zeros: «2», «37.123», «1,250,000»."""
    amount = _finite(value)
    if amount is None:
        return str(value)
    text = f"{amount:,f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def day(value: date | datetime | str | None) -> str:
    """«23/11/2026» from a date or an ISO text («2026-11-23», «2026-11-23T10:30:00Z»); other text as it is."""
    if value is None or value == "":
        return ""
    if isinstance(value, datetime):
        value = value.date()
    if isinstance(value, str):
        try:
            return date.fromisoformat(value[:10]).strftime("%d/%m/%Y")
        except ValueError:
            return value
    return value.strftime("%d/%m/%Y")
