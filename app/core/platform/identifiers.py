"""Checks of Peruvian identifiers, shared by vouchers and lookups. Messages are Spanish and name the field."""

from __future__ import annotations

import re

from app.core.errors import invalid

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


def normalize_ce(value: object, field: str = "numero") -> str:
    """A carnet de extranjería number: 8 to 12 digits (spaces, dots and hyphens ignored), written with
    at least nine digits (leading zeros added or dropped down to nine), or a 400 that names `field`."""
    text = str(value if value is not None else "").strip()
    digits = text.replace(" ", "").replace("-", "").replace(".", "")
    if not digits:
        raise invalid(field, f"El campo «{field}» (carnet de extranjería) es obligatorio.")
    if not digits.isdigit() or not digits.isascii():
        raise invalid(field, f"El carnet de extranjería «{text}» del campo «{field}» no es válido: debe tener solo dígitos.")
    if not 8 <= len(digits) <= 12:
        raise invalid(field, f"El carnet de extranjería «{text}» del campo «{field}» no es válido: debe tener de 8 a 12 "
                             f"dígitos (tiene {len(digits)}).")
    significant = digits.lstrip("0")
    return significant.zfill(9) if len(significant) <= 9 else significant


# Peruvian plates, written without the hyphen: cars (ABC123, A1B234, AB1234) and motorcycles (1234AB, AB123C).
PLATE_FORMS = {
    "ABC123": re.compile(r"[A-Z]{3}\d{3}"),
    "A1B234": re.compile(r"[A-Z]\d[A-Z]\d{3}"),
    "AB1234": re.compile(r"[A-Z]{2}\d{4}"),
    "1234AB": re.compile(r"\d{4}[A-Z]{2}"),
    "AB123C": re.compile(r"[A-Z]{2}\d{3}[A-Z]"),
}


def normalize_plate(value: object, field: str = "numero") -> str:
    """A plate upper-cased without hyphen or spaces, in one of PLATE_FORMS, or a 400 that names `field`."""
    text = str(value if value is not None else "").strip()
    plate = text.upper().replace("-", "").replace(" ", "")
    if not plate:
        raise invalid(field, f"El campo «{field}» (placa) es obligatorio.")
    if not plate.isascii() or not any(form.fullmatch(plate) for form in PLATE_FORMS.values()):
        raise invalid(field, f"La placa «{text}» del campo «{field}» no es válida: debe tener uno de los formatos "
                             f"{', '.join(PLATE_FORMS)} (con o sin guion, p. ej. ABC-123).")
    return plate
