"""Messaging's records: instances, messages, received events (stored once), subscriptions, deliveries.

Stores only store: no HTTP here, and no SQL (the messaging repository, app.core.storage.ports.messaging, holds it;
this module opens the unit of work around its calls). Every received event goes through `ingest`, one transaction that
stores it once (by its dedup key), applies it (a new incoming message, a status moving forward, an
instance's state) and queues one delivery per matching subscription, so what the listener
acknowledged is never lost and never doubled.

Each instance belongs to one environment (app.core.platform.environments), and so do its messages, received events
and subscriptions (a delivery follows its subscription): the lists, the sends and the forwarder see the current
environment's only; the others wait, untouched, until their environment is chosen again. An instance made by a
running sandbox has that sandbox's process as `owner` and goes when it stops (or dies: `stopped_sandbox_instances`).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from app.core.messaging import clock
from app.core.messaging import events as ev
from app.core.messaging.events import InboundEvent
from app.core.messaging.ids import delivery_id
from app.core.platform.processes import owner_alive, owner_of_this_process
from app.core.storage.ports.database import Database
from app.core.storage.ports.messaging import Due, MessagingRepository

log = logging.getLogger(__name__)

DELIVERY_PENDING = "pending"
DELIVERY_DONE = "delivered"
DELIVERY_FAILED = "failed"
DELIVERY_CANCELLED = "cancelled"
SUB_ACTIVE = "active"
SUB_FAILING = "failing"
SUB_DISABLED = "disabled"
LEASE_S = 120.0  # a claimed delivery's lease (the forwarder renews it while its attempts run)


class MessagingStore:
    """`environment` names the current environment (the settings' `environment`); without it (a bare store in
    a test or a benchmark) every environment is seen. `holder` names the deliveries' leases this store takes
    («<host>/<process id>:<tag>»; `holder` given: another identity, for tests)."""

    def __init__(self, database: Database, repository: MessagingRepository,
                 environment: Callable[[], str] | None = None, holder: str | None = None) -> None:
        self.database = database
        self.repository = repository
        self.environment = environment or (lambda: "")
        self.holder = holder or owner_of_this_process(f"deliveries-{uuid.uuid4().hex[:8]}")

    def _here(self, anywhere: bool = False) -> str:
        """The environment whose rows a read keeps ("": every one)."""
        return "" if anywhere else self.environment()

    # ------------------------------------------------------------ instances

    def save_instance(self, name: str, gateway: str, base_url: str, options: dict[str, Any], environment: str,
                      owner: str | None = None) -> None:
        self.repository.save_instance(name, gateway, base_url, options, environment, owner)

    def instance(self, name: str, anywhere: bool = False) -> dict[str, Any] | None:
        """The instance if it belongs to the current environment (`anywhere`: whichever it belongs to)."""
        return self.repository.instance(name, self._here(anywhere))

    def instances(self, anywhere: bool = False) -> list[dict[str, Any]]:
        return self.repository.instances(self._here(anywhere))

    def delete_instance(self, name: str, owner: str | None = None) -> bool:
        """Delete an instance (only if `owner` made it, when given); its messages and subscriptions stay."""
        return self.repository.delete_instance(name, owner)

    def stopped_sandbox_instances(self) -> list[dict[str, Any]]:
        """Instances whose sandbox process no longer runs (killed without stopping its sandboxes)."""
        return [row for row in self.repository.owned_instances() if not owner_alive(row["owner"])]

    def set_instance_state(self, name: str, state: str, at: int | None = None) -> None:
        self.repository.set_instance_state(name, state, at or int(time.time()))

    # ------------------------------------------------------------ messages

    def add_outgoing(self, message_id: str, instance: str, gateway_id: str | None, to: str, body: str,
                     media: str | None, timestamp: int) -> str:
        """Store a sent message; a status the gateway reported before we stored it is applied at once."""
        status = ev.SENT
        with self.database.transaction():
            if gateway_id:
                for name in self.repository.received_events_of(instance, gateway_id,
                                                               (ev.MESSAGE_DELIVERED, ev.MESSAGE_READ)):
                    candidate = ev.STATUS_OF_EVENT[name]
                    if ev.STATUS_RANK[candidate] > ev.STATUS_RANK[status]:
                        status = candidate
            if gateway_id and self.repository.gateway_id_taken(instance, gateway_id):
                # The gateway reused an id: the message was sent all the same, so it is kept, unlinked.
                log.warning("gateway id %s of instance %s is already taken; %s kept without it",
                            gateway_id, instance, message_id)
                gateway_id = None
            self.repository.add_outgoing(message_id, instance, gateway_id, to, "media" if media else "text", body,
                                         media, status, timestamp, self.environment())
        return status

    def message(self, message_id: str) -> dict[str, Any] | None:
        return self.repository.message(message_id)

    def messages(self, instance: str | None = None, peer: str | None = None, limit: int = 500) -> list[dict]:
        return self.repository.messages(self.environment(), instance, peer, limit)

    def conversations(self) -> list[dict[str, Any]]:
        """One row per (instance, peer): the last message, its time and the sender's name."""
        return self.repository.conversations(self.environment())

    # ------------------------------------------------------------ received events

    def ingest(self, events: list[InboundEvent], now: float | None = None) -> list[InboundEvent]:
        """Store each event once and apply it, in one transaction; returns the events that were new."""
        now = clock.now() if now is None else now
        current = self.environment()
        fresh: list[InboundEvent] = []
        listening: dict[str, list[tuple[str, list[str]]]] = {}  # by instance: its subscriptions, read once
        queued: list[tuple[str, str, int, float]] = []
        repository = self.repository
        with self.database.transaction():
            for event in events:
                if event.event in ev.STATUS_OF_EVENT and event.gateway_id:
                    self._apply_status(event)
                payload = json.dumps(event.contract(), ensure_ascii=False, separators=(",", ":"))
                seq = repository.add_event(event.instance, event.dedup_key, event.event, event.gateway_id,
                                           event.timestamp, payload, now, current)
                if seq is None:
                    continue  # a duplicate: stored already, told already
                if event.event == ev.MESSAGE_RECEIVED:
                    data = event.data
                    sender = data["from"] or data.get("from_id", "")  # a LID's conversation: its own, not ""
                    repository.add_incoming(data["id"], event.instance, event.gateway_id, sender,
                                            data.get("name", ""), data.get("type", "text"), data.get("body", ""),
                                            ev.RECEIVED, event.timestamp, current)
                elif event.state:
                    repository.set_instance_state(event.instance, event.state, event.timestamp)
                subscriptions = listening.get(event.instance)
                if subscriptions is None:
                    subscriptions = listening[event.instance] = repository.listening(event.instance)
                queued += [(delivery_id(), sub_id, seq, now) for sub_id, names in subscriptions if event.event in names]
                fresh.append(event)
            if queued:
                repository.add_deliveries(queued)
        return fresh

    def _apply_status(self, event: InboundEvent) -> None:
        """Move the message's status forward (never back) and name our id and its number in the event's data."""
        status = ev.STATUS_OF_EVENT[event.event]
        assert event.gateway_id is not None  # a status names the gateway's message
        found = self.repository.advance_status(event.instance, event.gateway_id, status, ev.STATUS_RANK[status])
        if found:
            event.data["id"], event.data["to"] = found

    def event_count(self, instance: str | None = None) -> int:
        return self.repository.event_count(instance)

    def recent_events(self, limit: int = 100) -> list[dict[str, Any]]:
        return [json.loads(payload) for payload in self.repository.recent_payloads(limit)]

    # ------------------------------------------------------------ subscriptions and deliveries

    def add_subscription(self, sub_id: str, instance: str, url: str, events: list[str]) -> None:
        self.repository.add_subscription(sub_id, instance, url, sorted(set(events)), self.environment())

    def subscriptions(self, instance: str | None = None) -> list[dict[str, Any]]:
        return self.repository.subscriptions(self.environment(), instance)

    def subscription(self, sub_id: str) -> dict[str, Any] | None:
        rows = [s for s in self.subscriptions() if s["id"] == sub_id]
        return rows[0] if rows else None

    def next_due_at(self, excluding: Sequence[str] = ()) -> float | None:
        """When the current environment's next pending delivery is due, on the messaging clock (a delivery in
        flight: when its lease runs out, or now when its holder is dead); another environment's wait. `excluding`:
        subscriptions not looked at (the forwarder's full ones)."""
        return self.repository.next_due_at(self.environment(), clock.now(), excluding, self.dead_holders())

    def dead_holders(self) -> list[str]:
        """The holders of running delivery leases whose process is known to be gone: one of this host that no longer
        runs (killed mid-delivery). Another host's, and this process's own, are taken as alive: their leases end by
        their time."""
        return [holder for holder in self.repository.lease_holders()
                if holder != self.holder and not owner_alive(holder)]

    def claim_due(self, now: float, limit: int, lease_s: float = LEASE_S,
                  busy: Mapping[str, int] | None = None) -> list[Due]:
        """Take up to `limit` deliveries due by `now` for this worker (with `busy`, the worker's deliveries in
        flight by subscription: up to `limit` per subscription, its busy ones counted); a lease naming this store's
        holder keeps another process (of this computer or another) off them. If this process dies mid-attempt, the
        next one on this host takes its deliveries over at once (their holder's process is gone); another host's
        waits until the lease runs out. The lease is written and compared with the database's clock, so a process
        whose clock is off neither steals a live lease nor waits out an expired one. Only the current
        environment's: another environment's wait until it is chosen again."""
        return self.repository.claim_due(self.environment(), now, limit, lease_s, self.holder, busy,
                                         self.dead_holders())

    def renew_leases(self, due: list[Due], lease_s: float = LEASE_S) -> list[Due]:
        """Extend the leases of deliveries still in flight (one transaction); returns those whose lease was lost."""
        lost = []
        with self.database.transaction():
            for delivery in due:
                lease = self.repository.renew_lease(delivery.id, delivery.holder, delivery.lease, lease_s)
                if lease is None:
                    lost.append(delivery)
                else:
                    delivery.lease = lease
        return lost

    def release_leases(self, due: list[Due]) -> None:
        """Give back claimed deliveries that were not tried (the forwarder stopping): due again at once, here or
        in another process."""
        with self.database.transaction():
            for delivery in due:
                self.repository.renew_lease(delivery.id, delivery.holder, delivery.lease, 0.0)

    def record_outcomes(self, outcomes: list[tuple[Due, int | None, str | None, str, float | None]],
                        now: float) -> None:
        """Each outcome: (delivery, HTTP status or None, error, new state, next attempt time). An outcome whose
        lease was lost meanwhile (another holder took the delivery over) is not recorded: that holder's is."""
        with self.database.transaction():
            for due, status, error, state, next_at in outcomes:
                if not self.repository.record_attempt(due.id, due.holder, due.lease, state, status, error, now,
                                                      next_at):
                    log.info("delivery %s: lease lost during the attempt, its outcome is left to the new holder",
                             due.id)
                    continue
                sub_state = {DELIVERY_DONE: SUB_ACTIVE, DELIVERY_FAILED: SUB_FAILING}.get(state)
                if status == 410:
                    sub_state = SUB_DISABLED
                    self.repository.cancel_pending(due.subscription_id, DELIVERY_CANCELLED)
                self.repository.note_attempt(due.subscription_id, now, status, error, sub_state)

    def resend(self, sub_id: str, now: float) -> int:
        """«Reenviar»: failed deliveries and waiting ones are due now again; the subscription is active again."""
        with self.database.transaction():
            self.repository.activate(sub_id)
            return self.repository.retry_deliveries(sub_id, now)

    def deliveries(self, sub_id: str | None = None) -> list[dict[str, Any]]:
        return self.repository.deliveries(sub_id)
