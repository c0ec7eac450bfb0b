"""Messaging behind its storage port: delivery leases on the database's clock, shared by two desks (two hosts'
processes on one database), and the repository's insert-once statements.

Each desk is a Storage of its own on the same file with its own messaging store, as two computers sharing a
database would have. The messaging clock (retries' times) and Python's wall clock are moved by an hour on one desk:
leases do not follow them. A delivery's lease names no owner: its expiry is its holder's token (ports.messaging).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from app.core.messaging import clock, forwarding
from app.core.messaging import events as ev
from app.core.messaging.events import InboundEvent
from app.core.messaging.forwarding import Forwarder
from app.core.messaging.store import DELIVERY_DONE, DELIVERY_PENDING, MessagingStore
from app.core.platform import processes
from app.core.storage.engines import open_database
from app.core.storage.sqlite.database import DB_NOW
from app.core.storage.sqlite.messaging import SqliteMessagingRepository
from tests.helpers.messaging_support import wait_for

HOUR = 3600.0


class Desk:
    """One host's process on the shared database."""

    def __init__(self, path, host: str) -> None:
        self.host = host
        self.storage = open_database(path)
        self.repository = SqliteMessagingRepository(self.storage)
        self.store = MessagingStore(self.storage, self.repository)

    def close(self) -> None:
        self.storage.close()


@pytest.fixture
def desks(tmp_path):
    path = tmp_path / "shared.db"
    a, b = Desk(path, "desk-a"), Desk(path, "desk-b")
    a.store.save_instance("tienda", "evolution", "https://evolution.example.pe", {}, "produccion")
    a.store.add_subscription("sub_1", "tienda", "https://crm.example.pe/hooks", [ev.MESSAGE_RECEIVED])
    # Queued long ago on the messaging clock: due on either desk, whatever their clocks say.
    a.store.ingest([received("G1")], now=1_000.0)
    yield a, b
    a.close()
    b.close()


def received(gateway_id: str) -> InboundEvent:
    return InboundEvent(ev.MESSAGE_RECEIVED, "tienda", 1763900000, f"msg:{gateway_id}",
                        {"id": f"msg_{gateway_id}", "from": "+51987654321", "type": "text", "body": "hola",
                         "name": "Ana"}, gateway_id=gateway_id)


def skew(monkeypatch, seconds: float) -> None:
    """This process's messaging clock (and Python's wall clock) moved by `seconds`."""
    real = time.time
    monkeypatch.setattr(clock, "now", lambda: real() + seconds)
    monkeypatch.setattr(time, "time", lambda: real() + seconds)


def claim(desk: Desk, lease_s: float = 120.0):
    return desk.store.claim_due(clock.now(), 10, lease_s)


def db_now(desk: Desk) -> float:
    """The database's clock, the one leases are written and compared with."""
    row = desk.storage.query_one(f"SELECT {DB_NOW} AS now")
    assert row is not None
    return float(row["now"])


@pytest.mark.parametrize("offset", [HOUR, -HOUR, 0.0])
def test_a_live_lease_is_not_taken_over_whatever_the_other_desks_clock(desks, monkeypatch, offset):
    a, b = desks
    [held] = claim(a)
    skew(monkeypatch, offset)  # an hour ahead: the old process-clock lease (now + 120) looked long expired
    assert claim(b) == []
    assert a.store.renew_leases([held]) == []  # its holder renews it, whatever its own clock says
    assert claim(b) == []


@pytest.mark.parametrize("offset", [-HOUR, HOUR, 0.0])
def test_an_expired_lease_is_taken_over_whatever_the_other_desks_clock(desks, monkeypatch, offset):
    a, b = desks
    [lapsed] = claim(a, lease_s=0.05)  # desk A stalls past its lease (killed, suspended)
    wait_for(lambda: db_now(b) > lapsed.lease)  # its lease has run out on the database's clock
    skew(monkeypatch, offset)  # an hour behind: the old process-clock lease still looked live for an hour
    [taken] = claim(b)
    assert taken.id == lapsed.id and taken.lease > lapsed.lease
    # A's late work counts for nothing: its lease is no longer the row's.
    assert a.store.renew_leases([lapsed]) == [lapsed]
    a.store.record_outcomes([(lapsed, 200, None, DELIVERY_DONE, None)], clock.now())
    [row] = a.store.deliveries()
    assert (row["state"], row["attempts"], row["lease_until"]) == (DELIVERY_PENDING, 0, taken.lease)
    assert a.store.subscription("sub_1")["last_status"] is None
    b.store.record_outcomes([(taken, 200, None, DELIVERY_DONE, None)], clock.now())
    [row] = a.store.deliveries()
    assert (row["state"], row["attempts"], row["lease_until"]) == (DELIVERY_DONE, 1, 0)


def test_a_renewed_lease_outlives_its_first_term(desks):
    a, b = desks
    [held] = claim(a, lease_s=0.2)
    first_term = held.lease
    assert a.store.renew_leases([held], lease_s=120.0) == []
    wait_for(lambda: db_now(b) > first_term)  # the first term is over on the database's clock
    assert claim(b) == []


