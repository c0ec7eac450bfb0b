"""Written from the outbox's surviving mutants (docs/testing.md), against the SUNAT sandbox over real HTTP: how a fault
ends a submission (and when it may not), what the detail window reads of a voucher's CDR, the count of waiting
submissions per environment, and what a refused connection leaves behind."""

from __future__ import annotations

import base64
import json
import logging
import threading
import time

import pytest
from lxml import etree

from app.core.errors import ErrorCode, YupanaError
from app.core.invoicing import cdr, outbox, statuses
from app.core.invoicing.namespaces import DS
from app.core.invoicing.soap import SoapFault
from app.core.invoicing.ubl_identity import DocumentId
from app.core.platform.events import SUNAT_CDR, SunatCdrStored
from tests.helpers.base import ISSUER_RUC
from tests.helpers.sunat_support import SAMPLE_RUC, enviar, only_submission, signed_sample
from tests.helpers.voucher_matrix import factura, item

REJECTED = "0102"  # usuario o clave SOL incorrectos


@pytest.fixture
def issued(sunat_engine, company) -> int:
    """A factura of the company, issued and signed (not sent)."""
    certificado_id = sunat_engine.invoicing.create_test_certificate(ISSUER_RUC).certificado_id
    [result] = sunat_engine.invoicing.issue_batch([factura("F001", 7, [item("Arroz extra 5 kg", "2", "18.50")])],
                                                  certificado_id)
    assert result.success, result.envelope()
    return sunat_engine._vouchers.find(ISSUER_RUC, "01", "F001", 7)["id"]


def test_a_fault_fails_the_row_with_its_code_and_text_and_lets_it_go(sunat_engine, sandbox, monkeypatch, caplog):
    monkeypatch.setattr(sandbox, "clave", "otra clave")  # SUNAT answers 0102 to the engine's clave SOL
    caplog.set_level(logging.INFO, logger=outbox.__name__)
    status, envelope = enviar(sunat_engine)
    assert f"submission {only_submission(sunat_engine)['file_name']}: SUNAT fault {REJECTED}" in caplog.messages
    assert status != 200 and REJECTED in json.dumps(envelope, ensure_ascii=False)
    monkeypatch.undo()
    row = only_submission(sunat_engine)
    assert (row["state"], row["fault_code"], row["must_reconcile"], row["claimed_by"], row["claimed_until"]) == (
        outbox.FAILED, REJECTED, 0, None, None)
    assert row["last_error"] and row["last_error"] in envelope["error"]["message"]
    status, envelope = enviar(sunat_engine)  # corrected and sent again: a failed row goes out again
    assert status == 200 and envelope["data"]["codigo_respuesta"] == "0"
    row = only_submission(sunat_engine)
    assert (row["state"], row["fault_code"], row["last_error"]) == (outbox.DONE, None, None)


def _pending_row(engine, sandbox) -> dict:
    """A submission left pending (its first attempt found SUNAT unreachable), not due again for half a minute or more:
    the worker thread leaves it to the test."""
    engine.admin.config_set("sunat_retry_base_s", "60")
    engine.admin.config_set("sunat_retry_max_s", "3600")
    engine.admin.register_sandbox({"sunat_url_beta": "http://127.0.0.1:9/billService"})
    enviar(engine)
    return engine._outbox.submission(only_submission(engine)["id"])


def test_a_fault_text_is_kept_up_to_500_characters(sunat_engine, sandbox):
    row = _pending_row(sunat_engine, sandbox)
    attempt = sunat_engine._outbox._fail(row, "0306", "x" * 499 + "yz")
    assert (attempt.kind, attempt.fault_code, attempt.fault_text) == ("fault", "0306", "x" * 499 + "yz")
    stored = only_submission(sunat_engine)
    assert (stored["state"], stored["fault_code"], stored["last_error"]) == (outbox.FAILED, "0306", "x" * 499 + "y")


