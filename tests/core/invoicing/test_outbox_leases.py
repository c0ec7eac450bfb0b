"""Leases of the outbox with two hosts on one database (issue 28): each desk is an outbox with its own connections to
the same data folder and its own host identity; the expiry is written and compared with the database's clock, and a
lease is renewed while its attempt runs, so a slow SUNAT answer never lets another desk send the voucher again."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from lxml import etree

from app.core.invoicing import outbox
from app.core.invoicing.outbox import Outbox
from app.core.invoicing.ubl_identity import identify
from app.core.invoicing.voucher_store import VoucherStore
from app.core.platform import processes
from app.core.storage.engines import open_database
from app.core.storage.sqlite.database import Storage
from app.core.storage.sqlite.submissions import SqliteSubmissionRepository
from app.core.storage.sqlite.vouchers import SqliteVoucherRepository
from tests.helpers.messaging_support import wait_for
from tests.helpers.sunat_support import signed_sample, stem

HOUR = 3600.0
GONE_PID = 2 ** 22 + 12345  # no process has this id (pid_max is at most 2**22)
_real_time = time.time


@pytest.fixture
def desks(sunat_engine) -> Iterator[Callable[..., Outbox]]:
    """`desk(host, clock=…)`: an outbox as a computer named `host` sharing this data folder's database would run it
    (the database opened again: connections of its own), with its clock for the retry schedule."""
    opened: list[tuple[Outbox, Storage]] = []

    def desk(host: str, clock: Callable[[], float] = _real_time) -> Outbox:
        database = open_database(sunat_engine._storage.path)
        vouchers = VoucherStore(database, SqliteVoucherRepository(database), sunat_engine._addresses.current)
        box = Outbox(database, SqliteSubmissionRepository(database), sunat_engine._settings, sunat_engine._events,
                     vouchers, sunat_engine._addresses.current, sunat_engine._sunat_clients, clock=clock,
                     owner=f"{host}/{os.getpid()}:{uuid.uuid4().hex[:12]}")
        opened.append((box, database))
        return box

    yield desk
    for box, database in opened:
        box.stop()
        database.close()


def _queued(box: Outbox) -> int:
    xml = signed_sample()
    return box.enqueue(identify(etree.fromstring(xml)), xml, "sandbox", None)["id"]


def _lease(box: Outbox, submission_id: int) -> tuple[str | None, float | None]:
    row = box.submission(submission_id)
    assert row is not None
    return row["claimed_by"], row["claimed_until"]


def _wait_for_the_database_clock_past(box: Outbox, instant: float, timeout: float = 10.0) -> None:
    """A bounded wait until the database's clock (the one leases use) is past `instant`."""
    wait_for(lambda: box.submissions.now() > instant, timeout)


def test_the_two_desks_are_other_hosts_to_this_one(desks):
    desk_a, desk_b = desks("desk-a"), desks("desk-b")
    assert desk_a.owner.startswith("desk-a/") and desk_b.owner.startswith("desk-b/")
    assert processes.HOST not in ("desk-a", "desk-b")
    assert processes.owner_alive(f"desk-a/{GONE_PID}:x")  # another host's process: alive until its lease runs out


def test_an_expired_lease_of_another_host_is_taken_over(desks, sandbox, monkeypatch):
    desk_a, desk_b = desks("desk-a"), desks("desk-b")
    monkeypatch.setattr(desk_a, "lease_seconds", lambda: 1.0)
    submission_id = _queued(desk_a)
    lease_a = desk_a._claim(submission_id)
    assert lease_a is not None
    _owner, until = _lease(desk_b, submission_id)
    assert desk_b._claim(submission_id) is None  # running, and its host's process cannot be checked from here
    assert desk_b.attempt(submission_id) == outbox.Attempt("queued", in_flight=True)
    _wait_for_the_database_clock_past(desk_b, until)
    lease_b = desk_b._claim(submission_id)  # ran out: desk-a stalled, or died
    assert lease_b is not None and lease_b.startswith(desk_b.owner + ":")
    assert _lease(desk_a, submission_id)[0] == lease_b
    # desk-a's attempt, should it wake up, can neither keep the row nor send it.
    assert desk_a.submissions.renew_lease(submission_id, lease_a, 1.0) is False
    assert desk_a.submissions.mark_sending(submission_id, lease_a) is False
    desk_b._release(lease_b)
    assert sandbox.send_count(stem()) == 0


