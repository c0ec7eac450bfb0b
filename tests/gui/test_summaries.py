"""«Resúmenes y bajas»: each RA/RC with its ticket and outcome, refreshed by the engine's events, and «Enviar resumen
diario» for a chosen day, against the SUNAT sandbox of «Modo sandbox»."""

from __future__ import annotations

import datetime as dt

from PySide6.QtCore import QDate

from app.core.invoicing import statuses
from app.core.platform import clock
from app.gui.summaries import COLUMNS, SummariesPage
from tests.helpers.base import ISSUER_RUC
from tests.helpers.gui import open_widget, wait_idle
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import DNI_CUSTOMER, boleta, factura, item


def cell(page: SummariesPage, row: int, column: str) -> str:
    return page.table.item(row, COLUMNS.index(column)).text()


def signed_only(engine, request: dict) -> int:
    """A boleta generated and signed, not sent one by one: the day's resumen reports it."""
    xml = engine.invoicing.generate_xml(request).xml
    certificado_id = engine.invoicing.default_certificate(ISSUER_RUC).certificado_id
    engine.invoicing.sign({"xml": xml, "certificado_id": certificado_id})
    return engine.invoicing.find_voucher(f"{request['serie']}-{request['numero']}")


def test_the_page_lists_each_baja_and_follows_its_ticket(qtbot, context, engine, voiding):
    page = open_widget(qtbot, context, SummariesPage, show=True)
    assert page.table.rowCount() == 0 and "Todavía no hay" in page.empty.text()
    voucher_id = issued(engine, factura("F001", 7, [item("Servicio de consultoría", "1", "100")]))
    voiding.summaries.hold()
    outcome = engine.invoicing.void(voucher_id, "ERROR EN EL RUC DEL CLIENTE", wait=False)
    qtbot.waitUntil(lambda: page.table.rowCount() == 1 and cell(page, 0, "Ticket") == outcome.ticket,
                    timeout=10_000)  # the event told the page: no «Actualizar» needed
    today = clock.today()
    assert cell(page, 0, "Identificador") == f"RA-{today:%Y%m%d}-1"
    assert cell(page, 0, "Documento") == "Comunicación de baja" and cell(page, 0, "Comprobantes") == "F001-7"
    assert cell(page, 0, "Fecha") == today.strftime("%d/%m/%Y")
    assert page.state_of(0) == statuses.SUBMISSION_PENDING
    assert page.table.cellWidget(0, COLUMNS.index("Estado")).text().strip() == "Pendiente"
    voiding.summaries.release()
    qtbot.waitUntil(lambda: page.state_of(0) == statuses.SUBMISSION_DONE, timeout=15_000)
    assert page.table.cellWidget(0, COLUMNS.index("Estado")).text().strip() == "Aceptado"
    assert cell(page, 0, "Respuesta de SUNAT").startswith("0: ") and "aceptada" in cell(page, 0, "Respuesta de SUNAT")
    assert engine.invoicing.voucher(voucher_id).status == statuses.ANULADO


def test_a_rejected_baja_shows_sunats_code_and_reason(qtbot, context, engine, voiding):
    voucher_id = issued(engine, factura("F001", 11, [item("Servicio de consultoría", "1", "100")]))
    voiding.fail_next("reject:2375", operation="sendSummary")
    outcome = engine.invoicing.void(voucher_id, "ERROR EN EL MONTO")
    assert outcome.state == statuses.SUBMISSION_FAILED
    page = open_widget(qtbot, context, SummariesPage)
    assert page.state_of(0) == statuses.SUBMISSION_FAILED
    assert page.table.cellWidget(0, COLUMNS.index("Estado")).text().strip() == "Rechazado"
    assert cell(page, 0, "Respuesta de SUNAT") == f"2375: {outcome.descripcion}"


def test_enviar_resumen_diario_reports_the_days_boletas(qtbot, context, engine, voiding):
    first = signed_only(engine, boleta("B002", 1, [item("Polo de algodón", "2", "59")], receptor=DNI_CUSTOMER))
    second = signed_only(engine, boleta("B002", 2, [item("Gorra", "1", "25")]))
    page = open_widget(qtbot, context, SummariesPage, show=True)
    page.day.setDate(QDate(clock.today()).addDays(-1))  # nothing that day: the engine's words, nothing sent
    page.send_button.click()
    qtbot.waitUntil(lambda: page.banner.tone != "", timeout=10_000)
    assert "No hay boletas firmadas" in page.banner.text.text() and page.table.rowCount() == 0
    page.day.setDate(QDate(clock.today()))
    page.send_button.click()
    assert not page.send_button.isEnabled()  # sent on a worker
    qtbot.waitUntil(lambda: page.table.rowCount() == 1 and page.state_of(0) == statuses.SUBMISSION_DONE,
                    timeout=30_000)
    assert cell(page, 0, "Documento") == "Resumen diario" and cell(page, 0, "Identificador").startswith("RC-")
    assert cell(page, 0, "Comprobantes") == "B002-1, B002-2"
    assert "Resumen diario enviado a SUNAT" in page.banner.text.text() and cell(page, 0, "Identificador") in \
        page.banner.text.text()
    assert engine.invoicing.voucher(first).status == engine.invoicing.voucher(second).status == statuses.ACEPTADO
    wait_idle(qtbot, context.workers)
    assert page.send_button.isEnabled()


def test_the_page_is_a_section_of_the_main_window(qtbot, window):
    page = window.show_section("Resúmenes y bajas")
    wait_idle(qtbot, window.workers)
    assert isinstance(page, SummariesPage) and page.table.rowCount() == 0


def test_the_day_comes_from_the_apps_clock(qtbot, context):
    instant = dt.datetime(2026, 11, 23, 21, 30, tzinfo=clock.PERU)  # already the 24th in UTC
    with clock.frozen(instant):
        page = open_widget(qtbot, context, SummariesPage)
    assert page.day.date().toPython() == dt.date(2026, 11, 23) == page.day.maximumDate().toPython()
