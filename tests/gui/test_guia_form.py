"""«Nueva guía de remisión» (issue 36, point 4): opened from the Comprobantes page and «desde un comprobante» (a
factura's detail: its customer, the issuer's address and the lines copied by the engine). The acceptance: a guía
issued from a factura in the window ends «Aceptada» (the GRE sandbox answers as SUNAT's REST platform) and its
PDF's text (pdftotext) and QR (zbarimg) read back and match the guía and the CDR's link."""

from __future__ import annotations

from lxml import etree

from app.core.api import statuses
from app.gui.guia_form import GuiaForm
from app.gui.vouchers import VouchersPage
from tests.gui.test_catalog_gui import _choose as choose
from tests.gui.test_catalog_gui import popup_notices
from tests.gui.test_pdf import open_detail
from tests.helpers.base import ISSUER_RUC
from tests.helpers.gui import open_widget, save_pdf, wait_idle
from tests.helpers.guia_matrix import CARRIER_RUC, DRIVERS, SUPPLIER_RUC
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
    # the engine names the first field it cannot read; the window says it with its own label, under the field too
    assert "«Peso bruto total»" in form.banner.text.text() and "peso_bruto" not in form.banner.text.text()
    assert "«Peso bruto total»" in form.errors.visible()["peso_bruto"]


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


def open_empty(qtbot, context) -> GuiaForm:
    page = open_widget(qtbot, context, VouchersPage)
    form = page.new_guia()
    qtbot.waitUntil(lambda: form.emisor.count() == 1, timeout=10_000)
    return form


def type_and_choose(qtbot, completion, typed: str) -> None:
    """Type into the completion's field, as a person does, and take the first suggestion."""
    completion.line.setFocus()
    qtbot.keyClicks(completion.line, typed)
    choose(qtbot, completion)


def issue_from(qtbot, context, form: GuiaForm) -> None:
    form.emit_button.click()
    qtbot.waitUntil(lambda: form.emission is not None or form.banner.isVisible(), timeout=20_000)
    wait_idle(qtbot, context.workers)
    assert form.emission is not None, form.banner.text.text() + form.banner.details.toPlainText()


def type_carrier_guia(form: GuiaForm) -> None:
    """A transportista's guía (31): the issuer carries a supplier's goods to a customer, two vehicles with their TUC
    (test data: tests/helpers/guia_matrix.transportista)."""
    form.tipo.setCurrentIndex(form.tipo.findData("31"))
    form.remitente_tipo.setCurrentIndex(form.remitente_tipo.findData("6"))
    form.remitente_numero.setText(SUPPLIER_RUC)
    form.remitente_nombre.setText("AGRICOLA VALLE VERDE S.A.")
    form.pagador_flete.setCurrentIndex(form.pagador_flete.findData("remitente"))
    form.tipo_documento.setCurrentIndex(form.tipo_documento.findData("6"))
    form.numero_documento.setText(CUSTOMER_RUC)
    form.razon_social.setText(CUSTOMER_NAME)
    form.partida_ubigeo.setText("040101")
    form.partida_direccion.setText("CALLE MERCADERES 210, AREQUIPA")
    form.add_line({"descripcion": "Cajas de palta Hass", "cantidad": "120", "unidad": "BX"})
    type_transport(form)
    form.tuc.setText("15M21028552E")
    form.vehicles[1].placa.setText("C3D-456")
    form.vehicles[1].tuc.setText("15M21028553F")
    form.transportista_mtc.setText("151234567")


def test_a_transportista_guia_issued_from_the_window_ends_accepted(qtbot, context, engine, company, sunat, guias):
    form = open_empty(qtbot, context)
    assert form.serie.text() == "T001" and not form.sender_box.isVisibleTo(form)
    type_carrier_guia(form)
    assert form.serie.text() == "V001" and form.sender_box.isVisibleTo(form) and form.tuc.isVisibleTo(form)
    assert not form.motivo.isVisibleTo(form) and not form.modalidad.isVisibleTo(form)
    assert form.mtc_label.text() == "Su registro MTC:" and form.transportista_mtc.isVisibleTo(form)
    request = form.request()
    assert "motivo_traslado" not in request and "modalidad_transporte" not in request
    assert request["vehiculos"] == [{"placa": "ABC123", "tuc": "15M21028552E"},
                                    {"placa": "C3D456", "tuc": "15M21028553F"}]
    assert request["remitente"]["numero_documento"] == SUPPLIER_RUC and request["pagador_flete"] == "remitente"
    issue_from(qtbot, context, form)
    assert form.emission is not None and form.emission.outcome is not None
    assert form.emission.outcome.estado == statuses.ACEPTADO, form.state.text()
    assert "V001-1" in form.state.text() and "Aceptada" in form.state.text(), form.state.text()
    xml = engine.invoicing.voucher(form.emission.voucher_id).xml_firmado
    assert "C3D456" in xml and "15M21028553F" in xml and SUPPLIER_RUC in xml


