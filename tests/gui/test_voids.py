"""«Anular» and «Consultar CDR en SUNAT» from the voucher detail, against the SUNAT sandbox of «Modo sandbox».

The RA/RC is sent on a worker without waiting for the ticket; the detail shows «Baja por confirmar» while SUNAT holds
it and turns «Anulado» when the engine's background poller tells the outcome (event `summary.changed`)."""

from __future__ import annotations

import datetime as dt

from app.core.invoicing import cdr, statuses
from app.core.platform import clock
from app.gui.voucher_detail import VoucherDetail
from tests.helpers.gui import wait_idle
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import DNI_CUSTOMER, boleta, factura, item


def open_detail(qtbot, context, voucher_id: int) -> VoucherDetail:
    detail = VoucherDetail(context, voucher_id)
    qtbot.addWidget(detail)
    detail.show()
    qtbot.waitUntil(lambda: bool(detail.record), timeout=10_000)
    wait_idle(qtbot, context.workers)
    return detail


def test_anular_a_factura_shows_the_pending_baja_and_ends_anulado(qtbot, context, engine, voiding):
    voucher_id = issued(engine, factura("F001", 7, [item("Servicio de consultoría", "1", "100")]))
    detail = open_detail(qtbot, context, voucher_id)
    assert detail.status_badge.text().strip() == "Aceptado" and detail.void_button.isEnabled()
    assert not detail.void_state.isVisible()
    voiding.summaries.hold()  # SUNAT keeps the ticket pending until released
    dialog = detail.void()
    assert "comunicación de baja (RA)" in dialog.explanation.text() and "F001-7" in dialog.explanation.text()
    dialog.send_button.click()  # no reason typed: asked for, nothing sent
    assert "motivo" in dialog.errors.visible()["motivo"] and dialog.isVisible()
    assert voiding.summaries.tickets() == []
    dialog.motivo.setText("ERROR EN EL RUC DEL CLIENTE")
    dialog.send_button.click()
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=30_000)
    today = clock.today()
    assert dialog.outcome.ident == f"RA-{today:%Y%m%d}-1" and dialog.outcome.state == statuses.SUBMISSION_PENDING
    qtbot.waitUntil(lambda: detail.void_state.isVisible(), timeout=10_000)
    assert detail.void_state.text().strip() == "Baja por confirmar"
    assert dialog.outcome.ident in detail.void_state.toolTip() and dialog.outcome.ticket in detail.void_state.toolTip()
    assert detail.status_badge.property("status") == statuses.ACEPTADO
    assert not detail.void_button.isEnabled()  # already in a baja waiting for SUNAT
    assert f"Se envió la comunicación de baja {dialog.outcome.ident}" in detail.banner.text.text()
    assert voiding.summaries.wait_for_polls(dialog.outcome.ticket, 1, 10)  # the engine follows the ticket meanwhile
    voiding.summaries.release()
    qtbot.waitUntil(lambda: detail.status_badge.property("status") == statuses.ANULADO, timeout=15_000)
    assert detail.status_badge.text().strip() == "Anulado"
    qtbot.waitUntil(lambda: detail.banner.tone == "success", timeout=10_000)
    assert f"SUNAT aceptó la comunicación de baja {dialog.outcome.ident}" in detail.banner.text.text()
    assert not detail.void_state.isVisible() and not detail.void_button.isEnabled()
    assert not detail.resend_button.isEnabled()
    assert engine.invoicing.voucher(voucher_id).status == statuses.ANULADO


def test_anular_a_boleta_uses_a_resumen_diario_and_ends_anulado(qtbot, context, engine, voiding):
    voucher_id = issued(engine, boleta("B001", 3, [item("Polo de algodón", "2", "59")], receptor=DNI_CUSTOMER))
    detail = open_detail(qtbot, context, voucher_id)
    dialog = detail.void()
    assert "resumen diario (RC)" in dialog.explanation.text() and "estado 3" in dialog.explanation.text()
    assert dialog.send_button.text() == "Enviar el resumen diario"
    dialog.motivo.setText("VENTA CANCELADA")
    dialog.send_button.click()
    qtbot.waitUntil(lambda: detail.status_badge.property("status") == statuses.ANULADO, timeout=30_000)
    assert detail.status_badge.text().strip() == "Anulado"
    assert dialog.outcome.kind == "RC" and dialog.outcome.ident.startswith("RC-")
    assert voiding.voucher_status(engine.invoicing.voucher(voucher_id).emisor_ruc, "03", "B001", 3) == statuses.ANULADO


def test_a_rejected_baja_shows_sunats_reason_and_leaves_the_voucher_as_it_was(qtbot, context, engine, voiding):
    voucher_id = issued(engine, factura("F001", 11, [item("Servicio de consultoría", "1", "100")]))
    detail = open_detail(qtbot, context, voucher_id)
    voiding.fail_next("reject:2375", operation="sendSummary")
    dialog = detail.void()
    dialog.motivo.setText("ERROR EN EL MONTO")
    dialog.send_button.click()
    qtbot.waitUntil(lambda: detail.banner.tone == "error", timeout=30_000)
    said = detail.banner.text.text()
    assert "SUNAT rechazó la comunicación de baja RA-" in said and "código 2375" in said
    [summary] = engine.invoicing.voucher_summaries(voucher_id)
    assert summary.descripcion and summary.descripcion in said  # SUNAT's own reason
    assert "sigue «Aceptado»" in said
    wait_idle(qtbot, context.workers)
    assert detail.status_badge.property("status") == statuses.ACEPTADO
    assert detail.void_button.isEnabled() and not detail.void_state.isVisible()


