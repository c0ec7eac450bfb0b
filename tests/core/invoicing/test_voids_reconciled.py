"""Voids reconciled, never repeated (issue 31, point 1), against the SUNAT sandbox over real SOAP.

A RA/RC whose sendSummary answer was lost is sent again with the same ID and bytes; SUNAT's 2403/2324/2223 mean it
holds it: the summary stays pending (never fallido), its vouchers show «Baja por confirmar», no other RA or RC is
built for them and «Anular» refuses naming the first summary. Its outcome comes from SUNAT's voucher status query
(billConsultService getStatus: 0003 de baja) — or, where that query cannot tell (a boleta; no query in beta), from
the ticket SUNAT names once it processed the summary (2223/2324 to the same summary sent again). When neither tells
(still accepted, or still being processed, 48 hours after the first send; processed without naming the ticket), the
void is taken as not made and «Anular» is offered again with a warning naming the first summary."""

from __future__ import annotations

import datetime as dt

import pytest

from app.core.errors import ErrorCode, YupanaError
from app.core.invoicing import soap, statuses
from app.core.invoicing.voids import rules
from app.core.platform import clock, environments
from tests.helpers.base import ISSUER_RUC
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import DNI_CUSTOMER, boleta, factura, item

WAIT = 10  # seconds: the most a test waits for a condition


def lost_answer_void(engine, sandbox, voucher_id: int, motivo: str = "ERROR EN EL RUC"):
    """«Anular» with SUNAT's answer to the first sendSummary lost (it received the summary)."""
    sandbox.fail_next("drop_after_receive", operation="sendSummary")
    return engine.invoicing.void(voucher_id, motivo)