def test_a_fault_of_an_attempt_that_lost_its_lease_changes_nothing(sunat_engine, sandbox):
    row = _pending_row(sunat_engine, sandbox)
    with sunat_engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET claimed_by = 'otro:intento'")
    attempt = sunat_engine._outbox._fail({**row, "lease": "este:intento"}, "0306", "no")
    assert attempt == outbox.Attempt("queued")
    stored = only_submission(sunat_engine)
    assert (stored["state"], stored["fault_code"], stored["claimed_by"]) == (outbox.PENDING, None, "otro:intento")


def test_a_fault_after_the_row_got_its_cdr_answers_that_cdr(sunat_engine, sandbox, caplog):
    status, envelope = enviar(sunat_engine)
    assert status == 200
    row = sunat_engine._outbox.submission(only_submission(sunat_engine)["id"])
    caplog.set_level(logging.INFO, logger=outbox.__name__)
    attempt = sunat_engine._outbox._fail(row, "0306", "tarde")
    assert f"submission {row['file_name']}: fault 0306 ignored, the row was finished meanwhile" in caplog.messages
    assert attempt.kind == "cdr" and attempt.cdr is not None and attempt.cdr.codigo == "0"
    assert only_submission(sunat_engine)["state"] == outbox.DONE


def test_a_refused_connection_leaves_the_row_as_it_was_before_the_attempt(sunat_engine, sandbox):
    row = _pending_row(sunat_engine, sandbox)
    assert row["must_reconcile"] == 0  # refused: it never arrived
    with sunat_engine._storage.write() as conn:  # as after a time-out: something may have arrived
        conn.execute("UPDATE sunat_submissions SET must_reconcile = 1")  # not due: the worker leaves it alone
    sandbox.fail_next("fault:0200", operation="getStatusCdr")  # the look-up fails: it goes on to send, refused
    sunat_engine._outbox.attempt(row["id"])
    assert only_submission(sunat_engine)["must_reconcile"] == 1  # still: a later attempt asks first


def test_the_detail_window_reads_the_latest_cdr_of_its_voucher(sunat_engine, sandbox, issued):
    assert sunat_engine._outbox.cdr_for_voucher(issued) is None  # not sent yet
    sent = sunat_engine.invoicing.resend(issued).sent
    shown = sunat_engine._outbox.cdr_for_voucher(issued)
    assert set(shown) == {"codigo", "descripcion", "notas", "estado", "hash_cdr", "cdr_zip", "received_at"}
    assert (shown["codigo"], shown["estado"], shown["notas"]) == ("0", statuses.ACEPTADO, [])
    assert "aceptada" in shown["descripcion"] and shown["hash_cdr"] and shown["received_at"]
    assert shown["cdr_zip"].startswith(b"PK") and shown["cdr_zip"] == base64.b64decode(sent.cdr)
    assert sunat_engine._outbox.cdr_for_voucher(issued + 1000) is None


def test_waiting_submissions_are_counted_per_environment(sunat_engine, sandbox):
    assert sunat_engine._outbox.pending_by_environment() == {}
    _pending_row(sunat_engine, sandbox)
    environment = only_submission(sunat_engine)["environment"]
    assert sunat_engine._outbox.pending_by_environment() == {environment: 1}
    with sunat_engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET state = ?", (outbox.DONE,))
    assert sunat_engine._outbox.pending_by_environment() == {}


def test_a_stored_cdr_is_announced_once(sunat_engine, sandbox):
    heard = []
    sunat_engine.admin.subscribe(lambda name, payload: heard.append((name, payload)))
    enviar(sunat_engine)
    stem = only_submission(sunat_engine)["file_name"]
    assert [(name, payload) for name, payload in heard if name == SUNAT_CDR] == [
        (SUNAT_CDR, SunatCdrStored(stem, "0", statuses.ACEPTADO))]


def _as_left_by_a_kill(engine, state: str) -> None:
    """As a process killed between storing a CDR and finishing the rows leaves them."""
    with engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET state = ?, must_reconcile = 1, claimed_by = 'muerto:1', "
                     "claimed_until = 1e12, fault_code = '0109'", (state,))
        conn.execute("UPDATE vouchers SET status = ?", (statuses.ENVIADO,))


