"""Three outbox paths no other test ran, against the SUNAT sandbox over real HTTP:

- SUNAT answers sendBill with a CDR that cannot be read: nothing is resent, the CDR is asked for with getStatusCdr;
- the answer to a sendBill is lost and the getStatusCdr that follows answers a fault: the voucher is sent again,
  SUNAT says 1033 and its CDR is fetched;
- an exception inside the worker's loop: the loop survives and the submission is retried.

Each first attempt is left to wait (a long retry time); the test then makes it due and wakes the worker, so
what happens in between can be looked at without racing the worker.
"""

from __future__ import annotations

import base64
import logging
import threading

import pytest

import app.sandbox.sunat as sunat_sandbox
from app.core.invoicing import outbox
from tests.helpers.sunat_support import SAMPLE_RUC, accepted_cdrs, enviar, only_submission, stem

SETTLE_S = 20
CONSULT_KEY = f"{SAMPLE_RUC}-01-F002-31"  # the sandbox counts getStatusCdr by the number's value


def make_due_and_wake(engine) -> None:
    engine.admin.config_set("sunat_retry_base_s", "0.05")
    with engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET next_attempt_at = 0")
    engine._outbox.wake()


def settled(engine) -> dict:
    row = engine._outbox.wait_settled(only_submission(engine)["id"], SETTLE_S)
    assert row is not None and row["state"] == outbox.DONE, row
    return row


@pytest.fixture
def waiting_engine(sunat_engine):
    """A first attempt that fails stays queued for a minute (until the test makes it due)."""
    sunat_engine.admin.config_set("sunat_retry_base_s", "60")
    sunat_engine.admin.config_set("sunat_retry_max_s", "60")
    return sunat_engine


def test_an_unreadable_cdr_is_fetched_again_never_resent(waiting_engine, sandbox, monkeypatch):
    real = sunat_sandbox.answer_envelope
    corrupted = []

    def corrupting(element, fields, *args, **kwargs):
        if element == "sendBillResponse" and not corrupted:
            corrupted.append(element)
            fields = [("applicationResponse", base64.b64encode(b"PK\x03\x04 esto no es un zip").decode())]
        return real(element, fields, *args, **kwargs)

    monkeypatch.setattr(sunat_sandbox, "answer_envelope", corrupting)
    status, envelope = enviar(waiting_engine)
    assert status == 503 and envelope["error"]["code"] == "QUEUED", envelope
    assert corrupted == ["sendBillResponse"]
    row = only_submission(waiting_engine)
    assert row["state"] == outbox.PENDING
    assert row["must_reconcile"] == 1  # SUNAT may hold a good CDR: ask for it, do not send again
    assert row["attempts"] == 1
    assert row["last_error"] and "CDR" in row["last_error"]
    assert accepted_cdrs(waiting_engine) == []

    make_due_and_wake(waiting_engine)
    row = settled(waiting_engine)
    assert sandbox.send_count(stem()) == 1  # never sent a second time
    assert sandbox.consult_counts[CONSULT_KEY] == 1
    assert sandbox.processed_counts[stem()] == 1
    assert row["attempts"] == 1 and row["must_reconcile"] == 0
    assert len(accepted_cdrs(waiting_engine)) == 1
    status, envelope = enviar(waiting_engine)  # asking again: the stored CDR, no new request
    assert status == 200 and envelope["data"]["codigo_respuesta"] == "0"
    assert sandbox.send_count(stem()) == 1


def test_a_get_status_cdr_fault_after_a_lost_answer_sends_again_and_takes_sunats_cdr(waiting_engine, sandbox):
    sandbox.fail_next("drop_after_receive")
    sandbox.fail_next("fault:0109", operation="getStatusCdr")
    status, envelope = enviar(waiting_engine)
    assert status == 503 and envelope["error"]["code"] == "QUEUED", envelope
    row = only_submission(waiting_engine)
    assert row["state"] == outbox.PENDING and row["must_reconcile"] == 1
    assert sandbox.processed_counts[stem()] == 1  # SUNAT registered it; its answer never came back

    make_due_and_wake(waiting_engine)
    row = settled(waiting_engine)
    # getStatusCdr failed → sent again → SUNAT says 1033 → getStatusCdr again → its CDR.
    assert sandbox.consult_counts[CONSULT_KEY] == 2
    assert sandbox.send_count(stem()) == 2
    assert sandbox.processed_counts[stem()] == 1  # one voucher at SUNAT, never two
    assert row["attempts"] == 2 and row["fault_code"] is None
    cdrs = accepted_cdrs(waiting_engine)
    assert len(cdrs) == 1 and cdrs[0]["codigo"] == "0"


def test_an_exception_in_the_worker_loop_does_not_stop_it(waiting_engine, sandbox, monkeypatch, caplog):
    real = waiting_engine._outbox.due_ids
    failed = threading.Event()
    worker_threads = []

    def failing_once(now):
        if threading.current_thread().name == "sunat-outbox":
            worker_threads.append(threading.current_thread())
            if not failed.is_set():
                failed.set()
                raise RuntimeError("fallo inyectado en la vuelta del trabajador")
        return real(now)

    monkeypatch.setattr(waiting_engine._outbox, "due_ids", failing_once)
    sandbox.fail_next("500")
    with caplog.at_level(logging.ERROR, logger="app.core.invoicing.outbox"):
        status, envelope = enviar(waiting_engine)
        assert status == 503 and envelope["error"]["code"] == "QUEUED", envelope
        make_due_and_wake(waiting_engine)
        assert failed.wait(SETTLE_S), "the worker never ran a round"
        waiting_engine._outbox.wake()
        row = settled(waiting_engine)
    assert any(r.message == "outbox worker round failed" and r.exc_info for r in caplog.records)
    assert row["attempts"] == 2  # the 500, then the retry after the failed round
    assert sandbox.send_count(stem()) == 2 and len(accepted_cdrs(waiting_engine)) == 1
    assert len(set(worker_threads)) == 1 and len(worker_threads) >= 2  # the same thread went on
    assert worker_threads[0].is_alive()
