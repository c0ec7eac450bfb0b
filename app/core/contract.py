"""The service contract in one place: requests and results of the eight operations and the events.

Field names are the contract's, in Spanish, exactly (`año` included). Optional fields that the
contract does not name are Yupana's documented extras (docs/contract.md); they are left out of
the JSON when they are empty so a strict client of the contract sees only its own fields.
Money is `Decimal`, never float: JSON bodies are parsed with `parse_float=Decimal`.
"""

from __future__ import annotations

import json
import types
import typing
from datetime import date, time
from decimal import ROUND_HALF_UP, Decimal
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from app.core.errors import ErrorCode, ErrorDetail, YupanaError, invalid_many

MAX_BODY_BYTES = 5 * 1024 * 1024  # a 1,000-line voucher signed is well under 1 MiB
MAX_JSON_DEPTH = 32  # a voucher nests 4 levels; deeper bodies are refused before any work
MAX_INT_DIGITS = 18  # fits SQLite's 64-bit INTEGER; larger integers are refused by the parser
MAX_DECIMAL_PLACES = 20  # UBL keeps 10; `1e-999999999` would print a billion zeros


class ContractModel(BaseModel):
    """Base of every contract model: exact field names, unknown fields refused (typos get a 400)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, str_strip_whitespace=True, defer_build=True)

    def to_json(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", by_alias=True)
        for name, info in type(self).model_fields.items():
            key = info.alias or name
            marks = info.json_schema_extra
            if isinstance(marks, dict) and marks.get("extra") and data.get(key) in (None, [], {}):
                data.pop(key, None)
        return data


def extra(default: Any = None, **kwargs: Any) -> Any:
    """A field the contract does not name; dropped from JSON output when empty."""
    if "default_factory" in kwargs:
        return Field(json_schema_extra={"extra": True}, **kwargs)
    return Field(default, json_schema_extra={"extra": True}, **kwargs)


# A number computed in binary floating point carries noise in its last digits: JavaScript's 1.5 + 9 * 3.37 is
# 31.830000000000002. A number whose distance to its value at the field's decimals is within a few units in the last
# place of a double (2**-50 of its size, about 8.9e-16) is that value with noise; it is rounded half-up to the
# field's decimals. Anything farther (1.234 for a 2-decimal amount) is a real value, checked as sent
# (docs/contract.md). A Python float becomes the Decimal of its shortest repr before this.
FLOAT_NOISE = Decimal(2) ** -50
UNIT_PLACES = 10  # quantities and unit values: UBL keeps up to 10 decimals
MONEY_PLACES = 2  # amounts SUNAT fixes to cents


def _checked(value: Decimal, places: int) -> Decimal:
    """An amount within what an invoice can hold (`1e999999999`, number or string, would take minutes to print),
    without floating-point noise beyond `places` decimals. One validator per field: it runs for every amount of
    every line, so a plain amount costs one exponent look-up."""
    if not value.is_finite():
        return value
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)  # a finite number's exponent ('n', 'N', 'F' only for NaN and infinities)
    if value.adjusted() >= MAX_INT_DIGITS or exponent < -MAX_DECIMAL_PLACES:
        raise PydanticCustomError("decimal_range", "decimal out of range")
    if -exponent > places:
        return denoised(value, places)
    return value


def denoised(value: Decimal, places: int) -> Decimal:
    """`value` rounded half-up to `places` decimals when it is that value plus binary floating-point noise."""
    rounded = value.quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)
    return rounded if abs(value - rounded) <= abs(value) * FLOAT_NOISE else value


def _unit_value(value: Decimal) -> Decimal:
    return _checked(value, UNIT_PLACES)


def _money(value: Decimal) -> Decimal:
    return _checked(value, MONEY_PLACES)


Quantity = Annotated[Decimal, AfterValidator(_unit_value)]
Money = Annotated[Decimal, AfterValidator(_money)]


# ---------------------------------------------------------------- 1. POST /api/v1/facturacion/xml

class Emisor(ContractModel):
    ruc: str


class Receptor(ContractModel):
    ruc: str | None = None
    razon_social: str | None = extra()
    # Catalogue 06: "6" RUC, "1" DNI, "4" carnet de extranjería, "7" pasaporte, "0" sin documento.
    tipo_documento: str | None = extra()
    numero_documento: str | None = extra()
    direccion: str | None = extra()


class CargoDescuento(ContractModel):
    """A charge or discount of catalogue 53 (cac:AllowanceCharge): the code says which and whether it changes the IGV
    base; the amount is without IGV, in the voucher's currency."""

    codigo: str
    monto: Money
    base: Money | None = None  # the amount it is a share of; the line's or the gravado value by default


