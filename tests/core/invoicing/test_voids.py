"""Voiding through the engine's `Voids` against the SUNAT sandbox, over real SOAP, with SUNAT's sheets.

A factura voided by a comunicación de baja (RA), a boleta by a resumen diario (RC, status 3): each ends
`anulado` with the summary's CDR; a rejected summary leaves the vouchers as they were with SUNAT's reason;
SUNAT's deadlines and a voucher SUNAT never accepted are refused before anything is sent. Every RA/RC the
engine produced is judged by ../shared/tools/sunat_check.py --strict (schema, sheets, xmlsec1)."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest

from app.core.errors import ErrorCode, YupanaError
from app.core.invoicing import cdr, statuses
from app.core.platform import clock
from app.sandbox import sunat_signer
from tests.helpers.base import ISSUER_RUC
from tests.helpers.oracles import run_sunat_check
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import DNI_CUSTOMER, boleta, factura, item, nota


def strict(xml: str, folder: Path, name: str) -> dict:
    """sunat_check.py --strict on a summary the engine produced, in its own process."""
    path = folder / f"{ISSUER_RUC}-{name}.xml"
    path.write_text(xml, encoding="utf-8")
    done = run_sunat_check(path, "--strict", "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 0, report
    assert report["xsd"]["ok"] and report["signature"]["ok"] and not report["sunat"]["observations"], report
    assert "skipped" not in report["signature"], report  # xmlsec1 verified the signature
    return report


def test_a_factura_is_voided_by_a_ra_and_ends_anulado_with_its_cdr(voiding, voids_sandbox, tmp_path):
    voucher_id = issued(voiding, factura("F001", 7, [item("Servicio de consultoría", "1", "100")]))
    outcome = voiding.invoicing.void(voucher_id, "ERROR EN EL RUC DEL CLIENTE")
    today = clock.today()
    assert outcome.ident == f"RA-{today:%Y%m%d}-1" and outcome.kind == "RA"
    assert outcome.accepted and outcome.ticket
    assert [(v.serie_numero, v.status) for v in outcome.vouchers] == [("F001-7", statuses.ANULADO)]
    assert voiding.invoicing.voucher(voucher_id).status == statuses.ANULADO
    assert voids_sandbox.voucher_status(ISSUER_RUC, "01", "F001", 7) == statuses.ANULADO
    answer = cdr.read_zip(outcome.cdr_zip)
    assert (answer.codigo, answer.referencia) == ("0", outcome.ident)
    assert "ha sido aceptada" in answer.descripcion
    row = voiding._storage.query_one("SELECT cdr_zip, cdr_xml, cdr_member FROM sunat_summaries WHERE id = ?",
                                     (outcome.summary_id,))  # kept as its XML, the zip made again (voids.m004)
    assert row["cdr_zip"] is None and row["cdr_member"] == answer.member == f"R-{ISSUER_RUC}-{outcome.ident}.xml"
    assert voiding._vouchers.unpack_bytes(row["cdr_xml"]) == answer.xml and sunat_signer.signature_is_valid(answer.xml)
    assert voiding._voids.outcome(outcome.summary_id).cdr_zip == outcome.cdr_zip == cdr.rebuild_zip(answer.member,
                                                                                                    answer.xml)
    assert "ERROR EN EL RUC DEL CLIENTE" in outcome.xml_firmado
    strict(outcome.xml_firmado, tmp_path, outcome.ident)
    # The next one of the day takes the next number; an anulado voucher is not voided twice.
    second = issued(voiding, factura("F001", 8, [item("Servicio de consultoría", "1", "50")]))
    assert voiding.invoicing.void(second, "DESCUENTO NO APLICADO").ident == f"RA-{today:%Y%m%d}-2"
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.void(voucher_id, "OTRA VEZ")
    assert caught.value.code == ErrorCode.CONFLICT and "F001-7 ya está anulado" in caught.value.message


def test_a_boleta_is_voided_by_a_rc_with_status_3(voiding, voids_sandbox, tmp_path):
    voucher_id = issued(voiding, boleta("B001", 3, [item("Polo de algodón", "2", "59")], receptor=DNI_CUSTOMER))
    outcome = voiding.invoicing.void(voucher_id, "VENTA CANCELADA")
    assert outcome.kind == "RC" and outcome.ident.startswith("RC-") and outcome.accepted, outcome
    assert voiding.invoicing.voucher(voucher_id).status == statuses.ANULADO
    assert voids_sandbox.voucher_status(ISSUER_RUC, "03", "B001", 3) == statuses.ANULADO
    assert cdr.read_zip(outcome.cdr_zip).codigo == "0"
    assert "<cbc:ConditionCode>3</cbc:ConditionCode>" in outcome.xml_firmado
    assert "<cbc:ID>B001-3</cbc:ID>" in outcome.xml_firmado
    strict(outcome.xml_firmado, tmp_path, outcome.ident)


def test_a_rejected_summary_leaves_the_vouchers_as_they_were_with_sunats_reason(voiding, voids_sandbox):
    voucher_id = issued(voiding, factura("F001", 11, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.fail_next("reject:2375", operation="sendSummary")
    outcome = voiding.invoicing.void(voucher_id, "ERROR EN EL MONTO")
    assert outcome.state == statuses.SUBMISSION_FAILED and outcome.codigo == "2375"
    assert outcome.descripcion  # SUNAT's reason, as its CDR gives it
    assert cdr.read_zip(outcome.cdr_zip).codigo == "2375"
    assert voiding.invoicing.voucher(voucher_id).status == statuses.ACEPTADO
    assert [(v.serie_numero, v.status) for v in outcome.vouchers] == [("F001-11", statuses.ACEPTADO)]
    [shown] = voiding.invoicing.voucher_summaries(voucher_id)  # the voucher's detail shows the rejected baja and why
    assert (shown.ident, shown.state, shown.codigo, shown.motivo) == \
        (outcome.ident, statuses.SUBMISSION_FAILED, "2375", "ERROR EN EL MONTO")
    assert shown.descripcion == outcome.descripcion
    assert voids_sandbox.voucher_status(ISSUER_RUC, "01", "F001", 11) == statuses.ACEPTADO


def _next_evening_in_lima() -> dt.datetime:
    """The next 20:30 in Lima (within a day): the 24th in Lima is already the 25th in UTC."""
    evening = dt.datetime.combine(clock.today(), dt.time(20, 30), tzinfo=clock.PERU)
    return evening if evening > clock.now() else evening + dt.timedelta(days=1)


def test_a_voucher_issued_in_the_evening_in_lima_is_voided_on_its_own_day(voiding, voids_sandbox):
    evening = _next_evening_in_lima()
    with clock.frozen(evening):
        voucher_id = issued(voiding, factura("F001", 31, [item("Servicio de consultoría", "1", "100")]))
        outcome = voiding.invoicing.void(voucher_id, "ERROR EN EL RUC")
    day = evening.date()  # Lima's, not the computer's (a day ahead on UTC)
    assert voiding.invoicing.voucher(voucher_id).fecha_emision == day.isoformat()
    assert outcome.ident == f"RA-{day:%Y%m%d}-1" and outcome.accepted


def test_deadlines_and_unaccepted_vouchers_are_refused_before_sending(voiding, voids_sandbox):
    voucher_id = issued(voiding, factura("F001", 21, [item("Servicio de consultoría", "1", "100")]))
    voiding._voids.today = lambda: clock.today() + dt.timedelta(days=8)
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.void(voucher_id, "ERROR EN EL RUC")
    assert caught.value.code == ErrorCode.CONFLICT
    assert "hace 8 días" in caught.value.message and "hasta 7 días" in caught.value.message
    voiding._voids.today = clock.today
    unsent = voiding.invoicing.generate_xml(factura("F001", 22, [item("Servicio de consultoría", "1", "100")]))
    unsent_id = voiding.invoicing.find_voucher("F001-22")
    assert unsent.xml
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.void(unsent_id, "ERROR EN EL RUC")
    assert "F001-22 no fue aceptado por SUNAT" in caught.value.message
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.void(voucher_id, "  ")
    assert "«motivo»" in caught.value.message
    assert voids_sandbox.summaries.tickets() == []  # nothing reached SUNAT
    assert voiding.invoicing.summaries() == []


def test_a_pending_ticket_is_resolved_after_the_engine_is_closed_and_reopened(voiding, voids_sandbox, home):
    from app.core.engine import Engine

    voucher_id = issued(voiding, factura("F001", 31, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.summaries.hold()
    outcome = voiding.invoicing.void(voucher_id, "ERROR EN EL RUC", wait=False)
    assert outcome.state == statuses.SUBMISSION_PENDING and outcome.ticket
    assert voids_sandbox.summaries.wait_for_polls(outcome.ticket, 1, 10)  # the background poller asked: still pending
    voiding.close()  # the app is closed with the ticket pending: it stays stored
    reopened = Engine(home)
    try:
        assert reopened._voids.pending() == [outcome.summary_id]
        assert reopened.invoicing.voucher(voucher_id).status == statuses.ACEPTADO
        polls = voids_sandbox.summaries.ticket(outcome.ticket).polls
        assert voids_sandbox.summaries.wait_for_polls(outcome.ticket, polls + 1, 10)  # the reopened engine follows it
        voids_sandbox.summaries.release()
        assert reopened._voids.join(10)
        assert reopened.invoicing.voucher(voucher_id).status == statuses.ANULADO
        final = reopened._voids.outcome(outcome.summary_id)
        assert final.accepted and cdr.read_zip(final.cdr_zip).referencia == outcome.ident
        assert reopened._voids.pending() == []
    finally:
        reopened.close()


def signed_only(engine, request: dict) -> int:
    """Generated and signed, not sent: a boleta the issuer reports in the day's resumen."""
    xml = engine.invoicing.generate_xml(request).xml
    certificado_id = engine.invoicing.default_certificate(ISSUER_RUC).certificado_id
    engine.invoicing.sign({"xml": xml, "certificado_id": certificado_id})
    return engine.invoicing.find_voucher(f"{request['serie']}-{request['numero']}")