@pytest.mark.parametrize("state", [outbox.PENDING, outbox.FAILED])
def test_opening_repairs_what_a_kill_left_behind(sunat_engine, sandbox, issued, state, caplog):
    sunat_engine.invoicing.resend(issued)
    _as_left_by_a_kill(sunat_engine, state)
    caplog.set_level(logging.WARNING, logger=outbox.__name__)
    assert sunat_engine._outbox.repair() == 2
    row = only_submission(sunat_engine)
    assert (row["state"], row["must_reconcile"], row["claimed_by"], row["claimed_until"], row["fault_code"]) == (
        outbox.DONE, 0, None, None, None)
    assert sunat_engine.invoicing.voucher(issued).status == statuses.ACEPTADO
    assert "repaired on open: 1 submissions, 1 voucher statuses" in caplog.messages
    caplog.clear()
    assert sunat_engine._outbox.repair() == 0  # nothing left to repair, nothing said
    assert "repaired" not in caplog.text


def test_a_voucher_on_its_way_takes_the_latest_cdrs_status(sunat_engine, sandbox, issued):
    sunat_engine.invoicing.resend(issued)
    with sunat_engine._storage.write() as conn:
        conn.execute("UPDATE vouchers SET status = ?", (statuses.PENDIENTE,))
    assert sunat_engine._outbox.repair() == 1
    assert sunat_engine.invoicing.voucher(issued).status == statuses.ACEPTADO


def test_a_copy_that_is_not_the_vouchers_own_text_is_kept(sunat_engine, sandbox, issued):
    other = signed_sample()  # not the text stored for this voucher
    doc = DocumentId(ISSUER_RUC, "01", "F001", "7")
    row = sunat_engine._outbox.enqueue(doc, other, "sandbox", issued)
    stored = sunat_engine._storage.query_one("SELECT xml FROM sunat_submissions WHERE id = ?", (row["id"],))
    assert stored["xml"] != outbox.NO_COPY and row["xml"] == other


def test_the_digest_of_a_submission_comes_from_its_row_or_its_signed_xml():
    signed = signed_sample()
    digest = etree.fromstring(signed).findtext(f".//{{{DS}}}Reference/{{{DS}}}DigestValue")
    assert outbox.stored_digest({"digest_value": "abc=", "xml": b"<no-xml"}) == "abc="  # the column first
    assert outbox.stored_digest({"digest_value": None, "xml": signed}) == "".join(digest.split())
    assert outbox.stored_digest({"digest_value": "", "xml": b"<roto"}) is None  # unreadable
    assert outbox.stored_digest({"xml": b"<Invoice/>"}) is None  # unsigned
    signed_with = f'<r xmlns:ds="{DS}"><ds:Signature><ds:SignedInfo><ds:Reference><ds:DigestValue>{{}}'.format
    closing = "</ds:DigestValue></ds:Reference></ds:SignedInfo></ds:Signature></r>"
    assert outbox.stored_digest({"xml": (signed_with("ab\n c=") + closing).encode()}) == "abc="  # no blanks
    assert outbox.stored_digest({"xml": (signed_with("") + closing).encode()}) == ""
    entity = f'<!DOCTYPE r [<!ENTITY e "abc=">]>{signed_with("&e;")}{closing}'.encode()
    assert outbox.stored_digest({"xml": entity}) == ""  # read without expanding entities


def test_a_cdr_with_an_exception_code_fails_the_row_with_that_code(sunat_engine, sandbox):
    row = {**_pending_row(sunat_engine, sandbox), "lease": None}
    attempt = sunat_engine._outbox._store(row, cdr.Cdr(codigo="0150", descripcion="El archivo está vacío"))
    assert (attempt.kind, attempt.fault_code, attempt.fault_text) == ("fault", "0150", "El archivo está vacío")
    stored = only_submission(sunat_engine)
    assert (stored["state"], stored["fault_code"], stored["last_error"]) == (outbox.FAILED, "0150",
                                                                              "El archivo está vacío")
    assert sunat_engine._storage.query("SELECT * FROM sunat_cdrs") == []  # an exception is not a CDR to keep


