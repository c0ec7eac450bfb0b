"""A small thread-safe publish/subscribe bus: the engine tells, listeners (GUI adapters, tests) hear.

The engine never knows who listens; the GUI turns these calls into Qt signals on its side.

Every event's name is defined here, once: emitters and subscribers use these constants, never the text
(tests/core/test_one_home.py fails on a name spelled elsewhere), and each event's payload is a frozen dataclass
defined here too. A listener is called as `listener(name, payload)`. docs/architecture.md («Events») lists when
each is emitted.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # annotations only: the records bring the contract's models (pydantic), which the window's frame
    # does not need before its first paint (issue 33, start-up)
    from app.core.records import ListenerState, PadronImport, StreamState

# ---------------------------------------------------------------- invoicing
VOUCHER_CHANGED = "voucher.changed"  # {id, status} or, for a batch block, {ids, status}
SUNAT_CDR = "sunat.cdr"  # {file_name, codigo, estado}: a CDR was stored (operation 3 or the outbox)
SUMMARY_CHANGED = "summary.changed"  # {id, ident, state, ticket}: a RA/RC was stored, got its ticket or SUNAT's answer
CERTIFICATE_SAVED = "certificate.saved"  # {certificado_id, ruc}
CERTIFICATE_DELETED = "certificate.deleted"  # {certificado_id}

# ---------------------------------------------------------------- platform
COMPANY_SAVED = "company.saved"  # {ruc}
SETTINGS_CHANGED = "settings.changed"  # {key}
SECRETS_UNLOCKED = "secrets.unlocked"  # {}
DESK_RECONNECTED = "desk.reconnected"  # {}: the shared database's change feed is back (windows read their lists again)
API_TOKEN_CHANGED = "api.token.changed"  # {}

# ---------------------------------------------------------------- lookups
PADRON_IMPORTED = "padron.imported"  # the import's summary (PadronRegister.import_file)

# ---------------------------------------------------------------- messaging: the contract's events (operation 5)
# Their payload on the bus is the contract's {event, instance, timestamp, data} (docs/messaging.md).
MESSAGE_RECEIVED = "message.received"
MESSAGE_DELIVERED = "message.delivered"
MESSAGE_READ = "message.read"
INSTANCE_CONNECTED = "instance.connected"
INSTANCE_DISCONNECTED = "instance.disconnected"

# ---------------------------------------------------------------- messaging: the engine's own (never forwarded)
MESSAGE_SENT = "message.sent"  # {instance, id, to, status}
SUBSCRIPTION_CHANGED = "subscription.changed"  # {id}
INSTANCE_SAVED = "instance.saved"  # {instance} or {instance, state}
LISTENER_CHANGED = "listener.changed"  # the listener's state: {state, url, exposed, error}
STREAM_CHANGED = "stream.changed"  # an instance's event stream changed state: {instance, state, detail, …}


class Event:
    """A payload on the bus; its class says which event it is (`name`)."""

    name: ClassVar[str]

    @property
    def event_name(self) -> str:
        return self.name


# ---------------------------------------------------------------- payloads, one per event

@dataclass(frozen=True)
class VoucherChanged(Event):
    """A voucher's status changed (`ids` holds one id, or a batch block's)."""

    ids: tuple[int, ...]
    status: str
    name: ClassVar[str] = VOUCHER_CHANGED

    @property
    def id(self) -> int:
        return self.ids[0]


@dataclass(frozen=True)
class SunatCdrStored(Event):
    """A CDR was stored (operation 3 or the outbox)."""

    file_name: str
    codigo: str
    estado: str
    name: ClassVar[str] = SUNAT_CDR


@dataclass(frozen=True)
class SummaryChanged(Event):
    """A RA/RC was stored, got its ticket or SUNAT's answer."""

    id: int
    ident: str
    state: str
    ticket: str | None
    name: ClassVar[str] = SUMMARY_CHANGED


