"""Voucher breadth (issue 37): exports of hospedaje (operation 0202) and of a paquete turístico (0205). Each generated
by operation 1, signed and judged in full by ../shared/tools/sunat_check.py --strict, with XPath checks written from
SUNAT's rules for these operations: every line names its guest with catalogue 55 properties — for 0205 the passport's
country 4000 (3138), name 4007 (3139), document type 4008 (3137) and number 4009 (3136); for 0202 also the country of
residence 4001 (3140), the dates of entry to the country 4002 (3141), to and from the establishment 4003/4004
(3142/3143), of consumption 4006 (3144) and the days of stay 4005 in cbc:DurationMeasure of unit DAY (3145, 4313) —
and the requests refused before sending, each a 400 naming the field and SUNAT's code."""

from __future__ import annotations

import json
from datetime import date

import httpx
import pytest

from tests.core.invoicing import test_voucher_breadth as breadth
from tests.core.invoicing.test_builder_content import _refused
from tests.helpers.voucher_breadth import factura, item
from tests.helpers.voucher_matrix import FOREIGN_CUSTOMER

# The breadth module's fixtures: a voucher generated, signed and judged by SUNAT's checker in-process.
NS, needs_xmlsec = breadth.NS, breadth.needs_xmlsec
oracle, issued, _oracle_reads_the_file_name = breadth.oracle, breadth.issued, breadth._oracle_reads_the_file_name

GUEST = {"nombre": "John Michael Smith", "tipo_documento": "7", "numero_documento": "X1234567",
         "pais_pasaporte": "US"}
STAY = {"pais_residencia": "US", "fecha_ingreso_pais": date(2026, 11, 28), "fecha_ingreso": date(2026, 11, 28),
        "fecha_salida": date(2026, 12, 2), "fecha_consumo": date(2026, 11, 28)}


def _hospedaje(**changes) -> dict:
    line = item("Habitación doble, 4 noches", "4", "180", "40", unidad="DAY")
    line["huesped"] = {**GUEST, **STAY, **changes}
    return factura("F113", 1, [line], receptor=FOREIGN_CUSTOMER, moneda="USD", tipo_operacion="0202")


def _paquete(**changes) -> dict:
    line = item("Paquete Cusco - Machu Picchu, 3 días", "1", "950", "40", unidad="ZZ")
    line["huesped"] = {**GUEST, **changes}
    return factura("F114", 1, [line], receptor=FOREIGN_CUSTOMER, moneda="USD", tipo_operacion="0205")


def _property(line, code: str, tail: str = "cbc:Value") -> str:
    (found,) = line.xpath(f"cac:Item/cac:AdditionalItemProperty[cbc:NameCode='{code}']/{tail}", namespaces=NS)
    return found if isinstance(found, str) else found.text


@needs_xmlsec
def test_an_export_of_hospedaje_names_its_guest_and_stay_as_sunats_rules_for_0202(issued):
    root = issued(_hospedaje())
    assert root.xpath("cbc:InvoiceTypeCode/@listID", namespaces=NS) == ["0202"]
    (line,) = root.xpath("cac:InvoiceLine", namespaces=NS)
    assert _property(line, "4000") == "US"
    assert _property(line, "4001") == "US"
    assert _property(line, "4007") == "John Michael Smith"
    assert _property(line, "4008") == "7"
    assert _property(line, "4009") == "X1234567"
    assert _property(line, "4002", "cac:UsabilityPeriod/cbc:StartDate") == "2026-11-28"
    assert _property(line, "4003", "cac:UsabilityPeriod/cbc:StartDate") == "2026-11-28"
    assert _property(line, "4004", "cac:UsabilityPeriod/cbc:StartDate") == "2026-12-02"
    assert _property(line, "4006", "cac:UsabilityPeriod/cbc:StartDate") == "2026-11-28"
    assert _property(line, "4005", "cac:UsabilityPeriod/cbc:DurationMeasure") == "4"
    assert _property(line, "4005", "cac:UsabilityPeriod/cbc:DurationMeasure/@unitCode") == "DAY"
    # An export: affectation 40 (exportación), no IGV charged.
    assert line.xpath("cac:TaxTotal/cbc:TaxAmount", namespaces=NS)[0].text == "0.00"