def test_a_cdrs_observations_are_kept_as_written(sunat_engine, sandbox, caplog):
    row = {**_pending_row(sunat_engine, sandbox), "lease": None}
    notes = ["4252 - El dato ingresado como atributo @listName es incorrecto: observación"]
    caplog.set_level(logging.INFO, logger=outbox.__name__)
    attempt = sunat_engine._outbox._store(row, cdr.Cdr(codigo="0", descripcion="aceptada con observaciones",
                                                       notas=notes, xml=b"<ar:ApplicationResponse/>", member="R-x.xml"))
    assert attempt.kind == "cdr" and attempt.cdr.notas == notes and attempt.cdr.estado == statuses.OBSERVADO
    [stored] = sunat_engine._storage.query("SELECT notas FROM sunat_cdrs")
    assert stored["notas"] == json.dumps(notes, ensure_ascii=False) and "observación" in stored["notas"]
    assert f"CDR {row['file_name']}: 0 {statuses.OBSERVADO}" in caplog.messages
    kept = sunat_engine._outbox.stored_cdr(row["id"])
    assert (kept.codigo, kept.descripcion, kept.notas, kept.member, kept.hash_cdr) == (
        "0", "aceptada con observaciones", notes, "R-x.xml", "")


def test_a_retry_reason_is_kept_up_to_500_characters(sunat_engine, sandbox):
    row = _pending_row(sunat_engine, sandbox)
    lease = sunat_engine._outbox._claim(row["id"])
    assert sunat_engine._outbox._retry_later({**row, "lease": lease}, 1, "r" * 499 + "st") == outbox.Attempt("queued")
    stored = only_submission(sunat_engine)
    assert (stored["last_error"], stored["must_reconcile"], stored["claimed_by"]) == ("r" * 499 + "s", 1, None)


def test_a_look_up_that_fails_is_logged_and_the_voucher_sent(sunat_engine, sandbox, caplog):
    row = _pending_row(sunat_engine, sandbox)
    sunat_engine.admin.register_sandbox({"sunat_url_beta": sandbox.bill_url})  # reachable again
    with sunat_engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET must_reconcile = 1")  # not due: the worker leaves it alone
    sandbox.fail_next("fault:0200", operation="getStatusCdr")
    caplog.set_level(logging.INFO, logger=outbox.__name__)
    caplog.clear()  # what the first attempt logged
    attempts = only_submission(sunat_engine)["attempts"]
    assert sunat_engine._outbox.attempt(row["id"]).kind == "cdr"
    name = row["file_name"]
    assert f"sendBill {name}.zip (attempt {attempts + 1})" in caplog.messages
    assert f"getStatusCdr {name}" in caplog.messages
    assert f"getStatusCdr {name} answered fault 0200" in caplog.messages
    assert f"CDR {name}: 0 {statuses.ACEPTADO}" in caplog.messages


def test_the_retry_delay_is_half_fixed_half_random(engine):
    engine.admin.config_set("sunat_retry_base_s", "1")
    engine.admin.config_set("sunat_retry_max_s", "100")
    delays = [engine._outbox.backoff(1) for _ in range(300)]
    assert all(0.5 <= delay <= 1.0 for delay in delays)
    assert max(delays) > 0.9 and min(delays) < 0.6  # the random half reaches across its whole range


def test_a_retry_of_a_row_finished_meanwhile_answers_its_cdr_or_waits(sunat_engine, sandbox):
    status, _ = enviar(sunat_engine)
    assert status == 200
    row = sunat_engine._outbox.submission(only_submission(sunat_engine)["id"])
    attempt = sunat_engine._outbox._retry_later({**row, "lease": "ya:no"}, 1, "tarde")
    assert attempt.kind == "cdr" and attempt.cdr is not None and attempt.cdr.codigo == "0"
    assert only_submission(sunat_engine)["last_error"] is None  # the finished row is left as it is


