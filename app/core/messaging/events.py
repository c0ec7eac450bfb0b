"""The messaging events (the contract's, plus the engine-internal ones) and the ranks of message statuses.

Contract events (docs/messaging.md shows their payloads) are what a subscriber of operation 5
receives and what the engine's event bus tells the windows, as `{event, instance, timestamp, data}`.
Their names are defined once with every other event name, in app.core.platform.events, and named here
for the messaging package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.platform.events import (
    INSTANCE_CONNECTED,
    INSTANCE_DISCONNECTED,
    INSTANCE_SAVED,
    LISTENER_CHANGED,
    MESSAGE_DELIVERED,
    MESSAGE_READ,
    MESSAGE_RECEIVED,
    MESSAGE_SENT,
    SUBSCRIPTION_CHANGED,
)

CONTRACT_EVENTS = (MESSAGE_RECEIVED, MESSAGE_DELIVERED, MESSAGE_READ, INSTANCE_CONNECTED, INSTANCE_DISCONNECTED)
# Engine-only bus events (never forwarded): the windows refresh on them.
ENGINE_EVENTS = (MESSAGE_SENT, SUBSCRIPTION_CHANGED, INSTANCE_SAVED, LISTENER_CHANGED)

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