@dataclass(frozen=True)
class CertificateSaved(Event):
    certificado_id: str
    ruc: str
    name: ClassVar[str] = CERTIFICATE_SAVED


@dataclass(frozen=True)
class CertificateDeleted(Event):
    certificado_id: str
    name: ClassVar[str] = CERTIFICATE_DELETED


@dataclass(frozen=True)
class CompanySaved(Event):
    ruc: str
    name: ClassVar[str] = COMPANY_SAVED


@dataclass(frozen=True)
class SettingsChanged(Event):
    key: str
    name: ClassVar[str] = SETTINGS_CHANGED


@dataclass(frozen=True)
class SecretsUnlocked(Event):
    name: ClassVar[str] = SECRETS_UNLOCKED


@dataclass(frozen=True)
class DeskReconnected(Event):
    """Several desks: this desk hears the others again after its connection to the shared database was lost."""

    name: ClassVar[str] = DESK_RECONNECTED


@dataclass(frozen=True)
class ApiTokenChanged(Event):
    name: ClassVar[str] = API_TOKEN_CHANGED


@dataclass(frozen=True)
class PadronImported(Event):
    result: PadronImport
    name: ClassVar[str] = PADRON_IMPORTED


@dataclass(frozen=True)
class ContractEvent(Event):
    """One of the contract's messaging events, as operation 5's subscribers receive it: `{event, instance,
    timestamp, data}` (docs/messaging.md); its name is `event`."""

    event: str
    instance: str
    timestamp: int
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def event_name(self) -> str:
        return self.event

    def contract(self) -> dict[str, Any]:
        return {"event": self.event, "instance": self.instance, "timestamp": self.timestamp, "data": self.data}


@dataclass(frozen=True)
class MessageSent(Event):
    instance: str
    id: str
    to: str
    status: str
    name: ClassVar[str] = MESSAGE_SENT


@dataclass(frozen=True)
class SubscriptionChanged(Event):
    id: str
    name: ClassVar[str] = SUBSCRIPTION_CHANGED


@dataclass(frozen=True)
class InstanceSaved(Event):
    instance: str
    state: str | None = None
    deleted: bool = False
    name: ClassVar[str] = INSTANCE_SAVED


@dataclass(frozen=True)
class ListenerChanged(Event):
    listener: ListenerState
    name: ClassVar[str] = LISTENER_CHANGED


@dataclass(frozen=True)
class StreamChanged(Event):
    stream: StreamState
    name: ClassVar[str] = STREAM_CHANGED


Listener = Callable[[str, Event], None]
log = logging.getLogger(__name__)


@dataclass
class HeldEvents:
    """The events emitted on this thread inside its `with` block, kept back and told by `release()` (at most once):
    a request that shares a group commit announces what it stored only once the commit that holds it is on disk,
    and nothing when it is rolled back (the held events are then dropped)."""

    _bus: EventBus
    events: list[Event] = field(default_factory=list)
    _outer: HeldEvents | None = None

    def __enter__(self) -> HeldEvents:
        self._outer = self._bus.holding()
        self._bus.hold(self)
        return self

    def __exit__(self, *_exc: object) -> None:
        self._bus.hold(self._outer)

    def release(self) -> None:
        events, self.events = self.events, []
        for payload in events:
            self._bus.emit(payload)


class EventBus:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()
        self._holding = threading.local()  # this thread's HeldEvents while inside its `with` block

    def holding(self) -> HeldEvents | None:
        """This thread's HeldEvents while inside one's `with` block."""
        return getattr(self._holding, "held", None)

    def hold(self, held: HeldEvents | None) -> None:
        self._holding.held = held

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(name, payload)` for every event (`payload` one of the Event classes above); returns the
        function that unsubscribes."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def emit(self, payload: Event) -> None:
        held = getattr(self._holding, "held", None)
        if held is not None:
            held.events.append(payload)
            return
        name = payload.event_name
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(name, payload)
            except Exception:  # a broken listener must not break the engine
                log.exception("event listener failed for %s", name)
