"""What every gateway shares: the class a gateway is (its description, its sending, its webhook's verification and
parsing), an instance's configuration, a media attachment, a send's receipt, a post to the listener and the
translation of HTTP failures into the contract's Spanish errors."""

from __future__ import annotations

import base64
import hmac
import json
import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from app.core.errors import ErrorCode, ErrorDetail, YupanaError
from app.core.messaging.events import InboundEvent
from app.core.platform.lazy import lazy_module

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")

MAX_MEDIA_BYTES = 16 * 1024 * 1024  # WhatsApp's limit for documents sent by most gateways


@dataclass(frozen=True)
class GatewayField:
    """A credential or an option an instance of a gateway takes, as the Mensajes form asks for it.

    `label` is what the user reads (Spanish); `secret`: typed hidden (every credential is kept encrypted in the
    secret store whatever this says); `required`: the gateway cannot work without it (an option that is required is
    saved even empty); `entered`: False for what the engine keeps by itself (the signing secret another Yupana answers
    when its webhook is registered), which the form does not ask for; `hint`: the field's placeholder; `choices`:
    the values an option may take, each with its Spanish label (the form offers them as a list, the first by default;
    saving another value is refused)."""

    key: str
    label: str
    secret: bool = False
    required: bool = False
    entered: bool = True
    hint: str = ""
    choices: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class GatewayDescription:
    """A registered gateway as the windows see it (`engine.messaging.gateways()`): its name, its Spanish label, an
    example address, the credentials and options of its instances and the listener path it is posted to."""

    name: str
    label: str
    address_hint: str
    credentials: tuple[GatewayField, ...]
    options: tuple[GatewayField, ...]
    listener_path: str


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


class WebhookRejected(Exception):
    """A post the listener refuses (401 forged, 404 unknown instance, 400 unreadable, 413 too large): it answers the
    contract's error envelope with this Spanish message and stores nothing."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def same_secret(given: str | None, expected: str | None) -> bool:
    """Both present and equal, compared in constant time."""
    return bool(given) and bool(expected) and hmac.compare_digest(str(given).encode(), str(expected).encode())


class WebhookPost:
    """One request to a gateway's listener route, as its `verify`, `parse` and `handshake` see it: the instance named
    in the path (None on a shared path), the query, the headers (case-insensitive) and the raw body.

    The listener gives it the ways to the instances (`config`, `configs`) and to a Standard Webhooks check, so a
    gateway module needs neither the service nor the web stack (which loads only with the listener)."""

    def __init__(self, gateway: str, instance: str | None, query: Mapping[str, str], headers: Mapping[str, str],
                 raw: bytes) -> None:
        self.gateway = gateway
        self.instance = instance
        self.query = query
        self.headers = headers
        self.raw = raw
        self._body: Any = _UNREAD

    def json(self) -> Any:
        """The body as JSON (read once); 400 when it is not JSON."""
        if self._body is _UNREAD:
            try:
                raw = self.raw
                # json.loads, with its decoder made once (json.loads builds a new one for each call with options)
                text = raw.decode(json.detect_encoding(raw), "surrogatepass") if isinstance(raw, bytes) else raw
                self._body = _DECODER.decode(text)
            except (ValueError, UnicodeDecodeError):
                raise WebhookRejected(400, "El webhook no es JSON válido.") from None
            except RecursionError:  # nested deeper than any gateway writes: refused before anything is read of it
                raise WebhookRejected(400, "El webhook está anidado demasiado hondo para ser de una pasarela.") \
                    from None
        return self._body

    def config(self) -> GatewayConfig:
        """The configuration of the instance the path names, with its credentials; 404 when there is none of this
        gateway (in any environment: a post is stored in its instance's own)."""
        raise NotImplementedError

    def configs(self) -> list[GatewayConfig]:
        """Every environment's instances of this gateway (a shared path: the post says which one it is for)."""
        raise NotImplementedError

    def standard_webhook(self, secret: str) -> Any:
        """The body as `json()` reads it (400 when it is not JSON or nested too deep), once verified per Standard
        Webhooks (webhook-id, webhook-timestamp, webhook-signature) with `secret`; 401 when the signature is not
        valid or its headers cannot be read."""
        raise NotImplementedError


_UNREAD = object()


class Gateway:
    """A gateway, described once and registered (app.core.messaging.gateways.registry.register).

    Its class says what the Mensajes form and the listener need: `kind` (its name in the data folder), `label`
    (Spanish), `address_hint` (an example base URL), `credentials` and `options` of its instances, `listener_path`
    (where it posts: with `{name}`, one path per instance; without, one shared by all its instances). Its class
    methods receive: `verify` a post (or refuse it), `parse` it into events, and `handshake` a GET on its path if the
    gateway does one. An instance of the class sends for one configured instance: `client` is the service's shared
    httpx.Client (keep-alive).
    """

    kind: ClassVar[str] = ""
    label: ClassVar[str] = ""
    address_hint: ClassVar[str] = ""
    credentials: ClassVar[tuple[GatewayField, ...]] = ()
    options: ClassVar[tuple[GatewayField, ...]] = ()
    listener_path: ClassVar[str] = ""

    def __init__(self, config: GatewayConfig, client: httpx.Client) -> None:
        self.config = config
        self.client = client

    # ------------------------------------------------------------ description

    @classmethod
    def describe(cls) -> GatewayDescription:
        return GatewayDescription(cls.kind, cls.label, cls.address_hint, tuple(cls.credentials), tuple(cls.options),
                                  cls.listener_path)

    @classmethod
    def credential_keys(cls) -> tuple[str, ...]:
        """The secrets its instances keep in the secret store (besides every instance's webhook token)."""
        return tuple(credential.key for credential in cls.credentials)

    @classmethod
    def webhook_path(cls, config: GatewayConfig) -> str:
        """The path (and query) of our listener this instance's gateway is told to post to."""
        return cls.listener_path.format(name=config.name)

    # ------------------------------------------------------------ receiving (the listener's generated routes)

    @classmethod
    def verify(cls, post: WebhookPost) -> Any:
        """Check that the post comes from the gateway, or raise `WebhookRejected` (401 forged, 404 unknown
        instance); returns what `parse` needs (the body, the instances it may name). The listener runs it once
        more with credentials re-read from the data folder when it refuses with 401 or 404."""
        raise NotImplementedError

    @classmethod
    def parse(cls, post: WebhookPost, verified: Any) -> list[InboundEvent]:
        """The verified post as the contract's events (nothing for what the contract does not know)."""
        raise NotImplementedError

    @classmethod
    def handshake(cls, post: WebhookPost) -> str:
        """A GET on the listener path (a gateway that checks the URL before it posts): the text to answer, or
        `WebhookRejected`. Only gateways that override it get a GET route."""
        raise NotImplementedError

    @classmethod
    def has_handshake(cls) -> bool:
        return any("handshake" in vars(klass) for klass in cls.__mro__ if klass is not Gateway)

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


def _not_json(constant: str) -> Any:
    """NaN and ±Infinity: Python reads them, JSON (RFC 8259) has no such numbers."""
    raise ValueError(f"{constant} is not JSON")


def json_or_empty(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return {}


_DECODER = json.JSONDecoder(parse_constant=_not_json)  # NaN and Infinity are no JSON a gateway sends
