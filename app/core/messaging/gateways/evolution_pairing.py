"""«Conectar WhatsApp» with an Evolution API v2 server: create or connect an instance, show its QR code until the
phone scans it, then keep the instance (its token encrypted, like every gateway credential).

Read from Evolution's source (tag 2.3.6: src/api/controllers/instance.controller.ts, src/api/routes/instance.router.ts,
src/api/guards/auth.guard.ts, src/api/guards/instance.guard.ts, src/api/types/wa.types.ts):

- With the server's global key (its AUTHENTICATION_API_KEY) Yupana creates the instance: `POST /instance/create`
  `{instanceName, integration: "WHATSAPP-BAILEYS", qrcode: true[, number]}` → 201 `{instance: {instanceName, instanceId,
  integration, status}, hash: "<the instance's token>", …, qrcode: {pairingCode, code, base64, count}}`.
- With only an instance's token it connects that existing instance: `GET /instance/connect/{instance}[?number=]` → 200
  `{pairingCode, code, base64, count}` (the QR's text, its PNG as a data URI, the code to type on the phone when a
  number was given) while it waits for the phone, or `{instance: {instanceName, state: "open"}}` once paired; when
  Baileys could not start it answers 200 `{error: true, message}`.
- `GET /instance/connectionState/{instance}` → `{instance: {instanceName, state}}`: `connecting` until the phone
  scans, then `open`. Baileys renews the QR about every 20 s, so each poll also reads the current one.
- Its guards answer in this order: an unknown instance 404, a name already in use on create 403 (`This name "x" is
  already in use.`), a wrong key 401; errors as `{status, error, response: {message}}`.
"""

from __future__ import annotations

import base64
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from app.core.errors import ErrorCode, ErrorDetail, YupanaError, conflict, invalid, not_found
from app.core.invoicing.catalog.records import whatsapp as whatsapp_number
from app.core.messaging.gateways.evolution import EvolutionGateway
from app.core.messaging.service import INSTANCE_NAME, check_url
from app.core.platform.lazy import lazy_module

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")

if TYPE_CHECKING:
    from app.core.services.protocols import Messaging

CREATE, CONNECT = "create", "connect"  # the two cases: a new instance (global key), an existing one (its token)
BAILEYS = "WHATSAPP-BAILEYS"  # Evolution's integration for a phone paired by QR (wa.types.ts, Integration)
OPEN, CONNECTING, CLOSE = "open", "connecting", "close"  # Baileys' connection states, as Evolution names them
TIMEOUT_S = 20.0  # Evolution's create waits 5 s for the first QR, its connect 2 s: room for both and a slow link


@dataclass(frozen=True)
class QrCode:
    """What the phone scans: `code` the QR's text (draw it), `image` Evolution's own PNG (a data URI), `pairing_code`
    the code to type on the phone instead (only when a number was given), `count` how many QRs Baileys has shown."""

    code: str = ""
    image: str = ""
    pairing_code: str = ""
    count: int = 0

    def png(self) -> bytes:
        """Evolution's own picture as PNG bytes (empty when it sent none or sent something unreadable): the windows
        draw it without decoding anything themselves."""
        try:
            return base64.b64decode(self.image.split(",", 1)[-1], validate=True) if self.image else b""
        except ValueError:
            return b""


@dataclass(frozen=True)
class PairingState:
    """Where a pairing is: the instance, the case (`CREATE` or `CONNECT`), its state at Evolution (connecting, open,
    close) and the QR to show while it is not open; `notice` says what Yupana did besides (Spanish, may be empty)."""

    instance: str
    case: str
    state: str
    qr: QrCode | None = None
    notice: str = ""

    @property
    def connected(self) -> bool:
        return self.state == OPEN


def pairing_case(global_key: str, instance_token: str) -> str:
    """`CREATE` with the global key (it wins when both are typed: it can create), `CONNECT` with only an instance's
    token, "" with neither."""
    if global_key.strip():
        return CREATE
    return CONNECT if instance_token.strip() else ""


def case_text(case: str, instance: str) -> str:
    """What «Conectar WhatsApp» will do, in the shop owner's words."""
    name = f"«{instance}»" if instance else "(escriba su nombre)"
    if case == CREATE:
        return (f"Con la clave global, Yupana creará en el servidor la instancia {name}, guardará su token cifrado y "
                "mostrará el código QR para vincular el teléfono.")
    if case == CONNECT:
        return (f"Con el token de la instancia, Yupana conectará la instancia {name} que ya existe en el servidor y "
                "mostrará su código QR.")
    return ("Escriba la clave global del servidor (para crear una instancia nueva) o el token de una instancia que "
            "ya existe (para conectarla).")


def qr_of(answer: Any) -> QrCode | None:
    """The QR in an answer of create (`qrcode: {…}`) or connect (the object itself); None when it carries none."""
    if not isinstance(answer, dict):
        return None
    nested = answer.get("qrcode")
    inner: dict[str, Any] = nested if isinstance(nested, dict) else answer
    code, image = str(inner.get("code") or ""), str(inner.get("base64") or "")
    if not code and not image:
        return None
    count = inner.get("count")
    return QrCode(code, image, str(inner.get("pairingCode") or ""), count if isinstance(count, int) else 0)


