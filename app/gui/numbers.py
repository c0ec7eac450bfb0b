"""What a person types as a number in the windows: «1,5» and «1.5» both read as 1.5, «1,234.50» as 1234.50. Input
parsing only: the amounts are the engine's (the voucher form's totals ask `engine.invoicing.preview_totals`)."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation


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
