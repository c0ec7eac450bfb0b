"""The durable outbox against the SUNAT sandbox told to fail: time-out, 500, lost answer, a killed process.

Each case must end with exactly one accepted CDR stored and no second send of an accepted voucher.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from app.core.engine import Engine
from app.core.errors import ErrorCode
from app.core.invoicing import cdr, outbox, soap
from tests.helpers.base import ROOT
from tests.helpers.sunat_support import SAMPLE_RUC, accepted_cdrs, enviar, only_submission, signed_sample, stem

SETTLE_S = 20


def assert_queued(status: int, envelope: dict) -> None:
    assert status == 503, envelope
    assert envelope["error"]["code"] == ErrorCode.QUEUED
    assert "cola" in envelope["error"]["message"]


def settle(engine) -> dict:
    row = engine._outbox.wait_settled(only_submission(engine)["id"], SETTLE_S)
    assert row is not None and row["state"] == outbox.DONE, row
    return row


def assert_final_answer_without_resending(engine, sandbox, sends: int) -> None:
    assert len(accepted_cdrs(engine)) == 1
    status, envelope = enviar(engine, signed_sample())
    assert status == 200 and envelope["data"]["codigo_respuesta"] == "0"
    assert sandbox.send_count(stem()) == sends  # asking again returned the stored CDR
    assert sandbox.processed_counts[stem()] == 1


def test_time_out_then_the_worker_fetches_the_cdr(sunat_engine, sandbox):
    sandbox.fail_next("timeout")
    assert_queued(*enviar(sunat_engine, signed_sample()))
    assert only_submission(sunat_engine)["must_reconcile"] == 1
    settle(sunat_engine)
    assert sandbox.consult_counts[f"{stem()[:-8]}31"] >= 1
    assert_final_answer_without_resending(sunat_engine, sandbox, sends=1)


def test_http_500_is_retried(sunat_engine, sandbox):
    sandbox.fail_next("500")
    assert_queued(*enviar(sunat_engine, signed_sample()))
    row = settle(sunat_engine)
    assert row["attempts"] == 2
    assert_final_answer_without_resending(sunat_engine, sandbox, sends=2)


def test_connection_dropped_after_sending_is_reconciled_not_resent(sunat_engine, sandbox):
    sandbox.fail_next("drop_after_receive")
    assert_queued(*enviar(sunat_engine, signed_sample()))
    settle(sunat_engine)
    assert_final_answer_without_resending(sunat_engine, sandbox, sends=1)


def test_several_failures_in_a_row_back_off_and_finish(sunat_engine, sandbox):
    sandbox.fail_next("500", count=3)
    assert_queued(*enviar(sunat_engine, signed_sample()))
    row = settle(sunat_engine)
    assert row["attempts"] == 4
    assert_final_answer_without_resending(sunat_engine, sandbox, sends=4)


def test_already_registered_1033_takes_sunats_cdr(sunat_engine, sandbox):
    """Sent before from elsewhere (or the answer was lost long ago): SUNAT says 1033, we fetch its CDR."""
    name, data = soap.zip_document(stem() + ".xml", signed_sample())
    original = soap.SunatClient(sandbox.bill_url, f"{SAMPLE_RUC}MODDATOS", "moddatos", 5).send_bill(name, data)
    status, envelope = enviar(sunat_engine, signed_sample())
    assert status == 200 and envelope["data"]["codigo_respuesta"] == "0"
    import base64

    # SUNAT's CDR, byte for byte (in a zip made again from it: docs/vouchers.md, «Muchos comprobantes»)
    assert cdr.read_zip(base64.b64decode(envelope["data"]["cdr"])).xml == cdr.read_zip(original).xml
    assert sandbox.send_count(stem()) == 2 and sandbox.processed_counts[stem()] == 1


def test_unreachable_sunat_stays_queued(sunat_engine, sandbox):
    sunat_engine.admin.register_sandbox({"sunat_url_beta": "http://127.0.0.1:9/billService"})
    sunat_engine.admin.config_set("sunat_retry_base_s", "60")
    assert_queued(*enviar(sunat_engine, signed_sample()))
    row = only_submission(sunat_engine)
    assert row["state"] == outbox.PENDING and row["must_reconcile"] == 0  # refused: it never arrived
    attempts = row["attempts"]
    assert_queued(*enviar(sunat_engine, signed_sample()))  # asking again while it waits: still queued,
    assert only_submission(sunat_engine)["attempts"] == attempts  # and SUNAT is not asked before its time


def test_backoff_is_exponential_with_jitter_and_capped(engine):
    engine.admin.config_set("sunat_retry_base_s", "1")
    engine.admin.config_set("sunat_retry_max_s", "8")
    delays = {n: [engine._outbox.backoff(n) for _ in range(200)] for n in (1, 2, 3, 10)}
    assert all(0.5 <= d <= 1 for d in delays[1])
    assert all(1 <= d <= 2 for d in delays[2])
    assert all(2 <= d <= 4 for d in delays[3])
    assert all(4 <= d <= 8 for d in delays[10])
    assert len(set(delays[3])) > 100  # jitter: retries of many clients do not line up


def test_retry_time_follows_the_injected_clock(sunat_engine, sandbox):
    now = [1_000_000.0]
    sunat_engine._outbox.clock = lambda: now[0]
    sunat_engine.admin.config_set("sunat_retry_base_s", "10")
    sunat_engine.admin.config_set("sunat_retry_max_s", "100")
    sandbox.fail_next("500")
    assert_queued(*enviar(sunat_engine, signed_sample()))
    row = only_submission(sunat_engine)
    assert 1_000_005 <= row["next_attempt_at"] <= 1_000_010
    assert sunat_engine._outbox.due_ids(now[0]) == []
    assert sunat_engine._outbox.due_ids(now[0] + 10) == [row["id"]]


def test_a_claimed_row_is_not_sent_by_another_live_owner(sunat_engine, sandbox):
    xml = signed_sample()
    from lxml import etree

    from app.core.invoicing.ubl_identity import identify

    row = sunat_engine._outbox.enqueue(identify(etree.fromstring(xml)), xml, "sandbox", None)
    with sunat_engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET claimed_by = ?, claimed_until = ? WHERE id = ?",
                     (f"{os.getppid()}:other", sunat_engine._outbox.clock() + 60, row["id"]))
    assert sunat_engine._outbox.attempt(row["id"]).kind == "queued"
    assert sandbox.send_count(stem()) == 0
    with sunat_engine._storage.write() as conn:  # the same lease held by a process that no longer exists
        conn.execute("UPDATE sunat_submissions SET claimed_by = ? WHERE id = ?", (f"{2 ** 22 + 12345}:gone", row["id"]))
    assert sunat_engine._outbox.attempt(row["id"]).kind == "cdr"


def test_process_killed_mid_send_resumes_on_restart(sunat_engine, sandbox, home, tmp_path):
    sunat_engine.admin.config_set("sunat_timeout_s", "30")
    request = tmp_path / "enviar.json"
    import json

    request.write_text(json.dumps({"xml_firmado": signed_sample().decode()}), encoding="utf-8")
    sandbox.fail_next("hang")
    env = dict(os.environ, YUPANA_HOME=str(home))
    process = subprocess.Popen([sys.executable, "-m", "app", "call", "enviar", str(request)], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert sandbox.received.wait(30), "the sandbox never got the request"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == -signal.SIGKILL
    assert only_submission(sunat_engine)["state"] == outbox.PENDING
    assert accepted_cdrs(sunat_engine) == []
    sunat_engine.admin.config_set("sunat_timeout_s", "2")
    restarted = Engine(home)  # its worker finds the pending submission and finishes it
    try:
        row = restarted._outbox.wait_settled(only_submission(restarted)["id"], SETTLE_S)
        assert row["state"] == outbox.DONE
        assert row["attempts"] == 2
    finally:
        restarted.close()
    assert sandbox.consult_counts[f"{SAMPLE_RUC}-01-F002-31"] >= 1  # it asked before sending again
    assert_final_answer_without_resending(sunat_engine, sandbox, sends=2)


@pytest.mark.parametrize("mode", ["timeout", "drop_after_receive"])
def test_lost_answer_from_the_worker_itself_is_reconciled(sunat_engine, sandbox, mode):
    sandbox.fail_next("500")
    sandbox.fail_next(mode)
    assert_queued(*enviar(sunat_engine, signed_sample()))
    settle(sunat_engine)
    assert sandbox.processed_counts[stem()] == 1
    assert len(accepted_cdrs(sunat_engine)) == 1