def test_the_days_boletas_are_reported_in_a_rc_and_end_aceptado(voiding, voids_sandbox, tmp_path):
    first = signed_only(voiding, boleta("B002", 1, [item("Polo de algodón", "2", "59")], receptor=DNI_CUSTOMER))
    second = signed_only(voiding, boleta("B002", 2, [item("Gorra", "1", "25", "20")]))
    sent = issued(voiding, boleta("B002", 3, [item("Casaca", "1", "150")], receptor=DNI_CUSTOMER))
    [outcome] = voiding.invoicing.daily_summary(clock.today())
    assert outcome.kind == "RC" and outcome.accepted, outcome
    assert [(v.serie_numero, v.status) for v in outcome.vouchers] == [("B002-1", statuses.ACEPTADO),
                                                                      ("B002-2", statuses.ACEPTADO)]
    assert voiding.invoicing.voucher(first).status == voiding.invoicing.voucher(second).status == statuses.ACEPTADO
    assert voids_sandbox.voucher_status(ISSUER_RUC, "03", "B002", 2) == statuses.ACEPTADO
    assert "B002-3" not in outcome.xml_firmado and voiding.invoicing.voucher(sent).status == statuses.ACEPTADO
    assert outcome.xml_firmado.count("<cbc:ConditionCode>1</cbc:ConditionCode>") == 2
    strict(outcome.xml_firmado, tmp_path, outcome.ident)
    [listed] = voiding.invoicing.summaries()  # the «Resúmenes y bajas» page's row: the vouchers it covers, in order
    assert (listed.ident, listed.comprobantes, listed.reference_date, listed.state) == \
        (outcome.ident, "B002-1, B002-2", clock.today().isoformat(), statuses.SUBMISSION_DONE)
    with pytest.raises(YupanaError) as caught:  # nothing left to report that day
        voiding.invoicing.daily_summary(clock.today())
    assert caught.value.code == ErrorCode.NOT_FOUND and "No hay boletas firmadas" in caught.value.message
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.daily_summary(clock.today() - dt.timedelta(days=9))
    assert "hace 9 días" in caught.value.message


