"""SUNAT's OAuth for its REST APIs, one home for every API that needs a token: the guías (GRE platform) and the
consulta integrada de validez.

- Password grant (guías, «Manual de servicio web - plataforma nueva GRE»): POST
  {security}/clientessol/{client_id}/oauth2/token/ (form: grant_type=password, scope, client_id, client_secret,
  username = RUC + SOL user, password = SOL password).
- Client credentials (consulta integrada, «Manual de consulta integrada de comprobante de pago por servicio web»):
  POST {security}/clientesextranet/{client_id}/oauth2/token/ (form: grant_type=client_credentials, scope,
  client_id, client_secret).

Both answer {access_token, token_type, expires_in}. `SunatOAuth` keeps the token until it expires (less a margin)
and `call` makes one call with it: a 401 renews the token once and repeats the call once. `SunatTokens` is what a
service holds: one HTTP client (made at the first call) and one `SunatOAuth` per credentials, kept across calls. SUNAT's error bodies:
4xx {cod, msg, errors: [{cod, msg}]} (the first detailed error names it), 5xx: no usable answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.errors import invalid
from app.core.platform.identifiers import check_ruc
from app.core.platform.lazy import lazy_module
from app.core.platform.secrets import SecretStore

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")  # loaded at the first request (issue 33, start-up)


PRODUCTION_SECURITY = "https://api-seguridad.sunat.gob.pe/v1"
TOKEN_MARGIN_S = 60.0  # a token this close to its expiry is renewed before use
TIMEOUT_S = 30.0
PASSWORD_REALM, CLIENT_REALM = "clientessol", "clientesextranet"
GRE_SCOPE = "https://api-cpe.sunat.gob.pe"
VALIDITY_SCOPE = "https://api.sunat.gob.pe/v1/contribuyente/contribuyentes"
# The SUNAT sandboxes' public test credentials (they accept these and no others).
SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET = "yupana-sandbox", "sandbox-secreto"


class SunatUnavailable(Exception):
    """No usable answer (network, 5xx, a body that is not SUNAT's): the call may be made again later."""


class SunatRefused(Exception):
    """SUNAT refused the call (4xx other than a 401 renewed): its code and text, as its body says them."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.status, self.code, self.message = status, code, message


@dataclass(frozen=True)
class Credentials:
    """A company's API credentials (generated in SOL). With a SOL user (RUC + user) and password: the password
    grant the guías use; without: the client credentials grant of the consulta de validez."""

    client_id: str
    client_secret: str
    username: str = ""  # RUC + SOL user
    password: str = ""

    @property
    def grant(self) -> str:
        return "password" if self.username else "client_credentials"


def api_secret_names(service: str, ruc: str) -> tuple[str, str]:
    """Where a company's API credentials of one SUNAT API («gre», «validez») are kept in the secret store."""
    return f"{service}.{ruc}.client_id", f"{service}.{ruc}.client_secret"


def keep_api_credentials(secrets: SecretStore, service: str, ruc: str, client_id: str, client_secret: str,
                         api_name: str) -> None:
    """Keep a company's API credentials (generated in SOL) in the secret store (encrypted; never a setting)."""
    check_ruc(ruc)
    if not client_id.strip() or not client_secret.strip():
        raise invalid("client_id", f"El client_id y el client_secret de la API de {api_name} son obligatorios.")
    id_name, secret_name = api_secret_names(service, ruc)
    secrets.put(id_name, client_id.strip().encode("utf-8"))
    secrets.put(secret_name, client_secret.strip().encode("utf-8"))


def stored_api_credentials(secrets: SecretStore, service: str, ruc: str) -> tuple[str, str] | None:
    """The company's (client_id, client_secret) of one SUNAT API, or None when it has none."""
    id_name, secret_name = api_secret_names(service, ruc)
    client_id, client_secret = secrets.get(id_name), secrets.get(secret_name)
    if client_id is None or client_secret is None:
        return None
    return client_id.decode(), client_secret.decode()


def json_body(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        raise SunatUnavailable(f"HTTP {response.status_code}: la respuesta no es JSON") from None
    if not isinstance(body, dict):
        raise SunatUnavailable(f"HTTP {response.status_code}: respuesta inesperada")
    return body


def refusal(response: httpx.Response) -> SunatRefused:
    """A 4xx as SUNAT's manuals describe it: {cod, msg, errors: [{cod, msg}]}; the first detailed error names it
    (the consulta integrada says {success: false, message, errorCode})."""
    body = json_body(response)
    errors = body.get("errors") if isinstance(body.get("errors"), list) else []
    first = errors[0] if errors and isinstance(errors[0], dict) else body
    return SunatRefused(response.status_code,
                        str(first.get("cod") or body.get("cod") or body.get("errorCode") or response.status_code),
                        str(first.get("msg") or body.get("msg") or body.get("message") or ""))


class SunatTokens:
    """One HTTP client, made at the first call (httpx loads then: a quicker start), and one `SunatOAuth` per
    security address, credentials and scope, kept across calls until the credentials change. Thread-safe."""

    def __init__(self, timeout_s: Callable[[], float]) -> None:
        self.timeout_s = timeout_s
        self._http: httpx.Client | None = None
        self._tokens: dict[tuple[str, str, str, str], SunatOAuth] = {}
        self._lock = threading.Lock()

    @property
    def http(self) -> httpx.Client:
        with self._lock:
            if self._http is None:
                self._http = httpx.Client(timeout=self.timeout_s())
            return self._http

    def oauth(self, security_url: str, credentials: Credentials, scope: str = GRE_SCOPE) -> SunatOAuth:
        key = (security_url, credentials.client_id, credentials.username, scope)
        http = self.http
        with self._lock:
            oauth = self._tokens.get(key)
            if oauth is None or oauth.credentials != credentials:
                oauth = self._tokens[key] = SunatOAuth(security_url, credentials, http, scope=scope)
            return oauth

    def close(self) -> None:
        with self._lock:
            http, self._http = self._http, None
        if http is not None:
            http.close()


class SunatOAuth:
    """SUNAT's OAuth token for one company's API credentials and one scope: asked once, kept until it expires,
    renewed when SUNAT says (a 401) that it is no longer valid. Thread-safe: one request for a token at a time."""

    def __init__(self, security_url: str, credentials: Credentials, http: httpx.Client | None = None,
                 now: Callable[[], float] = time.monotonic, *, scope: str = GRE_SCOPE) -> None:
        realm = PASSWORD_REALM if credentials.grant == "password" else CLIENT_REALM
        self.url = f"{security_url.rstrip('/')}/{realm}/{credentials.client_id}/oauth2/token/"
        self.credentials = credentials
        self.scope = scope
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

    def call(self, method: str, url: str, body: dict | None = None,
             http: httpx.Client | None = None) -> httpx.Response:
        """One call with the token, its answer under 400 returned as it came; a 401 renews the token once and
        repeats the call once; a 5xx or no answer is SunatUnavailable, another 4xx SunatRefused."""
        for attempt in (1, 2):
            token = self.token()
            try:
                response = (http or self.http).request(method, url, json=body,
                                                       headers={"Authorization": f"Bearer {token}"})
            except httpx.TransportError as exc:
                raise SunatUnavailable(f"sin respuesta de SUNAT: {type(exc).__name__}") from None
            if response.status_code == 401 and attempt == 1:
                self.invalidate(token)
                continue
            if response.status_code >= 500:
                raise SunatUnavailable(f"HTTP {response.status_code} de SUNAT")
            if response.status_code >= 400:
                raise refusal(response)
            return response
        raise AssertionError("unreachable: the second attempt returns or raises")

    def _fetch(self) -> tuple[str, float]:
        form = {"grant_type": self.credentials.grant, "scope": self.scope, "client_id": self.credentials.client_id,
                "client_secret": self.credentials.client_secret}
        if self.credentials.grant == "password":
            form |= {"username": self.credentials.username, "password": self.credentials.password}
        try:
            response = self.http.post(self.url, data=form)
        except httpx.TransportError as exc:
            raise SunatUnavailable(f"sin respuesta del servicio de autenticación: {type(exc).__name__}") from None
        if response.status_code >= 500:
            raise SunatUnavailable(f"HTTP {response.status_code} del servicio de autenticación")
        if response.status_code != 200:
            raise refusal(response)
        body = json_body(response)
        if not body.get("access_token"):
            raise SunatUnavailable("el servicio de autenticación no devolvió un token")
        self.issued += 1
        return str(body["access_token"]), float(body.get("expires_in") or 0)