def test_the_deadline_refusal_is_the_engines_spanish_error(qtbot, context, engine, voiding):
    voucher_id = issued(engine, factura("F001", 21, [item("Servicio de consultoría", "1", "100")]))
    detail = open_detail(qtbot, context, voucher_id)
    engine._voids.today = lambda: clock.today() + dt.timedelta(days=8)
    dialog = detail.void()
    dialog.motivo.setText("ERROR EN EL RUC")
    dialog.send_button.click()
    qtbot.waitUntil(lambda: dialog.banner.tone == "error", timeout=10_000)
    assert "hace 8 días" in dialog.banner.text.text() and "hasta 7 días" in dialog.banner.text.text()
    assert dialog.isVisible() and dialog.outcome is None and dialog.send_button.isEnabled()
    assert voiding.summaries.tickets() == [] and engine.invoicing.summaries() == []


def test_unaccepted_voucher_cannot_be_voided(qtbot, context, engine, company):
    engine.invoicing.generate_xml(factura("F001", 22, [item("Servicio de consultoría", "1", "100")]))
    detail = open_detail(qtbot, context, engine.invoicing.find_voucher("F001-22"))
    assert detail.status_badge.property("status") == statuses.GENERADO
    assert not detail.void_button.isEnabled() and not detail.consult_button.isEnabled()


def test_consultar_cdr_shows_sunats_answer_and_stores_it(qtbot, context, engine, voiding):
    voucher_id = issued(engine, factura("F001", 41, [item("Servicio de consultoría", "1", "100")]))
    detail = open_detail(qtbot, context, voucher_id)
    detail.cdr_view.set_xml("")
    assert engine._voids.consulted_cdr(voucher_id) is None
    detail.consult_button.click()
    assert not detail.consult_button.isEnabled()  # asked on a worker
    qtbot.waitUntil(lambda: detail.banner.tone == "success", timeout=30_000)
    stored = engine._voids.consulted_cdr(voucher_id)
    assert stored is not None and cdr.read_zip(stored["cdr_zip"]).referencia == "F001-41"
    said = detail.banner.text.text()
    assert f"código {stored['codigo']}" in said and stored["descripcion"] in said and "se guardó" in said
    assert "F001-41" in detail.cdr_view.toPlainText() and "ApplicationResponse" in detail.cdr_view.toPlainText()
    assert detail.consult_button.isEnabled()


def test_consultar_cdr_refused_by_sunat_says_its_code_in_spanish(qtbot, context, engine, voiding):
    voucher_id = issued(engine, factura("F001", 42, [item("Servicio de consultoría", "1", "100")]))
    detail = open_detail(qtbot, context, voucher_id)
    voiding.fail_next("fault:0102", operation="getStatusCdr")
    detail.consult_button.click()
    qtbot.waitUntil(lambda: detail.banner.tone == "error", timeout=30_000)
    assert "F001-42 (código 0102)" in detail.banner.text.text()
    assert engine._voids.consulted_cdr(voucher_id) is None


def test_the_detail_lists_the_bajas_of_the_voucher(qtbot, context, engine, voiding):
    voucher_id = issued(engine, factura("F001", 12, [item("Servicio de consultoría", "1", "100")]))
    outcome = engine.invoicing.void(voucher_id, "ERROR EN EL RUC DEL CLIENTE")
    detail = open_detail(qtbot, context, voucher_id)
    shown = [detail.summary_form.itemAt(i).widget().text() for i in range(detail.summary_form.count())
             if detail.summary_form.itemAt(i).widget()]
    assert "Bajas y resúmenes:" in shown
    assert f"• {outcome.ident} (ticket {outcome.ticket}): aceptado por SUNAT. Motivo: ERROR EN EL RUC DEL CLIENTE" \
        in shown


def test_a_baja_refused_at_the_front_door_is_said_in_the_dialog(qtbot, context, engine, voiding):
    voucher_id = issued(engine, factura("F001", 13, [item("Servicio de consultoría", "1", "100")]))
    detail = open_detail(qtbot, context, voucher_id)
    voiding.fail_next("fault:0154", operation="sendSummary")
    dialog = detail.void()
    dialog.motivo.setText("ERROR EN EL RUC")
    dialog.send_button.click()
    qtbot.waitUntil(lambda: dialog.banner.tone == "error", timeout=30_000)
    assert "(código 0154)" in dialog.banner.text.text() and dialog.outcome is None and dialog.isVisible()
    wait_idle(qtbot, context.workers)
    detail.reload()
    wait_idle(qtbot, context.workers)
    assert detail.status_badge.property("status") == statuses.ACEPTADO and detail.void_button.isEnabled()


def test_a_detail_opened_while_the_ticket_is_pending_shows_it_and_follows_it(qtbot, context, engine, voiding):
    voucher_id = issued(engine, boleta("B001", 9, [item("Polo de algodón", "1", "59")], receptor=DNI_CUSTOMER))
    voiding.summaries.hold()
    outcome = engine.invoicing.void(voucher_id, "VENTA CANCELADA", wait=False)  # e.g. from `yupana anular --no-esperar`
    detail = open_detail(qtbot, context, voucher_id)
    assert detail.void_state.isVisible() and detail.void_state.text().strip() == "Baja por confirmar"
    assert outcome.ident in detail.void_state.toolTip() and not detail.void_button.isEnabled()
    voiding.summaries.release()
    qtbot.waitUntil(lambda: detail.status_badge.property("status") == statuses.ANULADO, timeout=15_000)
    assert not detail.void_state.isVisible()
