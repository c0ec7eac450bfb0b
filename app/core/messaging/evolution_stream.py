"""Evolution's events over an outbound connection: its Socket.IO stream, for a PC that a hosted Evolution cannot post
to (behind NAT, without a tunnel).

Evolution API v2 (src/api/integrations/event/websocket/websocket.controller.ts) serves Socket.IO on its own address
when its server sets `WEBSOCKET_ENABLED=true`. Each event goes, as the webhook's body (`{event, instance, data,
server_url, date_time, sender, apikey}`), to the namespace `/<instance>` when the instance's stream is on with that
event (`POST /websocket/set/{instance}`), and to the global namespace `/` as well when the server sets
`WEBSOCKET_GLOBAL_EVENTS=true`. It authenticates the connection with the `apikey` header (an instance's token or the
global key) and emits without buffering: what is emitted while nobody is connected is gone.

One `EvolutionStream` per instance whose `events_via` is `stream` or `stream-global`, each on its own background loop
(app.core.platform.loops), never on the windows' thread. A round connects (websocket transport only: Evolution's
default transports include it), and after every connection, the first of a process included:

- reads what was missed with findMessages, from the moment the previous connection was lost (in this process) or
  from the instance's last stored received message (after a restart), minus CATCH_UP_MARGIN_S, and stores it through
  the webhook's own parser and `MessagingService.ingest`: stored once (the key is Evolution's message id, the same as
  the live event's), forwarded like any event;
- re-reads the instance's state (`connectionState`): statuses (delivered, read) and connection changes emitted during
  the gap cannot be asked for again, so they are lost (docs/messaging.md).

A connection that fails or drops is retried with exponential backoff (`backoff_s`); when the server has no Socket.IO
endpoint at all, the state says that the server needs `WEBSOCKET_ENABLED=true`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.core.errors import YupanaError
from app.core.messaging.gateways import GatewayConfig
from app.core.messaging.gateways.evolution import (
    STREAM_OFF,
    VIA_STREAM,
    VIA_STREAM_GLOBAL,
    EvolutionGateway,
    events_via,
    parse_webhook,
)
from app.core.messaging.service import MessagingService
from app.core.platform import clock
from app.core.platform.events import INSTANCE_SAVED, Event, EventBus, InstanceSaved, StreamChanged
from app.core.platform.lazy import lazy_module
from app.core.platform.loops import UNTIL_WOKEN, BackgroundLoop, Due
from app.core.records import StreamState

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")

log = logging.getLogger(__name__)

STREAM_EVENTS = ("messages.upsert", "messages.update", "connection.update")  # Evolution's names on the stream
CATCH_UP_MARGIN_S = 600  # a message stamped by the sender's phone may reach Evolution minutes later
CATCH_UP_MAX_PAGES = 40  # 2,000 messages: a longer gap is read only in part (and logged)
RECENT_MESSAGES = 200  # how far back the last received message is looked for among an instance's messages
BACKOFF_FIRST_S = 1.0
BACKOFF_MAX_S = 60.0
CONNECT_TIMEOUT_S = 10.0
PROBE_TIMEOUT_S = 5.0  # the check for a Socket.IO endpoint after a failed connection


def backoff_s(failures: int, first: float = BACKOFF_FIRST_S, cap: float = BACKOFF_MAX_S) -> float:
    """The wait before the next attempt after `failures` failed ones in a row: first, 2×, 4×… up to `cap`."""
    return min(cap, first * 2 ** max(0, failures - 1))


# A stream's states (StreamState.state): what Mensajes shows for each is its own (app/gui/messages.py).
CONNECTED, CONNECTING, WAITING, STOPPED = "connected", "connecting", "waiting", "stopped"


class EvolutionStream:
    """One instance's stream (see the module's doc). `start()`, `stop()`; `state()` for Mensajes and tests; each
    change of state is told on `bus` (StreamChanged), for the windows to show it as it happens."""

    def __init__(self, service: MessagingService, name: str, *, first_backoff_s: float = BACKOFF_FIRST_S,
                 max_backoff_s: float = BACKOFF_MAX_S, bus: EventBus | None = None) -> None:
        self.service = service
        self.name = name
        self.bus = bus
        self.first_backoff_s = first_backoff_s
        self.max_backoff_s = max_backoff_s
        self._client: Any = None  # the socketio.Client of the current connection
        self._namespace = "/"  # the namespace it listens on
        self._lock = threading.Lock()
        self._failures = 0
        self._lost_at: int | None = None  # when this process's previous connection dropped
        self._state = StreamState(name, CONNECTING)
        self.connections = 0  # successful connections so far (tests wait on it)
        self.loop = BackgroundLoop(f"evolution-stream-{name}", self._round, what=f"evolution stream {name}",
                                   logger=log)

    # ------------------------------------------------------------ life cycle

    def start(self) -> None:
        if self.bus is not None:
            self.bus.emit(StreamChanged(self.state()))  # the windows show it from its first moment
        self.loop.start()

    def stop(self, timeout: float = 5.0) -> bool:
        """Disconnect and end the loop for good."""
        stopped_loop = self.loop
        with self._lock:
            client, self._client = self._client, None
        stopped_loop.stop(0)  # nothing new starts; the round under way ends at its next check
        if client is not None:
            _close(client)
        stopped = stopped_loop.stop(timeout)
        self._set_state(STOPPED)
        return stopped

    def state(self) -> StreamState:
        with self._lock:
            return self._state

    def _set_state(self, state: str, detail: str = "", caught_up: int = 0) -> None:
        with self._lock:
            before = self._state
            if before.state == STOPPED:
                return  # stopped for good: a round ending late does not bring it back
            reconnecting = state != CONNECTED and (before.state == CONNECTED or before.reconnecting)
            self._state = StreamState(self.name, state, detail, caught_up, reconnecting and state != STOPPED)
            changed = self._state != before
        if changed and self.bus is not None:
            self.bus.emit(StreamChanged(self._state))

    # ------------------------------------------------------------ one round

    def _round(self) -> Due:
        if self._connected():
            return UNTIL_WOKEN  # woken by a drop: the next round reconnects
        if self._client is not None:
            self._dropped()
            self._set_state(CONNECTING)
        config = self.service.config(self.name, anywhere=True)
        try:
            self._connect(config)
        except _Refused as refused:
            self._failures += 1
            wait = backoff_s(self._failures, self.first_backoff_s, self.max_backoff_s)
            log.info("evolution stream %s: %s (next attempt in %.1f s)", self.name, refused.reason, wait)
            self._set_state(WAITING, refused.reason)
            return wait
        self._failures = 0
        self.connections += 1
        caught_up = self._catch_up(config)
        self._refresh_state()
        self._set_state(CONNECTED, caught_up=caught_up)
        return UNTIL_WOKEN

    def _connected(self) -> bool:
        with self._lock:
            client = self._client
        return client is not None and client.connected and self._namespace in client.namespaces

    def _dropped(self) -> None:
        """The previous connection is gone: remember since when events may be missing."""
        with self._lock:
            client, self._client = self._client, None
        if self._lost_at is None:
            self._lost_at = int(clock.timestamp())
        if client is not None:
            _close(client)

    def _connect(self, config: GatewayConfig) -> None:
        import socketio  # type: ignore[import-untyped]  # untyped; loaded with the first stream, not at start-up

        via = events_via(config)
        gateway = EvolutionGateway(config, self.service.client)
        namespace = "/" if via == VIA_STREAM_GLOBAL else "/" + gateway.remote_name
        client = socketio.Client(reconnection=False, logger=False, engineio_logger=False)
        for event in STREAM_EVENTS:
            client.on(event, self._handler(event, gateway.remote_name, via), namespace=namespace)
        client.on("disconnect", lambda *_reason: self.loop.wake(start=False), namespace=namespace)
        try:
            client.connect(config.base_url, headers={"apikey": gateway.apikey}, transports=["websocket"],
                           namespaces=[namespace], wait_timeout=CONNECT_TIMEOUT_S)
        except socketio.exceptions.ConnectionError as exc:
            _close(client)
            raise _Refused(self._why_refused(config, exc)) from None
        if self.loop.stopping:  # stopped while connecting
            _close(client)
            raise _Refused("detenido")
        with self._lock:
            self._client, self._namespace = client, namespace

    def _why_refused(self, config: GatewayConfig, exc: Exception) -> str:
        """A failed connection in the user's words: no Socket.IO at that address (the server's WEBSOCKET_ENABLED is
        off), the server unreachable, or what Socket.IO said (a refused key, an unknown namespace)."""
        try:
            probe = self.service.client.get(config.base_url.rstrip("/") + "/socket.io/",
                                            params={"EIO": "4", "transport": "polling"},
                                            headers={"apikey": config.credentials.get("apikey", "")},
                                            timeout=PROBE_TIMEOUT_S)
        except httpx.HTTPError as error:
            return (f"No se pudo conectar con la pasarela ({config.base_url}): {type(error).__name__}. Se reintenta "
                    "solo.")
        if probe.status_code == 404:
            return STREAM_OFF.format(base=config.base_url)
        return f"La pasarela no aceptó la conexión de eventos de «{self.name}»: {exc}. Se reintenta solo."

    # ------------------------------------------------------------ events

    def _handler(self, event: str, remote: str, via: str) -> Callable[[Any], None]:
        def receive(body: Any = None, *_more: Any) -> None:
            if not isinstance(body, dict):
                return
            if via == VIA_STREAM_GLOBAL and str(body.get("instance") or "") != remote:
                return  # another instance's event on the server's global namespace
            body = {**body, "event": body.get("event") or event}
            try:
                self.service.ingest(parse_webhook(self.name, body))
            except Exception:  # a bad event must not end the connection's reader
                log.exception("evolution stream %s: event %s could not be stored", self.name, event)

        return receive

    # ------------------------------------------------------------ after a (re)connection

    def _catch_up(self, config: GatewayConfig) -> int:
        """Store the messages Evolution kept while we were not connected; returns how many were new."""
        since = self._lost_at if self._lost_at is not None else self._last_received_at()
        if since is None:
            return 0  # nothing received yet and never disconnected: nothing can have been missed
        since -= CATCH_UP_MARGIN_S
        until = int(clock.timestamp()) + CATCH_UP_MARGIN_S
        gateway = EvolutionGateway(config, self.service.client)
        stored = 0
        try:
            page, pages = 1, 1
            while page <= pages and page <= CATCH_UP_MAX_PAGES:
                records, pages = gateway.find_messages(since, until, page)
                fresh = self.service.ingest(parse_webhook(self.name, {"event": "messages.upsert",
                                                                      "data": records}))
                stored += len(fresh)
                page += 1
            if pages > CATCH_UP_MAX_PAGES:
                log.warning("evolution stream %s: %d pages missed, only the newest %d read", self.name, pages,
                            CATCH_UP_MAX_PAGES)
        except YupanaError as exc:  # the live stream goes on; the gap is read at the next connection
            log.warning("evolution stream %s: catch-up failed: %s", self.name, exc.message)
            return stored
        self._lost_at = None
        if stored:
            log.info("evolution stream %s: %d missed messages stored", self.name, stored)
        return stored

    def _last_received_at(self) -> int | None:
        """The newest received message's time among the instance's recent messages (any environment)."""
        rows = self.service.store.repository.messages("", self.name, None, RECENT_MESSAGES)
        received = [int(r["timestamp"]) for r in rows if r.get("direction") == "in"]
        if received:
            return max(received)
        return min((int(r["timestamp"]) for r in rows), default=None)  # only sends lately: from the oldest of them

    def _refresh_state(self) -> None:
        """Connection changes during the gap are lost: the instance's state is read again instead."""
        try:
            state = self.service.gateway(self.name, anywhere=True).connection_state()
        except YupanaError as exc:
            log.info("evolution stream %s: state not read: %s", self.name, exc.message)
            return
        self.service.store.set_instance_state(self.name, state)
        self.service.bus.emit(InstanceSaved(self.name, state))


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _close(client: Any) -> None:
    try:
        client.disconnect()
    except Exception:  # already gone: nothing to close
        log.debug("closing a stream connection failed", exc_info=True)