def test_a_remitente_guia_with_secondary_vehicles_public_transport_m1l_and_a_dam(
        qtbot, context, engine, company, sunat, guias):
    """Each field the engine accepts is read from the window: two secondary vehicles, public transport's carrier,
    the M1/L indicator, and an import's DAM (its packages and port); the import ends accepted."""
    form = open_empty(qtbot, context)
    type_transport(form)
    form.vehicles[1].placa.setText("T4X987")
    form.vehicles[2].placa.setText("B7K2Q9")
    assert not form.tuc.isVisibleTo(form)  # a remitente's vehicles carry no TUC
    assert [v["placa"] for v in form.request()["vehiculos"]] == ["ABC123", "T4X987", "B7K2Q9"]
    assert "tuc" not in form.request()["vehiculos"][0]
    form.modalidad.setCurrentIndex(form.modalidad.findData("01"))
    assert form.transportista_ruc.isVisibleTo(form) and not form.placa.isVisibleTo(form)
    form.transportista_ruc.setText(CARRIER_RUC)
    form.transportista_nombre.setText("TRANSPORTES RAPIDOS DEL SUR S.A.C.")
    form.transportista_mtc.setText("151234567")
    assert form.request()["transportista"] == {"ruc": CARRIER_RUC, "razon_social": "TRANSPORTES RAPIDOS DEL SUR S.A.C.",
                                               "registro_mtc": "151234567"}
    form.m1l.setChecked(True)
    assert not form.transportista_ruc.isVisibleTo(form)
    request = form.request()
    assert request["vehiculo_m1_l"] is True and "transportista" not in request and request["vehiculos"] == []
    form.m1l.setChecked(False)
    form.modalidad.setCurrentIndex(form.modalidad.findData("02"))
    assert not form.customs_box.isVisibleTo(form)
    form.motivo.setCurrentIndex(form.motivo.findData("08"))  # importación: to oneself, from the port
    assert form.customs_box.isVisibleTo(form)
    form.numero_documento.setText(company.ruc)
    form.razon_social.setText(company.razon_social)
    form.partida_ubigeo.setText("070101")
    form.partida_direccion.setText("TERMINAL PORTUARIO DEL CALLAO")
    form.dam_tipo.setCurrentIndex(form.dam_tipo.findData("50"))
    form.dam_numero.setText("118-2026-10-012345")
    form.bultos.setValue(40)
    form.puerto_codigo.setText("CLL")
    form.puerto_nombre.setText("CALLAO")
    form.add_line({"descripcion": "Motores eléctricos importados", "cantidad": "40", "unidad": "NIU"})
    request = form.request()
    assert request["documentos_relacionados"] == [{"tipo": "50", "numero": "118-2026-10-012345"}]
    assert request["numero_bultos"] == 40 and request["puerto"]["codigo"] == "CLL"
    issue_from(qtbot, context, form)
    assert form.emission is not None and form.emission.outcome is not None
    assert form.emission.outcome.estado == statuses.ACEPTADO, form.state.text()
    xml = engine.invoicing.voucher(form.emission.voucher_id).xml_firmado
    assert "T4X987" in xml and "B7K2Q9" in xml and "118-2026-10-012345" in xml