@pytest.mark.parametrize("must_reconcile", [0, 1])
def test_no_client_for_sunat_waits_with_the_reason_and_keeps_what_may_have_arrived(sunat_engine, sandbox,
                                                                                  monkeypatch, must_reconcile):
    row = _pending_row(sunat_engine, sandbox)
    with sunat_engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET must_reconcile = ?", (must_reconcile,))

    def no_client(environment, ruc):
        raise YupanaError(ErrorCode.NOT_CONFIGURED, "Falta la clave SOL de la empresa")

    monkeypatch.setattr(sunat_engine._outbox, "client_factory", no_client)  # failure injection
    assert sunat_engine._outbox.attempt(row["id"]) == outbox.Attempt("queued")
    stored = only_submission(sunat_engine)
    assert (stored["state"], stored["last_error"], stored["must_reconcile"]) == (
        outbox.PENDING, "Falta la clave SOL de la empresa", must_reconcile)


def test_a_voucher_sunat_holds_without_a_cdr_yet_is_asked_again_never_sent(sunat_engine, sandbox):
    row = _pending_row(sunat_engine, sandbox)
    sends = sandbox.sends()
    with sunat_engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET must_reconcile = ?", (outbox.HELD_BY_SUNAT,))
    assert sunat_engine._outbox.attempt(row["id"]) == outbox.Attempt("queued")
    stored = only_submission(sunat_engine)
    assert (stored["state"], stored["must_reconcile"], stored["last_error"]) == (
        outbox.PENDING, outbox.HELD_BY_SUNAT, "SUNAT ya tiene el comprobante y su CDR aún no se pudo consultar")
    assert sandbox.sends() == sends


def test_a_foreign_voucher_leaves_no_warning_about_a_voucher_status(sunat_engine, sandbox, caplog):
    caplog.set_level(logging.WARNING, logger=outbox.__name__)
    status, _ = enviar(sunat_engine)
    assert status == 200 and only_submission(sunat_engine)["voucher_id"] is None
    assert [r for r in caplog.records if r.name == outbox.__name__] == []


def test_an_unexpected_failure_in_an_attempt_is_logged_retried_and_lets_go_of_the_row(sunat_engine, sandbox,
                                                                                      monkeypatch, caplog):
    row = _pending_row(sunat_engine, sandbox)
    assert row["last_error"] and ":" in row["last_error"]  # the refused connection, as the transport said it
    sunat_engine.admin.register_sandbox({"sunat_url_beta": sandbox.bill_url})

    def broken(*args):
        raise RuntimeError("roto")

    monkeypatch.setattr(outbox, "zip_document", broken)  # failure injection, after the row is marked as sending
    caplog.set_level(logging.INFO, logger=outbox.__name__)
    assert sunat_engine._outbox.attempt(row["id"]) == outbox.Attempt("queued")
    stored = only_submission(sunat_engine)
    assert (stored["state"], stored["last_error"], stored["must_reconcile"]) == (outbox.PENDING, "RuntimeError", 1)
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.getMessage() == f"submission {row['file_name']}: unexpected failure" and record.exc_info
    assert sunat_engine._outbox._claim(row["id"]) is not None  # its lease was let go


def test_a_voucher_status_that_cannot_be_written_is_warned_and_the_cdr_kept(sunat_engine, sandbox, issued,
                                                                           monkeypatch, caplog):
    def refuse(voucher_id, status):
        raise YupanaError(ErrorCode.CONFLICT, "bloqueado")

    monkeypatch.setattr(sunat_engine._outbox.vouchers, "write_status", refuse)  # failure injection
    caplog.set_level(logging.WARNING, logger=outbox.__name__)
    sunat_engine.invoicing.resend(issued)
    assert f"voucher {issued}: status {statuses.ACEPTADO} not recorded: bloqueado" in caplog.messages
    assert sunat_engine._outbox.cdr_for_voucher(issued)["codigo"] == "0"


