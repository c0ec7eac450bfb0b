"""Yupana's own checks of a voucher request, answered with SUNAT's error codes where SUNAT has one.

Cheap and O(lines): they run on every generation. Each problem is an `ErrorDetail` naming the
request field; `Problems.raise_if_any()` turns them into one 400. The codes are those SUNAT's
rule sheets give for the equivalent XML (tests/core/invoicing/test_builder_errors.py compares them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache

from app.core.errors import ErrorDetail, invalid_many
from app.core.invoicing.sunat_catalogues import (
    DNI,
    FREE_AFFECTATIONS,
    IDENTITY_DOCUMENTS,
    IVAP,
    ONEROUS_AFFECTATIONS,
    RUC,
    UNITS_ACCEPTED,
)
from app.core.platform import identifiers

SERIE_PATTERN = re.compile(r"^[FB][A-Z0-9]{3}$")  # a factura's or boleta's serie, and their notes'
# A contingency voucher's serie: four digits (0001), for a factura, a boleta or a note (SUNAT's 1001 admits it).
CONTINGENCY_SERIE = re.compile(r"^[0-9]{4}$")
# The serie of a voucher a note may modify besides an electronic one of its letter: one printed on paper or in
# contingency (1 to 4 digits), or one issued by SUNAT's own system (E001 facturas, EB01 boletas); SUNAT's 2117.
PAPER_SERIE = re.compile(r"^[0-9]{1,4}$")
SUNAT_PORTAL_SERIES = {"F": "E001", "B": "EB01"}
MAX_NUMERO = 99_999_999
CURRENCIES = ("PEN", "USD")
# Catalogue 07 (app.core.invoicing.sunat_catalogues): the onerous affectations and the free transfers (gratuitas:
# 11-16 gravado, 21 exonerado, 31-37 inafecto; the line's price is a reference value, nothing is charged).
AFFECTATIONS = ONEROUS_AFFECTATIONS
LINE_AFFECTATIONS = frozenset((*AFFECTATIONS, *FREE_AFFECTATIONS, IVAP))  # IVAP (17): rice pilado, on a line only
# Catalogue 06 codes a customer may carry.
DOCUMENT_TYPES = IDENTITY_DOCUMENTS
# Catalogue 03 (UN/ECE rec 20): every code of SUNAT's catalogue; a code outside it is refused clearly (2936).
UNITS = UNITS_ACCEPTED
BOLETA_ID_THRESHOLD = Decimal("700")
INVALID_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
MAX_DESCRIPTION = 500
MAX_REASON = 499  # SUNAT's pattern for a note's reason: one line, up to 499 characters
MAX_DECIMALS = 10
MIN_ADDRESS, MAX_ADDRESS = 3, 200  # SUNAT's format for an address line (4236): 3 to 200 characters, one line
MIN_NAME, MAX_NAME = 3, 1500  # SUNAT's format for the customer's name (2022): 3 to 1500 characters
AMOUNT_LIMIT = Decimal(10) ** 12  # 12 integer digits
DECIMAL_STEP = Decimal(1).scaleb(-MAX_DECIMALS)
ZERO = Decimal(0)


_cached_ruc_problem = lru_cache(maxsize=4096)(identifiers.ruc_problem)


def ruc_problem(value: str) -> str | None:
    """`identifiers.ruc_problem`, remembered for RUC-sized texts: asked for the issuer and customer of every
    voucher (and only short texts are kept, whatever a request carries)."""
    return _cached_ruc_problem(value) if len(value) == 11 else identifiers.ruc_problem(value)


@dataclass
class Problems:
    """The problems found so far; raise them all at once."""

    details: list[ErrorDetail] = field(default_factory=list)

    def add(self, field_name: str | None, message: str, sunat_code: str | None = None) -> None:
        self.details.append(ErrorDetail(field_name, message, sunat_code))

    def raise_if_any(self) -> None:
        if self.details:
            raise invalid_many(self.details)


def check_serie_numero(problems: Problems, tipo: str, serie: str, numero: int, letter: str | None) -> None:
    """F### for facturas, B### for boletas; notes take the letter of the document they modify; four digits for a
    contingency voucher of any of them."""
    if letter and not (SERIE_PATTERN.match(serie) and serie[0] == letter) and not CONTINGENCY_SERIE.match(serie):
        problems.add("serie", f"La serie «{serie}» del campo «serie» no es válida para el tipo {tipo}: "
                     f"debe ser {letter} seguida de 3 letras o dígitos (p. ej. {letter}001), o 4 dígitos (p. ej. "
                     "0001) en un comprobante de contingencia.", "1001")
    if not 1 <= numero <= MAX_NUMERO:
        problems.add("numero", f"El campo «numero» ({numero}) debe ser un entero de 1 a 8 dígitos.", "1001")


def modifiable_serie(serie: str, letter: str) -> bool:
    """Whether a note may modify a voucher of this serie whose electronic series start with `letter`: an electronic
    one (F001), one printed on paper or in contingency (0001, 1 to 4 digits) or one of SUNAT's own system (E001)."""
    return bool((SERIE_PATTERN.match(serie) and serie[0] == letter) or PAPER_SERIE.match(serie)
                or serie == SUNAT_PORTAL_SERIES.get(letter))


