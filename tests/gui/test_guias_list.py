"""Guías de remisión in the Comprobantes list (issue 36, point 4): named by their type and found with their own
filter, apart from the facturas."""

from __future__ import annotations

from app.gui.vouchers import VouchersPage
from tests.helpers.gui import open_widget, wait_idle
from tests.helpers.guia_matrix import remitente, transportista
from tests.helpers.voucher_matrix import factura, item


def test_guias_are_listed_by_their_type_and_have_their_own_filter(qtbot, context, engine, company):
    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    for request in (factura("F001", 1, [item("Arroz extra 5 kg", "2", "18.50")]), remitente(1), transportista(1)):
        generated = engine.invoicing.generate_xml(request)
        engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado_id})
    page = open_widget(qtbot, context, VouchersPage)
    wait_idle(qtbot, context.workers)
    shown = {page.text_of(row, 1): page.text_of(row, 0) for row in range(page.model.rowCount())}
    assert shown == {"F001-1": "Factura", "T001-1": "Guía de remisión remitente",
                     "V001-1": "Guía de remisión transportista"}
    for code, number in (("09", "T001-1"), ("31", "V001-1")):
        page.tipo.setCurrentIndex(page.tipo.findData(code))
        qtbot.waitUntil(lambda code=code: page.model.filters.get("tipo") == code)
        wait_idle(qtbot, context.workers)
        assert [page.text_of(row, 1) for row in range(page.model.rowCount())] == [number]