class Isc(ContractModel):
    """The ISC of a line (catalogue 08): 01 al valor (`tasa` % of the line's value), 02 monto fijo (`monto` per unit),
    03 precio de venta al público (`tasa` % of `precio_publico` × cantidad)."""

    sistema: str
    tasa: Money | None = None
    monto: Quantity | None = None
    precio_publico: Quantity | None = None


class TransporteCarga(ContractModel):
    """Road freight subject to the detracción (catalogue 54 code 027, operation 1004): the route of the line's
    service and SUNAT's reference values (cac:Delivery of the line: 3116-3126)."""

    origen_ubigeo: str  # catalogue 13 (INEI), 6 digits
    origen_direccion: str
    destino_ubigeo: str
    destino_direccion: str
    detalle_viaje: str
    valor_referencial_servicio: Money  # DeliveryTerms 01
    valor_referencial_carga_efectiva: Money  # DeliveryTerms 02
    valor_referencial_carga_util: Money  # DeliveryTerms 03


class RecursoHidrobiologico(ContractModel):
    """Hydrobiological goods subject to the detracción (code 004, operation 1002): catalogue 55 codes 3001-3006."""

    matricula_embarcacion: str  # 3001, up to 15 characters
    nombre_embarcacion: str  # 3002, up to 100
    especie: str  # 3003, up to 150
    lugar_descarga: str  # 3004, up to 100
    fecha_descarga: date  # 3005
    cantidad_especie: Quantity  # 3006, in the line's unit


class Huesped(ContractModel):
    """The foreign guest of an export of hospedaje (operation 0202) or of a paquete turístico (0205): catalogue 55
    properties 4000-4009 on the line. 0205 asks only the name, document and passport's country."""

    nombre: str  # 4007, 3 to 200 characters
    tipo_documento: str  # 4008, catalogue 06 (7 pasaporte by default in the form)
    numero_documento: str  # 4009, 3 to 20 characters
    pais_pasaporte: str  # 4000, catalogue 04 (ISO 3166 alpha-2)
    pais_residencia: str | None = None  # 4001 (0202)
    fecha_ingreso_pais: date | None = None  # 4002 (0202)
    fecha_ingreso: date | None = None  # 4003, to the establishment (0202)
    fecha_salida: date | None = None  # 4004, from the establishment (0202); 4005 (days) is computed
    fecha_consumo: date | None = None  # 4006 (0202)


