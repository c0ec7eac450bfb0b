"""«Nuevo comprobante» with the sale's terms a shop uses (issue 37): a factura that deducts an advance invoiced
before, and one with percepción, made in the form, accepted by the SUNAT sandbox, and their PDFs (read back with
pdftotext) stating what SUNAT's printed voucher states: the advance deducted (which voucher, how much) and the
payable amount; the percepción, its rate, and the total with it. Also the due date, the delivery address and the
retención read into the request."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from app.core.platform import clock
from app.gui.voucher_form import VoucherForm
from tests.helpers.base import ISSUER_RUC
from tests.helpers.gui import open_widget, wait_idle
from tests.helpers.oracles import needs_poppler, pdf_text
from tests.helpers.voucher_matrix import CUSTOMER_RUC, factura, item

CUSTOMER = "BODEGA SAN MARTÍN S.A.C."


def filled(qtbot, context, lines) -> VoucherForm:
    form = open_widget(qtbot, context, VoucherForm, show=True)
    form.fill_example(CUSTOMER_RUC, CUSTOMER, lines)
    return form


def emitted_pdf(qtbot, context, engine, form, tmp_path) -> str:
    form.emit_button.click()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert form.outcome is not None, form.banner.text.text()
    assert form.outcome.estado == "aceptado", form.outcome
    serie_numero = form.outcome.nombre_archivo.removesuffix(".xml").removesuffix(".zip").split("-", 2)[2]
    voucher_id = engine.invoicing.find_voucher(serie_numero, tipo="01")
    target = tmp_path / f"{serie_numero}.pdf"
    target.write_bytes(engine.invoicing.pdf(voucher_id, "a4").content)
    return pdf_text(target)


@needs_poppler
def test_a_factura_deducting_an_advance_made_in_the_form(qtbot, context, sunat, engine, tmp_path):
    advance = engine.invoicing.issue(factura("F001", 90, [item("Anticipo: juego de comedor", "1", "200")]))
    assert advance.sent is not None and advance.sent.estado == "aceptado"  # the advance, invoiced before (S/ 236)
    form = filled(qtbot, context, [("Juego de comedor de cedro", "1", "1000.00", "10")])
    form.terms.add_anticipo("F001-90", "236.00")
    assert form.total_labels["anticipos"].text() == "S/ 236.00" and form.total_labels["anticipos"].isVisible()
    assert form.total_labels["total"].text() == "S/ 944.00"  # 1 180.00 − 236.00
    assert form.request()["anticipos"] == [{"tipo": "02", "serie": "F001", "numero": 90, "monto": Decimal("236.00")}]
    text = emitted_pdf(qtbot, context, engine, form, tmp_path)
    assert "Anticipo F001-90 - S/ 236.00" in text  # which advance, and what it deducts
    assert "IMPORTE TOTAL S/ 944.00" in text.upper()
    assert "NOVECIENTOS CUARENTA Y CUATRO CON 00/100 SOLES" in text.upper()


@needs_poppler
def test_a_factura_with_percepcion_made_in_the_form(qtbot, context, sunat, engine, tmp_path):
    form = filled(qtbot, context, [("Cerveza en caja x 12", "10", "50.00", "10")])
    form.terms.percepcion.setCurrentIndex(form.terms.percepcion.findData("51"))
    assert form.total_labels["total"].text() == "S/ 590.00"  # the percepción is not part of the total
    assert form.total_labels["percepcion"].text() == "S/ 11.80"  # 2 % of 590.00
    assert form.total_labels["total_con_percepcion"].text() == "S/ 601.80"
    text = emitted_pdf(qtbot, context, engine, form, tmp_path)
    assert "IMPORTE TOTAL S/ 590.00" in text.upper()
    assert "Percepción (2 %) S/ 11.80" in text
    assert "Total con percepción S/ 601.80" in text


def test_due_date_delivery_and_retention_read_into_the_request(qtbot, context, company):
    form = filled(qtbot, context, [("Servicio de mantenimiento", "1", "1000.00", "10")])
    due = clock.today() + dt.timedelta(days=30)
    form.terms.vence.setChecked(True)
    form.terms.vencimiento.setDate(due)
    form.terms.entrega.setText("Av. Los Próceres 123, Lima")
    form.terms.entrega_ubigeo.setText("150101")
    form.terms.retencion.setChecked(True)
    assert form.total_labels["retencion"].text() == "S/ 35.40"  # 3 % of 1 180.00
    request = form.request()
    assert request["fecha_vencimiento"] == due
    assert request["lugar_entrega"] == {"direccion": "Av. Los Próceres 123, Lima", "ubigeo": "150101"}
    assert request["retencion"] == {}
    form.terms.add_anticipo("F001", "abc")  # neither a serie-número nor an amount: said, under the advances
    form.emit_voucher()
    assert "El anticipo «F001» debe escribirse como la serie-número" in form.errors.visible()["anticipos"]
    form.tipo.setCurrentIndex(form.tipo.findData("03"))  # a boleta: no retención (its customer is no agent)
    assert not form.terms.retencion.isEnabled() and "retencion" not in form.terms.fields("03")[0]
    assert form.emisor.currentData() == ISSUER_RUC


def test_the_terms_are_kept_in_the_draft(qtbot, context, company):
    form = filled(qtbot, context, [("Juego de comedor de cedro", "1", "1000.00", "10")])
    form.terms.add_anticipo("F001-90", "236.00")
    form.terms.percepcion.setCurrentIndex(form.terms.percepcion.findData("52"))
    form.terms.vence.setChecked(True)
    form.terms.vencimiento.setDate(clock.today() + dt.timedelta(days=15))
    form.terms.entrega.setText("Jr. Amazonas 456, Iquitos")
    form.terms.entrega_ubigeo.setText("160101")
    content = form.draft_content()
    again = open_widget(qtbot, context, VoucherForm, show=True)
    again.load_draft(content)
    assert again.draft_content()["terminos"] == content["terminos"]
    terms = again.terms.fields("01")[0]
    assert terms["anticipos"][0]["serie"] == "F001" and terms["percepcion"] == {"codigo": "52"}
    assert terms["lugar_entrega"] == {"direccion": "Jr. Amazonas 456, Iquitos", "ubigeo": "160101"}
    assert again.total_labels["total"].text() == "S/ 944.00"