def _reason(response: httpx.Response) -> str:
    """Evolution's own words for a refusal (`response.message`, a text or a list), for the Spanish message."""
    try:
        body = response.json()
    except ValueError:
        return ""
    if not isinstance(body, dict):
        return ""
    message = (body.get("response") or {}).get("message") if isinstance(body.get("response"), dict) else None
    message = message if message is not None else body.get("message")
    parts = message if isinstance(message, list) else [message] if message else []
    return "; ".join(str(part) for part in parts)[:300]


class EvolutionPairing:
    """One «Conectar WhatsApp» session with an Evolution server: `start` creates or connects the instance (and keeps it
    in Yupana with its token), `poll` reads its state and the current QR until the phone has scanned it. Calls are
    blocking: the windows run them on a worker."""

    def __init__(self, messaging: Messaging, timeout: float = TIMEOUT_S, client: httpx.Client | None = None) -> None:
        self._messaging = messaging
        self._client = client or httpx.Client(timeout=timeout, follow_redirects=False)
        self._own_client = client is None
        self._lock = threading.Lock()
        self._base_url = ""
        self._instance = ""
        self._token = ""  # the instance's token: never in a returned value, a log line or a repr
        self._number = ""
        self._case = ""
        self._saved_state = ""

    def __repr__(self) -> str:
        return f"EvolutionPairing({self._base_url!r}, {self._instance!r}, {self._case!r})"

    def close(self) -> None:
        if self._own_client:
            self._client.close()

    # ------------------------------------------------------------ the two cases

    def start(self, base_url: str, instance: str, global_key: str = "", instance_token: str = "",
              number: str = "") -> PairingState:
        """Create (global key) or connect (instance token) the instance; saves it in Yupana (the token encrypted)
        and returns its first QR, or its state when it is already connected."""
        case = pairing_case(global_key, instance_token)
        base_url, instance, number = self._checked(base_url, instance, number, case)
        with self._lock:
            self._base_url, self._instance, self._number, self._case = base_url, instance, number, case
            self._token = self._saved_state = ""
        if case == CREATE:
            token, qr = self._create(global_key.strip())
            state = CONNECTING
        else:  # the token is proved (a first read) before it is kept
            token = instance_token.strip()
            state, qr = self._read(token)
        self._messaging.save_instance(instance, EvolutionGateway.kind, base_url, {"apikey": token}, {})
        with self._lock:
            self._token = token
        return self._reported(state, qr)

    def poll(self) -> PairingState:
        """The instance's state now and, while it waits for the phone, the QR Evolution shows now."""
        with self._lock:
            token = self._token
        if not token:
            raise invalid("instance", "Primero pulse «Conectar»: todavía no hay una instancia que vigilar.")
        return self._reported(*self._read(token))

    def _reported(self, state: str, qr: QrCode | None) -> PairingState:
        if state == OPEN:
            return PairingState(self._instance, self._case, OPEN, None, self._connected_once())
        return PairingState(self._instance, self._case, state or CONNECTING, qr)

    def _read(self, key: str) -> tuple[str, QrCode | None]:
        """(state, current QR) of the instance, with `key`."""
        state = self._state(key)
        if state == OPEN:
            return OPEN, None
        answer = self._get(f"/instance/connect/{quote(self._instance, safe='')}", key,
                           params={"number": self._number} if self._number else None)
        if answer.get("error"):
            raise YupanaError(ErrorCode.UPSTREAM_BAD_RESPONSE,
                              f"Evolution no pudo iniciar la sesión de «{self._instance}»: {answer.get('message')}")
        inner = answer.get("instance")
        if isinstance(inner, dict) and inner.get("state") == OPEN:  # the phone scanned between the two calls
            return OPEN, None
        return state, qr_of(answer)

    # ------------------------------------------------------------ steps

    def _checked(self, base_url: str, instance: str, number: str, case: str) -> tuple[str, str, str]:
        """What the user typed, checked before anything reaches the server; every message names the field."""
        if not case:
            message = case_text("", instance)
            raise YupanaError(ErrorCode.INVALID_INPUT, message,
                              [ErrorDetail("global_key", message), ErrorDetail("instance_token", message)])
        base_url = check_url("base_url", base_url).rstrip("/")
        instance = (instance or "").strip()
        if not INSTANCE_NAME.match(instance):
            raise invalid("instance", f"El nombre de instancia «{instance}» no es válido: use letras, números, guion "
                                      "o punto (hasta 64), sin espacios.")
        if number.strip():
            try:  # as Clientes reads it: a Peruvian mobile may be typed without +51
                number = (whatsapp_number(number) or "").lstrip("+")
            except ValueError as exc:
                raise invalid("number", f"El número del teléfono no es válido: {exc}") from None
        return base_url, instance, number.strip()

    def _create(self, global_key: str) -> tuple[str, QrCode | None]:
        body: dict[str, Any] = {"instanceName": self._instance, "integration": BAILEYS, "qrcode": True}
        if self._number:
            body["number"] = self._number
        response = self._request("POST", "/instance/create", global_key, json=body)
        if response.status_code not in (200, 201):
            raise self._refusal(response, creating=True)
        answer = self._json(response)
        token = answer.get("hash")
        if isinstance(token, dict):  # Evolution 2.0 and 2.1 answered `hash: {apikey}`
            token = token.get("apikey")
        if not isinstance(token, str) or not token:
            raise self._not_evolution("/instance/create sin el token de la instancia («hash»)")
        return token, qr_of(answer)

    def _state(self, key: str) -> str:
        answer = self._get(f"/instance/connectionState/{quote(self._instance, safe='')}", key)
        inner = answer.get("instance")
        return str(inner.get("state") or "") if isinstance(inner, dict) else ""

    def _connected_once(self) -> str:
        """Yupana's record of the instance follows (Mensajes shows it connected), once per session."""
        with self._lock:
            if self._saved_state == OPEN:
                return ""
            self._saved_state = OPEN
        try:
            self._messaging.test_connection(self._instance)
        except YupanaError as exc:
            return f"WhatsApp quedó conectado, pero Yupana no pudo anotarlo: {exc.message}"
        return ""

    # ------------------------------------------------------------ HTTP

    def _get(self, path: str, key: str, params: dict[str, str] | None = None) -> dict[str, Any]:
        response = self._request("GET", path, key, params=params)
        if response.status_code != 200:
            raise self._refusal(response, creating=False)
        return self._json(response)

    def _request(self, method: str, path: str, key: str, **kwargs: Any) -> httpx.Response:
        url = self._base_url + path
        try:
            return self._client.request(method, url, headers={"apikey": key}, **kwargs)
        except httpx.TimeoutException:
            message = f"El servidor {self._base_url} no respondió a tiempo: revise la dirección y su conexión."
            raise YupanaError(ErrorCode.UPSTREAM_TIMEOUT, message, [ErrorDetail("base_url", message)]) from None
        except httpx.HTTPError as exc:
            message = (f"No se pudo conectar con el servidor {self._base_url} ({type(exc).__name__}): revise la "
                       "dirección y que Evolution esté encendido.")
            raise YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE, message, [ErrorDetail("base_url", message)]) from None

    def _json(self, response: httpx.Response) -> dict[str, Any]:
        try:
            answer = response.json()
        except ValueError:
            raise self._not_evolution(f"{response.request.url.path} respondió algo que no es JSON") from None
        if not isinstance(answer, dict):
            raise self._not_evolution(f"{response.request.url.path} respondió algo que no es un objeto JSON")
        return answer

    def _not_evolution(self, what: str) -> YupanaError:
        message = f"La dirección {self._base_url} no parece un servidor Evolution API v2 ({what}): revísela."
        return YupanaError(ErrorCode.UPSTREAM_BAD_RESPONSE, message, [ErrorDetail("base_url", message)])

    def _refusal(self, response: httpx.Response, *, creating: bool) -> YupanaError:
        """Evolution's refusal in Spanish, naming what the user typed (the server, the instance, the key)."""
        status, reason, url, name = response.status_code, _reason(response), self._base_url, self._instance
        if status == 401:
            field, what = ("global_key", "la clave global") if creating else ("instance_token", "el token")
            message = (f"El servidor {url} no aceptó {what} que escribió" +
                       (" (es AUTHENTICATION_API_KEY en la configuración de Evolution)." if creating else
                        f" para la instancia «{name}» (cópielo del administrador de Evolution)."))
            return YupanaError(ErrorCode.UPSTREAM_REJECTED, message, [ErrorDetail(field, message)])
        if status == 403 and creating:
            return conflict("instance", f"El servidor {url} ya tiene una instancia «{name}»: elija otro nombre, o "
                                        "escriba el token de esa instancia (sin la clave global) para conectarla.")
        if status == 404 and "does not exist" in reason:
            return not_found("instance", f"El servidor {url} no tiene la instancia «{name}»: revise el nombre, o "
                                         "escriba la clave global para crearla.")
        if status == 404:
            return self._not_evolution(f"HTTP 404 en {response.request.url.path}")
        if status == 400:
            return invalid(None, f"Evolution rechazó la instancia «{name}»: {reason or 'solicitud inválida'}.")
        if status >= 500:
            return YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE, f"El servidor {url} tuvo un error (HTTP {status})"
                                                               f"{': ' + reason if reason else ''}; vuelva a intentar.")
        return YupanaError(ErrorCode.UPSTREAM_BAD_RESPONSE,
                           f"El servidor {url} respondió HTTP {status} de forma inesperada{': ' + reason if reason else ''}.")