@popup_notices
def test_vehicles_drivers_and_carriers_of_a_guia_are_offered_as_one_types_in_the_next(
        qtbot, context, engine, company, sunat, guias):
    """Issue 36, point 4: what a guía used is remembered in the catalogue; the next guía's plate, driver's DNI and
    carrier's RUC offer it as one types, and choosing it fills the rest."""
    first = open_empty(qtbot, context)
    type_carrier_guia(first)  # vehicles ABC123 and C3D456 with their TUC, driver DRIVERS[0]
    issue_from(qtbot, context, first)
    assert [entry.clave for entry in engine.catalog.transport("vehiculo")] in (["ABC123", "C3D456"],
                                                                              ["C3D456", "ABC123"])
    second = open_empty(qtbot, context)
    second.tipo.setCurrentIndex(second.tipo.findData("31"))
    second.show()
    type_and_choose(qtbot, second.completions["vehiculo"][0], "c3")
    assert (second.placa.text(), second.tuc.text()) == ("C3D456", "15M21028553F")
    type_and_choose(qtbot, second.completions["conductor"][0], "4567")
    driver = DRIVERS[0]
    assert (second.conductor_nombres.text(), second.conductor_apellidos.text(), second.conductor_licencia.text()) == (
        driver["nombres"], driver["apellidos"], driver["licencia"])
    # a remitente's public transport: the carrier of an earlier guía, by its RUC's first digits
    assert engine.catalog.transport("transportista") == []  # a transportista's own guía names no carrier
    third = open_empty(qtbot, context)
    third.modalidad.setCurrentIndex(third.modalidad.findData("01"))
    third.transportista_ruc.setText(CARRIER_RUC)
    third.transportista_nombre.setText("TRANSPORTES RAPIDOS DEL SUR S.A.C.")
    third.transportista_mtc.setText("151234567")
    third.tipo_documento.setCurrentIndex(third.tipo_documento.findData("6"))
    third.numero_documento.setText(CUSTOMER_RUC)
    third.razon_social.setText(CUSTOMER_NAME)
    third.llegada_ubigeo.setText("150132")
    third.llegada_direccion.setText("JR. LOS OLIVOS 456, SAN JUAN DE LURIGANCHO")
    third.peso.setText("80")
    third.add_line({"descripcion": "Arroz extra, saco de 50 kg", "cantidad": "10", "unidad": "BG"})
    issue_from(qtbot, context, third)
    fourth = open_empty(qtbot, context)
    fourth.modalidad.setCurrentIndex(fourth.modalidad.findData("01"))
    fourth.show()
    type_and_choose(qtbot, fourth.completions["transportista"][0], "2013")
    assert (fourth.transportista_ruc.text(), fourth.transportista_nombre.text(), fourth.transportista_mtc.text()) == (
        CARRIER_RUC, "TRANSPORTES RAPIDOS DEL SUR S.A.C.", "151234567")


@popup_notices
def test_departure_and_arrival_points_of_a_guia_are_offered_as_one_types_the_address_in_the_next(
        qtbot, context, engine, company, sunat, guias):
    """Issue 36, point 4: a guía's departure and arrival points (ubigeo, address, establishment code) are remembered;
    in the next guía, typing the first words of an address (in any case, without its punctuation) offers them, and
    choosing one fills its ubigeo, address and establishment code, sent with the request."""
    first = open_empty(qtbot, context)  # between the issuer's own establishments (motive 04): both codes asked
    first.motivo.setCurrentIndex(first.motivo.findData("04"))
    first.tipo_documento.setCurrentIndex(first.tipo_documento.findData("6"))
    first.numero_documento.setText(ISSUER_RUC)
    first.razon_social.setText("COMERCIAL YUPANA S.A.C.")
    first.add_line({"descripcion": "Cemento Portland tipo I, bolsa de 42.5 kg", "cantidad": "25", "unidad": "BG"})
    type_transport(first)
    assert (first.partida_ubigeo.text(), first.partida_direccion.text()) == ("150101", "AV. ABANCAY 123")
    first.places["partida"].codigo.setText("0000")
    first.llegada_direccion.setText("Jr. Los Olivos 456 - San Juan de Lurigancho")
    first.places["llegada"].codigo.setText("0002")
    issue_from(qtbot, context, first)
    assert first.emission is not None and first.emission.outcome is not None
    assert first.emission.outcome.estado == statuses.ACEPTADO, first.state.text()
    assert sorted(entry.codigo_establecimiento for entry in engine.catalog.transport("punto")) == ["0000", "0002"]

    second = open_empty(qtbot, context)
    second.show()
    completion = second.completions["punto"][1]
    type_and_choose(qtbot, completion, "jr los oli")
    assert [entry.direccion for entry in completion.matches] == ["Jr. Los Olivos 456 - San Juan de Lurigancho"]
    llegada = second.places["llegada"]
    assert (llegada.ubigeo.text(), llegada.direccion.text(), llegada.codigo.text()) == (
        "150132", "Jr. Los Olivos 456 - San Juan de Lurigancho", "0002")
    assert llegada.owner.text() == ""  # the issuer's own establishment: no other RUC named
    second.partida_direccion.clear()  # the issuer's address, prefilled: typed over
    type_and_choose(qtbot, second.completions["punto"][0], "AV. ABAN")
    assert (second.partida_ubigeo.text(), second.places["partida"].codigo.text()) == ("150101", "0000")
    request = second.request()
    assert request["partida"] == {"ubigeo": "150101", "direccion": "AV. ABANCAY 123", "codigo_establecimiento": "0000",
                                  "ruc": ISSUER_RUC}
    assert request["llegada"]["codigo_establecimiento"] == "0002"
    assert request["llegada"]["ruc"] == ISSUER_RUC
    llegada.direccion.setFocus()
    with qtbot.waitSignal(completion.answered, timeout=10_000):  # the search of what was typed has answered
        qtbot.keyClicks(llegada.direccion, " int. 2")  # the address typed on: no longer the remembered point
    wait_idle(qtbot, context.workers)
    assert completion.matches == []
    assert "ruc" not in second.request()["llegada"]


