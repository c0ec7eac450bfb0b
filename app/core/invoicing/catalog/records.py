"""Customers and products as values, and the checks that turn what a person typed into one.

Pure: the stores, the CSV files and (later) the forms all check through here. Each check takes the text or value
typed for one field and returns it normalised, or raises `FieldProblem` with a Spanish message naming what was
typed; `customer(...)` / `product(...)` run them all and raise one 400 (`YupanaError`) listing every problem.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from decimal import Decimal, InvalidOperation
from typing import Any

from app.core.errors import ErrorDetail, YupanaError, invalid_many
from app.core.invoicing.catalog import text
from app.core.invoicing.catalog.codes import (
    AFFECTATIONS,
    DETRACCIONES,
    DNI,
    DOCUMENT_NAMES,
    DOCUMENT_TYPES,
    GRAVADO,
    NO_DOCUMENT,
    RUC,
    UNIDAD,
    UNITS,
    unit_code,
)
from app.core.invoicing.prevalidation import AMOUNT_LIMIT, INVALID_XML_CHARS, MAX_DECIMALS, MAX_DESCRIPTION
from app.core.messaging import phone
from app.core.platform import identifiers

MAX_CODE = 30  # SUNAT observes a seller's item code longer than 30 characters (4269)
MAX_BARCODE = 50
MAX_NAME = 500
MAX_ADDRESS = 500
MAX_EMAIL = 254
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_EXPONENT = re.compile(r"^\d+([.,]\d+)?[eE][+-]?\d+$")


class FieldProblem(ValueError):
    """What is wrong with one field's value, in Spanish."""


@dataclass(frozen=True)
class Customer:
    tipo_documento: str  # catalogue 06
    numero: str | None  # None: without a document number (tipo 0)
    nombre: str
    direccion: str | None = None
    whatsapp: str | None = None  # E.164, «+51987654321»
    email: str | None = None
    id: int | None = None
    created_at: str | None = None
    updated_at: str | None = None

    @property
    def clave(self) -> str:
        """What makes a customer unique: its document, or for one without a number its folded name."""
        return customer_key(self.tipo_documento, self.numero, self.nombre)

    def data(self) -> dict:
        """The fields a person edits (no id, no timestamps)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name in CUSTOMER_FIELDS}


@dataclass(frozen=True)
class Product:
    codigo: str
    descripcion: str
    precio: Decimal
    unidad: str = UNIDAD  # catalogue 03
    precio_incluye_igv: bool = True
    tipo_afectacion_igv: str = GRAVADO  # catalogue 07
    icbper: bool = False  # subject to the plastic bag tax
    codigo_barras: str | None = None
    codigo_detraccion: str | None = None  # catalogue 54
    id: int | None = None
    created_at: str | None = None
    updated_at: str | None = None
    version: int | None = None  # stored: 1, then one more at each change (a save over a newer one is refused)

    def data(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name in PRODUCT_FIELDS}


CUSTOMER_FIELDS = ("tipo_documento", "numero", "nombre", "direccion", "whatsapp", "email")
PRODUCT_FIELDS = ("codigo", "codigo_barras", "descripcion", "unidad", "precio", "precio_incluye_igv",
                  "tipo_afectacion_igv", "icbper", "codigo_detraccion")


def customer_key(tipo_documento: str, numero: str | None, nombre: str) -> str:
    return f"{tipo_documento}:{numero}" if numero else f"{NO_DOCUMENT}:{text.key(nombre)}"


# ---------------------------------------------------------------- one field at a time

def _clean(value: object) -> str:
    return "" if value is None else str(value).strip()


def _check_text(typed: str, what: str, limit: int) -> str:
    if len(typed) > limit:
        raise FieldProblem(f"{what} «{typed[:40]}…» supera los {limit} caracteres.")
    if INVALID_XML_CHARS.search(typed):
        raise FieldProblem(f"{what} «{typed}» contiene caracteres de control no permitidos.")
    return typed


def required_text(what: str, limit: int) -> Callable[[object], str]:
    def check(value: object) -> str:
        typed = _clean(value)
        if not typed:
            raise FieldProblem(f"Falta {what.lower()}: es obligatorio.")
        return _check_text(typed, what, limit)
    return check


def optional_text(what: str, limit: int) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        typed = _clean(value)
        return _check_text(typed, what, limit) if typed else None
    return check


def tipo_documento(value: object) -> str:
    typed = _clean(value)
    if not typed:
        raise FieldProblem("Falta el tipo de documento: 6 (RUC), 1 (DNI), 4 (carnet de extranjería), 7 (pasaporte), "
                           "A (cédula diplomática) o 0 (sin documento).")
    code = DOCUMENT_NAMES.get(text.fold(typed), typed.upper())
    if code not in DOCUMENT_TYPES:
        raise FieldProblem(f"El tipo de documento «{typed}» no es válido: use 6 (RUC), 1 (DNI), "
                           "4 (carnet de extranjería), 7 (pasaporte), A (cédula diplomática) o 0 (sin documento).")
    return code


def numero_documento(tipo: str, value: object) -> str | None:
    """The number for a catalogue 06 type: a valid RUC, a DNI of 8 digits, otherwise 1 to 15 characters without
    spaces; optional only without a document (tipo 0), where «-» means none."""
    typed = _clean(value)
    if tipo == NO_DOCUMENT and typed in ("", "-"):
        return None
    if not typed:
        raise FieldProblem(f"Falta el número de documento: es obligatorio para el tipo {tipo} "
                           f"({DOCUMENT_TYPES.get(tipo, '?')}).")
    if tipo == RUC:
        problem = identifiers.ruc_problem(typed)
        if problem:
            raise FieldProblem(f"El RUC «{typed}» no es válido: {problem}.")
    elif tipo == DNI:
        if not (typed.isdigit() and typed.isascii() and len(typed) == 8):
            raise FieldProblem(f"El DNI «{typed}» debe tener 8 dígitos.")
    elif len(typed) > 15 or re.search(r"\s", typed):
        raise FieldProblem(f"El documento «{typed}» debe tener de 1 a 15 caracteres sin espacios.")
    return typed.upper()


def whatsapp(value: object) -> str | None:
    """A WhatsApp number in E.164; a Peruvian mobile may be typed without +51 («987654321»)."""
    typed = _clean(value)
    if not typed:
        return None
    digits = re.sub(r"[\s\-().]", "", typed)
    if len(digits) == 9 and digits.isdigit() and digits.startswith("9"):
        digits = "+" + phone.PERU + digits
    try:
        return phone.normalise(digits, "whatsapp")
    except YupanaError as exc:
        raise FieldProblem(exc.message.replace(f"«{digits}»", f"«{typed}»")) from None


def email(value: object) -> str | None:
    typed = _clean(value)
    if not typed:
        return None
    if len(typed) > MAX_EMAIL or not _EMAIL.match(typed):
        raise FieldProblem(f"El correo «{typed}» no es una dirección de correo válida (p. ej. ventas@empresa.pe).")
    return typed


def codigo_barras(value: object) -> str | None:
    typed = _clean(value)
    if not typed:
        return None
    if _EXPONENT.match(typed):
        raise FieldProblem(f"El código de barras «{typed}» está en notación científica: en Excel, dé a la columna "
                           "formato de texto y vuelva a escribirlo.")
    if len(typed) > MAX_BARCODE or re.search(r"\s", typed) or INVALID_XML_CHARS.search(typed):
        raise FieldProblem(f"El código de barras «{typed}» debe tener de 1 a {MAX_BARCODE} caracteres sin espacios.")
    return typed


def unidad(value: object) -> str:
    """The unit's catalogue 03 code, also as a shop writes it («UND» → NIU, «Kg.» → KGM)."""
    typed = _clean(value)
    code = (unit_code(typed) or typed.upper()) if typed else UNIDAD
    if code not in UNITS:
        raise FieldProblem(f"La unidad «{typed}» no está en el catálogo 03 de SUNAT (p. ej. NIU, ZZ, KGM).")
    return code


