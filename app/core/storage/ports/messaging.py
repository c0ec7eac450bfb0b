"""The messaging aggregate's port: instances, messages, received events (stored once), subscriptions and deliveries.

Rows come back as plain dicts (an instance's `options` and a subscription's `events` already decoded); the
messaging store (app.core.messaging.store) keeps the logic and opens the unit of work around several calls.

`environment` filters a read to one environment's rows; "" reads every environment's (a bare store in a test or a
benchmark, the listener checking a post). A row written with `environment` goes to its instance's environment when
the instance exists (set when it was saved), else to the one given.

Delivery leases are written and compared with the database's clock in the same statement. A lease names its holder
(«<host>/<process id>:<tag>», app.core.platform.processes) beside its expiry, and the pair is the holder's token: a
holder renews or records only while both are still the row's. A claim takes a delivery whose lease ran out, or whose
holder the caller knows is dead (`dead`: a process of its own host that is gone), so a restart need not wait out the
lease of the process it replaces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass
class Due:
    """A claimed delivery: what the forwarder sends, and `lease` and `holder`, the claim's expiry and who holds it
    (together, the holder's token)."""

    id: str
    subscription_id: str
    url: str
    attempts: int
    payload: str
    timestamp: int
    lease: float = 0.0
    holder: str = ""


class MessagingRepository(Protocol):
    # ------------------------------------------------------------ instances

    def save_instance(self, name: str, gateway: str, base_url: str, options: dict[str, Any], environment: str,
                      owner: str | None) -> None:
        """Insert or replace an instance's configuration (its state and creation time stay)."""
        ...

    def instance(self, name: str, environment: str) -> dict[str, Any] | None: ...
    def instances(self, environment: str) -> list[dict[str, Any]]:
        """By name."""
        ...

    def delete_instance(self, name: str, owner: str | None) -> bool:
        """Delete an instance (only if `owner` made it, when given); its messages and subscriptions stay."""
        ...

    def owned_instances(self) -> list[dict[str, Any]]:
        """The instances made by a process (a sandbox's): name, gateway, owner."""
        ...

    def set_instance_state(self, name: str, state: str, at: int) -> None: ...

    # ------------------------------------------------------------ messages

    def received_events_of(self, instance: str, gateway_id: str, events: Sequence[str]) -> list[str]:
        """Which of `events` were received already for this gateway message id (a status before its send)."""
        ...

    def gateway_id_taken(self, instance: str, gateway_id: str) -> bool: ...

    def add_outgoing(self, message_id: str, instance: str, gateway_id: str | None, peer: str, kind: str, body: str,
                     media: str | None, status: str, timestamp: int, environment: str) -> None: ...

    def add_incoming(self, message_id: str, instance: str, gateway_id: str | None, peer: str, name: str, kind: str,
                     body: str, status: str, timestamp: int, environment: str) -> None:
        """Store a received message unless its id or its gateway id is stored already."""
        ...

    def advance_status(self, instance: str, gateway_id: str, status: str, rank: int) -> tuple[str, str] | None:
        """Move the message's status to `status` (of rank `rank`) when it stands lower, never back; the message's
        (id, peer), None when no message has this gateway id."""
        ...

    def message(self, message_id: str) -> dict[str, Any] | None: ...

    def messages(self, environment: str, instance: str | None, peer: str | None, limit: int) -> list[dict[str, Any]]:
        """The last `limit` messages, oldest first."""
        ...

    def conversations(self, environment: str) -> list[dict[str, Any]]:
        """One row per (instance, peer): last_id, last_at, the sender's name, how many messages; newest first."""
        ...

    # ------------------------------------------------------------ received events

    def add_event(self, instance: str, dedup_key: str, event: str, gateway_id: str | None, timestamp: int,
                  payload: str, received_at: float, environment: str) -> int | None:
        """Store a received event once per (instance, dedup key): its sequence number, None when it was stored."""
        ...

    def event_count(self, instance: str | None) -> int: ...

    def recent_payloads(self, limit: int) -> list[str]:
        """The last `limit` events' payloads, oldest first."""
        ...

    # ------------------------------------------------------------ subscriptions

    def add_subscription(self, sub_id: str, instance: str, url: str, events: list[str], environment: str) -> None: ...

    def subscriptions(self, environment: str, instance: str | None) -> list[dict[str, Any]]:
        """Each with its counts: `pending`, `delivered` and the next pending attempt's time (`next_attempt_at`)."""
        ...

    def listening(self, instance: str) -> list[tuple[str, list[str]]]:
        """(id, event names) of the instance's subscriptions that are not disabled."""
        ...

    def note_attempt(self, sub_id: str, at: float, status: int | None, error: str | None,
                     state: str | None) -> None:
        """Record a delivery attempt on its subscription and move it to `state` (None: keep it); a disabled
        subscription stays disabled."""
        ...

    def activate(self, sub_id: str) -> None: ...

    # ------------------------------------------------------------ deliveries

    def add_deliveries(self, rows: list[tuple[str, str, int, float]]) -> None:
        """Queue deliveries: (id, subscription id, event sequence number, first attempt's time)."""
        ...

    def next_due_at(self, environment: str, now: float, excluding: Sequence[str] = (),
                    dead: Sequence[str] = ()) -> float | None:
        """When the next pending delivery is due, on the caller's clock `now`: its next attempt's time, or later
        when a lease holds it (the lease's remaining time, by the database's clock, added to `now`; a lease of a
        holder in `dead` holds nothing). Deliveries of the subscriptions in `excluding` (the caller cannot take more
        of theirs now) are not looked at."""
        ...

    def lease_holders(self) -> list[str]:
        """The holders of the pending deliveries' running leases (each once), for the caller to tell the dead."""
        ...

    def claim_due(self, environment: str, now: float, limit: int, lease_s: float, holder: str,
                  busy: Mapping[str, int] | None = None, dead: Sequence[str] = ()) -> list[Due]:
        """Lease to `holder` pending deliveries whose next attempt is due by `now` (the caller's clock) and whose
        lease ran out (the database's clock) or is held by one of `dead`, for `lease_s` seconds; oldest due first.
        Without `busy`: up to `limit` in all. With `busy` (the caller's deliveries in flight, by subscription):
        `limit` is per subscription, each one gets up to `limit` minus its busy ones, so one subscription's backlog
        never holds another's back."""
        ...

    def renew_lease(self, delivery_id: str, holder: str, lease: float, lease_s: float) -> float | None:
        """Extend a lease still held (`holder` and `lease` still the row's) to `lease_s` from now; the new lease,
        None when it was lost (ran out or its holder was found dead, and taken; or reset)."""
        ...

    def record_attempt(self, delivery_id: str, holder: str, lease: float, state: str, status: int | None,
                       error: str | None, at: float, next_at: float | None) -> bool:
        """Record an attempt's outcome and free the lease, if `holder` and `lease` are still the row's; False
        (nothing written) when the lease was lost meanwhile."""
        ...

    def cancel_pending(self, sub_id: str, state: str) -> None:
        """Move the subscription's pending deliveries to `state` (a 410: the subscriber wants no more)."""
        ...

    def retry_deliveries(self, sub_id: str, now: float) -> int:
        """Pending, failed and cancelled deliveries of the subscription are due at `now` again (one in flight stays
        its lease holder's until it records its attempt); how many."""
        ...

    def deliveries(self, sub_id: str | None) -> list[dict[str, Any]]: ...