class Item(ContractModel):
    descripcion: str
    cantidad: Quantity
    precio_unitario: Quantity | None = None  # unit value without IGV; or precio_con_igv instead (one of the two)
    igv: Money | None = None  # the line's IGV; computed when missing
    codigo: str | None = extra()
    unidad: str | None = extra()  # catalogue 03 (UN/ECE rec 20); NIU by default
    tipo_afectacion_igv: str | None = extra()  # catalogue 07; "10" (gravado) by default
    icbper: bool | None = extra()  # a line of plastic bags: ICBPER per bag (one bag per unit)
    descuento: Money | None = extra()  # a discount without IGV that reduces the line's base (catalogue 53 code 00)
    precio_con_igv: Quantity | None = extra()  # unit price with IGV: precio_unitario derived from it (docs/catalog.md)
    codigo_detraccion: str | None = extra()  # catalogue 54: the good or service is subject to the detracción
    # The line's other charges and discounts of catalogue 53: 01 (discount that keeps the base), 47 (charge that raises
    # it), 48 (charge that does not). None when missing (the idempotency key's JSON must not change).
    cargos_descuentos: list[CargoDescuento] | None = extra()
    isc: Isc | None = extra()  # the line's selective consumption tax (scheme 2000), inside the IGV base
    transporte_carga: TransporteCarga | None = extra()  # route and reference values of a 027 line (operation 1004)
    recurso_hidrobiologico: RecursoHidrobiologico | None = extra()  # vessel, species, landing (operation 1002)
    huesped: Huesped | None = extra()  # the foreign guest of an export of hospedaje (0202) or paquete turístico (0205)


class Cuota(ContractModel):
    monto: Money
    fecha_vencimiento: date


class FormaPago(ContractModel):
    tipo: Literal["Contado", "Credito"] = "Contado"
    cuotas: list[Cuota] = Field(default_factory=list)


class DocumentoReferencia(ContractModel):
    tipo: str  # "01" or "03"
    serie: str
    numero: int


class Detraccion(ContractModel):
    codigo: str  # catalogue 54
    porcentaje: Money | None = None  # the catalogue's default rate when missing
    cuenta: str  # the issuer's account at the Banco de la Nación
    medio_pago: str | None = None  # catalogue 59; "001" (depósito en cuenta) by default


class Guia(ContractModel):
    serie: str  # T001, EG01, G001 or 0001
    numero: int


class LugarEntrega(ContractModel):
    direccion: str  # one line, 3 to 200 characters
    ubigeo: str | None = None  # catalogue 13 (INEI), six digits


class DocumentoRelacionado(ContractModel):
    tipo: str  # catalogue 12: 04 to 09, 99
    numero: str  # up to 30 characters without spaces


class Anticipo(ContractModel):
    tipo: str  # catalogue 12: 02 (factura emitida por anticipos) or 03 (boleta)
    serie: str
    numero: int
    monto: Money  # what the customer paid in advance, with IGV (the advance voucher's total)
    tipo_afectacion_igv: str | None = None  # 10 (gravado, by default), 20 or 30: how the advance was taxed


class Percepcion(ContractModel):
    codigo: str  # catalogue 53: 51 (venta interna, 2 %), 52 (combustible, 1 %), 53 (agente de percepción, 0.5 %)
    porcentaje: Money | None = None  # the regime's rate when missing


class Retencion(ContractModel):
    porcentaje: Money | None = None  # 3 (regime 01 of catalogue 23) when missing