def test_a_desk_waits_for_a_held_lease_on_its_own_clock(desks, monkeypatch):
    a, b = desks
    claim(a, lease_s=120.0)
    skew(monkeypatch, HOUR)
    due_at = b.store.next_due_at()
    assert due_at is not None and 110 < due_at - clock.now() <= 120  # the lease's time left, not the clock's gap


def test_a_sandbox_instance_of_another_host_is_not_purged_and_a_dead_one_of_this_host_is(desks, monkeypatch):
    a, b = desks
    monkeypatch.setattr(processes, "HOST", a.host)
    a.store.save_instance("demo", "evolution", "http://127.0.0.1:40123", {}, "sandbox",
                          owner=processes.owner_of_this_process("sandbox"))
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = f"{b.host}/{ended.stdout.strip()}:sandbox"
    b.store.save_instance("viejo", "evolution", "http://127.0.0.1:40124", {}, "sandbox", owner=dead)
    monkeypatch.setattr(processes, "HOST", b.host)  # desk B cannot see desk A's processes: its rows stay
    assert [row["name"] for row in b.store.stopped_sandbox_instances()] == ["viejo"]


def test_an_attempt_longer_than_its_lease_keeps_it_renewed(desks, monkeypatch):
    """An attempt may outlast the lease (ATTEMPT_TIMEOUT_S bounds each wait, not the attempt): the forwarder's loop
    renews the leases in flight while they run, so the other desk never takes the delivery over."""
    a, b = desks
    monkeypatch.setattr(forwarding, "LEASE_S", 0.6)
    monkeypatch.setattr(forwarding, "RENEW_EVERY_S", 0.1)
    answer = threading.Event()
    attempts = []

    def slow_attempt(_client, due):
        attempts.append(due.id)
        answer.wait(10)
        return due, 204, None, DELIVERY_DONE, None

    forwarder = Forwarder(a.store, lambda _sub: "whsec_" + "A" * 32, workers=1)
    monkeypatch.setattr(forwarder, "_attempt", slow_attempt)
    forwarder.start()
    try:
        wait_for(lambda: attempts)  # desk A holds it, its attempt under way
        [row] = b.store.deliveries()
        first_term = row["lease_until"]

        def two_terms_passed_untaken() -> bool:
            assert claim(b) == []
            return db_now(b) > first_term + forwarding.LEASE_S  # two leases since the claim, by the database's clock

        wait_for(two_terms_passed_untaken, interval=0.05)
        answer.set()
        wait_for(lambda: b.store.deliveries()[0]["state"] == DELIVERY_DONE)
    finally:
        answer.set()
        forwarder.stop()
    [row] = b.store.deliveries()
    assert len(attempts) == 1 and (row["state"], row["attempts"], row["lease_until"]) == (DELIVERY_DONE, 1, 0)


def test_an_event_is_stored_once_and_its_duplicate_has_no_sequence_number(desks):
    a, _b = desks
    first = a.repository.add_event("tienda", "k:1", ev.MESSAGE_READ, "G9", 1, "{}", 1.0, "")
    other = a.repository.add_event("tienda", "k:2", ev.MESSAGE_READ, "G9", 1, "{}", 1.0, "")
    assert first is not None and other == first + 1
    assert a.repository.add_event("tienda", "k:1", ev.MESSAGE_READ, "G9", 1, "{}", 1.0, "") is None
    assert a.repository.received_events_of("tienda", "G9", (ev.MESSAGE_DELIVERED, ev.MESSAGE_READ)) == \
        [ev.MESSAGE_READ, ev.MESSAGE_READ]
    assert a.store.event_count("tienda") == 3  # the fixture's and these two
    [stored] = a.store.messages("tienda")
    assert stored["environment"] == "produccion"  # the instance's environment, not the store's ""


def test_an_incoming_message_already_stored_by_id_or_gateway_id_is_kept_as_it_was(desks):
    a, _b = desks
    a.repository.add_incoming("msg_G1", "tienda", "OTHER", "+51900000000", "X", "text", "otro", ev.RECEIVED, 2, "")
    a.repository.add_incoming("msg_NEW", "tienda", "G1", "+51900000000", "X", "text", "otro", ev.RECEIVED, 2, "")
    [stored] = a.store.messages("tienda")
    assert (stored["id"], stored["gateway_id"], stored["body"]) == ("msg_G1", "G1", "hola")


def test_resending_leaves_a_delivery_in_flight_to_its_holder(desks):
    a, b = desks
    [held] = claim(a)
    assert b.store.resend("sub_1", clock.now()) == 1  # «Reenviar» on the other desk meanwhile
    assert claim(b) == []
    a.store.record_outcomes([(held, 204, None, DELIVERY_DONE, None)], clock.now())
    [row] = b.store.deliveries()
    assert (row["state"], row["attempts"]) == (DELIVERY_DONE, 1)
