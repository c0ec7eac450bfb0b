"""SUNAT's REST platform for guías de remisión (GRE), pure: its OAuth token and the two calls of its manual
(«Manual de servicio web - plataforma nueva GRE», as Greenter's gre-api describes it: thegreenter/gre-api openapi.yaml).

- Token: POST {security}/clientessol/{client_id}/oauth2/token/ (form: grant_type=password, scope, client_id,
  client_secret, username = RUC + SOL user, password = SOL password) → {access_token, token_type, expires_in}.
  `SunatOAuth` keeps it until it expires (less a margin) and is the one place that asks for it: the consulta de
  validez reuses it.
- Send: POST {api}/contribuyente/gem/comprobantes/{file name without extension} with
  {"archivo": {"nomArchivo": "RUC-09-T001-1.zip", "arcGreZip": base64 zip, "hashZip": SHA-256 hex of the zip}}
  → {numTicket, fecRecepcion}.
- Ticket: GET {api}/contribuyente/gem/comprobantes/envios/{numTicket} → {codRespuesta: 0 done, 98 in process, 99
  with error; error: {numError, desError}; arcCdr: base64 zip; indCdrGenerado: 1 or 0}.
- Errors: 422 {cod, msg, errors: [{cod, msg}]} (the request refused: SUNAT's code in the errors), 500 {cod, msg};
  401 the token is no longer valid: renewed once and the call repeated once.

Nothing here stores anything: the outbox keeps the ticket durably as soon as `send` returns it.
"""

from __future__ import annotations

import base64
import hashlib
import io
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.platform.lazy import lazy_module

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")


PRODUCTION_SECURITY = "https://api-seguridad.sunat.gob.pe/v1"
PRODUCTION_API = "https://api-cpe.sunat.gob.pe/v1"
SCOPE = "https://api-cpe.sunat.gob.pe"
TOKEN_MARGIN_S = 60.0  # a token this close to its expiry is renewed before use
TICKET_DONE, TICKET_IN_PROCESS, TICKET_WITH_ERROR = "0", "98", "99"
TIMEOUT_S = 30.0


class GreUnavailable(Exception):
    """No usable answer (network, 5xx, a body that is not SUNAT's): the same zip is sent again later."""


class GreRefused(Exception):
    """SUNAT refused the call (4xx other than a 401 renewed): its code and text, as its body says them."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.status, self.code, self.message = status, code, message


@dataclass(frozen=True)
class Credentials:
    client_id: str
    client_secret: str
    username: str  # RUC + SOL user
    password: str


@dataclass(frozen=True)
class Ticket:
    number: str
    received: str | None


@dataclass(frozen=True)
class TicketStatus:
    code: str  # codRespuesta: TICKET_DONE, TICKET_IN_PROCESS or TICKET_WITH_ERROR
    cdr_generated: bool
    cdr_zip: bytes | None
    error_code: str | None = None
    error_text: str | None = None

    @property
    def pending(self) -> bool:
        return self.code == TICKET_IN_PROCESS


@dataclass(frozen=True)
class Package:
    """A signed guía as SUNAT's GRE platform takes it: zipped under its name, with the zip's SHA-256."""

    name: str  # RUC-09-T001-1.zip
    content: bytes
    sha256: str

    @property
    def stem(self) -> str:
        return self.name.removesuffix(".zip")


def package(xml_name: str, signed_xml: bytes) -> Package:
    """The zip SUNAT wants (one entry, the XML under its file name) and its hash. Fixed entry time, so the same
    guía always gives the same zip and hash: a resend after a lost answer is the very same package."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo(xml_name, date_time=(1980, 1, 1, 0, 0, 0)), signed_xml)
    content = buffer.getvalue()
    return Package(xml_name.removesuffix(".xml") + ".zip", content, hashlib.sha256(content).hexdigest())


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        raise GreUnavailable(f"HTTP {response.status_code}: la respuesta no es JSON") from None
    if not isinstance(body, dict):
        raise GreUnavailable(f"HTTP {response.status_code}: respuesta inesperada")
    return body


def _refusal(response: httpx.Response) -> GreRefused:
    """A 4xx as SUNAT's manual describes it: {cod, msg, errors: [{cod, msg}]}; the first detailed error names it."""
    body = _json(response)
    errors = body.get("errors") if isinstance(body.get("errors"), list) else []
    first = errors[0] if errors and isinstance(errors[0], dict) else body
    return GreRefused(response.status_code, str(first.get("cod") or body.get("cod") or response.status_code),
                      str(first.get("msg") or body.get("msg") or ""))