def test_asking_sunat_for_a_cdr_stores_it_when_the_voucher_is_ours(voiding, voids_sandbox):
    voucher_id = issued(voiding, factura("F001", 41, [item("Servicio de consultoría", "1", "100")]))
    answer = voiding.invoicing.query_cdr(ISSUER_RUC, "01", "F001", 41)
    assert (answer.codigo, answer.estado, answer.voucher_id, answer.guardado) == \
        ("0", statuses.ACEPTADO, voucher_id, True)
    stored = voiding._voids.consulted_cdr(voucher_id)
    assert stored is not None and cdr.read_zip(stored["cdr_zip"]).referencia == "F001-41"
    received = cdr.read_zip(answer.cdr_zip)  # as SUNAT answered; stored as its XML, the zip made again
    assert cdr.read_zip(stored["cdr_zip"]).xml == received.xml
    assert stored["cdr_zip"] == cdr.rebuild_zip(received.member, received.xml)
    with voiding._storage.write() as conn:  # a row stored before voids.m004: its zip, handed out as it is
        conn.execute("UPDATE sunat_consulted_cdrs SET cdr_zip = ?, cdr_xml = NULL, cdr_member = NULL",
                     (answer.cdr_zip,))
    assert voiding._voids.consulted_cdr(voucher_id)["cdr_zip"] == answer.cdr_zip
    unknown = voiding.invoicing.query_cdr(ISSUER_RUC, "01", "F001", 999)
    assert unknown.codigo is None and unknown.cdr_zip is None and not unknown.guardado
    assert unknown.status_code != "0004"
    voids_sandbox.fail_next("fault:0102", operation="getStatusCdr")  # SUNAT's refusal: its code, in Spanish
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.query_cdr(ISSUER_RUC, "01", "F001", 41)
    assert caught.value.code == ErrorCode.UPSTREAM_REJECTED and "F001-41 (código 0102)" in caught.value.message
    assert caught.value.details[0].sunat_code == "0102"
    voids_sandbox.fail_next("500", operation="getStatusCdr")
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.query_cdr(ISSUER_RUC, "01", "F001", 41)
    assert caught.value.code == ErrorCode.UPSTREAM_UNAVAILABLE and "inténtelo más tarde" in caught.value.message


