"""Written from the outbox's surviving mutants (docs/testing.md): the leases of attempts and the worker thread's
schedule, with the outbox's clock fixed (no SUNAT is reached: the rows are never due for the worker). Leases run on
the database's clock (`DB_NOW`), whatever the outbox's clock says."""

from __future__ import annotations

import re

import pytest

from app.core.invoicing import outbox
from app.core.invoicing.ubl_identity import DocumentId
from app.core.storage.sqlite.database import DB_NOW
from tests.helpers.sunat_support import SAMPLE_RUC, signed_sample

NOW = 5000.0


@pytest.fixture
def box(engine, monkeypatch) -> outbox.Outbox:
    monkeypatch.setattr(engine._outbox, "clock", lambda: NOW)  # mocked time
    return engine._outbox


def _queued(box: outbox.Outbox, due_at: float) -> int:
    """A pending submission of the environment in use, due at `due_at` on the outbox's clock."""
    row = box.enqueue(DocumentId(SAMPLE_RUC, "01", "F002", "31"), signed_sample(), box.environment(), None)
    with box.storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET next_attempt_at = ? WHERE id = ?", (due_at, row["id"]))
    return row["id"]


def _claimed(box: outbox.Outbox, submission_id: int) -> tuple[str, float]:
    row = box.storage.query_one("SELECT claimed_by, claimed_until FROM sunat_submissions WHERE id = ?",
                                (submission_id,))
    return row["claimed_by"], row["claimed_until"]


def test_a_lease_names_its_attempt_and_lasts_twice_the_time_out_and_15_seconds(engine, box):
    engine.admin.config_set("sunat_timeout_s", "7")
    submission_id = _queued(box, 1e12)
    before = box.submissions.now()
    lease = box._claim(submission_id)
    after = box.submissions.now()
    assert re.fullmatch(re.escape(box.owner) + r":[0-9a-f]{8}", lease)
    owner, until = _claimed(box, submission_id)
    assert owner == lease and before + 2 * 7 + 15 <= until <= after + 2 * 7 + 15  # the database's now, not NOW
    assert box.lease_seconds() == 29


def test_a_lease_is_taken_again_once_it_has_run_out_even_if_its_attempt_lives(box):
    submission_id = _queued(box, 1e12)
    first = box._claim(submission_id)  # an attempt of this outbox, still under way
    assert box._claim(submission_id) is None
    with box.storage.write() as conn:
        conn.execute(f"UPDATE sunat_submissions SET claimed_until = {DB_NOW} + 0.5")
    assert box._claim(submission_id) is None  # half a second left
    with box.storage.write() as conn:
        conn.execute(f"UPDATE sunat_submissions SET claimed_until = {DB_NOW}")
    second = box._claim(submission_id)  # run out just now
    assert second not in (None, first) and _claimed(box, submission_id)[0] == second


def test_no_lease_for_a_submission_that_does_not_exist(box):
    assert box._claim(424242) is None


@pytest.mark.parametrize(("due_in", "expected"), [
    (None, 300.0),  # nothing pending: look again in five minutes
    (1000.0, 300.0),  # never longer than five minutes
    (299.5, 299.5),
    (10.0, 10.0),  # until the next row is due
    (0.01, 0.05),  # never shorter than 50 ms
    (0.0, 0.25),  # due and still there (another attempt holds it): once its lease could have run out
    (-5.0, 0.25),
])
def test_the_worker_sleeps_until_the_next_row_is_due(box, due_in, expected):
    if due_in is not None:
        _queued(box, NOW + due_in)
    assert box._seconds_to_next() == pytest.approx(expected)


def test_stopping_an_outbox_whose_worker_never_started_waits_for_nothing(box):
    box.stop()  # never started: nothing to wait for
    assert box._worker.thread is None


def test_the_worker_is_a_daemon_thread_started_for_pending_rows_and_stopped_with_the_outbox(engine):
    box = engine._outbox
    box.start_if_pending()
    assert box._worker.thread is None  # nothing pending
    submission_id = _queued(box, 1e12)  # pending, not due for ages: the worker only waits
    box.start_if_pending()
    thread = box._worker.thread
    assert thread is not None and thread.is_alive() and thread.daemon and thread.name == "sunat-outbox"
    box.stop()
    assert not thread.is_alive()
    assert box.storage.query_one("SELECT attempts FROM sunat_submissions WHERE id = ?", (submission_id,)) == {
        "attempts": 0}
