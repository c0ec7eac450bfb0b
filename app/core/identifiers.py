"""Checks of Peruvian identifiers, shared by vouchers and lookups. Messages are Spanish and name the field."""

from __future__ import annotations

from .errors import invalid

RUC_WEIGHTS = (5, 4, 3, 2, 7, 6, 5, 4, 3, 2)
RUC_PREFIXES = ("10", "15", "16", "17", "20")


def ruc_check_digit(first10: str) -> str:
    """SUNAT's módulo-11 check digit of a RUC's first ten digits."""
    rest = 11 - sum(int(d) * w for d, w in zip(first10, RUC_WEIGHTS, strict=True)) % 11
    return str({10: 0, 11: 1}.get(rest, rest))


def ruc_problem(value: str) -> str | None:
    """Why `value` is not a valid RUC, in Spanish, or None when it is one."""
    if not value.isdigit() or not value.isascii():
        return "debe tener solo dígitos"
    if len(value) != 11:
        return f"debe tener 11 dígitos (tiene {len(value)})"
    if value[:2] not in RUC_PREFIXES:
        return "debe empezar por 10, 15, 16, 17 o 20"
    if ruc_check_digit(value[:10]) != value[10]:
        return "tiene un dígito verificador incorrecto"
    return None


def check_ruc(value: object, field: str = "ruc", sunat_code: str | None = None) -> str:
    """Return the RUC, stripped, or raise a 400 that names `field`."""
    text = str(value if value is not None else "").strip()
    problem = "es obligatorio" if not text else ruc_problem(text)
    if problem:
        raise invalid(field, f"El RUC «{text}» del campo «{field}» no es válido: {problem}."
                      if text else f"El campo «{field}» es obligatorio.", sunat_code)
    return text