def test_a_summary_sunat_did_not_answer_is_sent_again_until_it_has_its_ticket(voiding, voids_sandbox):
    voucher_id = issued(voiding, factura("F001", 51, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.fail_next("500", operation="sendSummary")  # nothing processed: safe to send the same name again
    outcome = voiding.invoicing.void(voucher_id, "ERROR EN EL RUC")
    assert outcome.accepted, outcome
    assert voiding.invoicing.voucher(voucher_id).status == statuses.ANULADO
    row = voiding._storage.query_one("SELECT send_attempts FROM sunat_summaries WHERE id = ?", (outcome.summary_id,))
    assert row["send_attempts"] == 2


def test_a_summary_whose_answer_was_lost_is_not_taken_for_new(voiding, voids_sandbox):
    """SUNAT took the RA and its answer was lost: sent again (same ID, same bytes) once SUNAT processed it, it answers
    2324 naming the first ticket — SUNAT has it. The summary is never fallido: it follows that ticket to its CDR,
    without a second RA (while SUNAT still processes it the answer is 2403 and the outcome comes from the voucher
    status query: tests/core/invoicing/test_voids_reconciled.py follows it step by step)."""
    voucher_id = issued(voiding, factura("F001", 52, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.fail_next("drop_after_receive", operation="sendSummary")  # SUNAT took it; the ticket never came
    outcome = voiding.invoicing.void(voucher_id, "ERROR EN EL RUC")
    [ticket] = voids_sandbox.summaries.tickets()
    assert (outcome.state, outcome.codigo, outcome.ticket) == (statuses.SUBMISSION_DONE, "0", ticket), outcome
    assert cdr.read_zip(outcome.cdr_zip).descripcion == f"La Comunicación de baja {outcome.ident}, ha sido aceptada"
    assert voiding.invoicing.voucher(voucher_id).status == statuses.ANULADO
    name = f"{ISSUER_RUC}-{outcome.ident}"
    assert voids_sandbox.summaries.stats()["summaries"] == {name: 2}  # the same RA twice, no other one
    assert len(voids_sandbox.summaries.tickets()) == 1
    assert voids_sandbox.voucher_status(ISSUER_RUC, "01", "F001", 52) == statuses.ANULADO


def test_a_summary_refused_at_the_front_door_is_an_error_with_sunats_code(voiding, voids_sandbox):
    voucher_id = issued(voiding, factura("F001", 53, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.fail_next("fault:0154", operation="sendSummary")
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.void(voucher_id, "ERROR EN EL RUC")
    assert caught.value.code == ErrorCode.UPSTREAM_REJECTED and "(código 0154)" in caught.value.message
    assert caught.value.details[0].sunat_code == "0154"
    assert voiding.invoicing.voucher(voucher_id).status == statuses.ACEPTADO
    assert voiding._voids.pending() == []


def test_a_summary_stored_but_never_sent_is_sent_by_the_poller(voiding, voids_sandbox):
    """The process died between storing the summary and sendSummary: once it is older than a send can take, the
    poller sends it; a fresh one (another process may be sending it) is left alone."""
    voucher_id = issued(voiding, factura("F001", 61, [item("Servicio de consultoría", "1", "100")]))
    row = voiding._vouchers.get(voucher_id)
    summary_id = voiding._voids.book.prepare("RA", ISSUER_RUC, clock.today(), [(row, "ERROR EN EL RUC", "3")])
    assert voiding._voids.check_ticket(summary_id).state == statuses.SUBMISSION_PENDING
    assert voids_sandbox.summaries.tickets() == []  # too fresh: not sent
    with voiding._storage.write() as conn:
        conn.execute("UPDATE sunat_summaries SET updated_at = '2020-01-01T00:00:00.000000Z' WHERE id = ?", (summary_id,))
    voiding._voids.start_if_pending()
    assert voiding._voids.join(10)
    assert voiding._voids.outcome(summary_id).accepted
    assert voiding.invoicing.voucher(voucher_id).status == statuses.ANULADO


def test_notes_are_voided_by_their_voucher_s_document(voiding, voids_sandbox, tmp_path):
    """A credit note of a boleta goes in a RC (status 3, with its boleta as reference); one of a factura in a RA."""
    issued(voiding, boleta("B001", 71, [item("Zapatillas", "1", "250")], receptor=DNI_CUSTOMER))
    boleta_note = issued(voiding, nota("07", "B001", 72, ("03", "B001", 71), "07", [item("Zapatillas", "1", "50")],
                                       receptor=DNI_CUSTOMER))
    outcome = voiding.invoicing.void(boleta_note, "NOTA EMITIDA POR ERROR")
    assert outcome.kind == "RC" and outcome.accepted, outcome
    assert "<cbc:ID>B001-71</cbc:ID>" in outcome.xml_firmado  # the note's boleta, as BillingReference
    assert voids_sandbox.voucher_status(ISSUER_RUC, "07", "B001", 72) == statuses.ANULADO
    assert voids_sandbox.voucher_status(ISSUER_RUC, "03", "B001", 71) == statuses.ACEPTADO
    strict(outcome.xml_firmado, tmp_path, outcome.ident)
    issued(voiding, factura("F001", 73, [item("Servicio de consultoría", "1", "100")]))
    factura_note = issued(voiding, nota("07", "F001", 74, ("01", "F001", 73), "07",
                                        [item("Servicio de consultoría", "1", "10")]))
    outcome = voiding.invoicing.void(factura_note, "NOTA EMITIDA POR ERROR")
    assert outcome.kind == "RA" and outcome.accepted, outcome
    assert voiding.invoicing.voucher(factura_note).status == statuses.ANULADO


def test_a_voucher_waiting_in_a_summary_is_not_put_in_another(voiding, voids_sandbox):
    voucher_id = issued(voiding, factura("F001", 81, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.summaries.hold()
    first = voiding.invoicing.void(voucher_id, "ERROR EN EL RUC", wait=False)
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.void(voucher_id, "ERROR EN EL RUC")
    assert caught.value.code == ErrorCode.CONFLICT
    assert f"F001-81 ya está en {first.ident}, que espera la respuesta de SUNAT" in caught.value.message
    row = voiding._vouchers.get(voucher_id)
    with pytest.raises(YupanaError) as caught:  # the same check inside the numbering transaction
        voiding._voids.book.prepare("RA", ISSUER_RUC, clock.today(), [(row, "OTRA", "3")])
    assert f"ya está en {first.ident}" in caught.value.message
    assert len(voids_sandbox.summaries.tickets()) == 1
    voids_sandbox.summaries.release()
    assert voiding._voids.join(10)
    assert voiding.invoicing.voucher(voucher_id).status == statuses.ANULADO


def test_the_engine_tells_each_change_of_a_summary(voiding, voids_sandbox):
    from app.core.platform import events

    heard: list[tuple[str, events.Event]] = []
    handle = voiding.admin.subscribe(lambda name, payload: heard.append((name, payload)))
    try:
        voucher_id = issued(voiding, factura("F001", 91, [item("Servicio de consultoría", "1", "100")]))
        outcome = voiding.invoicing.void(voucher_id, "ERROR EN EL RUC")
    finally:
        handle.cancel()
    told = [(p.state, p.ticket) for name, p in heard if name == events.SUMMARY_CHANGED]
    assert told == [(statuses.SUBMISSION_PENDING, None), (statuses.SUBMISSION_PENDING, outcome.ticket),
                    (statuses.SUBMISSION_DONE, outcome.ticket)]
    order = [name for name, p in heard if name == events.SUMMARY_CHANGED
             or (name == events.VOUCHER_CHANGED and p.status == statuses.ANULADO)]
    assert order[-2:] == [events.VOUCHER_CHANGED, events.SUMMARY_CHANGED]  # the vouchers first, then the summary


def test_getstatus_trouble_is_asked_again_and_an_unknown_ticket_ends_the_wait(voiding, voids_sandbox):
    first = issued(voiding, factura("F001", 95, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.fail_next("500", operation="getStatus")
    voids_sandbox.fail_next("fault:0130", operation="getStatus")
    outcome = voiding.invoicing.void(first, "ERROR EN EL RUC")  # two failed polls, then SUNAT's answer
    assert outcome.accepted and voiding.invoicing.voucher(first).status == statuses.ANULADO
    second = issued(voiding, factura("F001", 96, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.fail_next("fault:0127", operation="getStatus")
    outcome = voiding.invoicing.void(second, "ERROR EN EL RUC")
    assert outcome.state == statuses.SUBMISSION_FAILED and outcome.codigo == "0127"
    assert f"no reconoce el ticket {outcome.ticket}" in outcome.descripcion
    assert voiding.invoicing.voucher(second).status == statuses.ACEPTADO
    assert voiding._voids.pending() == []


def _tax(xml: str, scheme: str) -> str | None:
    """The RC line's TaxAmount of one tax scheme (1000 IGV, 7152 ICBPER), None when it has none."""
    from lxml import etree

    from app.core.invoicing.namespaces import CAC, CBC

    root = etree.fromstring(xml.encode("utf-8"))
    for total in root.iter(f"{{{CAC}}}TaxTotal"):
        if total.findtext(f"{{{CAC}}}TaxSubtotal/{{{CAC}}}TaxCategory/{{{CAC}}}TaxScheme/{{{CBC}}}ID") == scheme:
            return total.findtext(f"{{{CBC}}}TaxAmount")
    return None


def test_a_boleta_with_bags_is_reported_with_its_icbper_apart_from_its_igv(voiding, voids_sandbox, tmp_path):
    """30 bags: the ICBPER (7152) is a TaxTotal of its own, the IGV (1000) only the IGV, so SUNAT's sum of the line
    (4027, ±5) matches its TotalAmount."""
    request = boleta("B005", 1, [item("Menú ejecutivo", "2", "12.71"), item("Bolsa plástica", "30", "0.10", icbper=True)],
                     receptor=DNI_CUSTOMER)
    voucher_id = issued(voiding, request)
    outcome = voiding.invoicing.void(voucher_id, "VENTA CANCELADA")
    assert outcome.accepted, outcome
    icbper = _tax(outcome.xml_firmado, "7152")
    assert icbper is not None and float(icbper) == 15.0  # 30 bags at S/ 0.50 (2023 onwards)
    igv = float(_tax(outcome.xml_firmado, "1000"))
    assert igv == pytest.approx((2 * 12.71 + 3.0) * 0.18, abs=0.02)
    strict(outcome.xml_firmado, tmp_path, outcome.ident)


def test_a_boleta_with_a_global_discount_is_reported_with_its_discounted_totals(voiding, voids_sandbox, tmp_path):
    request = boleta("B005", 2, [item("Casaca de cuero", "1", "500")], receptor=DNI_CUSTOMER,
                     descuento_global=Decimal("100.00"))
    voucher_id = issued(voiding, request)
    total = Decimal(voiding.invoicing.voucher(voucher_id).total)
    assert total == Decimal("472.00")  # (500 - 100) + 18 %
    outcome = voiding.invoicing.void(voucher_id, "VENTA CANCELADA")
    assert outcome.accepted, outcome
    assert f'<sac:TotalAmount currencyID="PEN">{total}</sac:TotalAmount>' in outcome.xml_firmado
    assert '<cbc:PaidAmount currencyID="PEN">400.00</cbc:PaidAmount>' in outcome.xml_firmado
    assert _tax(outcome.xml_firmado, "1000") == "72.00"
    strict(outcome.xml_firmado, tmp_path, outcome.ident)


def test_more_boletas_than_one_rc_takes_are_split_into_several(voiding, voids_sandbox, tmp_path):
    """SUNAT's limit is 500 lines per RC; lowered to 2 here so three boletas make two RCs, numbered in turn."""
    assert voiding._voids.max_summary_lines == 500
    voiding._voids.max_summary_lines = 2
    ids = [signed_only(voiding, boleta("B006", numero, [item("Gaseosa 500 ml", "1", "3.50")])) for numero in (1, 2, 3)]
    first, second = voiding.invoicing.daily_summary(clock.today())
    today = clock.today()
    assert (first.ident, second.ident) == (f"RC-{today:%Y%m%d}-1", f"RC-{today:%Y%m%d}-2")
    assert [v.serie_numero for v in first.vouchers] == ["B006-1", "B006-2"]
    assert [v.serie_numero for v in second.vouchers] == ["B006-3"]
    assert first.accepted and second.accepted
    assert {voiding.invoicing.voucher(i).status for i in ids} == {statuses.ACEPTADO}
    assert first.xml_firmado.count("<sac:SummaryDocumentsLine>") == 2
    strict(second.xml_firmado, tmp_path, second.ident)


def test_an_orphaned_summary_seen_by_two_pollers_is_sent_once(voiding, voids_sandbox, monkeypatch):
    """Two processes find the same summary without a ticket at once (each read it before the other claimed it):
    one sends it, the other leaves it alone — SUNAT never gets the same RA twice."""
    voucher_id = issued(voiding, factura("F001", 71, [item("Servicio de consultoría", "1", "100")]))
    row = voiding._vouchers.get(voucher_id)
    summary_id = voiding._voids.book.prepare("RA", ISSUER_RUC, clock.today(), [(row, "ERROR EN EL RUC", "3")])
    with voiding._storage.write() as conn:
        conn.execute("UPDATE sunat_summaries SET updated_at = '2020-01-01T00:00:00.000000Z' WHERE id = ?", (summary_id,))
    stale = voiding._voids.book.row(summary_id)  # what the second poller read before the first one claimed it
    voiding._voids.check_ticket(summary_id)  # the first poller: sends it
    monkeypatch.setattr(voiding._voids.book, "row", lambda _id: dict(stale))  # failure injection: a stale read
    voiding._voids.book.send(summary_id)  # the second poller, deciding from what it read
    monkeypatch.undo()
    name = f"{ISSUER_RUC}-{voiding._voids.outcome(summary_id).ident}"
    assert voids_sandbox.summaries.stats()["summaries"] == {name: 1}
    assert voiding._voids.poll(summary_id, timeout_s=10).accepted


def test_a_summary_another_process_sent_is_followed_by_the_serving_engine(voiding, voids_sandbox, home):
    """The 60-minute soak's unsettled summaries (issue 31): `yupana anular --no-esperar` in another process sends a RA
    and exits with its ticket pending; the serving app, opened before it and with nothing of its own to follow, learns
    SUNAT's answer without a restart (`yupana serve` and the windows watch the summaries of other processes)."""
    from app.core.engine import Engine
    from tests.helpers.messaging_support import wait_for

    voucher_id = issued(voiding, factura("F001", 41, [item("Servicio de consultoría", "1", "100")]))
    voiding._voids.watch(every_s=0.1)  # as `yupana serve` does, with a test's short look-again
    assert voiding._voids.pending() == []
    voids_sandbox.summaries.hold()
    other = Engine(home)  # the other process: it sends, its own poller asks once, and it exits with the ticket pending
    try:
        outcome = other.invoicing.void(voucher_id, "ERROR EN EL RUC", wait=False)
        assert outcome.state == statuses.SUBMISSION_PENDING and outcome.ticket
        assert voids_sandbox.summaries.wait_for_polls(outcome.ticket, 1, 10)
    finally:
        other.close()
    polls = voids_sandbox.summaries.ticket(outcome.ticket).polls
    assert voids_sandbox.summaries.wait_for_polls(outcome.ticket, polls + 1, 10)  # the serving engine asks
    voids_sandbox.summaries.release()
    assert wait_for(lambda: voiding.invoicing.voucher(voucher_id).status == statuses.ANULADO, 10)
    assert wait_for(lambda: voiding._voids.pending() == [], 10)
    assert voiding._voids.outcome(outcome.summary_id).accepted
