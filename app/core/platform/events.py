"""A small thread-safe publish/subscribe bus: the engine tells, listeners (GUI adapters, tests) hear.

The engine never knows who listens; the GUI turns these calls into Qt signals on its side.

Every event's name is defined here, once: emitters and subscribers use these constants, never the text
(tests/core/test_one_home.py fails on a name spelled elsewhere). docs/architecture.md («Events») lists when
each is emitted and its payload.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

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

Listener = Callable[[str, dict[str, Any]], None]
log = logging.getLogger(__name__)


class EventBus:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(name, payload)` for every event; returns the function that unsubscribes."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def emit(self, name: str, payload: dict[str, Any] | None = None) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(name, payload or {})
            except Exception:  # a broken listener must not break the engine
                log.exception("event listener failed for %s", name)