class GenerarXmlRequest(ContractModel):
    tipo: str
    serie: str
    numero: int
    emisor: Emisor
    receptor: Receptor = Field(default_factory=Receptor)
    items: list[Item]
    fecha_emision: date | None = extra()
    hora_emision: time | None = extra()
    moneda: str | None = extra()  # PEN by default, or USD
    forma_pago: FormaPago | None = extra()
    documento_referencia: DocumentoReferencia | None = extra()  # notes only
    codigo_motivo: str | None = extra()  # notes only: catalogue 09 (NC) or 10 (ND)
    descripcion_motivo: str | None = extra()
    descuento_global: Money | None = extra()  # invoices: a discount without IGV on the gravado base (code 02)
    detraccion: Detraccion | None = extra()  # facturas subject to the SPOT (operation type 1001)
    # Despatch advices (guías de remisión, type 09). None when missing, never an empty list: a field left out must not
    # change the JSON the idempotency key is computed from (voucher_keys.request_json, exclude_none).
    guias: list[Guia] | None = extra()
    orden_compra: str | None = extra()  # the customer's purchase order
    tipo_operacion: str | None = extra()  # catalogue 51, when it cannot be inferred (export of services)
    tipo_cambio: Quantity | None = extra()  # soles per dollar, for amounts SUNAT wants in PEN on a USD voucher
    # Charges and discounts on the whole voucher (catalogue 53): 03 (discount that keeps the base), 45 (FISE), 46
    # (recargo al consumo), 49 (charge that raises the base), 50 (charge that does not).
    cargos_descuentos: list[CargoDescuento] | None = extra()
    redondeo: Money | None = extra()  # PayableRoundingAmount: -1.00 to 1.00, added to the payable amount
    fecha_vencimiento: date | None = extra()  # cbc:DueDate: the payment's due date
    lugar_entrega: LugarEntrega | None = extra()  # cac:Delivery/cac:DeliveryLocation (SUNAT's legend 2005 with it)
    documentos_relacionados: list[DocumentoRelacionado] | None = extra()  # cac:AdditionalDocumentReference
    medio_pago: str | None = extra()  # catalogue 59: how the customer pays (cac:PaymentMeans)
    percepcion: Percepcion | None = extra()  # the IGV perceived (operation 2001), in PEN, beside the payable amount
    retencion: Retencion | None = extra()  # facturas to a retention agent: the IGV it will retain (code 62)
    anticipos: list[Anticipo] | None = extra()  # advances deducted (AdditionalDocumentReference + PrepaidPayment)

    @field_validator("numero", mode="before")
    @classmethod
    def _numero_is_integral(cls, value: Any) -> Any:
        if isinstance(value, Decimal) and value == value.to_integral_value():
            return int(value)
        return value


class GenerarXmlResult(ContractModel):
    xml: str
    hash: str  # base64 of the SHA-256 of the UTF-8 bytes of `xml`
    nombre_archivo: str
    observaciones: list[str] = extra(default_factory=list)  # SUNAT's observation codes, when its rules ran


# ---------------------------------------------------------------- 2. POST /api/v1/facturacion/firmar

class FirmarRequest(ContractModel):
    xml: str
    certificado_id: str


class FirmarResult(ContractModel):
    xml_firmado: str
    digest_value: str
    signature_value: str
    certificado_por_vencer: bool | None = extra()  # true when the certificate expires within 30 days


# ---------------------------------------------------------------- 3. POST /api/v1/facturacion/enviar
# Beyond the contract: a guía de remisión goes to SUNAT's GRE platform by its own route, with the same body and answer
# (docs/contract.md «Guías de remisión»); each route refuses the other's documents naming the right one.
ENVIAR_PATH = "/api/v1/facturacion/enviar"
GUIAS_ENVIAR_PATH = "/api/v1/guias/enviar"


class EnviarRequest(ContractModel):
    xml_firmado: str
    ambiente: Literal["beta", "produccion"] = "beta"


class EnviarResult(ContractModel):
    codigo_respuesta: str
    descripcion: str
    cdr: str
    hash_cdr: str
    estado: Literal["aceptado", "observado", "rechazado"] | None = extra()
    observaciones: list[str] = extra(default_factory=list)


# ---------------------------------------------------------------- beyond the contract: POST /api/v1/facturacion/validar
# SUNAT's consulta integrada de validez of any voucher, ours or a supplier's (issue 37; `yupana validar` and the
# «Consultar validez» window ask the same): docs/contract.md «Consulta de validez».
VALIDAR_PATH = "/api/v1/facturacion/validar"


class ValidarRequest(ContractModel):
    ruc: str  # the issuer of the voucher asked about
    tipo: str  # catalogue 01: 01, 03, 04, 07, 08, R1 or R7
    serie: str
    numero: int
    fecha: date  # its issue date: SUNAT matches it
    total: Money | None = None  # its total, when known: SUNAT matches it too
    consultante: str | None = None  # which of our companies asks (by default the only one)