def check_customer_ruc(problems: Problems, ruc: str, field_name: str) -> None:
    problem = ruc_problem(ruc)
    if problem:
        code = "2017" if not (ruc.isdigit() and len(ruc) == 11) else None
        problems.add(field_name, f"El RUC «{ruc}» del campo «{field_name}» no es válido: {problem}.", code)


def check_identity(problems: Problems, tipo_doc: str, numero: str, boleta: bool) -> None:
    """Catalogue 06 formats: DNI of 8 digits, others up to 15 characters without spaces."""
    field_name = "receptor.numero_documento"
    if tipo_doc == DNI and not (numero.isdigit() and numero.isascii() and len(numero) == 8):
        problems.add(field_name, f"El DNI «{numero}» del campo «{field_name}» debe tener 8 dígitos.",
                     "4207" if boleta else "2801")
    elif tipo_doc not in (DNI, RUC) and numero != "-" and (not 1 <= len(numero) <= 15 or re.search(r"\s", numero)):
        problems.add(field_name, f"El documento «{numero}» del campo «{field_name}» debe tener de 1 a 15 "
                     "caracteres sin espacios.", "4208" if boleta else "2802")


def check_text(problems: Problems, field_name: str, text: str, max_length: int, code: str | None) -> None:
    if not text:
        problems.add(field_name, f"El campo «{field_name}» no puede estar vacío.", code)
    elif len(text) > max_length:
        problems.add(field_name, f"El campo «{field_name}» supera los {max_length} caracteres.", code)
    elif INVALID_XML_CHARS.search(text):
        problems.add(field_name, f"El campo «{field_name}» contiene caracteres de control no permitidos.", code)


def check_characters(problems: Problems, field_name: str, text: str | None) -> None:
    """Text that goes into the XML must be XML characters: the generated document is always well-formed."""
    if text and INVALID_XML_CHARS.search(text):
        problems.add(field_name, f"El campo «{field_name}» contiene caracteres de control no permitidos.")


def check_address(problems: Problems, field_name: str, text: str) -> None:
    if not MIN_ADDRESS <= len(text) <= MAX_ADDRESS:
        problems.add(field_name, f"El campo «{field_name}» debe tener de {MIN_ADDRESS} a {MAX_ADDRESS} caracteres "
                     f"(tiene {len(text)}).", "4236")
    elif "\n" in text or "\r" in text or "\t" in text:
        problems.add(field_name, f"El campo «{field_name}» debe ser una sola línea.", "4236")
    else:
        check_characters(problems, field_name, text)