def test_opening_finishes_a_row_whose_voucher_already_has_its_status(sunat_engine, sandbox, issued, caplog):
    sunat_engine.invoicing.resend(issued)
    with sunat_engine._storage.write() as conn:  # never due: the worker leaves it alone
        conn.execute("UPDATE sunat_submissions SET state = ?, next_attempt_at = 1e12", (outbox.PENDING,))
    caplog.set_level(logging.WARNING, logger=outbox.__name__)
    assert sunat_engine._outbox.repair() == 1
    assert "repaired on open: 1 submissions, 0 voucher statuses" in caplog.messages
    assert only_submission(sunat_engine)["state"] == outbox.DONE


def test_a_submission_whose_voucher_has_no_signed_text_is_an_internal_error(sunat_engine, sandbox):
    doc = DocumentId(SAMPLE_RUC, "01", "F002", "31")
    row = sunat_engine._outbox.enqueue(doc, signed_sample(), "sandbox", 9999)  # a voucher id the store does not have
    with sunat_engine._storage.write() as conn:  # as if its copy had been dropped for the voucher's own text
        conn.execute("UPDATE sunat_submissions SET xml = ?", (outbox.NO_COPY,))
    with pytest.raises(YupanaError) as raised:
        sunat_engine._outbox.submission(row["id"])
    assert raised.value.code == ErrorCode.INTERNAL
    assert raised.value.message == (f"El comprobante {doc.stem} no tiene su XML firmado guardado: no se puede "
                                    "enviar.")


def test_a_stored_cdr_keeps_its_hash_and_one_stored_as_a_zip_has_no_member_name(sunat_engine, sandbox):
    status, _ = enviar(sunat_engine)
    assert status == 200
    submission_id = only_submission(sunat_engine)["id"]
    [row] = sunat_engine._storage.query("SELECT hash_cdr FROM sunat_cdrs")
    kept = sunat_engine._outbox.stored_cdr(submission_id)
    assert kept.hash_cdr and kept.hash_cdr == row["hash_cdr"]
    assert kept.member.endswith(".xml") and kept.zip.startswith(b"PK")
    with sunat_engine._storage.write() as conn:  # as stored before m005: the zip as received, no member name
        conn.execute("UPDATE sunat_cdrs SET cdr_zip = ?, cdr_xml = NULL, cdr_member = NULL", (kept.zip,))
    legacy = sunat_engine._outbox.stored_cdr(submission_id)
    assert (legacy.member, legacy.zip, legacy.hash_cdr) == ("", kept.zip, kept.hash_cdr)


def test_an_attempt_lets_go_of_its_lease(sunat_engine, sandbox):
    row = _pending_row(sunat_engine, sandbox)
    sunat_engine.admin.register_sandbox({"sunat_url_beta": sandbox.bill_url})
    assert sunat_engine._outbox.attempt(row["id"]).kind == "cdr"
    assert sunat_engine._outbox._leases == set()


def test_an_attempt_whose_row_was_taken_over_sends_nothing(sunat_engine, sandbox):
    row = _pending_row(sunat_engine, sandbox)
    sunat_engine.admin.register_sandbox({"sunat_url_beta": sandbox.bill_url})
    lease = sunat_engine._outbox._claim(row["id"])
    with sunat_engine._storage.write() as conn:  # its lease ran out and another attempt took the row
        conn.execute("UPDATE sunat_submissions SET claimed_by = 'otro:intento'")
    client = sunat_engine._outbox.client_factory(row["environment"], row["ruc"])
    sends = sandbox.sends()
    assert sunat_engine._outbox._send(client, {**row, "lease": lease}) == outbox.Attempt("queued")
    assert sandbox.sends() == sends
    assert only_submission(sunat_engine)["attempts"] == row["attempts"]


