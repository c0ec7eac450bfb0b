"""The forwarder: delivers stored events to subscribers from a durable outbox, signed per Standard Webhooks.

Each delivery is a row (app.core.messaging.store) written in the same transaction as the event it
carries, so what the listener acknowledged reaches the subscriber even if the app is killed: on the
next start the pending rows are due again (a claimed row's lease simply runs out). Leases are written and
compared with the database's clock and renewed while a round's attempts run, so another process, even on another
computer whose clock is off, does not take over a delivery in flight. Retries follow RETRY_SCHEDULE_S; after the
last one the delivery is failed and its subscription marked failing. A 410 disables the subscription. Redirects
are not followed (a 3xx is a failed attempt).

The retries' clock is `app.core.messaging.clock.now()`, so tests inject time instead of waiting hours (the leases'
is the database's).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for_futures
from datetime import UTC, datetime
from typing import Any

import httpx

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

log = logging.getLogger(__name__)
RETRY_SCHEDULE_S = (5, 300, 1800, 7200, 18000, 36000)  # after the 1st, 2nd… failed attempt
ATTEMPT_TIMEOUT_S = 10.0
BATCH = 128
WORKERS = 16
IDLE_WAIT_S = 60.0  # re-check now and then even when nothing is due (another process may have queued)
RENEW_EVERY_S = LEASE_S / 3  # a round's leases are renewed this often while its attempts run


def next_attempt(attempts_before: int, at: float) -> float | None:
    """When to try again after attempt number `attempts_before + 1` failed; None: no more tries."""
    if attempts_before >= len(RETRY_SCHEDULE_S):
        return None
    return at + RETRY_SCHEDULE_S[attempts_before]


class Forwarder:
    def __init__(self, store: MessagingStore, secret_for: Callable[[str], str], bus: EventBus | None = None,
                 workers: int = WORKERS) -> None:
        self.store = store
        self.secret_for = secret_for
        self.bus = bus
        self.workers = workers
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._signers: dict[str, Any] = {}  # subscription id -> standardwebhooks.Webhook
        self.delivered = 0  # deliveries that got a 2xx since start (the benchmark reads it)
        self.idle = threading.Condition()  # notified after each round (tests wait on it)
        self.rounds = 0

    # ------------------------------------------------------------ life cycle

    def start(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stopping = False
            self._thread = threading.Thread(target=self._loop, name="yupana-forwarder", daemon=True)
            self._thread.start()

    def start_if_pending(self) -> None:
        if self.store.next_due_at() is not None:
            self.start()

    def wake(self) -> None:
        """Something was queued (or time was moved, in tests): look for due deliveries now."""
        self.start()
        self._wake.set()

    def stop(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
            self._stopping = True
            self._wake.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(ATTEMPT_TIMEOUT_S + 5)

    def wait_round(self, after: int, timeout: float = 10.0) -> bool:
        """Block until the loop finished a round numbered past `after` (for tests and the benchmark)."""
        with self.idle:
            return self.idle.wait_for(lambda: self.rounds > after, timeout)

    # ------------------------------------------------------------ the loop

    def _loop(self) -> None:
        limits = httpx.Limits(max_connections=self.workers * 2, max_keepalive_connections=self.workers * 2)
        with httpx.Client(timeout=ATTEMPT_TIMEOUT_S, follow_redirects=False, limits=limits) as client, \
                ThreadPoolExecutor(self.workers, thread_name_prefix="yupana-forward") as pool:
            while not self._stopping:
                self._wake.clear()
                try:
                    worked = self._round(client, pool)
                except Exception:  # the loop must survive a bad row or a full disk; it retries later
                    log.exception("forwarder round failed")
                    worked = False
                with self.idle:
                    self.rounds += 1
                    self.idle.notify_all()
                if worked:
                    continue
                due_at = self.store.next_due_at()
                wait = IDLE_WAIT_S if due_at is None else min(IDLE_WAIT_S, max(0.0, due_at - clock.now()))
                if wait > 0:
                    self._wake.wait(wait)

    def _round(self, client: httpx.Client, pool: ThreadPoolExecutor) -> bool:
        started = clock.now()
        due = self.store.claim_due(started, BATCH, LEASE_S)
        if not due:
            return False
        # A round can outlast its leases: ATTEMPT_TIMEOUT_S bounds each wait of an attempt (the pool, connecting,
        # each write and each read), not the attempt, and BATCH / workers attempts follow one another on a worker.
        # While any runs, the round's leases are renewed every third of their length, so another process never
        # takes over a delivery in flight; one whose lease was lost anyway (this process stalled) is left to its
        # new holder, and its outcome is not recorded (record_outcomes).
        futures = [pool.submit(self._attempt, client, d) for d in due]
        while wait_for_futures(futures, timeout=RENEW_EVERY_S).not_done:
            try:
                self.store.renew_leases(due, LEASE_S)
            except Exception:  # a busy or full disk: the leases still run, the next renewal tries again
                log.warning("renewing the leases of %d deliveries failed", len(due), exc_info=True)
        outcomes = [future.result() for future in futures]
        self.store.record_outcomes(outcomes, clock.now())
        self.delivered += sum(1 for o in outcomes if o[3] == DELIVERY_DONE)
        if self.bus is not None:
            for sub_id in {o[0].subscription_id for o in outcomes}:
                self.bus.emit(SubscriptionChanged(sub_id))
        return True

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

    def _attempt(self, client: httpx.Client, due: Due) -> tuple[Due, int | None, str | None, str, float | None]:
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
