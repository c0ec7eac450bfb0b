"""Messaging behind its storage port: delivery leases on the database's clock, shared by two desks (two hosts'
processes on one database), and the repository's insert-once statements.

Each desk is a Storage of its own on the same file with its own messaging store, as two computers sharing a
database would have. The messaging clock (retries' times) and Python's wall clock are moved by an hour on one desk:
leases do not follow them. A delivery's lease names its holder (host and process) beside its expiry, the pair being
the holder's token (ports.messaging): a holder known dead (a process of this host that is gone) loses it at once.
"""

from __future__ import annotations

import os
import signal
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
from app.core.storage.sqlite.database import DB_NOW, Storage
from app.core.storage.sqlite.messaging import SqliteMessagingRepository
from app.core.storage.sqlite.schema import UPGRADED
from tests.helpers.messaging_support import wait_for

HOUR = 3600.0


class Desk:
    """One host's process on the shared database (`pid`: the process its leases name; this one unless told)."""

    def __init__(self, path, host: str, pid: int | None = None) -> None:
        self.host = host
        self.storage = open_database(path)
        self.repository = SqliteMessagingRepository(self.storage)
        self.store = MessagingStore(self.storage, self.repository, holder=f"{host}/{pid or os.getpid()}:deliveries")

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


def ended_process() -> int:
    """The id of a process that ran on this host and is gone."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(ended.stdout.strip())


@pytest.fixture
def shop_path(tmp_path):
    path = tmp_path / "shop.db"
    desk = Desk(path, processes.HOST)
    desk.store.save_instance("tienda", "evolution", "https://evolution.example.pe", {}, "produccion")
    desk.store.add_subscription("sub_1", "tienda", "https://crm.example.pe/hooks", [ev.MESSAGE_RECEIVED])
    desk.store.ingest([received("G1")], now=1_000.0)
    desk.close()
    return path


def test_a_lease_of_a_dead_process_of_this_host_is_taken_over_at_once(shop_path):
    killed = Desk(shop_path, processes.HOST, pid=ended_process())  # its leases name a process that is gone
    restarted = Desk(shop_path, processes.HOST)
    try:
        [lost] = claim(killed, lease_s=600.0)
        assert restarted.store.next_due_at() == 1_000.0  # due now, not in 600 s
        [taken] = claim(restarted, lease_s=600.0)  # at once: its holder's process no longer runs
        assert taken.id == lost.id and taken.holder == restarted.store.holder != lost.holder
        # What the dead holder might still write counts for nothing: the lease is no longer its.
        assert killed.store.renew_leases([lost]) == [lost]
        killed.store.record_outcomes([(lost, 200, None, DELIVERY_DONE, None)], clock.now())
        [row] = restarted.store.deliveries()
        assert (row["state"], row["attempts"], row["lease_holder"]) == (DELIVERY_PENDING, 0, restarted.store.holder)
        restarted.store.record_outcomes([(taken, 204, None, DELIVERY_DONE, None)], clock.now())
        [row] = restarted.store.deliveries()
        assert (row["state"], row["attempts"], row["lease_until"], row["lease_holder"]) == (DELIVERY_DONE, 1, 0, None)
    finally:
        killed.close()
        restarted.close()


def test_on_each_engine_a_dead_holders_lease_is_taken_and_a_live_ones_kept(engine_database, repos):
    """The claim's SQL over SQLite and PostgreSQL (`engine_database`): a live holder of another host keeps its lease,
    a dead one of this host loses it at once; each lease then names its new holder."""
    store = MessagingStore(engine_database, repos.messaging, holder=f"{processes.HOST}/{os.getpid()}:deliveries")
    store.save_instance("tienda", "evolution", "https://evolution.example.pe", {}, "produccion")
    store.add_subscription("sub_1", "tienda", "https://crm.example.pe/hooks", [ev.MESSAGE_RECEIVED])
    store.ingest([received("G1"), received("G2")], now=1_000.0)
    remote = MessagingStore(engine_database, repos.messaging, holder=f"otra-caja/{os.getpid()}:deliveries")
    dead = MessagingStore(engine_database, repos.messaging,
                          holder=f"{processes.HOST}/{ended_process()}:deliveries")
    [kept] = remote.claim_due(clock.now(), 1, 600.0)
    [lost] = dead.claim_due(clock.now(), 1, 600.0)
    assert store.dead_holders() == [dead.holder]
    [taken] = store.claim_due(clock.now(), 10, 600.0)
    assert taken.id == lost.id != kept.id and taken.holder == store.holder
    assert dead.renew_leases([lost]) == [lost] and remote.renew_leases([kept]) == []
    holders = {row["id"]: row["lease_holder"] for row in store.deliveries()}
    assert holders == {kept.id: remote.holder, taken.id: store.holder}


def test_a_live_holder_in_another_process_keeps_its_lease_until_it_dies(shop_path):
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    holder = Desk(shop_path, processes.HOST, pid=other.pid)
    newcomer = Desk(shop_path, processes.HOST)
    try:
        [held] = claim(holder, lease_s=600.0)
        assert claim(newcomer) == []  # its holder's process runs: the lease stands
        due_at = newcomer.store.next_due_at()
        assert due_at is not None and 590 < due_at - clock.now() <= 600
        other.send_signal(signal.SIGKILL)
        other.wait(10)
        [taken] = claim(newcomer)  # the holder died: taken over without waiting the lease out
        assert taken.id == held.id
    finally:
        if other.poll() is None:
            other.kill()
        other.wait(10)
        other.stdin.close()
        holder.close()
        newcomer.close()


def test_a_lease_of_another_hosts_process_runs_its_time_whatever_its_process_id(shop_path):
    remote = Desk(shop_path, "otra-caja", pid=ended_process())  # no such process here: another host's, unknown
    local = Desk(shop_path, processes.HOST)
    try:
        [held] = claim(remote, lease_s=0.3)
        assert claim(local) == []
        wait_for(lambda: db_now(local) > held.lease)
        [taken] = claim(local)
        assert taken.id == held.id
    finally:
        remote.close()
        local.close()


def test_a_lease_written_before_holders_were_named_runs_its_time(shop_path):
    """A delivery claimed by a version without `lease_holder` (NULL) is taken over only when its lease runs out."""
    desk = Desk(shop_path, processes.HOST)
    try:
        with desk.storage.write() as conn:
            conn.execute(f"UPDATE deliveries SET lease_until = {DB_NOW} + 0.3, lease_holder = NULL")
        assert claim(desk) == []
        wait_for(lambda: claim(desk))
    finally:
        desk.close()


def test_a_folder_of_version_2_gets_the_lease_holder_column_once(shop_path):
    raw = Storage.open(shop_path)  # back to version 2, as a folder written before holders were named
    with raw.write() as conn:  # everything version 3 brought (issues 30 and 34) undone
        for undo in ("ALTER TABLE deliveries DROP COLUMN lease_holder", "DROP TABLE voucher_numbering",
                     "DROP TABLE summary_numbering", "DROP TABLE desk_turns", "ALTER TABLE products DROP COLUMN version",
                     "DROP TABLE gre_tickets", "DROP TABLE transport_entries",
                     "DELETE FROM schema_version WHERE version > 2"):
            conn.execute(undo)
    raw.close()
    open_database(shop_path).close()
    desk = Desk(shop_path, processes.HOST)
    try:
        assert [(row["version"], row["how"]) for row in desk.storage.query(
            "SELECT version, how FROM schema_version WHERE version > 1 ORDER BY version")] == \
            [(2, UPGRADED), (3, UPGRADED), (4, UPGRADED), (5, UPGRADED)]
        [row] = desk.store.deliveries()  # the queued delivery kept, its lease free
        assert (row["state"], row["lease_holder"]) == (DELIVERY_PENDING, None)
        [due] = claim(desk)
        assert due.holder == desk.store.holder
    finally:
        desk.close()


def test_resending_leaves_a_delivery_in_flight_to_its_holder(desks):
    a, b = desks
    [held] = claim(a)
    assert b.store.resend("sub_1", clock.now()) == 1  # «Reenviar» on the other desk meanwhile
    assert claim(b) == []
    a.store.record_outcomes([(held, 204, None, DELIVERY_DONE, None)], clock.now())
    [row] = b.store.deliveries()
    assert (row["state"], row["attempts"]) == (DELIVERY_DONE, 1)
