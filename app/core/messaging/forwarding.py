"""The forwarder: delivers stored events to subscribers from a durable outbox, signed per Standard Webhooks.

Each delivery is a row (app.core.messaging.store) written in the same transaction as the event it
carries, so what the listener acknowledged reaches the subscriber even if the app is killed: on the
next start the pending rows are due again (a claimed row's lease names its holder's host and process: a restart
on the same host takes the killed process's deliveries over at once; another host's run out by their time).
Retries follow RETRY_SCHEDULE_S; after the last one the delivery is failed and its subscription marked failing. A 410 disables the
subscription. Redirects are not followed (a 3xx is a failed attempt).

Fair: each subscription has its own lane — its own HTTP client, its own `per_subscription` workers, so at most that
many deliveries in flight, and its own queue of claimed ones (up to QUEUED × that) — and the loop claims for each
lane only what fits, oldest due first. A subscriber that hangs holds its own slots and nothing else; one that fails
waits for its retries alone. Each attempt's outcome is recorded as soon as it ends (attempts that end together
share one transaction, _Outcomes), and a worker sends nothing more until its outcome is written, so a kill re-sends
only the deliveries that were in flight, at most `per_subscription` per subscription (at once on this host: the
killed process's leases name it). Leases are written and compared with the database's clock and renewed by the
loop while attempts run, so another live process, even on another computer whose clock is off, does not take over a
delivery in flight.

The retries' clock is `app.core.messaging.clock.now()`, so tests inject time instead of waiting hours (the leases'
is the database's).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.core.messaging import clock
from app.core.messaging.store import (
    DELIVERY_CANCELLED,
    DELIVERY_DONE,
    DELIVERY_FAILED,
    DELIVERY_PENDING,
    LEASE_S,
    Due,
    MessagingStore,
)
from app.core.platform.events import EventBus, SubscriptionChanged
from app.core.platform.lazy import lazy_module
from app.core.platform.loops import BackgroundLoop
from app.core.platform.turns import LOOK_AGAIN_S, DeskTurn

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")

log = logging.getLogger(__name__)
RETRY_SCHEDULE_S = (5, 300, 1800, 7200, 18000, 36000)  # after the 1st, 2nd… failed attempt
ATTEMPT_TIMEOUT_S = 10.0
PER_SUBSCRIPTION = 16  # deliveries in flight to one subscriber at most (its lane's workers)
QUEUED = 2  # a lane holds up to QUEUED × its slots claimed (in flight or next), refilled once half are done
IDLE_WAIT_S = 60.0  # re-check now and then even when nothing is due (another process may have queued)
RENEW_EVERY_S = LEASE_S / 3  # the leases of the deliveries in flight are renewed this often

Outcome = tuple[Due, int | None, str | None, str, float | None]  # (delivery, status, error, state, next attempt)


def next_attempt(attempts_before: int, at: float) -> float | None:
    """When to try again after attempt number `attempts_before + 1` failed; None: no more tries."""
    if attempts_before >= len(RETRY_SCHEDULE_S):
        return None
    return at + RETRY_SCHEDULE_S[attempts_before]


class _Lane:
    """One subscription's: its HTTP client, its `slots` workers and its claimed deliveries (in flight, or queued
    for its next free worker; guarded by the forwarder's lock)."""

    def __init__(self, subscription_id: str, slots: int) -> None:
        limits = httpx.Limits(max_connections=slots, max_keepalive_connections=slots)
        self.client = httpx.Client(timeout=ATTEMPT_TIMEOUT_S, follow_redirects=False, limits=limits)
        self.pool = ThreadPoolExecutor(slots, thread_name_prefix=f"yupana-forward-{subscription_id[-6:]}")
        self.claimed: dict[str, Due] = {}
        self.cancelled: set[str] = set()  # held when the subscriber answered 410: not sent (cancelled with it)
        # After a 410: inf until the subscription's disabling is written, then when it was. A delivery claimed before
        # that (the store still had it active) is cancelled with the subscription, never sent.
        self.disabled_at = float("-inf")

    def close(self) -> list[Due]:
        """The attempts under way end (each bounded by the client's timeout); the queued ones are not tried:
        returned, for their leases to be released."""
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.client.close()
        return list(self.claimed.values())