def test_the_engines_problems_are_shown_under_the_windows_labels(qtbot, context, company):
    """The engine names the request's fields («vehiculos[1].placa», «conductores[0].licencia»); the window shows each
    problem under its own field and in the banner with its labels («Vehículo secundario 1 (placa)», «Licencia de
    conducir»), never the engine's names."""
    form = open_empty(qtbot, context)
    form.tipo_documento.setCurrentIndex(form.tipo_documento.findData("6"))
    form.numero_documento.setText(CUSTOMER_RUC)
    form.razon_social.setText(CUSTOMER_NAME)
    form.add_line({"descripcion": "Arroz extra, saco de 50 kg", "cantidad": "10", "unidad": "BG"})
    type_transport(form)
    form.vehicles[1].placa.setText("T4")  # too short (SUNAT's 2567)
    form.conductor_licencia.setText("Q4")  # too short (SUNAT's 2573)
    form.llegada_ubigeo.setText("999999")  # no such ubigeo (SUNAT's 3368)
    form.emit_button.click()
    qtbot.waitUntil(lambda: form.banner.isVisible(), timeout=10_000)
    wait_idle(qtbot, context.workers)
    assert form.emission is None
    shown = form.errors.visible()
    assert "«Vehículo secundario 1 (placa)»" in shown["vehiculos[1].placa"]
    assert "«Licencia de conducir»" in shown["conductores[0].licencia"]
    assert "«Llegada (ubigeo)»" in shown["llegada.ubigeo"]
    assert form.errors.labels["vehiculos[1].placa"].isVisibleTo(form)
    assert not form.errors.labels["vehiculos[0].placa"].text()  # the principal vehicle is fine
    banner = form.banner.text.text() + form.banner.details.toPlainText()
    assert "«Vehículo secundario 1 (placa)»" in banner and "(SUNAT 2567)" in banner
    for engine_name in ("vehiculos[1]", "conductores[0]", "llegada.ubigeo"):
        assert engine_name not in banner and all(engine_name not in text for text in shown.values())
    form.vehicles[1].placa.setText("T4X987")  # corrected: issuing again clears what was fixed
    form.conductor_licencia.setText("Q45678912")
    form.llegada_ubigeo.setText("150132")
    form.emit_button.click()
    assert form.errors.visible() == {} and not form.banner.isVisible()  # a new try starts clean
    wait_idle(qtbot, context.workers)


@needs_poppler
def test_a_guia_is_sent_by_whatsapp_with_its_own_pdf(qtbot, context, engine, company, sunat, guias, gateway,
                                                      tmp_path):
    """«Enviar por WhatsApp» from the guía's detail: the guía's PDF, whole, reaches the messaging sandbox (an
    Evolution API v2 stand-in, app/sandbox/gateway.py), with a text that names the guía and no amount."""
    import hashlib

    engine.admin.config_set("listener_port", "0")
    engine.messaging.start_listener()
    gateway.configure(engine)
    form = open_empty(qtbot, context)
    type_carrier_guia(form)
    issue_from(qtbot, context, form)
    assert form.emission is not None and form.emission.outcome is not None
    assert form.emission.outcome.estado == statuses.ACEPTADO, form.state.text()
    guia = form.open_detail()
    qtbot.waitUntil(lambda: guia.whatsapp_button.isEnabled(), timeout=10_000)
    guia.whatsapp_button.click()
    dialog = guia.send_dialog
    qtbot.waitUntil(lambda: dialog.send_button.isEnabled(), timeout=10_000)
    text = dialog.text.toPlainText()
    assert "guía de remisión transportista electrónica V001-1" in text and "S/" not in text, text
    dialog.number.setText("987 654 321")
    dialog.send_button.click()
    qtbot.waitUntil(lambda: dialog.sent is not None, timeout=15_000)
    [sent] = gateway.wait_sent(1)
    printed = engine.invoicing.pdf(form.emission.voucher_id)
    assert sent["number"].endswith("987654321") and sent["fileName"] == printed.name
    assert sent["media_sha256"] == hashlib.sha256(printed.content).hexdigest()  # the guía's own PDF, whole
    copy = tmp_path / printed.name
    copy.write_bytes(printed.content)
    assert "GUÍA DE REMISIÓN TRANSPORTISTA" in pdf_text(copy) and "V001-1" in pdf_text(copy)
    assert "Enviado por WhatsApp" in guia.banner.text.text()
