"""The detracción's own operation types (catalogue 51): road freight (1004, catalogue 54 code 027) carries the route
and SUNAT's reference values on each line, hydrobiological goods (1002, code 004) the vessel, species and landing
(catalogue 55 properties 3001-3006). Here each item's data is read into its line and the voucher's operation type
is checked against it; every problem goes to the request's `Problems` naming the field and SUNAT's code."""

from __future__ import annotations

import re

from app.core.contract import GenerarXmlRequest, Item
from app.core.invoicing import prevalidation as pv
from app.core.invoicing import ubl
from app.core.invoicing.sunat_catalogues import (
    DETRACCION_OPERATION,
    FREIGHT_OPERATION,
    FREIGHT_SPOT,
    HYDROBIOLOGICAL_OPERATION,
    HYDROBIOLOGICAL_SPOT,
)

SPOT_OPERATIONS = frozenset({DETRACCION_OPERATION, HYDROBIOLOGICAL_OPERATION, FREIGHT_OPERATION})
UBIGEO = re.compile(r"^[0-9]{6}$")  # catalogue 13 (INEI): department, province, district
# SUNAT's lengths of the catalogue 55 texts (its 4280): matrícula 15 (property 3001), vessel 100 (3002), species
# 150 (3003), landing place 100 (3004).
CATCH_LENGTHS = {"matricula_embarcacion": 15, "nombre_embarcacion": 100, "especie": 150, "lugar_descarga": 100}
ADDRESS_LENGTH = 200  # SUNAT's 3119 and 3117 ask for a non-empty line; UBL's usual bound for an address line
DETAIL_LENGTH = 100  # cac:Despatch/cbc:Instructions, SUNAT's 3120


def inferred_operation(request: GenerarXmlRequest) -> str:
    """The operation type of a factura with a detracción: 1004 for freight (027, always: its route is required),
    1002 for hydrobiological goods (004) whose lines carry their catch, else 1001."""
    assert request.detraccion is not None
    code = request.detraccion.codigo
    if code == FREIGHT_SPOT:
        return FREIGHT_OPERATION
    if code == HYDROBIOLOGICAL_SPOT and any(item.recurso_hidrobiologico for item in request.items):
        return HYDROBIOLOGICAL_OPERATION
    return DETRACCION_OPERATION


def route(problems: pv.Problems, index: int, item: Item) -> ubl.FreightRoute | None:
    given = item.transporte_carga
    if given is None:
        return None
    field = f"items[{index}].transporte_carga"
    before = len(problems.details)
    for end, code in (("origen", "3116"), ("destino", "3118")):
        ubigeo = getattr(given, f"{end}_ubigeo")
        if not UBIGEO.match(ubigeo):
            problems.add(f"{field}.{end}_ubigeo", f"El campo «{field}.{end}_ubigeo» («{ubigeo}») debe ser el ubigeo "
                         "del INEI: 6 dígitos (p. ej. 150101 Lima).", code)
    for name, code, bound in (("origen_direccion", "3117", ADDRESS_LENGTH), ("destino_direccion", "3119",
                              ADDRESS_LENGTH), ("detalle_viaje", "3120", DETAIL_LENGTH)):
        pv.check_text(problems, f"{field}.{name}", getattr(given, name).strip(), bound, code)
    valores = (given.valor_referencial_servicio, given.valor_referencial_carga_efectiva,
               given.valor_referencial_carga_util)
    for name, value in zip(("valor_referencial_servicio", "valor_referencial_carga_efectiva",
                            "valor_referencial_carga_util"), valores, strict=True):
        if value < 0:
            problems.add(f"{field}.{name}", f"El campo «{field}.{name}» ({value}) no puede ser negativo.", "3123")
    if len(problems.details) != before:
        return None
    return ubl.FreightRoute(given.origen_ubigeo, given.origen_direccion.strip(), given.destino_ubigeo,
                            given.destino_direccion.strip(), given.detalle_viaje.strip(), valores)


def catch(problems: pv.Problems, index: int, item: Item) -> ubl.Catch | None:
    given = item.recurso_hidrobiologico
    if given is None:
        return None
    field = f"items[{index}].recurso_hidrobiologico"
    before = len(problems.details)
    for name, bound in CATCH_LENGTHS.items():
        pv.check_text(problems, f"{field}.{name}", getattr(given, name).strip(), bound, "4280")
    if given.cantidad_especie <= 0:
        problems.add(f"{field}.cantidad_especie", f"El campo «{field}.cantidad_especie» debe ser mayor que cero.",
                     "4281")
    if len(problems.details) != before:
        return None
    return ubl.Catch(given.matricula_embarcacion.strip(), given.nombre_embarcacion.strip(), given.especie.strip(),
                     given.lugar_descarga.strip(), given.fecha_descarga, given.cantidad_especie)


# Each line's data of a detracción's own operation: (field, operation, code when missing, what it holds, the
# detracción's code it goes with).
LINE_DATA = (("transporte_carga", FREIGHT_OPERATION, "3116", "origen, destino y valores referenciales", FREIGHT_SPOT),
             ("recurso_hidrobiologico", HYDROBIOLOGICAL_OPERATION, "3063",
              "embarcación, especie, lugar y fecha de descarga", HYDROBIOLOGICAL_SPOT))


def check_operation(request: GenerarXmlRequest, problems: pv.Problems, tipo_operacion: str) -> None:
    """Operation 1004 needs the route on every line (SUNAT's 3116) and 1002 the catch (3063); neither is written
    on another operation's line (400: the data would be lost)."""
    for index, item in enumerate(request.items):
        for name, operation, missing_code, holds, spot in LINE_DATA:
            field = f"items[{index}].{name}"
            given = getattr(item, name) is not None
            if tipo_operacion == operation and not given:
                problems.add(field, f"El campo «{field}» ({holds}) es obligatorio en el tipo de operación "
                             f"{operation} (detracción de código {spot}).", missing_code)
            elif tipo_operacion != operation and given:
                problems.add(field, f"El campo «{field}» va solo en una factura con detracción de código {spot} "
                             f"(tipo de operación {operation}).", "3129")


def operation_mismatch(request: GenerarXmlRequest, problems: pv.Problems, code: str, inferred: str) -> None:
    """`tipo_operacion` names a detracción's operation other than its code's: 027 only under 1004, 1002 only
    with 004 and 1004 only with 027 (SUNAT's 3129)."""
    assert request.detraccion is not None
    problems.add("tipo_operacion", f"El tipo de operación {code} del campo «tipo_operacion» no corresponde al código "
                 f"de detracción «{request.detraccion.codigo}»: corresponde {inferred} (027 transporte de carga va con "
                 "1004 y su ruta; 004 recursos hidrobiológicos con 1002).", "3129")