@needs_xmlsec
def test_a_paquete_turistico_names_its_guest_as_sunats_rules_for_0205(issued):
    root = issued(_paquete())
    assert root.xpath("cbc:InvoiceTypeCode/@listID", namespaces=NS) == ["0205"]
    (line,) = root.xpath("cac:InvoiceLine", namespaces=NS)
    assert [_property(line, code) for code in ("4000", "4007", "4008", "4009")] == [
        "US", "John Michael Smith", "7", "X1234567"]


def test_an_export_of_hospedaje_without_the_guest_is_refused_naming_the_line(engine, company):
    request = _hospedaje()
    del request["items"][0]["huesped"]
    assert _refused(engine, request)["items[0].huesped"][1] == "3136"


@pytest.mark.parametrize(("missing", "code"), [("pais_residencia", "3140"), ("fecha_ingreso_pais", "3141"),
                                               ("fecha_ingreso", "3142"), ("fecha_salida", "3143"),
                                               ("fecha_consumo", "3144")])
def test_an_export_of_hospedaje_needs_the_stay(engine, company, missing, code):
    request = _hospedaje()
    del request["items"][0]["huesped"][missing]
    assert _refused(engine, request)[f"items[0].huesped.{missing}"][1] == code


@pytest.mark.parametrize(("changes", "field"), [
    ({"nombre": "Jo"}, "items[0].huesped.nombre"),
    ({"tipo_documento": "Z"}, "items[0].huesped.tipo_documento"),
    ({"numero_documento": "X1"}, "items[0].huesped.numero_documento"),
    ({"pais_pasaporte": "USA"}, "items[0].huesped.pais_pasaporte"),
])
def test_a_bad_guest_is_refused_naming_the_field(engine, company, changes, field):
    assert _refused(engine, _paquete(**changes))[field][1] == "4280"


@pytest.mark.parametrize("name", ["nombre", "numero_documento"])
def test_a_guest_text_that_is_not_xml_is_refused(engine, company, name):
    refused = _refused(engine, _paquete(**{name: "AB\x01CD"}))
    assert "caracteres de control" in refused[f"items[0].huesped.{name}"][0]


def test_a_stay_that_ends_before_it_begins_is_refused(engine, company):
    refused = _refused(engine, _hospedaje(fecha_salida=date(2026, 11, 27)))
    assert refused["items[0].huesped.fecha_salida"][1] == "4281"


def test_a_guest_on_another_operation_is_refused(engine, company):
    request = _paquete()
    request["tipo_operacion"] = "0201"
    assert _refused(engine, request)["items[0].huesped"][1] == "3206"


def test_a_paquete_turistico_of_taxed_lines_is_refused_as_an_export(engine, company):
    request = _paquete()
    request["items"][0]["tipo_afectacion_igv"] = "10"
    assert _refused(engine, request)["items[0].tipo_afectacion_igv"][1] == "2642"


@pytest.fixture
def api(engine, company):
    from app.api.local import LocalApi

    server = LocalApi(engine, port=0)
    server.start()
    yield server
    server.stop()


def test_the_openapi_document_shows_the_new_line_fields(api):
    document = httpx.get(api.base_url + "/openapi.json", timeout=10).json()
    schemas = document["components"]["schemas"]
    assert {"transporte_carga", "recurso_hidrobiologico", "huesped"} <= set(schemas["Item"]["properties"])
    assert {"origen_ubigeo", "destino_ubigeo", "valor_referencial_servicio"} <= set(
        schemas["TransporteCarga"]["properties"])
    assert {"pais_pasaporte", "fecha_ingreso", "fecha_salida"} <= set(schemas["Huesped"]["properties"])


def test_operation_1_over_http_refuses_a_missing_guest_naming_the_field_and_sunats_code(api):
    request = _hospedaje()
    del request["items"][0]["huesped"]
    answer = httpx.post(api.base_url + "/api/v1/facturacion/xml", content=json.dumps(request, default=str).encode(),
                        headers={"Authorization": f"Bearer {api.token}", "Content-Type": "application/json"},
                        timeout=30)
    assert answer.status_code == 400
    details = answer.json()["error"]["details"]
    assert {"field": "items[0].huesped", "sunat_code": "3136"}.items() <= next(
        d for d in details if d["field"] == "items[0].huesped").items()


def test_a_boleta_of_hospedaje_is_refused_as_catalogue_51_offers_it_to_facturas_only(engine, company):
    request = _hospedaje()
    request.update(tipo="03", serie="B113")
    assert _refused(engine, request)["tipo_operacion"][1] == "3206"
