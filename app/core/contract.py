"""The service contract in one place: requests and results of the eight operations and the events.

Field names are the contract's, in Spanish, exactly (`año` included). Optional fields that the
contract does not name are Yupana's documented extras (docs/contract.md); they are left out of
the JSON when they are empty so a strict client of the contract sees only its own fields.
Money is `Decimal`, never float: JSON bodies are parsed with `parse_float=Decimal`.
"""

from __future__ import annotations

import json
from datetime import date, time
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import ErrorCode, ErrorDetail, YupanaError, invalid_many

MAX_BODY_BYTES = 5 * 1024 * 1024  # a 1,000-line voucher signed is well under 1 MiB


class ContractModel(BaseModel):
    """Base of every contract model: exact field names, unknown fields refused (typos get a 400)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, str_strip_whitespace=True)

    def to_json(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", by_alias=True)
        for name, info in type(self).model_fields.items():
            key = info.alias or name
            if (info.json_schema_extra or {}).get("extra") and data.get(key) in (None, [], {}):
                data.pop(key, None)
        return data


def extra(default: Any = None, **kwargs: Any) -> Any:
    """A field the contract does not name; dropped from JSON output when empty."""
    if "default_factory" in kwargs:
        return Field(json_schema_extra={"extra": True}, **kwargs)
    return Field(default, json_schema_extra={"extra": True}, **kwargs)


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


class Item(ContractModel):
    descripcion: str
    cantidad: Decimal
    precio_unitario: Decimal  # unit value without IGV
    igv: Decimal | None = None  # the line's IGV; computed when missing
    codigo: str | None = extra()
    unidad: str | None = extra()  # catalogue 03 (UN/ECE rec 20); NIU by default
    tipo_afectacion_igv: str | None = extra()  # catalogue 07; "10" (gravado) by default


class Cuota(ContractModel):
    monto: Decimal
    fecha_vencimiento: date


class FormaPago(ContractModel):
    tipo: Literal["Contado", "Credito"] = "Contado"
    cuotas: list[Cuota] = Field(default_factory=list)


class DocumentoReferencia(ContractModel):
    tipo: str  # "01" or "03"
    serie: str
    numero: int


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


class EventDelivery(ContractModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    event: EventName
    instance: str
    timestamp: int
    data: dict[str, Any]


# ---------------------------------------------------------------- envelopes and parsing

def success_envelope(result: ContractModel) -> dict[str, Any]:
    return {"success": True, "data": result.to_json()}


def parse_json(body: bytes | str | None) -> Any:
    """Parse a JSON body with exact decimals; a clear 400 (never a traceback) when it is not JSON."""
    if isinstance(body, (bytes, bytearray, str)) and len(body) > MAX_BODY_BYTES:
        raise YupanaError(ErrorCode.PAYLOAD_TOO_LARGE,
                          f"La solicitud supera el tamaño máximo de {MAX_BODY_BYTES // (1024 * 1024)} MiB.")
    if body is None or (isinstance(body, (bytes, str)) and not body.strip()):
        raise YupanaError(ErrorCode.INVALID_JSON, "El cuerpo de la solicitud está vacío: se esperaba un objeto JSON.",
                          [ErrorDetail(None, "Cuerpo vacío.")])
    try:
        return json.loads(body, parse_float=Decimal)
    except (ValueError, UnicodeDecodeError) as exc:
        where = f" (línea {exc.lineno}, columna {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        message = f"El cuerpo de la solicitud no es JSON válido{where}."
        raise YupanaError(ErrorCode.INVALID_JSON, message, [ErrorDetail(None, message)]) from None


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