class SunatOAuth:
    """SUNAT's OAuth token for one company's API credentials: asked once, kept until it expires, renewed when SUNAT
    says (a 401) that it is no longer valid. Thread-safe: one request for a token at a time."""

    def __init__(self, security_url: str, credentials: Credentials, http: httpx.Client | None = None,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.url = f"{security_url.rstrip('/')}/clientessol/{credentials.client_id}/oauth2/token/"
        self.credentials = credentials
        self.http = http or httpx.Client(timeout=TIMEOUT_S)
        self.now = now
        self._token: str | None = None
        self._expires_at = 0.0
        self._lock = threading.Lock()
        self.issued = 0  # tokens asked for (the tests count them)

    def token(self) -> str:
        with self._lock:
            if self._token is None or self.now() >= self._expires_at - TOKEN_MARGIN_S:
                self._token, lifetime = self._fetch()
                self._expires_at = self.now() + lifetime
            return self._token

    def invalidate(self, token: str) -> None:
        """Forget `token` (SUNAT answered 401 to it); a newer one fetched meanwhile stays."""
        with self._lock:
            if self._token == token:
                self._token = None

    def _fetch(self) -> tuple[str, float]:
        form = {"grant_type": "password", "scope": SCOPE, "client_id": self.credentials.client_id,
                "client_secret": self.credentials.client_secret, "username": self.credentials.username,
                "password": self.credentials.password}
        try:
            response = self.http.post(self.url, data=form)
        except httpx.TransportError as exc:
            raise GreUnavailable(f"sin respuesta del servicio de autenticación: {type(exc).__name__}") from None
        if response.status_code >= 500:
            raise GreUnavailable(f"HTTP {response.status_code} del servicio de autenticación")
        if response.status_code != 200:
            raise _refusal(response)
        body = _json(response)
        if not body.get("access_token"):
            raise GreUnavailable("el servicio de autenticación no devolvió un token")
        self.issued += 1
        return str(body["access_token"]), float(body.get("expires_in") or 0)


class GreClient:
    """SUNAT's GRE REST platform with one company's token: send a guía, ask for its ticket."""

    def __init__(self, api_url: str, oauth: SunatOAuth, http: httpx.Client | None = None) -> None:
        self.api = api_url.rstrip("/")
        self.oauth = oauth
        self.http = http or oauth.http

    def send(self, guia: Package) -> Ticket:
        body = {"archivo": {"nomArchivo": guia.name, "arcGreZip": base64.b64encode(guia.content).decode(),
                            "hashZip": guia.sha256}}
        answer = self._call("POST", f"{self.api}/contribuyente/gem/comprobantes/{guia.stem}", body)
        if not answer.get("numTicket"):
            raise GreUnavailable("SUNAT no devolvió un número de ticket")
        return Ticket(str(answer["numTicket"]), answer.get("fecRecepcion"))

    def status(self, ticket: str) -> TicketStatus:
        answer = self._call("GET", f"{self.api}/contribuyente/gem/comprobantes/envios/{ticket}")
        code = str(answer.get("codRespuesta", ""))
        if code not in (TICKET_DONE, TICKET_IN_PROCESS, TICKET_WITH_ERROR):
            raise GreUnavailable(f"codRespuesta inesperado: {code!r}")
        found = answer.get("error")
        error: dict[str, Any] = found if isinstance(found, dict) else {}
        cdr = answer.get("arcCdr")
        return TicketStatus(code, str(answer.get("indCdrGenerado", "")) == "1",
                            base64.b64decode(cdr) if cdr else None,
                            str(error["numError"]) if error.get("numError") else None, error.get("desError"))

    def _call(self, method: str, url: str, body: dict | None = None) -> dict[str, Any]:
        """One call with the token; a 401 renews the token once and repeats the call once."""
        for attempt in (1, 2):
            token = self.oauth.token()
            try:
                response = self.http.request(method, url, json=body, headers={"Authorization": f"Bearer {token}"})
            except httpx.TransportError as exc:
                raise GreUnavailable(f"sin respuesta de SUNAT: {type(exc).__name__}") from None
            if response.status_code == 401 and attempt == 1:
                self.oauth.invalidate(token)
                continue
            if response.status_code >= 500:
                raise GreUnavailable(f"HTTP {response.status_code} de SUNAT")
            if response.status_code != 200:
                raise _refusal(response)
            return _json(response)
        raise AssertionError("unreachable: the second attempt returns or raises")
