"""Operations 4 and 5 and everything around them: instances, sends, received events, subscriptions.

The engine owns one `MessagingService`; the listener and the forwarder call into it. It is given the
pieces it needs (the database and the messaging repository, secrets, settings, event bus), never the engine.

An instance belongs to the environment it was saved in (app.core.platform.environments): listed, tested, sent from and
subscribed to only there; elsewhere it is «not found», and it is back when its environment is chosen again.
The listener still accepts its gateway's posts (stored in the instance's environment, so nothing is lost).
The sandbox gateway's «demo» has its sandbox process as owner: `remove_sandbox_instance` when that sandbox
stops, `purge_stopped_sandboxes` (at every start) when it was killed. On a database several desks share, each desk's
sandbox instance is its own (`sandbox_instance`: «demo-<desk>»): another desk's is neither listed nor used here.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import re
import secrets as random
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from app.core.contract import ChatSendRequest, ChatSendResult, ChatWebhookRequest, ChatWebhookResult
from app.core.errors import ErrorCode, YupanaError, conflict, invalid, not_found
from app.core.messaging import events as ev
from app.core.messaging.gateways import Gateway, GatewayConfig, Media, adapter_for, registry
from app.core.messaging.ids import message_id, subscription_id, webhook_secret
from app.core.messaging.phone import normalise
from app.core.messaging.store import MessagingStore
from app.core.platform import clock, environments
from app.core.platform.events import ContractEvent, EventBus, InstanceSaved, MessageSent, SubscriptionChanged
from app.core.platform.lazy import lazy_module
from app.core.platform.secrets import SecretStore
from app.core.platform.settings import Settings
from app.core.storage.ports.database import Database
from app.core.storage.ports.messaging import MessagingRepository

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")

log = logging.getLogger(__name__)
INSTANCE_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
INSTANCE_SECRETS = ("webhook_token", "webhook_secret")  # every instance's, besides its gateway's credentials


def credential_keys(gateway: str) -> tuple[str, ...]:
    """The secrets a registered gateway's instances keep in the secret store (none for a gateway no longer
    registered: its instances are still listed, and deleted with their own secrets)."""
    found = registry.find(gateway)
    return found.credential_keys() if found is not None else ()


def check_choices(gateway: str, options: dict[str, Any]) -> None:
    """An option offered as a list (`GatewayField.choices`) takes one of its values, or nothing (its default)."""
    for field in registry.gateway_class(gateway).options:
        value = options.get(field.key)
        if field.choices and value not in (None, "") and value not in dict(field.choices):
            valid = ", ".join(f"«{choice}» ({label})" for choice, label in field.choices)
            raise invalid(field.key, f"«{value}» no es una opción de «{field.label}»: elija {valid}.")


def secret_name(instance: str, key: str) -> str:
    return f"messaging.instance.{instance}.{key}"


MAX_URL_CHARS = 2048  # what browsers and most servers accept; a subscriber's URL longer than this is a mistake
_SHOWN_CHARS = 100  # of a refused URL, in the message


def _shown(url: str) -> str:
    """A URL as an error message quotes it: control characters written out (`\\r\\n`), cut after _SHOWN_CHARS."""
    text = "".join(repr(c)[1:-1] if ord(c) < 32 or ord(c) == 127 else c for c in url)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + f"… ({len(url)} caracteres)"


def check_url(field: str, url: str) -> str:
    """An http or https URL (the scheme in any case) with a host: no control characters, a valid port."""
    url = (url or "").strip()
    if any(ord(c) < 32 or ord(c) == 127 for c in url):
        raise invalid(field, f"El campo «{field}» contiene caracteres de control (saltos de línea, tabuladores…): "
                             f"«{_shown(url)}».")
    try:
        parts = urlsplit(url)
        scheme, host, _port = parts.scheme.lower(), parts.hostname, parts.port  # a bad port or IPv6 raises
    except ValueError:
        scheme, host = "", None
    if scheme not in ("http", "https") or not host or any(c.isspace() for c in host):
        raise invalid(field, f"El campo «{field}» debe ser una URL http:// o https:// completa, con el nombre o la "
                             f"dirección del servidor (se recibió «{_shown(url)}»).")
    return url


def _ip_of(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host names literally (also the short IPv4 forms a socket accepts: `2852039166`, `0xa9fe0101`,
    `169.254.1`); None for a name (names are not resolved here)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def check_subscriber_url(field: str, url: str) -> str:
    """Operation 5's URL, where deliveries will be posted: `check_url`, at most MAX_URL_CHARS, no credentials, and
    not a link-local (169.254.0.0/16, fe80::/10, where cloud metadata lives) or multicast destination. Loopback
    and the LAN are allowed: a point of sale on the same PC or network is the usual subscriber."""
    url = (url or "").strip()
    if len(url) > MAX_URL_CHARS:
        raise invalid(field, f"El campo «{field}» tiene {len(url)} caracteres; una URL de suscripción admite hasta "
                             f"{MAX_URL_CHARS} (se recibió «{_shown(url)}»).")
    url = check_url(field, url)
    parts = urlsplit(url)
    if "@" in parts.netloc:
        raise invalid(field, f"El campo «{field}» no debe llevar usuario ni contraseña en la URL (se recibió "
                             f"«{_shown(url)}»): use una dirección sin credenciales; cada entrega va firmada.")
    address = _ip_of(parts.hostname or "")
    if address is not None and (address.is_link_local or address.is_multicast or address.is_unspecified):
        kind = "multidifusión" if address.is_multicast else ("sin especificar" if address.is_unspecified
                                                           else "de enlace local")
        raise invalid(field, f"El campo «{field}» apunta a una dirección {kind} ({address}), a la que no se entregan "
                             f"eventos (se recibió «{_shown(url)}»). Use la dirección del servidor en la red "
                             "local, 127.0.0.1 o un nombre público.")
    return url


SANDBOX_INSTANCE = "demo"  # the gateway sandbox's instance on a folder's own database


def desk_sandbox_instance(home: Path, host: str) -> str:
    """The sandbox instance of the desk with data folder `home` on computer `host`, on a database several desks
    share: «demo-<host>-<6 hex of the folder>» (two desks of one computer differ by their folder)."""
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "-", host).strip("-.")[:32] or "puesto"
    tag = hashlib.sha256(str(Path(home).resolve()).encode()).hexdigest()[:6]
    return f"{SANDBOX_INSTANCE}-{readable}-{tag}"


class MessagingService:
    def __init__(self, database: Database, repository: MessagingRepository, secrets: SecretStore, settings: Settings,
                 bus: EventBus, *,
                 listener_base_url: Callable[[], str | None] = lambda: None,
                 after_ingest: Callable[[], None] = lambda: None,
                 sandbox_instance: str = SANDBOX_INSTANCE, shared: bool = False) -> None:
        """`listener_base_url`: where our webhook listener runs, when it does; `after_ingest`: told after new events
        were stored (the forwarder's wake-up); `sandbox_instance`: the name of this desk's gateway sandbox instance;
        `shared`: the database is several desks' (another desk's sandbox instance is not this one's)."""
        self.sandbox_instance = sandbox_instance
        self.shared = shared
        self.store = MessagingStore(database, repository, self.environment)
        self.secrets = secrets
        self.settings = settings
        self.bus = bus
        # name → (configuration, its environment, whether it is another desk's sandbox instance)
        self._configs: dict[str, tuple[GatewayConfig, str, bool]] = {}
        self._pings: dict[str, bool] = {}
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        self.listener_base_url = listener_base_url
        self.after_ingest = after_ingest
        self.purge_stopped_sandboxes()

    def environment(self) -> str:
        """The environment in use: the one whose instances are seen and used."""
        return environments.in_settings(self.settings)

    @property
    def client(self) -> httpx.Client:
        """One keep-alive client for every gateway call (redirects are not followed)."""
        with self._lock:
            if self._client is None:
                timeout = float(self.settings.get("messaging_timeout_s"))
                self._client = httpx.Client(timeout=timeout, follow_redirects=False)
            return self._client

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # ------------------------------------------------------------ instances

    def save_instance(self, name: str, gateway: str, base_url: str, credentials: dict[str, str] | None = None,
                      options: dict[str, Any] | None = None, *, environment: str | None = None,
                      owner: str | None = None) -> dict[str, Any]:
        """Create or update an instance of `environment` (the current one by default); `owner`: the sandbox
        process it lives with (None: the user's, kept until deleted)."""
        name = (name or "").strip()
        environment = environment or self.environment()
        if not INSTANCE_NAME.match(name):
            raise invalid("instance", f"El nombre de instancia «{name}» no es válido: use letras, números, guion o "
                                      "punto (hasta 64).")
        if registry.find(gateway) is None:
            raise invalid("gateway", f"La pasarela «{gateway}» no existe. Válidas: {', '.join(registry.names())}.")
        base_url = check_url("base_url", base_url).rstrip("/")
        check_choices(gateway, options or {})
        existing = self.store.instance(name, anywhere=True)
        if existing is not None and existing["environment"] != environment:
            label = environments.get(existing["environment"]).label
            raise conflict("instance", f"La instancia «{name}» ya existe en el entorno «{label}»: use otro nombre "
                                       "aquí (las instancias de cada entorno se guardan aparte).")
        for key, value in (credentials or {}).items():
            if key not in credential_keys(gateway):
                raise invalid(key, f"La pasarela {gateway} no usa la credencial «{key}».")
            if value:
                self.secrets.put(secret_name(name, key), value.strip().encode())
        if self.secrets.get(secret_name(name, "webhook_token")) is None:
            self.secrets.put(secret_name(name, "webhook_token"), random.token_urlsafe(24).encode())
        self.store.save_instance(name, gateway, base_url, options or {}, environment, owner)
        with self._lock:
            self._configs.pop(name, None)
        self.bus.emit(InstanceSaved(name))
        return self.instance(name, anywhere=True)

    def remove_sandbox_instance(self, name: str, owner: str) -> bool:
        """Its sandbox stops: the instance goes, with its credentials, if `owner` made it (another process's newer
        sandbox keeps its own). Its messages and subscriptions stay in the sandbox environment."""
        row = self.store.instance(name, anywhere=True)
        if row is None or not self.store.delete_instance(name, owner):
            return False
        self._forget_instance(name, row["gateway"])
        return True

    def purge_stopped_sandboxes(self) -> list[str]:
        """Remove the instances of sandbox processes that were killed without stopping; returns their names."""
        gone = []
        for row in self.store.stopped_sandbox_instances():
            if self.store.delete_instance(row["name"], row["owner"]):
                self._forget_instance(row["name"], row["gateway"])
                gone.append(row["name"])
        return gone

    def _forget_instance(self, name: str, gateway: str) -> None:
        for key in dict.fromkeys((*credential_keys(gateway), *INSTANCE_SECRETS)):
            self.secrets.delete(secret_name(name, key))
        with self._lock:
            self._configs.pop(name, None)
        self.bus.emit(InstanceSaved(name, deleted=True))

    def another_desks(self, row: dict[str, Any]) -> bool:
        """The instance is another desk's sandbox instance (its gateway runs on that desk's computer): neither listed,
        nor used, nor told our listener's address here."""
        return self.shared and bool(row.get("owner")) and row["name"] != self.sandbox_instance

    def instance(self, name: str, anywhere: bool = False) -> dict[str, Any]:
        row = self.store.instance(name, anywhere)
        if row is None or (not anywhere and self.another_desks(row)):
            raise self._unknown(name)
        row["credentials"] = {key: self.secrets.get(secret_name(name, key)) is not None
                              for key in credential_keys(row["gateway"])}
        return row

    def instances(self) -> list[dict[str, Any]]:
        return [self.instance(row["name"]) for row in self.store.instances() if not self.another_desks(row)]

    def _unknown(self, name: str) -> YupanaError:
        """An instance not found here; the message says so when it is another environment's."""
        other = self.store.instance(name, anywhere=True)
        if other is not None and self.another_desks(other):
            return not_found("instance", f"La instancia «{name}» es la de prueba de otro puesto (su pasarela de prueba "
                                         f"corre en ese equipo): en este puesto use «{self.sandbox_instance}».")
        if other is not None:
            theirs, ours = environments.get(other["environment"]).label, environments.get(self.environment()).label
            return not_found("instance", f"La instancia «{name}» es del entorno «{theirs}» y no se usa en «{ours}»: "
                                         "cambie de entorno en Ajustes → Entorno, o cree una instancia para este "
                                         "entorno.")
        return not_found("instance", f"La instancia «{name}» no existe. Créela en Mensajes → Instancias.")

    def config(self, name: str, anywhere: bool = False) -> GatewayConfig:
        """The instance's configuration with its credentials, if it belongs to the current environment
        (`anywhere`: the listener checking a post, the sandbox registering its webhook)."""
        with self._lock:
            cached = self._configs.get(name)
        if cached is not None and (anywhere or (cached[1] == self.environment() and not cached[2])):
            return cached[0]
        row = self.store.instance(name, anywhere)
        if row is None or (not anywhere and self.another_desks(row)):
            raise self._unknown(name)
        keys = (*credential_keys(row["gateway"]), "webhook_token")
        credentials = {}
        for key in keys:
            value = self.secrets.get(secret_name(name, key))
            if value is not None:
                credentials[key] = value.decode()
        config = GatewayConfig(name, row["gateway"], row["base_url"], row["options"], credentials)
        with self._lock:
            self._configs[name] = (config, row["environment"], self.another_desks(row))
        return config

    def forget_configs(self) -> None:
        """Drop the decrypted configurations kept in memory; the next use reads them again."""
        with self._lock:
            self._configs.clear()

    def configs(self, gateway: str) -> list[GatewayConfig]:
        """Every environment's instances of a gateway: the listener checks a post against them all."""
        return [self.config(row["name"], anywhere=True) for row in self.store.instances(anywhere=True)
                if row["gateway"] == gateway]

    def gateway(self, name: str, anywhere: bool = False) -> Gateway:
        return adapter_for(self.config(name, anywhere), self.client)

    def test_connection(self, name: str) -> str:
        """«Probar conexión»: the gateway's state of the instance (open, close, connecting)."""
        state = self.gateway(name).connection_state()
        self.store.set_instance_state(name, state)
        self.bus.emit(InstanceSaved(name, state))
        return state

    def pinged(self, nonce: str) -> bool:
        """The listener saw `nonce` (issued by `check_reachability`): True once."""
        with self._lock:
            if nonce in self._pings:
                self._pings[nonce] = True
                return True
        return False

    def check_reachability(self) -> dict[str, Any]:
        """Ajustes → Mensajería: does the address we give gateways reach this very listener?

        A fresh nonce is fetched through that address (the public one, a tunnel, when set); only our
        listener knows the nonce, so a 200 proves the path. The answer says whether only this PC can
        use that address (a gateway in the cloud then cannot post to it)."""
        own = self.listener_base_url()
        if own is None:
            raise YupanaError(ErrorCode.NOT_CONFIGURED, "El receptor de webhooks está detenido: inícielo (se inicia "
                                                        "con la aplicación y con «yupana serve»).")
        base = (self.settings.get("listener_public_url") or own).rstrip("/")
        nonce = random.token_urlsafe(16)
        with self._lock:
            self._pings[nonce] = False
        failure: httpx.Response | httpx.HTTPError
        try:
            try:
                response = self.client.get(f"{base}/webhooks/ping/{nonce}", timeout=5.0)
                reached, failure = response.status_code == 200, response
            except httpx.HTTPError as exc:
                reached, failure = False, exc
            with self._lock:
                seen = self._pings.get(nonce, False)
        finally:
            with self._lock:
                self._pings.pop(nonce, None)
        if not (reached and seen):
            detail = f"HTTP {failure.status_code}" if isinstance(failure, httpx.Response) else type(failure).__name__
            raise YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE,
                              f"La dirección {base} no llega a este receptor ({detail}). Revise el túnel o la "
                              "dirección pública en Ajustes → Mensajería (listener_public_url).")
        host = httpx.URL(base).host
        local_only = host in ("127.0.0.1", "localhost", "::1")
        return {"url": base, "reachable": True, "local_only": local_only}

    def listener_url(self, name: str, anywhere: bool = False) -> str:
        """Where the gateway must post this instance's events: the public address if one is set, else ours."""
        config = self.config(name, anywhere)
        base = (self.settings.get("listener_public_url") or self.listener_base_url()
                or f"http://{self.settings.get('listener_host')}:{self.settings.get('listener_port')}")
        return base.rstrip("/") + registry.gateway_class(config.gateway).webhook_path(config)

    def register_webhook(self, name: str, anywhere: bool = False) -> str:
        """Tell the gateway to post to our listener (`anywhere`: also another environment's instance, as a sandbox
        does for its own while the folder works elsewhere)."""
        url = self.listener_url(name, anywhere)
        secret = self.gateway(name, anywhere).set_webhook(url)
        if secret:  # a gateway that signs its posts (another Yupana): keep its secret to verify them
            self.secrets.put(secret_name(name, "webhook_secret"), secret.encode())
            with self._lock:
                self._configs.pop(name, None)
        return url

    # ------------------------------------------------------------ operation 4

    def send(self, request: ChatSendRequest) -> ChatSendResult:
        if not request.instance:
            raise invalid("instance", "El campo «instance» es obligatorio: indique el nombre de la instancia.")
        if not request.message and not request.media_url:
            raise invalid("message", "El campo «message» es obligatorio.")
        media = Media(url=check_url("media_url", request.media_url)) if request.media_url else None
        return self.send_message(request.instance, request.to, request.message, media)

    def send_message(self, instance: str, to: str, text: str, media: Media | None = None) -> ChatSendResult:
        if not (to or "").strip():
            raise invalid("to", "El campo «to» está vacío: indique el número con código de país, p. ej. "
                                "+51987654321. (Un mensaje recibido con «from» vacío viene de alguien que WhatsApp "
                                "identifica solo por su LID, «from_id»: no se le puede responder hasta conocer su "
                                "número.)")
        number = normalise(to)
        if media is not None and media.path is not None:
            path = Path(media.path)
            if not path.is_file():
                raise invalid("media", f"El archivo «{path}» no existe.")
            media = Media(path=path)
        receipt = self.gateway(instance).send(number, text, media)
        stamp = receipt.timestamp or int(clock.timestamp())
        our_id = message_id()
        status = self.store.add_outgoing(our_id, instance, receipt.gateway_id, number, text,
                                         media.describe() if media else None, stamp)
        self.bus.emit(MessageSent(instance, our_id, number, status))
        # The contract: "the value sent is the one that appears" in a send's result.
        return ChatSendResult(id=our_id, status=ev.SENT, to=number, timestamp=stamp)

    # ------------------------------------------------------------ operation 5

    def subscribe(self, request: ChatWebhookRequest) -> ChatWebhookResult:
        if not request.instance:
            raise invalid("instance", "El campo «instance» es obligatorio: indique el nombre de la instancia.")
        url = check_subscriber_url("url", request.url)
        if not request.events:
            raise invalid("events", "El campo «events» debe tener al menos un evento.")
        self.config(request.instance)  # an unknown instance is a 404 before anything is stored
        self.register_webhook(request.instance)
        sub_id, secret = subscription_id(), webhook_secret()
        self.secrets.put(f"messaging.subscription.{sub_id}", secret.encode())
        self.store.add_subscription(sub_id, request.instance, url, list(request.events))
        self.bus.emit(SubscriptionChanged(sub_id))
        return ChatWebhookResult(instance=request.instance, url=url, events=list(request.events), id=sub_id,
                                 secret=secret)

    def subscription_secret(self, sub_id: str) -> str:
        value = self.secrets.get(f"messaging.subscription.{sub_id}")
        if value is None:
            raise YupanaError(ErrorCode.INTERNAL, f"Falta el secreto de la suscripción {sub_id}.")
        return value.decode()

    # ------------------------------------------------------------ received events

    def ingest(self, events: list[ev.InboundEvent]) -> list[ev.InboundEvent]:
        """Store once, apply, queue deliveries (one transaction); then tell the windows and wake the
        forwarder. Returns the events that were new."""
        if not events:
            return []
        fresh = self.store.ingest(events)
        self.announce(fresh)
        return fresh

    def announce(self, fresh: list[ev.InboundEvent]) -> None:
        """Tell the windows of events just stored and wake the forwarder: after the commit that holds them (the
        listener's group commit calls it once the group is committed)."""
        for event in fresh:
            self.bus.emit(ContractEvent(event.event, event.instance, event.timestamp, event.data))
        if fresh:
            self.after_ingest()
