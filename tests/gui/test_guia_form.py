"""«Nueva guía de remisión» (issue 36, point 4): opened from the Comprobantes page and «desde un comprobante» (a
factura's detail: its customer, the issuer's address and the lines copied by the engine). The acceptance: a guía
issued from a factura in the window ends «Aceptada» (the GRE sandbox answers as SUNAT's REST platform) and its
PDF's text (pdftotext) and QR (zbarimg) read back and match the guía and the CDR's link."""

from __future__ import annotations

from lxml import etree

from app.core.api import statuses
from app.gui.guia_form import GuiaForm
from app.gui.vouchers import VouchersPage
from tests.gui.test_pdf import open_detail
from tests.helpers.gui import open_widget, save_pdf, wait_idle
from tests.helpers.guia_matrix import DRIVERS
from tests.helpers.oracles import decode_qr, needs_poppler, pdf_text
from tests.helpers.voucher_matrix import CUSTOMER_NAME, CUSTOMER_RUC, factura, item

CBC = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
LINES = [item("Cemento Portland tipo I, bolsa de 42.5 kg", "25", "25.00", codigo="CEM-42", unidad="BG"),
         item("Fierro corrugado 1/2 x 9 m", "40", "32.50")]


def type_transport(form: GuiaForm) -> None:
    """What the factura does not say: where the goods go, their weight, the vehicle and the driver."""
    form.llegada_ubigeo.setText("150132")
    form.llegada_direccion.setText("JR. LOS OLIVOS 456, SAN JUAN DE LURIGANCHO")
    form.peso.setText("1250.5")
    form.placa.setText("ABC-123")
    driver = DRIVERS[0]
    form.conductor_dni.setText(driver["numero_documento"])
    form.conductor_nombres.setText(driver["nombres"])
    form.conductor_apellidos.setText(driver["apellidos"])
    form.conductor_licencia.setText(driver["licencia"])


@needs_poppler
def test_a_guia_issued_from_a_factura_in_the_window_ends_accepted_with_its_pdf_and_qr(
        qtbot, context, engine, company, sunat, guias, tmp_path):
    issued = engine.invoicing.issue(factura("F001", 1, LINES))
    assert issued.sent is not None and issued.sent.estado == statuses.ACEPTADO, issued.refusal
    detail = open_detail(qtbot, context, issued.voucher_id)
    assert detail.guia_button.isVisible()
    form = detail.new_guia()
    qtbot.waitUntil(lambda: form.lines.rowCount() == 2 and form.emisor.count() > 0, timeout=10_000)
    wait_idle(qtbot, context.workers)
    assert form.numero_documento.text() == CUSTOMER_RUC and form.razon_social.text() == CUSTOMER_NAME
    assert form.partida_ubigeo.text() == company.ubigeo and form.partida_direccion.text() == company.direccion
    assert form.lines.item(0, 1).text() == "Cemento Portland tipo I, bolsa de 42.5 kg"
    assert "Factura F001-1" in form.related_label.text()
    type_transport(form)
    form.emit_button.click()
    qtbot.waitUntil(lambda: form.emission is not None, timeout=20_000)
    wait_idle(qtbot, context.workers)
    assert form.emission is not None
    assert form.emission.outcome is not None and form.emission.outcome.estado == statuses.ACEPTADO, form.state.text()
    assert "T001-1" in form.state.text() and "Aceptada" in form.state.text()
    assert not form.emit_button.isEnabled()  # issued: a second click would issue a second guía
    guia = form.open_detail()
    qtbot.waitUntil(lambda: bool(guia.print_panel.page_labels), timeout=10_000)
    wait_idle(qtbot, context.workers)
    assert guia.title.text() == "Guía de remisión remitente T001-1"
    link = etree.fromstring(engine.invoicing.voucher_cdr(form.emission.voucher_id).xml_text.encode()).findtext(
        f".//{{{CBC}}}DocumentDescription")
    assert link
    target = tmp_path / "guia.pdf"
    save_pdf(qtbot, context, guia.print_panel, target)
    text = pdf_text(target)
    assert "GUÍA DE REMISIÓN REMITENTE ELECTRÓNICA" in text and "T001-1" in text and "01 - Venta" in text
    assert "ABC123 (principal)" in text and "Cemento Portland tipo I, bolsa de 42.5 kg" in text
    assert "F001-1" in text and CUSTOMER_NAME in text
    assert decode_qr(target, tmp_path) == [link]


def test_the_comprobantes_page_opens_an_empty_guia_with_the_issuers_address(qtbot, context, company):
    page = open_widget(qtbot, context, VouchersPage)
    form = page.new_guia()
    qtbot.waitUntil(lambda: form.emisor.count() == 1, timeout=10_000)
    assert form.windowTitle() == "Nueva guía de remisión"
    assert form.emisor.currentData() == company.ruc
    assert form.partida_direccion.text() == company.direccion and form.lines.rowCount() == 0
    form.emit_button.click()  # nothing typed: the engine names what is missing, nothing is issued
    qtbot.waitUntil(lambda: form.banner.isVisible(), timeout=10_000)
    wait_idle(qtbot, context.workers)
    assert form.emission is None and form.emit_button.isEnabled()
    assert "«peso_bruto»" in form.banner.text.text()  # the engine names the first field it cannot read


def test_a_guia_sunat_rejects_is_shown_rejected_with_sunats_code(qtbot, context, company, sunat, guias, gre):
    gre.fail_next("reject:2566")  # SUNAT's GRE platform rejects the guía's ticket (the sandbox plays it)
    page = open_widget(qtbot, context, VouchersPage)
    form = page.new_guia()
    qtbot.waitUntil(lambda: form.emisor.count() == 1, timeout=10_000)
    form.tipo_documento.setCurrentIndex(form.tipo_documento.findData("6"))
    form.numero_documento.setText(CUSTOMER_RUC)
    form.razon_social.setText(CUSTOMER_NAME)
    form.add_line({"descripcion": "Arroz extra, saco de 50 kg", "cantidad": "10", "unidad": "BG"})
    type_transport(form)
    form.emit_button.click()
    qtbot.waitUntil(lambda: form.emission is not None, timeout=20_000)
    wait_idle(qtbot, context.workers)
    assert form.emission is not None and form.emission.outcome is not None
    assert form.emission.outcome.estado == statuses.RECHAZADO
    assert "T001-1" in form.state.text() and "Rechazada" in form.state.text(), form.state.text()
    assert "2566" in form.state.text(), form.state.text()