def check_customer_name(problems: Problems, field_name: str, name: str) -> None:
    """The customer's name as typed: SUNAT rejects a RegistrationName of fewer than 3 or more than 1500 characters
    (2022), after the voucher is spent; refused here, before it is sent."""
    if not MIN_NAME <= len(name) <= MAX_NAME:
        problems.add(field_name, f"El campo «{field_name}» («{name[:60]}») debe tener de {MIN_NAME} a {MAX_NAME} "
                     f"caracteres (tiene {len(name)}): SUNAT rechaza un nombre o razón social más corto o más largo.",
                     "2022")


def decimals(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def _has_few_decimals(value: Decimal) -> bool:
    """At most 10 decimals once trailing zeros are dropped (as the XML writes it). For a finite value under
    AMOUNT_LIMIT only (the quantize stays within the context's precision); ~3 times cheaper than as_tuple()."""
    return value == value.quantize(DECIMAL_STEP)


def _usable_number(value: Decimal, low: Decimal, low_allowed: bool) -> bool:
    """Finite, from `low` (excluded unless `low_allowed`) up to 12 integer digits, at most 10 decimals."""
    return (value.is_finite() and (low <= value if low_allowed else low < value) and value < AMOUNT_LIMIT
            and _has_few_decimals(value))


def check_line(problems: Problems, index: int, descripcion: str, codigo: str | None, unidad: str,
               afectacion: str) -> None:
    """The description, catalogue codes and product code of line `index`. Runs for every line of every
    voucher: the usual case (all fine) is decided first, and messages are written only for a problem."""
    if (descripcion and len(descripcion) <= MAX_DESCRIPTION and not INVALID_XML_CHARS.search(descripcion)
            and unidad in UNITS and afectacion in LINE_AFFECTATIONS
            and not (codigo and INVALID_XML_CHARS.search(codigo))):
        return
    check_text(problems, f"items[{index}].descripcion", descripcion, MAX_DESCRIPTION, "2027")
    check_line_code(problems, index, unidad, afectacion)
    check_characters(problems, f"items[{index}].codigo", codigo)


def check_quantity_and_price(problems: Problems, index: int, cantidad: Decimal, precio: Decimal) -> bool:
    """True when both are usable numbers (positive quantity, non-negative price, ≤ 10 decimals)."""
    if _usable_number(cantidad, ZERO, False) and _usable_number(precio, ZERO, True):
        return True
    ok = True
    prefix = f"items[{index}]"
    if (not cantidad.is_finite() or cantidad <= 0 or cantidad >= AMOUNT_LIMIT
            or not _has_few_decimals(cantidad)):
        problems.add(f"{prefix}.cantidad", f"El campo «{prefix}.cantidad» debe ser mayor que cero, con hasta "
                     f"12 enteros y {MAX_DECIMALS} decimales.", "2780")
        ok = False
    if not precio.is_finite() or precio < 0 or precio >= AMOUNT_LIMIT or not _has_few_decimals(precio):
        problems.add(f"{prefix}.precio_unitario", f"El campo «{prefix}.precio_unitario» debe ser un número no "
                     f"negativo, con hasta 12 enteros y {MAX_DECIMALS} decimales.", "2369")
        ok = False
    return ok


def check_line_code(problems: Problems, index: int, unidad: str, afectacion: str) -> None:
    prefix = f"items[{index}]"
    if unidad not in UNITS:
        problems.add(f"{prefix}.unidad", f"La unidad «{unidad}» del campo «{prefix}.unidad» no está en el "
                     "catálogo 03 de SUNAT (p. ej. NIU, ZZ, KGM).", "2936")
    if afectacion not in LINE_AFFECTATIONS:
        problems.add(f"{prefix}.tipo_afectacion_igv", f"El tipo de afectación «{afectacion}» del campo "
                     f"«{prefix}.tipo_afectacion_igv» debe ser 10, 17 (IVAP), 20, 30 o 40, o una transferencia "
                     "gratuita 11 a 16, 21 o 31 a 37 (catálogo 07).", "2040")