class ValidarResult(ContractModel):
    consultante: str
    ruc: str
    tipo: str
    serie: str
    numero: int
    fecha: date
    total: Decimal | None = None
    estado_cp: str  # SUNAT's estadoCp: 0 no existe, 1 aceptado, 2 anulado, 3 autorizado, 4 no autorizado
    estado: str  # its name: «ACEPTADO», «ANULADO», «NO EXISTE»…
    detalle: str
    estado_ruc: str  # the issuer's state as a taxpayer (estadoRuc) and its name
    estado_ruc_nombre: str
    cond_domicilio: str  # the issuer's address condition (condDomiRuc) and its name
    cond_domicilio_nombre: str
    observaciones: list[str] = Field(default_factory=list)
    valido: bool  # aceptado or autorizado


# ---------------------------------------------------------------- 4. POST /api/v1/chat/send

class ChatSendRequest(ContractModel):
    instance: str
    to: str
    message: str
    media_url: str | None = None


class ChatSendResult(ContractModel):
    id: str
    status: str
    to: str
    timestamp: int


# ---------------------------------------------------------------- 5. POST /api/v1/chat/webhook

EventName = Literal["message.received", "message.delivered", "message.read", "instance.connected",
                    "instance.disconnected"]


class ChatWebhookRequest(ContractModel):
    instance: str
    url: str
    events: list[EventName]


class ChatWebhookResult(ContractModel):
    instance: str
    url: str
    events: list[EventName]
    # Yupana's answer (docs/contract.md): the subscription's id and its Standard Webhooks signing secret,
    # shown once; every delivery to `url` is signed with it.
    id: str | None = extra()
    secret: str | None = extra()


# ---------------------------------------------------------------- 6-8. GET lookups

class RucRecord(ContractModel):
    ruc: str
    razon_social: str | None = None
    tipo_contribuyente: str | None = None
    estado: str | None = None
    condicion: str | None = None
    direccion: str | None = None
    departamento: str | None = None
    provincia: str | None = None
    distrito: str | None = None
    actividad_economica: str | None = None
    fuente: str | None = extra()  # cache, padron or a provider's name
    desactualizado: bool | None = extra()  # true when served from an expired cache entry


class CeRecord(ContractModel):
    ce: str
    nombre_completo: str | None = None
    nombres: str | None = None
    apellido_paterno: str | None = None
    apellido_materno: str | None = None
    nacionalidad: str | None = None
    estado: str | None = None
    fuente: str | None = extra()
    desactualizado: bool | None = extra()


class PlacaRecord(ContractModel):
    placa: str
    marca: str | None = None
    modelo: str | None = None
    color: str | None = None
    año: int | None = None
    clase: str | None = None
    serie: str | None = None
    motor: str | None = None
    fuente: str | None = extra()
    desactualizado: bool | None = extra()


# ---------------------------------------------------------------- Events (POSTed to the caller)