class _Outcomes:
    """Records outcomes as they come, in group commits: an attempt's worker hands its outcome over and waits until it
    is written; the first waiting worker writes every outcome handed over so far in one transaction, the others wait
    for it (while it writes, the next ones gather). No outcome waits for anything but the transaction under way, and
    a worker sends nothing else before its outcome is written: what a kill loses is only what was in flight."""

    def __init__(self, store: MessagingStore) -> None:
        self._store = store
        self._state = threading.Condition()
        self._waiting: list[Outcome] = []
        self._handed = 0  # outcomes handed over so far
        self._written = 0  # of those, the ones whose transaction ended (written, or failed)
        self._writing = False
        self._failed: set[int] = set()  # the numbers of outcomes whose transaction failed

    def record(self, outcome: Outcome) -> None:
        """Write the outcome (with whatever else is waiting); raises if its transaction failed."""
        with self._state:
            self._waiting.append(outcome)
            self._handed += 1
            mine = self._handed
            while self._written < mine and self._writing:
                self._state.wait()
            if self._written >= mine:  # another worker wrote it
                if mine in self._failed:
                    self._failed.discard(mine)
                    raise RuntimeError("the outcome's transaction failed")
                return
            batch, self._waiting, self._writing = self._waiting, [], True
            first, last = self._written + 1, self._handed
        try:
            self._store.record_outcomes(batch, clock.now())
        except Exception:
            with self._state:
                self._failed.update(n for n in range(first, last + 1) if n != mine)
            raise
        finally:
            with self._state:
                self._written, self._writing = last, False
                self._state.notify_all()


