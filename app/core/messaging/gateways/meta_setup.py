"""Meta's setup as a form: a connection test that proves the token and the phone_number_id the user typed.

The cheapest call that needs both is reading the phone number node of the Cloud API (Meta's reference, «WhatsApp
Business Phone Number»): `GET {graph}/{phone_number_id}?fields=display_phone_number,verified_name,quality_rating` with
`Authorization: Bearer <token>` → 200 `{display_phone_number, verified_name, quality_rating, id}`. Failures come in the
Graph API's error shape (Meta's «Graph API → Error handling» guide): `{error: {message, type, code, error_subcode,
fbtrace_id}}`; code 190 is a token that is not valid or has expired, 100 with subcode 33 an object that does not exist
or that the token may not read, 10 and 200 a missing permission, 4/80007/130429 a rate limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.errors import ErrorCode, ErrorDetail, YupanaError, invalid
from app.core.messaging.gateways.meta import DEFAULT_BASE_URL, RATE
from app.core.messaging.service import check_url
from app.core.platform.lazy import lazy_module

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")

FIELDS = "display_phone_number,verified_name,quality_rating"
BAD_TOKEN = {190, 102, 104}  # not valid or expired; session invalid; no token at all
NO_PERMISSION = {10, 200}
NOT_READABLE = 100  # with subcode 33: no such object, or not for this token
TIMEOUT_S = 15.0


@dataclass(frozen=True)
class MetaNumber:
    """The WhatsApp number Meta answered for the phone_number_id: what the form shows when the test passes."""

    id: str
    display_phone_number: str
    verified_name: str
    quality_rating: str


def check_meta_number(token: str, phone_number_id: str, base_url: str = DEFAULT_BASE_URL, *,
                      timeout: float = TIMEOUT_S, client: httpx.Client | None = None) -> MetaNumber:
    """«Probar conexión» of Meta's form: the number behind `phone_number_id`, read with `token`; a Spanish error that
    names the field (and what was typed, but never the token) otherwise."""
    base_url, token, number_id = _checked(token, phone_number_id, base_url)
    own = client is None
    http = client or httpx.Client(timeout=timeout, follow_redirects=False)
    try:
        response = _get(http, f"{base_url}/{number_id}", token, base_url)
    finally:
        if own:
            http.close()
    body = _json(response)
    if response.status_code != 200:
        raise _refusal(body, response.status_code, number_id, base_url)
    return MetaNumber(str(body.get("id") or number_id), str(body.get("display_phone_number") or ""),
                      str(body.get("verified_name") or ""), str(body.get("quality_rating") or ""))


def _checked(token: str, phone_number_id: str, base_url: str) -> tuple[str, str, str]:
    base_url = check_url("base_url", base_url or DEFAULT_BASE_URL).rstrip("/")
    token, number_id = (token or "").strip(), (phone_number_id or "").strip()
    if not token:
        raise invalid("token", "Escriba el token de acceso de Meta (WhatsApp → Configuración de la API).")
    if not (number_id.isascii() and number_id.isdigit()):
        raise invalid("phone_number_id", f"El phone_number_id «{number_id}» no es válido: son solo dígitos (Meta lo "
                                         "muestra en WhatsApp → Configuración de la API, «Identificador de número de "
                                         "teléfono»); no es el número de teléfono.")
    return base_url, token, number_id


def _get(client: httpx.Client, url: str, token: str, base_url: str) -> httpx.Response:
    try:
        return client.get(url, params={"fields": FIELDS}, headers={"Authorization": f"Bearer {token}"})
    except httpx.TimeoutException:
        message = f"Meta ({base_url}) no respondió a tiempo: revise su conexión a internet."
        raise YupanaError(ErrorCode.UPSTREAM_TIMEOUT, message, [ErrorDetail("base_url", message)]) from None
    except httpx.HTTPError as exc:
        message = f"No se pudo conectar con {base_url} ({type(exc).__name__}): revise la dirección y su conexión."
        raise YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE, message, [ErrorDetail("base_url", message)]) from None


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        body = None
    return body if isinstance(body, dict) else {}


def _refusal(body: dict[str, Any], status: int, number_id: str, base_url: str) -> YupanaError:
    found = body.get("error")
    error: dict[str, Any] = found if isinstance(found, dict) else {}
    code, said = error.get("code"), str(error.get("message") or "")[:300]
    meta_says = f" (Meta: «{said}», código {code})" if said else f" (HTTP {status})"
    if code in BAD_TOKEN:
        message = f"Meta no aceptó el token de acceso que escribió: no es válido o venció{meta_says}."
        return YupanaError(ErrorCode.UPSTREAM_REJECTED, message, [ErrorDetail("token", message)])
    if code in NO_PERMISSION:
        message = (f"El token de acceso no tiene permiso sobre el número «{number_id}»: dele los permisos "
                   f"whatsapp_business_messaging y whatsapp_business_management{meta_says}.")
        return YupanaError(ErrorCode.UPSTREAM_REJECTED, message, [ErrorDetail("token", message)])
    if code == NOT_READABLE:
        message = (f"Meta no encuentra el phone_number_id «{number_id}», o el token no puede leerlo: revise ese "
                   f"identificador{meta_says}.")
        return YupanaError(ErrorCode.NOT_FOUND, message, [ErrorDetail("phone_number_id", message)])
    if code in RATE or status == 429:
        return YupanaError(ErrorCode.RATE_LIMITED, f"Meta limita las consultas: espere un momento y vuelva a "
                                                   f"intentar{meta_says}.")
    if not error:
        message = f"La dirección {base_url} no respondió como la Graph API de Meta (HTTP {status}): revísela."
        return YupanaError(ErrorCode.UPSTREAM_BAD_RESPONSE, message, [ErrorDetail("base_url", message)])
    return YupanaError(ErrorCode.UPSTREAM_BAD_RESPONSE, f"Meta rechazó la prueba{meta_says}.")