class MessageReceivedData(ContractModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    id: str
    from_: str = Field(alias="from")
    type: str
    body: str
    name: str
    # Beyond the contract (docs/contract.md): the sender's WhatsApp LID (`<digits>@lid`) when its number is not
    # known; `from` is then "".
    from_id: str | None = extra()


class EventDelivery(ContractModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    event: EventName
    instance: str
    timestamp: int
    data: dict[str, Any]


# ---------------------------------------------------------------- envelopes and parsing

def success_envelope(result: ContractModel) -> dict[str, Any]:
    return {"success": True, "data": result.to_json()}


class _JsonLimit(Exception):
    """Raised inside the parser's hooks: the body breaks one of Yupana's JSON limits."""


def _bounded_int(text: str) -> int:
    if len(text) - text.startswith("-") > MAX_INT_DIGITS:
        raise _JsonLimit(f"El cuerpo de la solicitud tiene un número entero de más de {MAX_INT_DIGITS} cifras.")
    return int(text)


def _bounded_decimal(text: str) -> Decimal:
    value = Decimal(text)
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)  # json hands parse_float finite numbers only (NaN goes to parse_constant)
    if value.adjusted() >= MAX_INT_DIGITS or exponent < -MAX_DECIMAL_PLACES:
        raise _JsonLimit(f"El cuerpo de la solicitud tiene un número fuera de rango («{text[:40]}»): hasta "
                         f"{MAX_INT_DIGITS} cifras enteras y {MAX_DECIMAL_PLACES} decimales.")
    return value


def _no_constant(text: str) -> Any:
    raise _JsonLimit(f"El cuerpo de la solicitud no es JSON válido: «{text}» no es un número JSON.")


def _too_deep(value: Any, limit: int) -> bool:
    """True when lists/objects nest deeper than `limit` (iterative: the check itself cannot overflow)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _invalid_json(message: str) -> YupanaError:
    return YupanaError(ErrorCode.INVALID_JSON, message, [ErrorDetail(None, message)])


def parse_json(body: bytes | str | None) -> Any:
    """Parse a JSON body with exact decimals; a clear 400 (never a traceback) when it is not JSON.

    Limits, each a 400 INVALID_JSON: nesting deeper than MAX_JSON_DEPTH, integers longer than
    MAX_INT_DIGITS digits, the non-standard constants NaN and Infinity."""
    if isinstance(body, (bytes, bytearray, str)) and len(body) > MAX_BODY_BYTES:
        raise YupanaError(ErrorCode.PAYLOAD_TOO_LARGE,
                          f"La solicitud supera el tamaño máximo de {MAX_BODY_BYTES // (1024 * 1024)} MiB.")
    if body is None or (isinstance(body, (bytes, str)) and not body.strip()):
        raise YupanaError(ErrorCode.INVALID_JSON, "El cuerpo de la solicitud está vacío: se esperaba un objeto JSON.",
                          [ErrorDetail(None, "Cuerpo vacío.")])
    too_deep = _invalid_json(f"El cuerpo de la solicitud anida objetos o listas a más de {MAX_JSON_DEPTH} niveles.")
    try:
        value = json.loads(body, parse_float=_bounded_decimal, parse_int=_bounded_int, parse_constant=_no_constant)
    except _JsonLimit as exc:
        raise _invalid_json(str(exc)) from None
    except RecursionError:
        raise too_deep from None
    except (ValueError, UnicodeDecodeError) as exc:
        where = f" (línea {exc.lineno}, columna {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise _invalid_json(f"El cuerpo de la solicitud no es JSON válido{where}.") from None
    # Counting brackets is cheap; only a body with more of them than the limit can nest too deep.
    raw = body.encode() if isinstance(body, str) else body
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH and _too_deep(value, MAX_JSON_DEPTH):
        raise too_deep
    return value


_PYDANTIC_MESSAGES = {
    "missing": "es obligatorio",
    "string_type": "debe ser texto",
    "int_type": "debe ser un número entero",
    "int_parsing": "debe ser un número entero",
    "int_from_float": "debe ser un número entero, sin decimales",
    "decimal_type": "debe ser un número",
    "decimal_parsing": "debe ser un número",
    "float_parsing": "debe ser un número",
    "bool_type": "debe ser verdadero o falso",
    "list_type": "debe ser una lista",
    "model_type": "debe ser un objeto JSON",
    "dict_type": "debe ser un objeto JSON",
    "model_attributes_type": "debe ser un objeto JSON",
    "extra_forbidden": "no es un campo reconocido",
    "literal_error": "tiene un valor no permitido",
    "date_from_datetime_parsing": "debe ser una fecha AAAA-MM-DD",
    "date_parsing": "debe ser una fecha AAAA-MM-DD",
    "date_type": "debe ser una fecha AAAA-MM-DD",
    "time_parsing": "debe ser una hora HH:MM:SS",
    "time_type": "debe ser una hora HH:MM:SS",
    "finite_number": "debe ser un número finito",
    "too_short": "no puede estar vacío",
    "decimal_range": f"es un número fuera de rango (hasta {MAX_INT_DIGITS} cifras enteras y {MAX_DECIMAL_PLACES} "
                     "decimales)",
}


def field_path(loc: tuple[Any, ...]) -> str:
    """('items', 2, 'igv') -> 'items[2].igv'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def translate_validation_error(exc: ValidationError) -> YupanaError:
    details = []
    for err in exc.errors():
        path = field_path(tuple(p for p in err["loc"] if p not in ("function-after", "function-before")))
        reason = _PYDANTIC_MESSAGES.get(err["type"])
        if err["type"] == "literal_error":
            allowed = (err.get("ctx") or {}).get("expected", "")
            reason = f"tiene un valor no permitido (valores válidos: {allowed})"
        if reason is None:
            reason = "no es válido"
        details.append(ErrorDetail(path or None, f"El campo «{path}» {reason}." if path else f"La solicitud {reason}."))
    return invalid_many(details)


def _stand_in(annotation: Any) -> Any:
    """A harmless value of a leaf's type, or _NO_STAND_IN for a list or an object."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is Literal:
        return typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        return _stand_in(args[0])
    simple = {int: 1, Decimal: Decimal("1"), str: "X", date: date(2000, 1, 1), time: time(0, 0), bool: False}
    return simple.get(annotation, _NO_STAND_IN)


_NO_STAND_IN = object()


def _annotation_at(model: type[BaseModel], loc: tuple[Any, ...]) -> Any:
    """The declared type of the field at `loc` (('items', 2, 'cantidad') → Decimal), or None."""
    annotation: Any = model
    for part in loc:
        if isinstance(part, int):
            args = typing.get_args(annotation)
            annotation = args[0] if args else None
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel) and part in annotation.model_fields:
            annotation = annotation.model_fields[part].annotation
            inner = [a for a in typing.get_args(annotation) if a is not type(None)]
            if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(inner) == 1:
                annotation = inner[0]
        else:
            return None
    return annotation


def repaired_for_checks(model: type[ContractModel], payload: dict, exc: ValidationError
                        ) -> tuple[ContractModel, list[str]] | None:
    """`payload` with each badly typed or missing leaf replaced by a stand-in and each unknown field dropped,
    so that the checks of the content can still run and report everything in one answer; with the
    field paths that were replaced. None when a list or an object itself is wrong."""
    repaired = json.loads(json.dumps(payload, default=str))
    replaced = []
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if p not in ("function-after", "function-before"))
        if not loc:
            return None
        *parents, leaf = loc
        try:
            holder = repaired
            for part in parents:
                holder = holder[part]
        except (KeyError, IndexError, TypeError):
            return None
        if not isinstance(holder, dict):
            return None
        if err["type"] == "extra_forbidden":
            holder.pop(leaf, None)
            continue
        stand_in = _stand_in(_annotation_at(model, loc))
        if stand_in is _NO_STAND_IN:
            return None
        holder[leaf] = stand_in.isoformat() if isinstance(stand_in, date | time) else \
            str(stand_in) if isinstance(stand_in, Decimal) else stand_in
        replaced.append(field_path(loc))
    try:
        return model.model_validate(repaired), replaced
    except ValidationError:
        return None


def parse_model(model: type[ContractModel], payload: Any) -> Any:
    """Build a request model from parsed JSON; pydantic's errors become one Spanish 400."""
    if isinstance(payload, model):
        return payload
    if not isinstance(payload, dict):
        raise YupanaError(ErrorCode.INVALID_INPUT, "La solicitud debe ser un objeto JSON ({...}).",
                          [ErrorDetail(None, "Se esperaba un objeto JSON.")])
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise translate_validation_error(exc) from None
