"""Registry providers: remote services that answer RUC, carnet de extranjería and plate lookups.

Every provider maps its own answer onto the contract's fields and turns every failure into a
`YupanaError`: 404 → NOT_FOUND, time-out → UPSTREAM_TIMEOUT (504), unreachable, 429 or 5xx →
UPSTREAM_UNAVAILABLE (503), a 401/403 or an answer we cannot read → UPSTREAM_BAD_RESPONSE (502).
Time-outs come from `registry_timeout_s`, so a provider never hangs the caller.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from app.core.errors import ErrorCode, YupanaError, not_found
from app.core.platform.addresses import Addresses
from app.core.platform.lazy import lazy_module

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")

Kind = Literal["ruc", "ce", "placa"]
KINDS: tuple[Kind, ...] = ("ruc", "ce", "placa")
WHAT = {"ruc": "el RUC", "ce": "el carnet de extranjería", "placa": "la placa"}


def token_secret_name(provider: str) -> str:
    return f"registry.token.{provider}"


class Provider(ABC):
    """One remote registry service. `fetch` returns the contract's fields of one record."""

    name: ClassVar[str]
    url_setting: ClassVar[str]

    def __init__(self, base_url: str, token: str | None, client: httpx.Client) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.client = client

    @abstractmethod
    def path(self, kind: Kind, numero: str) -> str:
        """The URL path of one lookup, after base_url."""

    @abstractmethod
    def record(self, kind: Kind, body: Any) -> dict[str, Any]:
        """The contract's fields from a successful answer's JSON body; KeyError/TypeError when malformed."""

    def fetch(self, kind: Kind, numero: str) -> dict[str, Any]:
        response = self._get(self.path(kind, numero))
        self._raise_for_status(response, kind, numero)
        try:
            return self.record(kind, response.json())
        except (ValueError, KeyError, TypeError, AttributeError):
            raise self._error(ErrorCode.UPSTREAM_BAD_RESPONSE, "respondió algo que no se puede leer") from None

    def _get(self, path: str) -> httpx.Response:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            return self.client.get(self.base_url + path, headers=headers)
        except httpx.TimeoutException:
            raise self._error(ErrorCode.UPSTREAM_TIMEOUT, "no respondió a tiempo") from None
        except httpx.HTTPError:
            raise self._error(ErrorCode.UPSTREAM_UNAVAILABLE, "no está disponible (sin conexión)") from None

    def _raise_for_status(self, response: httpx.Response, kind: Kind, numero: str) -> None:
        status = response.status_code
        if status == 200:
            return
        if status == 404:
            raise not_found("numero", f"No se encontró {WHAT[kind]} «{numero}».")
        if status in (401, 403):
            raise self._error(ErrorCode.UPSTREAM_BAD_RESPONSE,
                              "rechazó el token de acceso: revise el token configurado para este proveedor")
        if status == 429:
            raise self._error(ErrorCode.UPSTREAM_UNAVAILABLE, "limitó las consultas (demasiadas solicitudes)")
        if status >= 500:
            raise self._error(ErrorCode.UPSTREAM_UNAVAILABLE, f"tiene un problema (HTTP {status})")
        raise self._error(ErrorCode.UPSTREAM_BAD_RESPONSE, f"respondió HTTP {status}")

    def _error(self, code: ErrorCode, what: str) -> YupanaError:
        return YupanaError(code, f"El proveedor de consultas «{self.name}» {what}.")


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _year(value: Any) -> int | None:
    text = _text(value)
    return int(text) if text and text.isdigit() else None


# The contract's fields of each record, all strings but `año`.
RECORD_FIELDS: dict[Kind, tuple[str, ...]] = {
    "ruc": ("ruc", "razon_social", "tipo_contribuyente", "estado", "condicion", "direccion", "departamento",
            "provincia", "distrito", "actividad_economica"),
    "ce": ("ce", "nombre_completo", "nombres", "apellido_paterno", "apellido_materno", "nacionalidad", "estado"),
    "placa": ("placa", "marca", "modelo", "color", "año", "clase", "serie", "motor"),
}


class YupanaProvider(Provider):
    """Another service speaking this very contract: `{base_url}/api/v1/ruc/{numero}`, envelope {success, data}."""

    name = "yupana"
    url_setting = "registry_yupana_url"

    def path(self, kind: Kind, numero: str) -> str:
        return f"/api/v1/{kind}/{numero}"

    def record(self, kind: Kind, body: Any) -> dict[str, Any]:
        if not body.get("success"):
            raise KeyError("success")
        data = body["data"]
        out: dict[str, Any] = {field: _text(data.get(field)) for field in RECORD_FIELDS[kind]}
        if kind == "placa":
            out["año"] = _year(data.get("año"))
        return out