class EvolutionStreams:
    """The streams of every instance (any environment: events are stored in their instance's own) set to stream,
    started with the receiver (`start`) and kept in step with saved instances."""

    def __init__(self, service: MessagingService, bus: EventBus, **stream_options: float) -> None:
        self.service = service
        self.bus = bus
        self.stream_options = stream_options
        self._streams: dict[str, tuple[EvolutionStream, tuple[Any, ...]]] = {}
        self._lock = threading.Lock()
        self._unsubscribe: Callable[[], None] | None = None

    def start(self) -> None:
        with self._lock:
            if self._unsubscribe is None:
                self._unsubscribe = self.bus.subscribe(self._on_event)
        self.sync()

    def stop(self) -> None:
        with self._lock:
            unsubscribe, self._unsubscribe = self._unsubscribe, None
            streams = [stream for stream, _ in self._streams.values()]
            self._streams.clear()
        if unsubscribe is not None:
            unsubscribe()
        for stream in streams:
            stream.stop()

    def _on_event(self, name: str, payload: Event) -> None:
        if name == INSTANCE_SAVED and isinstance(payload, InstanceSaved) and payload.state is None:
            self.sync()  # saved or deleted (a state read is not a change of configuration)

    def sync(self) -> None:
        """Start the streams of instances set to stream, restart those whose configuration changed, stop the
        others."""
        wanted = {config.name: config for config in self.service.configs("evolution")
                  if events_via(config) in (VIA_STREAM, VIA_STREAM_GLOBAL)}
        stale, fresh = [], []
        with self._lock:
            if self._unsubscribe is None:
                return  # stopped
            for name, (stream, signature) in list(self._streams.items()):
                if name not in wanted or signature != _signature(wanted[name]):
                    stale.append(stream)
                    del self._streams[name]
            for name, config in wanted.items():
                if name not in self._streams:
                    stream = EvolutionStream(self.service, name, bus=self.bus, **self.stream_options)
                    self._streams[name] = (stream, _signature(config))
                    fresh.append(stream)
        for stream in stale:
            stream.stop()
        for stream in fresh:
            stream.start()

    def stream(self, name: str) -> EvolutionStream | None:
        with self._lock:
            found = self._streams.get(name)
        return found[0] if found else None

    def states(self) -> list[StreamState]:
        with self._lock:
            streams = [stream for stream, _ in self._streams.values()]
        return [stream.state() for stream in streams]


def _signature(config: GatewayConfig) -> tuple[Any, ...]:
    """What a running stream depends on: a change restarts it."""
    return (config.base_url, events_via(config), config.options.get("remote_name"),
            config.credentials.get("apikey"))