def afectacion(value: object) -> str:
    typed = _clean(value)
    code = typed or GRAVADO
    if code not in AFFECTATIONS:
        raise FieldProblem(f"El tipo de afectación «{typed}» debe ser 10 (gravado), 20 (exonerado), "
                           "30 (inafecto) o 40 (exportación) del catálogo 07.")
    return code


def detraccion(value: object) -> str | None:
    typed = _clean(value)
    if not typed:
        return None
    code = typed.zfill(3) if typed.isdigit() else typed  # a spreadsheet drops the leading zeros of «012»
    if code not in DETRACCIONES:
        raise FieldProblem(f"El código de detracción «{typed}» no está en el catálogo 54 de SUNAT (p. ej. 022, 037).")
    return code


def precio(value: object) -> Decimal:
    """A price already parsed (Decimal) or text with a decimal point: ≥ 0, ≤ 12 integer digits, ≤ 10 decimals."""
    typed = _clean(value)
    if not typed:
        raise FieldProblem("Falta el precio: es obligatorio.")
    try:
        amount = value if isinstance(value, Decimal) else Decimal(typed)
    except InvalidOperation:
        raise FieldProblem(f"El precio «{typed}» no es un número.") from None
    if not amount.is_finite() or amount < 0 or amount >= AMOUNT_LIMIT:
        raise FieldProblem(f"El precio «{typed}» debe ser un número positivo o cero, de hasta 12 enteros.")
    if amount != amount.quantize(Decimal(1).scaleb(-MAX_DECIMALS)):
        raise FieldProblem(f"El precio «{typed}» tiene más de {MAX_DECIMALS} decimales.")
    return amount


_YES = {"si", "s", "1", "x", "true", "verdadero", "yes"}
_NO = {"no", "n", "0", "", "false", "falso"}