def test_a_voucher_sunat_holds_whose_cdr_it_does_not_give_yet_waits_for_it(sunat_engine, sandbox):
    row = _pending_row(sunat_engine, sandbox)
    sunat_engine.admin.register_sandbox({"sunat_url_beta": sandbox.bill_url})
    lease = sunat_engine._outbox._claim(row["id"])
    client = sunat_engine._outbox.client_factory(row["environment"], row["ruc"])
    held = SoapFault("soap-env:Client.1033", "El comprobante fue registrado previamente con otros datos", "1033")
    # The sandbox has no CDR of this number: getStatusCdr answers without content.
    attempt = sunat_engine._outbox._reconcile(client, {**row, "lease": lease}, after_fault=held)
    assert attempt == outbox.Attempt("queued")
    stored = only_submission(sunat_engine)
    assert (stored["state"], stored["must_reconcile"], stored["claimed_by"], stored["last_error"]) == (
        outbox.PENDING, outbox.HELD_BY_SUNAT, None, "SUNAT ya tiene el comprobante (1033) y aún no entrega su CDR")


def test_a_retry_waits_by_the_attempts_made_and_says_why_and_when(sunat_engine, sandbox, monkeypatch, caplog):
    row = _pending_row(sunat_engine, sandbox)  # one attempt made, SUNAT unreachable
    sunat_engine.admin.config_set("sunat_retry_max_s", "1000")
    monkeypatch.setattr(sunat_engine._outbox, "clock", lambda: 1000.0)  # the row (due in a minute) is due now
    caplog.set_level(logging.INFO, logger=outbox.__name__)
    assert sunat_engine._outbox.attempt(row["id"]) == outbox.Attempt("queued")
    stored = only_submission(sunat_engine)
    delay = stored["next_attempt_at"] - 1000.0
    assert stored["attempts"] == 2 and 60 < delay <= 120  # the second attempt's backoff: 60 × 2, half of it random
    message = [m for m in caplog.messages if m.startswith("submission ")][-1]
    assert message == f"submission {row['file_name']} queued: {stored['last_error']}; next try in {delay:.2f} s"


def test_a_voucher_whose_submission_waits_is_pending(sunat_engine, sandbox, issued):
    sunat_engine.admin.config_set("sunat_retry_base_s", "60")
    sunat_engine.admin.register_sandbox({"sunat_url_beta": "http://127.0.0.1:9/billService"})
    emission = sunat_engine.invoicing.resend(issued)  # the queue is an outcome (issue 29), not an exception
    assert emission.refusal is not None and emission.refusal.code == ErrorCode.QUEUED
    assert emission.outcome is not None and emission.outcome.estado == statuses.PENDIENTE
    assert sunat_engine.invoicing.voucher(issued).status == statuses.PENDIENTE


def test_a_retry_of_a_row_another_attempt_holds_leaves_it_to_that_attempt(sunat_engine, sandbox):
    row = _pending_row(sunat_engine, sandbox)
    with sunat_engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET claimed_by = 'otro:intento'")
    assert sunat_engine._outbox._retry_later({**row, "lease": "ya:no"}, 1, "tarde") == outbox.Attempt("queued")
    stored = only_submission(sunat_engine)
    assert (stored["claimed_by"], stored["last_error"]) == ("otro:intento", row["last_error"])


def test_waiting_for_a_submission_ends_when_it_is_finished_or_the_time_is_up(sunat_engine, sandbox):
    row = _pending_row(sunat_engine, sandbox)
    with sunat_engine._storage.write() as conn:  # never tried again: no attempt ends, nothing tells the waiter
        conn.execute("UPDATE sunat_submissions SET next_attempt_at = 1e12")
    waited = {}

    def wait() -> None:
        started = time.monotonic()
        waited["row"] = sunat_engine._outbox.wait_settled(row["id"], 1.2)  # stays pending: the whole time
        waited["took"] = time.monotonic() - started

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    waiter.join(30)
    assert not waiter.is_alive()  # it looks at the row now and then, not only when an attempt of its own ends
    assert waited["row"]["state"] == outbox.PENDING and waited["took"] >= 1.2
    assert sunat_engine._outbox.wait_settled(row["id"] + 1, 5) is None  # no such submission: at once
    with sunat_engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET state = ?", (outbox.FAILED,))
    started = time.monotonic()
    assert sunat_engine._outbox.wait_settled(row["id"], 30)["state"] == outbox.FAILED
    assert time.monotonic() - started < 30
