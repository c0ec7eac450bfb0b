"""Emitir against the SUNAT sandbox: accepted, refused with SUNAT's reason, the loop turning meanwhile. The form
and the detail show the core's outcome (app.core.api.EmissionOutcome) and the core's CDR text, as they come."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QTimer

from app.gui.voucher_form import VoucherForm
from app.gui.vouchers import VouchersPage
from app.gui.xml_view import indented
from tests.helpers.gui import open_widget, wait_idle


def filled_form(qtbot, context) -> VoucherForm:
    form = open_widget(qtbot, context, VoucherForm, show=True)
    form.fill_example("20601030013", "BODEGA SAN MARTÍN S.A.C.", [("Arroz extra 5 kg", "2", "21.50", "10")])
    return form


def test_emit_a_factura_and_see_it_accepted(qtbot, context, sunat, engine):
    form = filled_form(qtbot, context)
    form.emit_button.click()
    assert not form.emit_button.isEnabled()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert form.outcome is not None, form.banner.text.text()
    assert form.outcome.estado == "aceptado"
    assert form.result_badge.text().strip() == "Aceptado por SUNAT"
    assert form.progress.value() == form.progress.maximum()
    page = VouchersPage(context)
    qtbot.addWidget(page)
    wait_idle(qtbot, context.workers)
    assert page.status_of(0) == "aceptado"
    detail = page.open_detail(0)
    qtbot.waitUntil(lambda: bool(detail.record))
    assert "ApplicationResponse" in detail.cdr_view.toPlainText()
    core = engine.invoicing.voucher_cdr(detail.voucher_id)  # the CDR's XML as the core reads it, shown as it is
    assert core is not None and detail.cdr_view.toPlainText() == indented(core.xml_text)
    assert detail.record.digest_value in [detail.summary_form.itemAt(i).widget().text()
                                          for i in range(detail.summary_form.count())
                                          if detail.summary_form.itemAt(i).widget()]


def test_refused_submission_shows_sunats_reason_in_plain_words(qtbot, context, sunat, engine, company):
    engine.invoicing.set_sol_credentials(company.ruc, "MODDATOS", "clave-equivocada")
    form = filled_form(qtbot, context)
    form.emit_button.click()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert form.outcome is not None, form.banner.text.text()
    assert form.outcome.codigo_respuesta == "0102"
    assert form.result_badge.text().strip() == "SUNAT no lo recibió"
    assert "0102" in form.result_text.text() and "reenvíelo" in form.result_text.text()


def test_event_loop_turns_while_the_sandbox_holds_the_answer(qtbot, context, sunat):
    form = filled_form(qtbot, context)
    ticks = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()
    sunat.fail_next("hang")
    try:
        form.emit_button.click()
        qtbot.waitUntil(sunat.received.is_set, timeout=15_000)  # the request is at SUNAT, held there
        start = len(ticks)
        qtbot.waitUntil(lambda: len(ticks) >= start + 20, timeout=5000)
        assert form.outcome is None and not form.emit_button.isEnabled()
        assert form.step_label.text() == "Enviando a SUNAT…"
    finally:
        sunat.release()
    wait_idle(qtbot, context.workers, timeout=30_000)
    timer.stop()
    assert form.emit_button.isEnabled()


def test_resend_from_the_detail_after_fixing_the_credentials(qtbot, context, sunat, engine, company):
    engine.invoicing.set_sol_credentials(company.ruc, "MODDATOS", "clave-equivocada")
    form = filled_form(qtbot, context)
    form.emit_button.click()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert form.outcome.estado == "no_enviado"
    engine.invoicing.set_sol_credentials(company.ruc, "MODDATOS", "moddatos")
    page = VouchersPage(context)
    qtbot.addWidget(page)
    wait_idle(qtbot, context.workers)
    detail = page.open_detail(0)
    wait_idle(qtbot, context.workers)
    assert detail.resend_button.isEnabled()
    detail.resend_button.click()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert detail.banner.tone == "success", detail.banner.text.text()
    assert detail.status_badge.property("status") == "aceptado" and detail.status_badge.text().strip() == "Aceptado"
    assert not detail.resend_button.isEnabled()


def test_sunat_down_leaves_it_pending_and_the_status_bar_counts_it(qtbot, engine, company, sunat_window):
    window, sunat = sunat_window
    sunat.fail_next("500", count=50)
    form = window.show_section("Comprobantes").new_voucher()
    wait_idle(qtbot, window.workers)
    form.fill_example("20601030013", "BODEGA SAN MARTÍN S.A.C.", [("Arroz extra 5 kg", "2", "21.50", "10")])
    form.emit_button.click()
    wait_idle(qtbot, window.workers, timeout=60_000)
    assert form.outcome is not None, form.banner.text.text()
    assert form.outcome.estado == "pendiente"
    assert form.result_badge.text().strip() == "Pendiente de envío"
    said = form.result_text.text()  # one message: the queue resends it; nothing for the person to do
    assert f"Motivo: {form.outcome.motivo_pendiente}." in said  # the core's reason, as it comes
    assert "no hace falta volver a enviarlo" in said and "xml_firmado" not in said and "Vuelva a enviar" not in said
    qtbot.waitUntil(lambda: window.pending_label.text() == "Envíos pendientes: 1", timeout=10_000)
    form.close()


@pytest.fixture
def sunat_window(qtbot, engine, company):
    from app.gui.main_window import MainWindow

    main = MainWindow(engine, first_run=False)
    qtbot.addWidget(main)
    main.show()
    main.context.sandboxes.start()
    engine.invoicing.create_test_certificate(company.ruc)
    wait_idle(qtbot, main.workers)
    yield main, main.context.sandboxes.running["sunat"]
    main.close()


def test_a_rejected_factura_shows_sunats_reason_in_plain_words(qtbot, context, sunat, engine):
    sunat.fail_next("reject:2800")  # the sandbox answers a rejection CDR, as SUNAT shapes one
    form = filled_form(qtbot, context)
    form.emit_button.click()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert form.outcome is not None, form.banner.text.text()
    assert form.outcome.estado == "rechazado"
    assert form.outcome.codigo_respuesta == "2800"
    assert form.result_badge.text().strip().startswith("Rechazado")
    assert "2800" in form.result_text.text()
    assert "documento" in form.result_text.text().lower()  # SUNAT's own words for 2800, not just the number
    page = VouchersPage(context)
    qtbot.addWidget(page)
    wait_idle(qtbot, context.workers)
    assert page.status_of(0) == "rechazado" == form.outcome.estado  # the state stored is the one shown


def test_emitir_takes_the_next_number_when_another_desk_issued_the_one_proposed(qtbot, context, sunat, engine, company):
    """Several desks (issue 34): the form proposed F001-1, another desk issued it meanwhile; «Emitir» stores the
    voucher with the serie's next number (no 409 to the cashier) and the form shows the number it got."""
    form = filled_form(qtbot, context)
    qtbot.waitUntil(lambda: form.proposed_numero == 1)
    other = engine.invoicing.issue({"tipo": "01", "serie": "F001", "numero": 1, "emisor": {"ruc": company.ruc},
                                    "receptor": {"ruc": "20601030013", "razon_social": "OTRA CAJA S.A.C."},
                                    "items": [{"descripcion": "Azúcar 1 kg", "cantidad": "1", "precio_unitario": "4.20"}]})
    assert other.outcome.estado == "aceptado"
    form.emit_button.click()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert form.outcome is not None, form.banner.text.text()
    assert form.outcome.estado == "aceptado" and form.outcome.nombre_archivo.endswith("-F001-2.xml")
    assert form.numero.value() == 2
    typed = engine.invoicing.vouchers(search="F001-2")
    assert [v.receptor_nombre for v in typed] == ["BODEGA SAN MARTÍN S.A.C."]
