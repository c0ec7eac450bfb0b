"""The messaging events: names defined once (the contract's, plus the engine-internal ones) and ranks.

Contract events (docs/messaging.md shows their payloads) are what a subscriber of operation 5
receives and what the engine's event bus tells the windows, as `{event, instance, timestamp, data}`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MESSAGE_RECEIVED = "message.received"
MESSAGE_DELIVERED = "message.delivered"
MESSAGE_READ = "message.read"
INSTANCE_CONNECTED = "instance.connected"
INSTANCE_DISCONNECTED = "instance.disconnected"
CONTRACT_EVENTS = (MESSAGE_RECEIVED, MESSAGE_DELIVERED, MESSAGE_READ, INSTANCE_CONNECTED, INSTANCE_DISCONNECTED)

# Engine-only bus events (never forwarded): the windows refresh on them.
MESSAGE_SENT = "message.sent"
SUBSCRIPTION_CHANGED = "subscription.changed"
INSTANCE_SAVED = "instance.saved"
LISTENER_CHANGED = "listener.changed"

# Message statuses; a message only moves forward along this order, whatever order events arrive in.
SENT = "sent"
DELIVERED = "delivered"
READ = "read"
RECEIVED = "received"
STATUS_RANK = {SENT: 1, DELIVERED: 2, READ: 3}
STATUS_OF_EVENT = {MESSAGE_DELIVERED: DELIVERED, MESSAGE_READ: READ}


@dataclass
class InboundEvent:
    """One event as the listener understood it, before it is stored.

    `data` is the contract's data; `gateway_id` ties status events to their message; `message` holds
    the columns of a new incoming message (message.received) and `state` an instance's new state.
    """

    event: str
    instance: str
    timestamp: int
    dedup_key: str
    data: dict[str, Any] = field(default_factory=dict)
    gateway_id: str | None = None
    state: str | None = None

    def contract(self) -> dict[str, Any]:
        return {"event": self.event, "instance": self.instance, "timestamp": self.timestamp, "data": self.data}
