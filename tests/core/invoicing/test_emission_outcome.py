"""The emission result says the state (issue 29): each of SUNAT's answers to «Emitir», and to a resend, comes out of
the engine as one `EmissionOutcome` decided in the core — accepted, observed, rejected (in a CDR or a SOAP fault
2000-3999), an exception 0100-1999 (not sent), SUNAT down or slow (pending), a submission waiting in the queue —
against the SUNAT sandbox. The windows show it as it comes (tests/gui/test_sunat.py)."""

from __future__ import annotations

import pytest

from app.core.errors import ErrorCode, not_configured
from app.core.invoicing import cdr, statuses
from app.core.invoicing.emission import PENDING_REASONS, outcome_of
from tests.helpers.voucher_matrix import factura, item


@pytest.fixture
def emitting(sunat_engine, company):
    """The engine on the SUNAT sandbox with the issuer's test certificate as its default."""
    sunat_engine.invoicing.create_test_certificate(company.ruc)
    return sunat_engine


def issue(engine, numero: int):
    return engine.invoicing.issue(factura("F001", numero, [item("Servicio", "2", "50")]))


def stored_status(engine, voucher_id: int) -> str:
    return engine.invoicing.voucher(voucher_id).status


def test_accepted_is_the_status_stored_on_the_voucher(emitting, sandbox):
    emission = issue(emitting, 1)
    outcome = emission.outcome
    assert outcome is not None and emission.refusal is None
    assert (outcome.estado, outcome.codigo_respuesta, outcome.observaciones) == (statuses.ACEPTADO, "0", [])
    assert "ha sido aceptada" in outcome.descripcion and outcome.motivo_pendiente == ""
    assert (outcome.nombre_archivo, outcome.digest_value) == (emission.nombre_archivo, emission.digest_value)
    assert stored_status(emitting, emission.voucher_id) == outcome.estado
    again = emitting.invoicing.resend(emission.voucher_id)  # the stored CDR: the same outcome, nothing sent again
    assert again.outcome == outcome and sandbox.sends() == 1


def test_the_cdrs_xml_for_reading_comes_from_the_core(emitting, sandbox):
    emission = issue(emitting, 7)
    answer = emitting.invoicing.voucher_cdr(emission.voucher_id)
    assert answer is not None and answer.cdr_zip  # the zip as stored, for «Exportar CDR»
    assert answer.xml_text == cdr.read_zip(answer.cdr_zip).xml.decode("utf-8")  # the ApplicationResponse itself
    assert "ApplicationResponse" in answer.xml_text and answer.xml_text.lstrip().startswith("<")
    consulted = emitting.invoicing.query_cdr(emission.nombre_archivo.split("-")[0], "01", "F001", 7)
    assert consulted.xml_text == answer.xml_text  # «Consultar CDR en SUNAT»: SUNAT's same CDR, read the same way


def test_observed_carries_sunats_notes(emitting, sandbox):
    sandbox.fail_next("reject:4252")  # the sandbox accepts with this observation, as SUNAT writes one
    emission = issue(emitting, 2)
    outcome = emission.outcome
    assert outcome is not None and outcome.estado == statuses.OBSERVADO and outcome.codigo_respuesta == "0"
    assert len(outcome.observaciones) == 1 and outcome.observaciones[0].startswith("4252 - ")
    assert stored_status(emitting, emission.voucher_id) == statuses.OBSERVADO


def test_a_rejection_in_a_cdr_is_rechazado_for_issue_and_resend(emitting, sandbox):
    sandbox.fail_next("reject:2800")
    emission = issue(emitting, 3)
    outcome = emission.outcome
    assert outcome is not None and (outcome.estado, outcome.codigo_respuesta) == (statuses.RECHAZADO, "2800")
    assert outcome.descripcion  # SUNAT's words for 2800
    assert stored_status(emitting, emission.voucher_id) == statuses.RECHAZADO
    again = emitting.invoicing.resend(emission.voucher_id)  # a rejection is an outcome, not an exception
    assert again.outcome == outcome and again.refusal is None


def test_a_rejection_as_a_soap_fault_spends_the_number(emitting, sandbox, monkeypatch):
    # Fault injection in the sandbox: it finds the signature invalid and answers SOAP fault 2335, as SUNAT does.
    monkeypatch.setattr("app.sandbox.sunat.sunat_signer.signature_is_valid", lambda xml: False)
    emission = issue(emitting, 4)
    outcome = emission.outcome
    assert emission.sent is None and emission.refusal is not None
    assert outcome is not None and (outcome.estado, outcome.codigo_respuesta) == (statuses.RECHAZADO, "2335")
    assert "2335" in outcome.descripcion and outcome.motivo_pendiente == ""


def test_an_exception_is_not_sent_and_a_resend_after_the_fix_is_accepted(emitting, sandbox, company):
    emitting.invoicing.set_sol_credentials(company.ruc, "MODDATOS", "clave-equivocada")
    emission = issue(emitting, 5)
    outcome = emission.outcome
    assert outcome is not None and (outcome.estado, outcome.codigo_respuesta) == (statuses.NO_ENVIADO, "0102")
    assert stored_status(emitting, emission.voucher_id) not in statuses.ISSUED  # the number is not spent
    again = emitting.invoicing.resend(emission.voucher_id)  # still refused: the same kind of outcome, not raised
    assert again.outcome is not None and again.outcome.estado == statuses.NO_ENVIADO
    emitting.invoicing.set_sol_credentials(company.ruc, "MODDATOS", "moddatos")
    fixed = emitting.invoicing.resend(emission.voucher_id)
    assert fixed.outcome is not None and fixed.outcome.estado == statuses.ACEPTADO
    assert (fixed.voucher_id, fixed.nombre_archivo, fixed.digest_value) == (
        emission.voucher_id, emission.nombre_archivo, emission.digest_value)
    assert stored_status(emitting, emission.voucher_id) == statuses.ACEPTADO


@pytest.mark.parametrize("failure", ["500", "timeout"])
def test_sunat_down_or_slow_leaves_it_pending_and_a_resend_waits_in_the_queue(emitting, sandbox, failure):
    emitting.admin.config_set("sunat_retry_base_s", "60")  # the outbox does not try again during the test
    emitting.admin.config_set("sunat_retry_max_s", "120")
    sandbox.fail_next(failure)
    emission = issue(emitting, 6)
    outcome = emission.outcome
    assert emission.refusal is not None and emission.refusal.code == ErrorCode.QUEUED
    assert outcome is not None and outcome.estado == statuses.PENDIENTE
    assert outcome.motivo_pendiente == PENDING_REASONS[ErrorCode.QUEUED] and outcome.codigo_respuesta == ""
    assert stored_status(emitting, emission.voucher_id) == statuses.PENDIENTE
    sends = sandbox.sends()
    queued = emitting.invoicing.resend(emission.voucher_id)  # waiting out its backoff: not sent again
    assert queued.outcome == outcome and sandbox.sends() == sends


def test_a_problem_on_this_side_is_no_outcome():
    problem = not_configured("La empresa no tiene usuario y clave SOL guardados.")
    assert outcome_of("20100066603-01-F001-1", "abc=", None, problem) is None