def test_an_attempt_of_another_host_whose_lease_ran_out_is_finished_here(desks, sandbox, monkeypatch):
    desk_a, desk_b = desks("desk-a"), desks("desk-b")
    monkeypatch.setattr(desk_a, "lease_seconds", lambda: 1.0)
    submission_id = _queued(desk_a)
    assert desk_a._claim(submission_id) is not None  # and then desk-a went silent
    _wait_for_the_database_clock_past(desk_b, _lease(desk_b, submission_id)[1])
    attempt = desk_b.attempt(submission_id)
    assert attempt.kind == "cdr", attempt
    assert sandbox.send_count(stem()) == 1
    row = desk_a.submission(submission_id)
    assert row["state"] == outbox.DONE and row["claimed_by"] is None


def test_a_renewed_lease_is_not_taken_over(desks, monkeypatch):
    desk_a, desk_b = desks("desk-a"), desks("desk-b")
    submission_id = _queued(desk_a)
    monkeypatch.setattr(desk_a, "lease_seconds", lambda: 2.0)
    lease = desk_a._claim(submission_id)
    assert lease is not None
    _owner, first_until = _lease(desk_a, submission_id)
    _wait_for_the_database_clock_past(desk_a, first_until - 1.0)  # halfway
    assert desk_a.submissions.renew_lease(submission_id, lease, 2.0)
    _owner, renewed_until = _lease(desk_a, submission_id)
    assert renewed_until > first_until
    _wait_for_the_database_clock_past(desk_b, first_until)  # the first expiry has passed
    assert desk_b.submissions.now() < renewed_until
    assert desk_b._claim(submission_id) is None
    assert _lease(desk_b, submission_id) == (lease, renewed_until)


def test_a_lease_is_renewed_while_sunat_takes_longer_than_the_lease(sunat_engine, desks, sandbox, monkeypatch):
    """desk-a's sendBill hangs well past its 1.5-second lease: its lease is renewed meanwhile, desk-b's attempt finds
    it in flight and sends nothing, and desk-a's answer, once SUNAT gives it, ends the row."""
    sunat_engine.admin.config_set("sunat_timeout_s", "30")  # the client waits for the slow answer
    desk_a, desk_b = desks("desk-a"), desks("desk-b")
    monkeypatch.setattr(desk_a, "lease_seconds", lambda: 1.5)
    submission_id = _queued(desk_a)
    sandbox.fail_next("hang")
    answers: list[outbox.Attempt] = []
    sender = threading.Thread(target=lambda: answers.append(desk_a.attempt(submission_id)))
    sender.start()
    try:
        assert sandbox.wait_for_sends(1, timeout=10)  # sendBill is in flight (claimed before it left)
        claimed_by_then = desk_b.submissions.now()
        owner, _until = _lease(desk_b, submission_id)
        assert owner is not None and owner.startswith(desk_a.owner + ":")
        keeper = desk_a._keeper
        with keeper._changed:  # renewed a few times: every third of the lease
            assert keeper._changed.wait_for(lambda: keeper.renewals >= 3, timeout=10)
        _wait_for_the_database_clock_past(desk_b, claimed_by_then + 1.5)  # past any expiry the claim wrote
        now = desk_b.submissions.now()
        assert _lease(desk_b, submission_id)[0] == owner and _lease(desk_b, submission_id)[1] > now
        assert desk_b.attempt(submission_id) == outbox.Attempt("queued", in_flight=True)
        assert desk_b._claim(submission_id) is None
    finally:
        sandbox.release()
        sender.join(30)
    assert not sender.is_alive() and answers[0].kind == "cdr", answers
    assert sandbox.send_count(stem()) == 1
    row = desk_b.submission(submission_id)
    assert row["state"] == outbox.DONE and row["claimed_by"] is None
    assert desk_a._keeper._held == {}  # let go with the attempt


