"""Exports of hospedaje (operation 0202) and of a paquete turístico (0205): each line names its foreign guest
(`items[].huesped`, catalogue 55 properties 4000-4009, as SUNAT's sheets ask for these operations). Here the guest
is read into the line and the operation checked against it; every problem goes to the request's `Problems`, naming
the field and SUNAT's code."""

from __future__ import annotations

import re

from app.core.contract import GenerarXmlRequest, Item
from app.core.invoicing import prevalidation as pv
from app.core.invoicing import ubl
from app.core.invoicing.sunat_catalogues import FACTURA, HOSPEDAJE_EXPORT, IDENTITY_DOCUMENTS, PAQUETE_TURISTICO

GUEST_OPERATIONS = frozenset({HOSPEDAJE_EXPORT, PAQUETE_TURISTICO})
COUNTRY = re.compile(r"^[A-Z]{2}$")  # catalogue 04: ISO 3166-1 alpha-2
# Hospedaje's own properties with SUNAT's code for each when missing (3140-3145; 4005, the days, is computed).
HOSPEDAJE_FIELDS = (("pais_residencia", "3140"), ("fecha_ingreso_pais", "3141"), ("fecha_ingreso", "3142"),
                    ("fecha_salida", "3143"), ("fecha_consumo", "3144"))
DAYS_DIGITS = 9999  # 4005 takes 1 to 4 digits


def guest(problems: pv.Problems, index: int, item: Item) -> ubl.Guest | None:
    given = item.huesped
    if given is None:
        return None
    field = f"items[{index}].huesped"
    before = len(problems.details)
    nombre, numero = given.nombre.strip(), given.numero_documento.strip()
    if not 3 <= len(nombre) <= 200:
        problems.add(f"{field}.nombre", f"El campo «{field}.nombre» («{given.nombre}») debe tener de 3 a 200 "
                     "caracteres (propiedad 4007 de SUNAT).", "4280")
    if given.tipo_documento not in IDENTITY_DOCUMENTS:
        problems.add(f"{field}.tipo_documento", f"El código «{given.tipo_documento}» del campo «{field}."
                     "tipo_documento» no está en el catálogo 06 de SUNAT (p. ej. 7 pasaporte).", "4280")
    if not 3 <= len(numero) <= 20:
        problems.add(f"{field}.numero_documento", f"El campo «{field}.numero_documento» («{given.numero_documento}»)"
                     " debe tener de 3 a 20 caracteres (propiedad 4009 de SUNAT).", "4280")
    pv.check_characters(problems, f"{field}.nombre", nombre)
    pv.check_characters(problems, f"{field}.numero_documento", numero)
    for name in ("pais_pasaporte", "pais_residencia"):
        country = getattr(given, name)
        if country is not None and not COUNTRY.match(country):
            problems.add(f"{field}.{name}", f"El campo «{field}.{name}» («{country}») debe ser el código de país del "
                         "catálogo 04 de SUNAT: dos letras mayúsculas (p. ej. US, AR).", "4280")
    if given.fecha_ingreso and given.fecha_salida and not (
            0 <= (given.fecha_salida - given.fecha_ingreso).days <= DAYS_DIGITS):
        problems.add(f"{field}.fecha_salida", f"El campo «{field}.fecha_salida» ({given.fecha_salida}) no puede ser "
                     f"anterior a «{field}.fecha_ingreso» ({given.fecha_ingreso}).", "4281")
    if len(problems.details) != before:
        return None
    return ubl.Guest(nombre, given.tipo_documento, numero, given.pais_pasaporte, given.pais_residencia,
                     given.fecha_ingreso_pais, given.fecha_ingreso, given.fecha_salida, given.fecha_consumo)


def check_operation(request: GenerarXmlRequest, problems: pv.Problems, tipo_operacion: str) -> None:
    """0202 and 0205 need the guest on every line (SUNAT's 3136), 0202 its stay too (3140-3145); a guest on a line
    of another operation is refused (it would be lost). Catalogue 51 offers both to facturas only (3206)."""
    if tipo_operacion in GUEST_OPERATIONS and request.tipo != FACTURA:
        problems.add("tipo_operacion", f"El tipo de operación {tipo_operacion} del campo «tipo_operacion» (exportación "
                     "de hospedaje o paquete turístico) solo se emite en facturas (tipo 01).", "3206")
    for index, item in enumerate(request.items):
        field = f"items[{index}].huesped"
        if tipo_operacion not in GUEST_OPERATIONS:
            if item.huesped is not None:
                problems.add(field, f"El campo «{field}» va solo en una exportación de hospedaje (tipo de operación "
                             "0202) o de paquete turístico (0205).", "3206")
            continue
        if item.huesped is None:
            problems.add(field, f"El campo «{field}» (nombre, documento y país del pasaporte del huésped) es "
                         f"obligatorio en el tipo de operación {tipo_operacion}.", "3136")
            continue
        if tipo_operacion == HOSPEDAJE_EXPORT:
            for name, code in HOSPEDAJE_FIELDS:
                if getattr(item.huesped, name) is None:
                    problems.add(f"{field}.{name}", f"El campo «{field}.{name}» es obligatorio en la exportación de "
                                 "hospedaje (tipo de operación 0202).", code)