class FactilizaProvider(Provider):
    """Factiliza-style API: `/ruc/info/`, `/cee/info/`, `/placa/info/`, envelope {status, success, message, data}."""

    name = "factiliza"
    url_setting = "registry_factiliza_url"
    PATHS: ClassVar[dict[Kind, str]] = {"ruc": "/ruc/info/", "ce": "/cee/info/", "placa": "/placa/info/"}
    # contract field -> Factiliza field
    FIELDS: ClassVar[dict[Kind, dict[str, str]]] = {
        "ruc": {"ruc": "numero", "razon_social": "nombre_o_razon_social", "tipo_contribuyente": "tipo_contribuyente",
                "estado": "estado", "condicion": "condicion", "direccion": "direccion",
                "departamento": "departamento", "provincia": "provincia", "distrito": "distrito",
                "actividad_economica": "actividad_economica"},
        "ce": {"ce": "numero", "nombres": "nombres", "apellido_paterno": "apellido_paterno",
               "apellido_materno": "apellido_materno", "nacionalidad": "nacionalidad", "estado": "calidad_migratoria"},
        "placa": {"placa": "placa", "marca": "marca", "modelo": "modelo", "color": "color", "año": "anio",
                  "clase": "clase", "serie": "serie", "motor": "motor"},
    }

    def path(self, kind: Kind, numero: str) -> str:
        return f"{self.PATHS[kind]}{numero}"

    def record(self, kind: Kind, body: Any) -> dict[str, Any]:
        if not body.get("success"):
            raise KeyError("success")
        data = body["data"]
        out: dict[str, Any] = {ours: _text(data.get(theirs)) for ours, theirs in self.FIELDS[kind].items()}
        if kind == "placa":
            out["año"] = _year(data.get("anio"))
        if kind == "ruc" and not out["direccion"]:
            out["direccion"] = _text(data.get("direccion_completa"))
        if kind == "ce":
            names = [out["nombres"], out["apellido_paterno"], out["apellido_materno"]]
            out["nombre_completo"] = _text(data.get("nombre_completo")) or _text(" ".join(n for n in names if n))
        return out


PROVIDERS: dict[str, type[Provider]] = {p.name: p for p in (YupanaProvider, FactilizaProvider)}


# After a provider times out or is unreachable, it is not asked again for this long: lookups answer
# at once (from the register, a stale cache entry or the same error) instead of waiting each time.
BACKOFF_S = 30.0


def clock() -> float:
    """Monotonic seconds; tests replace it."""
    return time.monotonic()


class ProviderHub:
    """Builds the configured providers in order; keeps one HTTP client (and its connections) per time-out,
    and remembers which providers are down for BACKOFF_S."""

    def __init__(self, addresses: Addresses) -> None:
        self._addresses = addresses
        self._clients: dict[int, httpx.Client] = {}
        self._lock = threading.Lock()
        self._down: dict[str, tuple[float, YupanaError]] = {}

    def fetch(self, provider: Provider, kind: Kind, numero: str) -> dict[str, Any]:
        """provider.fetch, unless the provider failed to answer less than BACKOFF_S ago."""
        down = self._down.get(provider.base_url)  # by address: the sandbox's being down says nothing of beta's
        if down is not None and clock() < down[0]:
            raise down[1]
        try:
            record = provider.fetch(kind, numero)
        except YupanaError as exc:
            if exc.code in (ErrorCode.UPSTREAM_TIMEOUT, ErrorCode.UPSTREAM_UNAVAILABLE):
                self._down[provider.base_url] = (clock() + BACKOFF_S, exc)
            raise
        self._down.pop(provider.base_url, None)
        return record

    def names(self) -> list[str]:
        raw = self._addresses.endpoint("registry_providers")
        return [name.strip().lower() for name in raw.split(",") if name.strip()]

    def client(self, timeout_s: int) -> httpx.Client:
        with self._lock:
            client = self._clients.get(timeout_s)
            if client is None:
                client = self._clients[timeout_s] = httpx.Client(timeout=httpx.Timeout(timeout_s),
                                                                 follow_redirects=False)
            return client

    def configured(self) -> list[Provider]:
        """The providers of `registry_providers`, in order, that have a base URL, in the current environment (the
        running registry sandbox's in the sandbox environment, the settings' elsewhere)."""
        settings = self._addresses.settings
        out: list[Provider] = []
        names = self.names()
        if not names:
            return out
        client = self.client(settings.get_int("registry_timeout_s"))
        for name in names:
            cls = PROVIDERS.get(name)
            if cls is None:
                continue  # an unknown name is reported by the setting's check
            base_url = self._addresses.endpoint(cls.url_setting)
            if not base_url:
                continue
            token = self._addresses.secret(token_secret_name(name))
            out.append(cls(base_url, token.decode() if token else None, client))
        return out

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()
