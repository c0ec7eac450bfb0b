"""What every gateway adapter shares: its configuration, a media attachment, a send's receipt and
the translation of HTTP failures into the contract's Spanish errors."""

from __future__ import annotations

import base64
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from app.core.errors import ErrorCode, ErrorDetail, YupanaError

MAX_MEDIA_BYTES = 16 * 1024 * 1024  # WhatsApp's limit for documents sent by most gateways


@dataclass
class GatewayConfig:
    """One instance as an adapter sees it: gateway kind, base URL, options and decrypted credentials."""

    name: str
    gateway: str
    base_url: str
    options: dict[str, Any] = field(default_factory=dict)
    credentials: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:  # credentials never reach a log line
        return f"GatewayConfig({self.name!r}, {self.gateway!r}, {self.base_url!r})"


@dataclass
class Media:
    """An attachment: a URL the gateway fetches, or a local file sent inline (base64)."""

    url: str | None = None
    path: Path | None = None

    @property
    def file_name(self) -> str:
        if self.path:
            return self.path.name
        return (self.url or "").rsplit("/", 1)[-1].split("?", 1)[0] or "archivo"

    @property
    def mimetype(self) -> str:
        return mimetypes.guess_type(self.file_name)[0] or "application/octet-stream"

    @property
    def kind(self) -> str:
        """WhatsApp's media type: image, video, audio or document (PDF and XML are documents)."""
        major = self.mimetype.split("/", 1)[0]
        return major if major in ("image", "video", "audio") else "document"

    def read_base64(self) -> str:
        assert self.path is not None
        size = self.path.stat().st_size
        if size > MAX_MEDIA_BYTES:
            raise YupanaError(ErrorCode.PAYLOAD_TOO_LARGE, f"El archivo «{self.path.name}» pesa {size // 1024} KiB; "
                                                           f"WhatsApp acepta hasta {MAX_MEDIA_BYTES // 2**20} MiB.")
        return base64.b64encode(self.path.read_bytes()).decode()

    def describe(self) -> str:
        return str(self.path) if self.path else (self.url or "")


@dataclass
class SendReceipt:
    gateway_id: str | None
    timestamp: int | None = None


class Gateway:
    """Subclasses implement the calls; `client` is the service's shared httpx.Client (keep-alive)."""

    kind = ""

    def __init__(self, config: GatewayConfig, client: httpx.Client) -> None:
        self.config = config
        self.client = client

    def send(self, to: str, text: str, media: Media | None = None) -> SendReceipt:
        raise NotImplementedError

    def connection_state(self) -> str:
        """`open`, `close` or `connecting`."""
        raise NotImplementedError

    def set_webhook(self, url: str) -> str | None:
        """Ask the gateway to POST this instance's events to `url` (our listener); returns the signing
        secret the gateway answered, if it signs its posts."""
        raise NotImplementedError

    # ------------------------------------------------------------ shared error handling

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        url = self.config.base_url.rstrip("/") + path
        try:
            return self.client.request(method, url, **kwargs)
        except httpx.TimeoutException:
            raise YupanaError(ErrorCode.UPSTREAM_TIMEOUT, f"La pasarela de mensajería ({self.config.base_url}) no "
                                                          "respondió a tiempo.") from None
        except httpx.HTTPError as exc:
            raise YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE,
                              f"No se pudo conectar con la pasarela de mensajería ({self.config.base_url}): "
                              f"{type(exc).__name__}. Revise la dirección y que la pasarela esté encendida.") from None

    def instance_error(self, code: ErrorCode, message: str) -> YupanaError:
        return YupanaError(code, message, [ErrorDetail("instance", message)])

    def common_failure(self, response: httpx.Response, to: str | None = None) -> YupanaError:
        """Failures every gateway answers alike: wrong credentials, rate limit, server trouble."""
        name = self.config.name
        if response.status_code in (401, 403):
            return self.instance_error(ErrorCode.UPSTREAM_REJECTED,
                                       f"La pasarela rechazó las credenciales de la instancia «{name}» "
                                       "(Mensajes → Instancias).")
        if response.status_code == 429:
            return YupanaError(ErrorCode.RATE_LIMITED, f"La pasarela limita los envíos de la instancia «{name}»: "
                                                       "espere un momento y vuelva a intentar.")
        if response.status_code >= 500:
            return YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE,
                               f"La pasarela de mensajería tuvo un error (HTTP {response.status_code}); "
                               "vuelva a intentar en unos minutos.")
        return YupanaError(ErrorCode.UPSTREAM_BAD_RESPONSE,
                           f"La pasarela de mensajería respondió HTTP {response.status_code} de forma inesperada.")


def json_or_empty(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return {}