def test_a_lease_holds_by_the_database_clock_when_a_host_clock_runs_an_hour_ahead(desks, monkeypatch):
    desk_a = desks("desk-a")
    ahead = lambda: _real_time() + HOUR  # noqa: E731
    desk_b = desks("desk-b", clock=ahead)
    monkeypatch.setattr(time, "time", ahead)  # this process's clock too: nothing of a lease may read it
    submission_id = _queued(desk_a)
    before = desk_a.submissions.now()
    lease = desk_a._claim(submission_id)
    after = desk_a.submissions.now()
    owner, until = _lease(desk_a, submission_id)
    lasts = desk_a.lease_seconds()
    assert owner == lease and before + lasts <= until <= after + lasts  # the database's now, not the process's
    assert until < desk_b.clock()  # by desk-b's own clock it ran out an hour ago
    assert desk_b._claim(submission_id) is None  # by the database's it has not


def test_a_lease_runs_out_by_the_database_clock_when_a_host_clock_runs_an_hour_behind(desks, monkeypatch):
    behind = lambda: _real_time() - HOUR  # noqa: E731
    monkeypatch.setattr(time, "time", behind)
    desk_a, desk_b = desks("desk-a", clock=behind), desks("desk-b", clock=behind)
    monkeypatch.setattr(desk_a, "lease_seconds", lambda: 1.0)
    submission_id = _queued(desk_a)
    before = desk_a.submissions.now()
    assert desk_a._claim(submission_id) is not None
    _owner, until = _lease(desk_a, submission_id)
    assert before + 1.0 <= until <= desk_a.submissions.now() + 1.0
    assert desk_b._claim(submission_id) is None
    _wait_for_the_database_clock_past(desk_b, until)
    assert until > desk_b.clock() + HOUR - 60  # desk-b's clock says it has most of an hour to run
    assert desk_b._claim(submission_id) is not None  # the database's says it ran out: taken over


def test_a_dead_owner_on_this_host_is_taken_over_at_once_another_hosts_is_not(desks, sunat_engine):
    box = sunat_engine._outbox  # this host's
    submission_id = _queued(box)
    for holder, taken in ((f"desk-z/{GONE_PID}:gone:lease", False),  # another host: its process cannot be checked
                          (f"{processes.HOST}/{GONE_PID}:gone:lease", True),  # this host's, and gone
                          (f"{GONE_PID}:gone:lease", True)):  # written before hosts were named: this host's
        with sunat_engine._storage.write() as conn:
            conn.execute("UPDATE sunat_submissions SET claimed_by = ?, claimed_until = ? WHERE id = ?",
                         (holder, box.submissions.now() + 600, submission_id))
        lease = box._claim(submission_id)
        assert (lease is not None) is taken, holder
        if lease is not None:
            box._release(lease)


def test_a_lease_keeper_lets_go_of_a_lease_taken_over(desks, monkeypatch):
    """A desk that stalled past its lease finds, at its next renewal, that another took the row: it stops renewing."""
    desk_a, desk_b = desks("desk-a"), desks("desk-b")
    submission_id = _queued(desk_a)
    monkeypatch.setattr(desk_a, "lease_seconds", lambda: 0.3)
    lease = desk_a._claim(submission_id)
    assert lease is not None
    # desk-b takes the row (as after desk-a stalled past its lease)
    assert desk_b.submissions.claim(submission_id, f"{desk_b.owner}:takeover", 60, replacing=lease)
    keeper = desk_a._keeper
    keeper.hold(submission_id, lease)
    with keeper._changed:
        assert keeper._changed.wait_for(lambda: lease not in keeper._held, timeout=10)
    assert _lease(desk_b, submission_id)[0] == f"{desk_b.owner}:takeover"
    desk_a._release(lease)
