"""The messaging group service (protocols.Messaging): operations 4 and 5, instances, the inbox, subscriptions and
the webhook listener (app.core.messaging)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.contract import ChatSendRequest, ChatSendResult, ChatWebhookRequest, ChatWebhookResult, parse_model
from app.core.errors import YupanaError
from app.core.invoicing.printed import Printed
from app.core.messaging import clock as messaging_clock
from app.core.messaging.evolution_stream import EvolutionStreams
from app.core.messaging.forwarding import Forwarder
from app.core.messaging.gateways import GatewayDescription, Media, registry
from app.core.messaging.gateways.evolution import VIA_WEBHOOK, EvolutionGateway, events_via
from app.core.messaging.service import MessagingService
from app.core.platform import events
from app.core.platform.environments import SANDBOX
from app.core.platform.events import EventBus
from app.core.platform.paths import private_file
from app.core.platform.settings import LISTENER_TOLD_PORT, Settings
from app.core.records import (
    Conversation,
    Instance,
    ListenerState,
    Message,
    Reachability,
    StreamState,
    Subscription,
    rows_to,
)

if TYPE_CHECKING:
    from app.core.messaging.listener import Listener

log = logging.getLogger(__name__)


class MessagingGroup:
    def __init__(self, *, service: MessagingService, forwarder: Forwarder, printed: Printed, settings: Settings,
                 bus: EventBus, home: Path) -> None:
        self._service = service
        self._forwarder = forwarder
        self._printed = printed
        self._settings = settings
        self._bus = bus
        self._home = home
        self._listener: Listener | None = None  # built on first start: FastAPI and uvicorn stay out of the start-up
        self._streams = EvolutionStreams(service, bus)  # Evolution's Socket.IO streams, started with the listener
        self._told_port: int | None = None  # the listener's port the gateways were last given, as far as known
        self._notice: str | None = None  # what the user must change by hand since the port changed

    # ------------------------------------------------------------ the contract's operations 4 and 5

    def send(self, request: ChatSendRequest | dict[str, Any]) -> ChatSendResult:
        return self._service.send(parse_model(ChatSendRequest, request))

    def subscribe(self, request: ChatWebhookRequest | dict[str, Any]) -> ChatWebhookResult:
        return self._service.subscribe(parse_model(ChatWebhookRequest, request))

    # ------------------------------------------------------------ gateways and instances

    def gateways(self) -> list[GatewayDescription]:
        """The registered gateways (app.core.messaging.gateways.registry), each with its Spanish label, an example
        address and the credentials and options its instances take: the Mensajes form is built from these."""
        return registry.descriptions()

    def save_instance(self, name: str, gateway: str, base_url: str, credentials: dict[str, str] | None = None,
                      options: dict[str, Any] | None = None) -> Instance:
        """Create or update an instance; credentials go to the secret store, never to settings or logs."""
        return Instance.from_row(self._service.save_instance(name, gateway, base_url, credentials, options))

    def instances(self) -> list[Instance]:
        return rows_to(Instance, self._service.instances())

    def test_connection(self, name: str) -> str:
        """«Probar conexión»: the instance's state at its gateway (open, close, connecting)."""
        return self._service.test_connection(name)

    def register_webhook(self, name: str) -> str:
        """Tell the instance's gateway to post its events to our listener; returns that URL."""
        return self._service.register_webhook(name)

    def save_sandbox_instance(self, name: str, gateway: str, base_url: str, credentials: dict[str, str],
                              owner: str) -> Instance:
        """The gateway sandbox's own instance, in the sandbox environment whatever is in use, living as long as the
        sandbox process `owner`; its webhook is registered at once."""
        saved = self._service.save_instance(name, gateway, base_url, credentials, environment=SANDBOX, owner=owner)
        self._service.register_webhook(name, anywhere=True)
        return Instance.from_row(saved)

    def remove_sandbox_instance(self, name: str, owner: str) -> bool:
        return self._service.remove_sandbox_instance(name, owner)

    def sandbox_instance_name(self) -> str:
        """The name of this desk's gateway sandbox instance: «demo» on a folder's own database; on a database several
        desks share, one of this desk's own («demo-<equipo>-<carpeta>»), so two desks' sandboxes never collide."""
        return self._service.sandbox_instance

    def instance_base_url(self, name: str) -> str:
        """Where an instance's gateway is, in any environment (a sandbox's, whatever is in use)."""
        return self._service.config(name, anywhere=True).base_url

    # ------------------------------------------------------------ sending and the inbox

    def send_message(self, instance: str, to: str, text: str, *, media_path: str | Path | None = None,
                     media_url: str | None = None) -> ChatSendResult:
        """Operation 4 with a local attachment (a voucher's PDF or XML) as well as a URL."""
        media = Media(path=Path(media_path)) if media_path else Media(url=media_url) if media_url else None
        return self._service.send_message(instance, to, text, media)

    def send_voucher(self, voucher_id: int, instance: str, to: str, text: str,
                     formato: str | None = None) -> ChatSendResult:
        """Operation 4 with the voucher's PDF attached (written under the data folder's «enviados», kept as
        the copy that was sent)."""
        pdf, name = self._printed.voucher_pdf(voucher_id, formato)
        folder = self._home / "enviados"
        folder.mkdir(exist_ok=True)
        path = folder / name
        private_file(path)  # like every data file: the owner's only
        path.write_bytes(pdf)
        return self.send_message(instance, to, text, media_path=path)

    def messages(self, instance: str | None = None, peer: str | None = None) -> list[Message]:
        return rows_to(Message, self._service.store.messages(instance, peer))

    def conversations(self) -> list[Conversation]:
        return rows_to(Conversation, self._service.store.conversations())

    def subscriptions(self) -> list[Subscription]:
        return rows_to(Subscription, self._service.store.subscriptions())

    def resend(self, subscription_id: str) -> int:
        """«Reenviar»: waiting and failed deliveries of a subscription are tried again now."""
        count = self._service.store.resend(subscription_id, messaging_clock.now())
        self._forwarder.wake()
        return count

    # ------------------------------------------------------------ the webhook listener

    def start_listener(self, host: str | None = None, port: int | None = None) -> str:
        """Start the webhook listener (address and port from settings unless given) and the event streams of the
        instances set to stream (before the listener: a busy port does not keep them off); returns its URL.

        The port of the settings is kept from one start to the next (one the system picked, for 0, is stored). If
        another program holds it, a free one is taken and stored; when the port differs from the one the gateways
        were last told (taken, or changed in Ajustes, while the listener ran or while it was stopped, in this run or
        an earlier one: that port is remembered in the database), the Evolution instances that receive by webhook
        are told the new URL and `listener_state().notice` says what must be changed by hand (Meta, a tunnel)."""
        self._streams.start()
        if self._listener is None:
            from app.core.messaging.listener import Listener

            self._listener = Listener(self._service)
        configured = self._settings.get_int("listener_port") if port is None else port
        if port is None and self._told_port is None:  # the port the gateways were given (0: none was yet)
            self._told_port = int(self._settings.fact(LISTENER_TOLD_PORT) or configured) or None
        url = self._listener.start(host or self._settings.get("listener_host"), configured, or_free=port is None)
        if port is None:
            self._port_started(configured, self._listener.port or configured)
        self._bus.emit(events.ListenerChanged(self.listener_state()))
        return url

    def _port_started(self, configured: int, running: int) -> None:
        """The listener runs on `running`: stored if it is not the setting's, and the gateways and the user told
        if it is not the one the gateways were given."""
        if running != configured:
            self._settings.set("listener_port", str(running))
            self._bus.emit(events.SettingsChanged("listener_port"))
        told, self._told_port = self._told_port, running
        if told is None or told == running:
            self._settings.remember(LISTENER_TOLD_PORT, str(running))
            return
        reason = (f"el puerto {told} lo ocupa otro programa" if configured == told
                  else f"el puerto cambió de {told} a {configured or 'uno libre'} en Ajustes")
        failures = self.reregister_webhooks()
        notice = (f"El receptor de mensajes cambió al puerto {running} ({reason}): Yupana actualizó el webhook de "
                  "sus instancias de Evolution; cambie a mano la URL en Meta y en su túnel, si usa uno.")
        if failures:
            notice += (f" No se pudo actualizar en {'; '.join(failures)}: pulse «Registrar webhook en la pasarela» "
                       "en Mensajes → Avanzado cuando la pasarela responda.")
        log.warning("%s", notice)
        self._notice = notice
        self._settings.remember(LISTENER_TOLD_PORT, str(running))

    def reregister_webhooks(self) -> list[str]:
        """Tell every Evolution instance that receives by webhook (of any environment: the listener serves them
        all) the listener's URL as it is now; those that could not be told, each with why. Instances that stream
        need nothing (their stream does not go through the port); Meta's URL is set by hand in its dashboard."""
        failures = []
        for row in self._service.store.instances(anywhere=True):
            if row["gateway"] != EvolutionGateway.kind or self._service.another_desks(row):
                continue  # another desk's sandbox instance: its own listener tells it
            name = row["name"]
            try:
                if events_via(self._service.config(name, anywhere=True)) == VIA_WEBHOOK:
                    self._service.register_webhook(name, anywhere=True)
            except YupanaError as exc:
                failures.append(f"«{name}» ({exc.message})")
            except Exception:  # never fatal: the listener runs, the user is told which instance to register
                log.exception("re-registering the webhook of instance %s failed", name)
                failures.append(f"«{name}» (error inesperado: el detalle está en el registro)")
        return failures

    def stop_listener(self) -> None:
        self._streams.stop()
        if self._listener is not None and self._listener.server.running:
            self._listener.stop()
            self._bus.emit(events.ListenerChanged(self.listener_state()))

    def restart_listener_if_running(self) -> None:
        """A new address takes effect at once (settings listener_host, listener_port)."""
        if self.listener_state().state == "running":
            assert self._listener is not None
            self._listener.stop()
            self.start_listener()

    def stream_state(self, name: str) -> StreamState | None:
        """The event stream of an instance set to stream (connected, connecting, waiting and why), None when it
        has none running."""
        stream = self._streams.stream(name)
        return stream.state() if stream is not None else None

    def stream_states(self) -> list[StreamState]:
        """The event streams running now, one per instance set to stream (none while the receiver is stopped); each
        change after this is told on the bus (StreamChanged)."""
        return self._streams.states()

    def listener_base_url(self) -> str | None:
        return self._listener.base_url if self._listener else None

    def listener_state(self) -> ListenerState:
        """running, stopped or error; its URL, whether it is bound beyond this PC, its error."""
        if self._listener is None:
            return ListenerState("stopped")
        return ListenerState.from_mapping({**self._listener.state(), "notice": self._notice})

    def listener_status(self) -> str:
        """The status bar's words for the listener."""
        state = self.listener_state()
        if state.state == "running":
            return f"receptor activo en {state.url}" + (" (expuesto a la red)" if state.exposed else "")
        return "receptor con error" if state.state == "error" else "receptor detenido"

    def check_listener(self) -> Reachability:
        """Whether the address given to gateways reaches this listener."""
        return Reachability.from_row(self._service.check_reachability())