class Forwarder:
    def __init__(self, store: MessagingStore, secret_for: Callable[[str], str], bus: EventBus | None = None,
                 workers: int = PER_SUBSCRIPTION, turn: DeskTurn | None = None) -> None:
        self.store = store
        self.turn = turn  # several desks: one forwards at a time, while it has work (platform.turns; None: always)
        self.secret_for = secret_for
        self.bus = bus
        self.per_subscription = workers  # deliveries in flight to one subscriber at most (its lane's workers)
        self._loop = BackgroundLoop("yupana-forwarder", self._next_round, what="forwarder", logger=log,
                                    session=self._lanes_open)
        self._lock = threading.Lock()  # guards the lanes' in-flight maps, `_changed` and `delivered`
        self._lanes: dict[str, _Lane] = {}  # by subscription id, while the loop's thread runs
        self._changed: set[str] = set()  # subscriptions with an outcome recorded since the last round
        self._renewed_at = 0.0  # time.monotonic() of the last renewal of the leases in flight
        self._outcomes = _Outcomes(store)
        self._signers: dict[str, Any] = {}  # subscription id -> standardwebhooks.Webhook
        self.delivered = 0  # deliveries that got a 2xx since start (the benchmark reads it)

    # ------------------------------------------------------------ life cycle (app.core.platform.loops)

    def start(self) -> None:
        self._loop.start()

    def start_if_pending(self) -> None:
        if self.store.next_due_at() is not None:
            self.start()

    def wake(self) -> None:
        """Something was queued (or time was moved, in tests): look for due deliveries now."""
        self._loop.wake()

    def stop(self) -> None:
        """For good (the engine closes): the attempts under way end first."""
        self._loop.stop(ATTEMPT_TIMEOUT_S + 5)

    @property
    def rounds(self) -> int:
        """Rounds of the loop finished so far."""
        return self._loop.rounds

    def wait_round(self, after: int, timeout: float = 10.0) -> bool:
        """Block until the loop finished a round numbered past `after` (for tests and the benchmark)."""
        return self._loop.wait_round(after, timeout)

    def claimed(self) -> dict[str, int]:
        """Deliveries claimed (under way or queued in their lane), by subscription (tests read it)."""
        with self._lock:
            return {sub_id: len(lane.claimed) for sub_id, lane in self._lanes.items() if lane.claimed}

    # ------------------------------------------------------------ the loop

    @contextmanager
    def _lanes_open(self) -> Iterator[None]:
        """The lanes live as long as the loop's thread; leaving waits for the attempts under way and hands the
        queued ones back (their leases released: due again at once, here or in another process)."""
        try:
            yield
        finally:
            with self._lock:
                lanes, self._lanes = list(self._lanes.values()), {}
            untried = [due for lane in lanes for due in lane.close()]
            if untried:
                self.store.release_leases(untried)

    def _next_round(self) -> float:
        """One round: the outcomes since the last one told, the leases in flight renewed when due, each lane's free
        slots filled; the next round when a lane has room and something is due for it (an attempt ending wakes
        the loop)."""
        with self._lock:
            changed, self._changed = self._changed, set()
            busy = {sub_id: len(lane.claimed) for sub_id, lane in self._lanes.items()}
        if self.turn is not None and not any(busy.values()) and not self.turn.mine():
            return LOOK_AGAIN_S  # another desk forwards: look again, to take over if it stops
        if self.bus is not None:
            for sub_id in sorted(changed):
                self.bus.emit(SubscriptionChanged(sub_id))
        self._renew_if_due(busy)
        most = QUEUED * self.per_subscription
        # A lane more than half full is not refilled yet (one claim per `slots` attempts, not one per attempt).
        room_of = {sub_id: most if count > self.per_subscription else count for sub_id, count in busy.items()}
        claimed_at = time.monotonic()
        claimed = self.store.claim_due(clock.now(), most, LEASE_S, busy=room_of)
        if claimed and not any(busy.values()):
            self._renewed_at = time.monotonic()  # fresh leases: the first renewal is RENEW_EVERY_S from now
        if self.turn is not None and not claimed and not any(busy.values()):
            self.turn.give_up()  # nothing under way here: the next desk with work forwards at once
        for due in claimed:
            self._submit(due, claimed_at)
            busy[due.subscription_id] = busy.get(due.subscription_id, 0) + 1
        full = sorted(sub_id for sub_id, count in busy.items() if count > self.per_subscription)
        due_at = self.store.next_due_at(full)
        wait = IDLE_WAIT_S if due_at is None else min(IDLE_WAIT_S, max(0.0, due_at - clock.now()))
        if any(busy.values()):  # the next renewal is due at the latest
            wait = min(wait, max(0.0, self._renewed_at + RENEW_EVERY_S - time.monotonic()))
        return wait

    def _renew_if_due(self, busy: dict[str, int]) -> None:
        """Renew the leases in flight when RENEW_EVERY_S has passed since the last time. An attempt can outlast its
        lease (ATTEMPT_TIMEOUT_S bounds each wait of an attempt, not the attempt): renewing keeps another process
        off a delivery in flight; one whose lease was lost anyway (this process stalled) is left to its new holder,
        its outcome not recorded."""
        if not any(busy.values()) or time.monotonic() - self._renewed_at < RENEW_EVERY_S:
            return
        with self._lock:
            held = [due for lane in self._lanes.values() for due in lane.claimed.values()]
        try:
            self.store.renew_leases(held, LEASE_S)
        except Exception:  # a busy or full disk: the leases still run, the next round tries again
            log.warning("renewing the leases of %d deliveries failed", len(held), exc_info=True)
            self._renewed_at = time.monotonic() - RENEW_EVERY_S + 1.0  # again in a second
            return
        self._renewed_at = time.monotonic()

    def _submit(self, due: Due, claimed_at: float) -> None:
        with self._lock:
            lane = self._lanes.get(due.subscription_id)
            if lane is None:
                lane = self._lanes[due.subscription_id] = _Lane(due.subscription_id, self.per_subscription)
            lane.claimed[due.id] = due
            if claimed_at < lane.disabled_at:  # claimed while a 410 was being written: cancelled with it
                lane.cancelled.add(due.id)
        lane.pool.submit(self._deliver, lane, due)

    def _deliver(self, lane: _Lane, due: Due) -> None:
        """One attempt on a lane's worker, its outcome recorded at once; the loop is woken when the lane is half
        empty (to refill it) or empty."""
        try:
            with self._lock:
                if due.id in lane.cancelled:  # a 410 came meanwhile: cancelled with its subscription
                    lane.cancelled.discard(due.id)
                    return
            outcome = self._attempt(lane.client, due)
            gone = outcome[1] == 410
            if gone:
                with self._lock:
                    lane.cancelled.update(set(lane.claimed) - {due.id})
                    lane.disabled_at = float("inf")
            try:
                self._outcomes.record(outcome)
            finally:
                if gone:
                    with self._lock:
                        lane.disabled_at = time.monotonic()
            if outcome[3] == DELIVERY_DONE:
                with self._lock:
                    self.delivered += 1
        except Exception:  # the disk refused the outcome: the lease runs out and the delivery is tried again
            log.warning("delivery %s: its outcome could not be recorded", due.id, exc_info=True)
        finally:
            with self._lock:
                lane.claimed.pop(due.id, None)
                left = len(lane.claimed)
                self._changed.add(due.subscription_id)
            if left in (0, self.per_subscription):
                self._loop.wake(start=False)

    def signer(self, subscription_id: str) -> Any:
        signer = self._signers.get(subscription_id)
        if signer is None:
            from standardwebhooks import Webhook  # only when something is delivered: the window opens without it

            signer = self._signers[subscription_id] = Webhook(self.secret_for(subscription_id))
        return signer

    def headers(self, due: Due) -> dict[str, str]:
        """Standard Webhooks' three headers; `webhook-id` is the delivery's, the same on every retry."""
        stamp = datetime.now(UTC)
        signature = self.signer(due.subscription_id).sign(due.id, stamp, due.payload)
        return {"content-type": "application/json", "user-agent": "Yupana-Webhooks/1",
                "webhook-id": due.id, "webhook-timestamp": str(int(stamp.timestamp())),
                "webhook-signature": signature}

    def _attempt(self, client: httpx.Client, due: Due) -> Outcome:
        status: int | None = None
        try:
            response = client.post(due.url, content=due.payload.encode(), headers=self.headers(due))
            status = response.status_code
            error = None if 200 <= status < 300 else f"HTTP {status}"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"[:300]
        except Exception as exc:  # a missing secret, a bad URL: the delivery waits like any failure
            log.warning("delivery %s could not be attempted", due.id, exc_info=True)
            error = f"{type(exc).__name__}"
        if status is not None and 200 <= status < 300:
            return due, status, None, DELIVERY_DONE, None
        if status == 410:
            return due, status, "HTTP 410: el suscriptor pidió no recibir más", DELIVERY_CANCELLED, None
        retry_at = next_attempt(due.attempts, clock.now())
        if retry_at is None:
            return due, status, error, DELIVERY_FAILED, None
        return due, status, error, DELIVERY_PENDING, retry_at