def flag(what: str, default: bool) -> Callable[[object], bool]:
    def check(value: object) -> bool:
        if isinstance(value, bool):
            return value
        typed = _clean(value)
        folded = text.fold(typed)
        if not typed:
            return default
        if folded in _YES:
            return True
        if folded in _NO:
            return False
        raise FieldProblem(f"El valor «{typed}» de {what} debe ser «sí» o «no».")
    return check


# ---------------------------------------------------------------- whole records

CUSTOMER_CHECKS: dict[str, Callable[[object], object]] = {
    "tipo_documento": tipo_documento,
    "nombre": required_text("El nombre o razón social", MAX_NAME),
    "direccion": optional_text("La dirección", MAX_ADDRESS),
    "whatsapp": whatsapp,
    "email": email,
}

PRODUCT_CHECKS: dict[str, Callable[[object], object]] = {
    "codigo": required_text("El código", MAX_CODE),
    "codigo_barras": codigo_barras,
    "descripcion": required_text("La descripción", MAX_DESCRIPTION),
    "unidad": unidad,
    "precio": precio,
    "precio_incluye_igv": flag("«Precio incluye IGV»", True),
    "tipo_afectacion_igv": afectacion,
    "icbper": flag("«ICBPER»", False),
    "codigo_detraccion": detraccion,
}


def check_customer(data: dict) -> tuple[dict, dict[str, str]]:
    """(values normalised, problems by field) of a customer's fields typed; the number is checked against the
    type (when the type is valid)."""
    values, problems = _run(CUSTOMER_CHECKS, data)
    if "tipo_documento" in values:
        try:
            values["numero"] = numero_documento(values["tipo_documento"], data.get("numero"))
        except FieldProblem as problem:
            problems["numero"] = str(problem)
    return values, problems


def check_product(data: dict) -> tuple[dict, dict[str, str]]:
    return _run(PRODUCT_CHECKS, data)


def _run(checks: dict[str, Callable[[object], object]], data: dict) -> tuple[dict, dict[str, str]]:
    values, problems = {}, {}
    for name, check in checks.items():
        try:
            values[name] = check(data.get(name))
        except FieldProblem as problem:
            problems[name] = str(problem)
    return values, problems


def customer(**data: object) -> Customer:
    """A checked customer, or one 400 naming every field wrong."""
    values, problems = check_customer(data)
    _raise(problems)
    return Customer(**values)


def product(**data: object) -> Product:
    values, problems = check_product(data)
    _raise(problems)
    return Product(**values)


def _raise(problems: dict[str, str]) -> None:
    if problems:
        raise invalid_many([ErrorDetail(name, message) for name, message in problems.items()])


# ---------------------------------------------------------------- the guías' vehicles, drivers, carriers and places

VEHICULO, CONDUCTOR, TRANSPORTISTA, PUNTO = "vehiculo", "conductor", "transportista", "punto"
KINDS = (VEHICULO, CONDUCTOR, TRANSPORTISTA, PUNTO)


@dataclass(frozen=True)
class TransportEntry:
    """A vehicle (`clave` its plate), a driver (`clave` the document number), a carrier (`clave` its RUC) or a
    departure or arrival point (`clave` from point_key: its address as the search folds it, its ubigeo and its
    establishment code)."""

    kind: str  # vehiculo, conductor, transportista or punto
    clave: str
    tuc: str = ""  # a vehicle's tarjeta única de circulación
    tipo_documento: str = ""  # a driver's (catalogue 06)
    nombres: str = ""  # a driver's names, a carrier's razón social
    apellidos: str = ""  # a driver's
    licencia: str = ""  # a driver's
    registro_mtc: str = ""  # a carrier's
    ubigeo: str = ""  # a point's
    direccion: str = ""  # a point's, as the guía wrote it
    codigo_establecimiento: str = ""  # a point's, when the guía gave one
    ruc: str = ""  # whose establishment that code is (the issuer's, or a supplier's on a purchase)
    used_at: str | None = None

    def data(self) -> str:
        """What the repository keeps beside the kind and the key (JSON)."""
        fields = {key: value for key, value in asdict(self).items() if key not in ("kind", "clave", "used_at") and value}
        return json.dumps(fields, ensure_ascii=False, sort_keys=True)

    @classmethod
    def stored(cls, kind: str, clave: str, data: str, used_at: str | None) -> TransportEntry:
        values: dict[str, Any] = json.loads(data or "{}")
        return cls(kind, clave, used_at=used_at, **{key: str(value) for key, value in values.items()
                                                   if key in cls.__dataclass_fields__})


def point_key(direccion: str, ubigeo: str, codigo_establecimiento: str = "") -> str:
    """A departure or arrival point's key: its address's words folded (case, accents and punctuation aside, so that
    what one types of it is a prefix of the key), then its ubigeo and establishment code; «Jr. Los Olivos 456»,
    150132 → «jr los olivos 456|150132|»."""
    return f"{text.key(direccion)}|{ubigeo.strip()}|{codigo_establecimiento.strip()}"