def test_the_double_void_after_a_lost_answer_is_refused_then_resolved_without_a_second_ra(voiding, voids_sandbox):
    """Reproduction: before, the resend's 2403 made the summary fallido, «Anular» was offered again and a second RA
    for the same voucher was sent and accepted."""
    voucher_id = issued(voiding, factura("F001", 52, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.summaries.hold()  # SUNAT has not processed the RA yet: its status query still says accepted
    first = lost_answer_void(voiding, voids_sandbox, voucher_id)
    # While the outcome is unknown no other RA is built for the voucher (before: a second RA went out).
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.void(voucher_id, "OTRA VEZ", timeout_s=5)
    assert caught.value.code == ErrorCode.CONFLICT
    assert "F001-52" in caught.value.message and first.ident in caught.value.message
    assert "Baja por confirmar" in caught.value.message
    assert first.state == statuses.SUBMISSION_PENDING and first.codigo == "2403", first  # never fallido
    assert first.ticket is None and first.received_without_ticket
    assert [(v.serie_numero, v.status) for v in first.vouchers] == [("F001-52", statuses.BAJA_POR_CONFIRMAR)]
    shown = voiding.invoicing.voucher(voucher_id)
    assert (shown.status, shown.shown_status, shown.void_pending) == (
        statuses.ACEPTADO, statuses.BAJA_POR_CONFIRMAR, first.ident)  # stored as SUNAT accepted it; shown apart
    [listed] = voiding.invoicing.vouchers(search="F001-52")
    assert listed.shown_status == statuses.BAJA_POR_CONFIRMAR and listed.void_pending == first.ident
    name = f"{ISSUER_RUC}-{first.ident}"
    assert voids_sandbox.summaries.stats()["summaries"] == {name: 2}  # the same RA, sent again: nothing else
    # the background poller keeps asking SUNAT meanwhile
    assert voids_sandbox.wait_for_status_queries(f"{ISSUER_RUC}-01-F001-52", 2, WAIT)
    assert voiding.invoicing.voucher(voucher_id).status == statuses.ACEPTADO
    # SUNAT processes it: the status query says 0003 (de baja) and the summary ends accepted.
    voids_sandbox.summaries.release()
    assert voiding._voids.join(WAIT)
    final = voiding._voids.outcome(first.summary_id)
    assert (final.state, final.codigo, final.ticket) == (statuses.SUBMISSION_DONE, rules.QUERY_VOIDED, None)
    assert voiding.invoicing.voucher(voucher_id).status == statuses.ANULADO
    assert voiding.invoicing.voucher(voucher_id).void_pending is None
    assert voids_sandbox.summaries.stats()["summaries"] == {name: 2} and len(voids_sandbox.summaries.tickets()) == 1
    assert voids_sandbox.voucher_status(ISSUER_RUC, "01", "F001", 52) == statuses.ANULADO
    assert [s.ident for s in voiding.invoicing.summaries()] == [first.ident]


def test_a_lost_answer_still_accepted_after_48_hours_is_taken_as_not_made(voiding, voids_sandbox):
    voucher_id = issued(voiding, factura("F001", 53, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.summaries.hold()  # SUNAT never processes it (as if it had refused it without a word)
    first = lost_answer_void(voiding, voids_sandbox, voucher_id)
    assert first.received_without_ticket
    lost = voiding._voids.tickets.lost
    lost.now = lambda: clock.now() + dt.timedelta(hours=47)  # time seam: still within the 48 hours
    assert voiding._voids.check_ticket(first.summary_id).state == statuses.SUBMISSION_PENDING
    lost.now = lambda: clock.now() + dt.timedelta(hours=48, minutes=1)
    assert voiding._voids.check_ticket(first.summary_id).state == statuses.SUMMARY_UNCONFIRMED
    assert voiding._voids.join(WAIT)
    stale = voiding._voids.outcome(first.summary_id)
    assert stale.codigo == "2403" and "48 horas" in stale.descripcion and "se toma como no hecha" in stale.descripcion
    shown = voiding.invoicing.voucher(voucher_id)
    assert (shown.status, shown.shown_status, shown.void_pending) == (statuses.ACEPTADO, statuses.ACEPTADO, None)
    assert first.ident in shown.void_warning and "F001-53" in shown.void_warning  # «Anular» warns, naming it
    assert [(s.ident, s.state) for s in voiding.invoicing.voucher_summaries(voucher_id)] == [
        (first.ident, statuses.SUMMARY_UNCONFIRMED)]
    # «Anular» again: a new RA, with the warning naming the first one.
    voids_sandbox.summaries.release()
    second = voiding.invoicing.void(voucher_id, "ERROR EN EL RUC")
    assert second.ident != first.ident and second.aviso == shown.void_warning
    assert second.accepted and voiding.invoicing.voucher(voucher_id).status == statuses.ANULADO
    assert voiding.invoicing.voucher(voucher_id).void_warning is None  # anulado: nothing left to warn of


def test_a_boletas_void_whose_answer_was_lost_is_learnt_from_its_ticket(voiding, voids_sandbox):
    """A boleta's baja (RC status 3) with its answer lost: «Baja por confirmar» while SUNAT processes it (before:
    taken as not made at once, and «Anular» offered again — a second void of the same boleta), then anulado by the
    ticket SUNAT names to the same RC sent again."""
    voucher_id = issued(voiding, boleta("B015", 1, [item("Polo de algodón", "2", "59")], receptor=DNI_CUSTOMER))
    voids_sandbox.summaries.hold()
    voids_sandbox.fail_next("drop_after_receive", operation="sendSummary")
    first = voiding.invoicing.void(voucher_id, "VENTA CANCELADA")
    assert first.state == statuses.SUBMISSION_PENDING and first.received_without_ticket, first
    assert [(v.serie_numero, v.status) for v in first.vouchers] == [("B015-1", statuses.BAJA_POR_CONFIRMAR)]
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.void(voucher_id, "OTRA VEZ", timeout_s=5)
    assert caught.value.code == ErrorCode.CONFLICT and "Baja por confirmar" in caught.value.message
    voids_sandbox.summaries.release()
    assert voiding._voids.join(WAIT)
    final = voiding._voids.outcome(first.summary_id)
    assert final.accepted and final.ticket is not None and final.cdr_zip, final
    assert voiding.invoicing.voucher(voucher_id).status == statuses.ANULADO
    assert voids_sandbox.voucher_status(ISSUER_RUC, "03", "B015", 1) == statuses.ANULADO
    assert len(voids_sandbox.summaries.tickets()) == 1  # one RC for this boleta's void, never a second


def test_a_boletas_void_whose_ticket_sunat_never_names_is_taken_as_not_made(voiding, voids_sandbox):
    """SUNAT has it (2223) but names no ticket: a baja is taken as not made, «Anular» offered with the warning."""
    voucher_id = issued(voiding, boleta("B016", 1, [item("Polo de algodón", "2", "59")], receptor=DNI_CUSTOMER))
    voids_sandbox.summaries.hold()
    voids_sandbox.fail_next("drop_after_receive", operation="sendSummary")
    first = voiding.invoicing.void(voucher_id, "VENTA CANCELADA")
    voids_sandbox.fail_next("fault:2223", operation="sendSummary")  # the background poller's next send
    assert voiding._voids.join(WAIT)
    stale = voiding._voids.outcome(first.summary_id)
    assert stale.state == statuses.SUMMARY_UNCONFIRMED and "se toma como no hecha" in stale.descripcion, stale
    assert stale.codigo == "2223" and "sin indicar su ticket" in stale.descripcion
    assert voids_sandbox.stats()["status_queries"] == {}  # not asked: it cannot answer for a boleta
    shown = voiding.invoicing.voucher(voucher_id)
    assert shown.shown_status == statuses.ACEPTADO and first.ident in shown.void_warning


def test_the_same_codes_on_a_first_send_are_a_name_taken_by_another_document(voiding, voids_sandbox):
    """2403/2324 to a summary's very first send: another document took the name (another installation, a restored
    copy): that one is fallido, as before — only a summary sent again is held by SUNAT."""
    voucher_id = issued(voiding, factura("F001", 55, [item("Servicio de consultoría", "1", "100")]))
    row = voiding._vouchers.get(voucher_id)
    summary_id = voiding._voids.book.prepare("RA", ISSUER_RUC, clock.today(), [(row, "ERROR EN EL RUC", "3")])
    stored = voiding._voids.book.row(summary_id)
    other = soap.SunatClient(voids_sandbox.bill_url, f"{ISSUER_RUC}MODDATOS", "moddatos", timeout=5)
    voids_sandbox.summaries.hold()
    other.send_summary(*soap.zip_document(f"{ISSUER_RUC}-{stored['ident']}.xml",
                                          stored["xml_firmado"].encode("utf-8")))
    voiding._voids.book.send(summary_id)
    outcome = voiding._voids.outcome(summary_id)
    assert (outcome.state, outcome.codigo) == (statuses.SUBMISSION_FAILED, "2403")
    assert voiding.invoicing.voucher(voucher_id).shown_status == statuses.ACEPTADO


def test_the_status_query_is_available_where_sunat_offers_it():
    """SUNAT offers billConsultService in production only; the sandbox stands in for it; beta has none."""
    assert rules.status_query_available(environments.PRODUCCION)
    assert rules.status_query_available(environments.SANDBOX)
    assert not rules.status_query_available(environments.BETA)
    assert rules.status_query_answers("01", "F001") and rules.status_query_answers("07", "FC01")
    assert not rules.status_query_answers("03", "B001") and not rules.status_query_answers("07", "BC01")
