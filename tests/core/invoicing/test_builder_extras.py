"""Voucher content beyond the plain sale (issue 17), the points after bags and discounts: free transfers,
detracción, references, the operation type and every note reason. Each matrix voucher named here is generated,
signed and judged by ../shared/tools/sunat_check.py --strict (the `issue` fixture) and its specific elements are
checked by XPath; bad requests get a 400 naming the field, with SUNAT's code where it has one."""

from __future__ import annotations

from decimal import Decimal

import pytest
from lxml import etree

from app.core.invoicing.amounts import amount_in_words
from tests.core.invoicing.test_builder_content import NS, _refused, needs_xmlsec
from tests.helpers.voucher_matrix import MATRIX, factura, item

REQUESTS = dict(MATRIX)
GRA_SUBTOTAL = "cac:TaxTotal/cac:TaxSubtotal[cac:TaxCategory/cac:TaxScheme/cbc:ID='9996']"
FREE_LEGEND = "TRANSFERENCIA GRATUITA DE UN BIEN Y/O SERVICIO PRESTADO GRATUITAMENTE"


def _text(node, path: str) -> str:
    return node.findtext(path, namespaces=NS)


def _money(node, path: str) -> Decimal:
    return Decimal(_text(node, path))


def _legend(root, code: str) -> list[str]:
    return root.xpath(f"cbc:Note[@languageLocaleID='{code}']/text()", namespaces=NS)


# ---------------------------------------------------------------- point 4: free transfers (gratuitas)

@needs_xmlsec
def test_restaurant_boleta_with_bags_and_a_free_dessert(issue):
    root = issue(REQUESTS["boleta-restaurante-bolsas-postre-gratis"])
    dessert = root.findall("cac:InvoiceLine", NS)[2]
    assert _text(dessert, "cac:PricingReference/cac:AlternativeConditionPrice/cbc:PriceTypeCode") == "02"
    assert _text(dessert, "cac:PricingReference/cac:AlternativeConditionPrice/cbc:PriceAmount") == "5.08"
    assert _text(dessert, "cac:Price/cbc:PriceAmount") == "0"  # nothing charged
    assert _text(dessert, "cbc:LineExtensionAmount") == "5.08"  # the reference value
    (line_gra,) = dessert.xpath(GRA_SUBTOTAL, namespaces=NS)
    assert _text(line_gra, "cbc:TaxableAmount") == "5.08" and _text(line_gra, "cbc:TaxAmount") == "0.91"
    assert _text(line_gra, "cac:TaxCategory/cbc:TaxExemptionReasonCode") == "13"
    assert _text(line_gra, "cac:TaxCategory/cbc:Percent") == "18"
    assert _text(line_gra, "cac:TaxCategory/cac:TaxScheme/cbc:Name") == "GRA"
    assert _text(line_gra, "cac:TaxCategory/cac:TaxScheme/cbc:TaxTypeCode") == "FRE"
    # The voucher's free total (9996): value and IGV computed, neither charged.
    (total_gra,) = root.xpath(GRA_SUBTOTAL, namespaces=NS)
    assert _text(total_gra, "cbc:TaxableAmount") == "5.08" and _text(total_gra, "cbc:TaxAmount") == "0.91"
    igv = Decimal("9.19")  # 18 % of 50.84 + 18 % of 0.20
    assert _money(root, "cac:TaxTotal/cbc:TaxAmount") == igv + Decimal("1.00")  # IGV charged + 2 bags × 0.50
    assert _text(root, "cac:LegalMonetaryTotal/cbc:LineExtensionAmount") == "51.04"
    payable = Decimal("51.04") + igv + Decimal("1.00")
    assert _money(root, "cac:LegalMonetaryTotal/cbc:PayableAmount") == payable
    assert _legend(root, "1000") == [amount_in_words(payable)]
    assert _legend(root, "1002") == [FREE_LEGEND]


@needs_xmlsec
def test_a_wholly_free_factura_charges_nothing(issue):
    root = issue(REQUESTS["factura-muestra-gratuita"])
    (total_gra,) = root.xpath(GRA_SUBTOTAL, namespaces=NS)
    assert _text(total_gra, "cbc:TaxableAmount") == "45.00" and _text(total_gra, "cbc:TaxAmount") == "8.10"
    assert _text(root, "cac:TaxTotal/cbc:TaxAmount") == "0.00"
    assert _text(root, "cac:LegalMonetaryTotal/cbc:LineExtensionAmount") == "0.00"
    assert _text(root, "cac:LegalMonetaryTotal/cbc:PayableAmount") == "0.00"
    assert _legend(root, "1000") == ["CERO CON 00/100 SOLES"] and _legend(root, "1002") == [FREE_LEGEND]


@needs_xmlsec
def test_free_lines_of_every_kind_beside_paid_discounted_lines(issue):
    root = issue(REQUESTS["factura-gratuita-y-pagada"])
    lines = root.findall("cac:InvoiceLine", NS)
    codes = [_text(line, "cac:TaxTotal/cac:TaxSubtotal/cac:TaxCategory/cbc:TaxExemptionReasonCode") for line in lines]
    assert codes == ["10", "11", "21", "31"]
    free_taxes = [_text(line, "cac:TaxTotal/cbc:TaxAmount") for line in lines[1:]]
    assert free_taxes == ["10.80", "0.00", "0.00"]  # only a gravado free line (11) computes IGV
    assert [_text(line, "cac:TaxTotal/cac:TaxSubtotal/cac:TaxCategory/cbc:Percent") for line in lines[1:]] == [
        "18", "0", "0"]
    (total_gra,) = root.xpath(GRA_SUBTOTAL, namespaces=NS)
    assert _text(total_gra, "cbc:TaxableAmount") == "80.00" and _text(total_gra, "cbc:TaxAmount") == "10.80"
    # 850 − 50 (line) − 40 (global) = 760 gravado, IGV 136.80; the free lines add nothing to pay.
    assert _text(root, "cac:TaxTotal/cbc:TaxAmount") == "136.80"
    assert _text(root, "cac:LegalMonetaryTotal/cbc:PayableAmount") == "896.80"
    assert _legend(root, "1000") == [amount_in_words(Decimal("896.80"))]


@needs_xmlsec
@pytest.mark.parametrize("name", ["boleta-gratuita-inafecta", "factura-bonificacion-usd"])
def test_free_lines_in_boletas_and_dollars(issue, name):
    root = issue(REQUESTS[name])
    request = REQUESTS[name]
    free = [i for i in request["items"] if i.get("tipo_afectacion_igv", "10") not in ("10", "20", "30", "40")]
    value = sum((i["cantidad"] * i["precio_unitario"] for i in free), Decimal(0))
    (total_gra,) = root.xpath(GRA_SUBTOTAL, namespaces=NS)
    assert _money(total_gra, "cbc:TaxableAmount") == value
    paid = sum((i["cantidad"] * i["precio_unitario"] for i in request["items"] if i not in free), Decimal(0))
    assert _money(root, "cac:LegalMonetaryTotal/cbc:LineExtensionAmount") == paid
    assert _legend(root, "1002") == [FREE_LEGEND]


def test_a_plain_voucher_has_no_free_legend_nor_subtotal(engine, company):
    root = etree.fromstring(engine.invoicing.generate_xml(factura("F008", 9, [item("Polo", "1", "30")])).xml.encode())
    assert _legend(root, "1002") == [] and root.xpath(GRA_SUBTOTAL, namespaces=NS) == []


@pytest.mark.parametrize(("line", "field", "words", "code"), [
    (item("Muestra", "1", "0", "13"), "items[0].precio_unitario", "valor referencial", "2417"),
    (item("Muestra", "2", "10", "13", descuento=Decimal("1")), "items[0].descuento", "gratuita", None),
    (item("Muestra", "1", "10", "18"), "items[0].tipo_afectacion_igv", "11 a 16, 21 o 31 a 37", "2040"),
], ids=["sin-valor", "descuento", "codigo"])
def test_bad_free_lines_are_refused(engine, company, line, field, words, code):
    message, sunat_code = _refused(engine, factura("F008", 10, [line]))[field]
    assert words in message and field in message and sunat_code == code


# ---------------------------------------------------------------- point 1: detracción (SPOT)

def _spot(root) -> tuple:
    means = root.xpath("cac:PaymentMeans[cbc:ID='Detraccion']", namespaces=NS)
    terms = root.xpath("cac:PaymentTerms[cbc:ID='Detraccion']", namespaces=NS)
    assert len(means) == 1 and len(terms) == 1
    return means[0], terms[0]


@needs_xmlsec
@pytest.mark.parametrize(("name", "codigo", "porcentaje", "monto", "medio", "payable"), [
    ("factura-detraccion", "022", "12", "180.00", "001", "1500.00"),  # 1271.19 + 228.81 = 1500.00; 12 % of it
    ("factura-detraccion-usd", "020", "12", "1060.58", "003", "2360.00"),  # 12 % of 2360.00 × 3.745, in soles
    ("factura-detraccion-porcentaje-credito", "019", "10", "354.00", "001", "3540.00"),
    ("factura-detraccion-construccion", "030", "4", "1196.40", "001", "29910.05"),  # (25847.50 − 500) × 1.18
])
def test_detraccion(issue, name, codigo, porcentaje, monto, medio, payable):
    root = issue(REQUESTS[name])
    assert root.find("cbc:InvoiceTypeCode", NS).get("listID") == "1001"
    assert _legend(root, "2006") == ["Operación sujeta a detracción"]
    means, terms = _spot(root)
    assert _text(means, "cbc:PaymentMeansCode") == medio
    assert _text(means, "cac:PayeeFinancialAccount/cbc:ID") == REQUESTS[name]["detraccion"]["cuenta"]
    assert _text(terms, "cbc:PaymentMeansID") == codigo
    assert _text(terms, "cbc:PaymentPercent") == porcentaje
    assert _text(terms, "cbc:Amount") == monto
    assert terms.find("cbc:Amount", NS).get("currencyID") == "PEN"  # in soles, also on a USD factura
    assert _text(root, "cac:LegalMonetaryTotal/cbc:PayableAmount") == payable
    assert _legend(root, "1000") == [amount_in_words(Decimal(payable), REQUESTS[name].get("moneda", "PEN"))]
    names = [etree.QName(child).localname for child in root]
    assert names.index("PaymentMeans") == names.index("AccountingCustomerParty") + 1  # UBL 2.1's order
    assert names.index("PaymentMeans") < names.index("PaymentTerms") < names.index("TaxTotal")


def test_a_plain_factura_is_operation_0101_without_spot(engine, company):
    generated = engine.invoicing.generate_xml(factura("F009", 9, [item("Servicio", "1", "1000")]))
    root = etree.fromstring(generated.xml.encode())
    assert root.find("cbc:InvoiceTypeCode", NS).get("listID") == "0101"
    assert root.find("cac:PaymentMeans", NS) is None and _legend(root, "2006") == []


SPOT = {"codigo": "022", "cuenta": "00-741-123456"}


@pytest.mark.parametrize(("change", "extra", "field", "code"), [
    ({"codigo": "999"}, {}, "detraccion.codigo", "3033"),
    ({"porcentaje": Decimal("0")}, {}, "detraccion.porcentaje", "3062"),
    ({"porcentaje": Decimal("100")}, {}, "detraccion.porcentaje", "3062"),
    ({"cuenta": "cuenta BN"}, {}, "detraccion.cuenta", "3034"),
    ({"medio_pago": "777"}, {}, "detraccion.medio_pago", None),
    ({}, {"moneda": "USD"}, "tipo_cambio", "3208"),
    ({}, {"moneda": "USD", "tipo_cambio": Decimal("3.7451")}, "tipo_cambio", "3208"),
], ids=["codigo", "cero", "cien", "cuenta", "medio", "sin-cambio", "cambio-4-decimales"])
def test_bad_detracciones_are_refused(engine, company, change, extra, field, code):
    request = factura("F009", 10, [item("Servicio", "1", "1000")], detraccion={**SPOT, **change}, **extra)
    message, sunat_code = _refused(engine, request)[field]
    assert field in message and sunat_code == code


def test_detraccion_only_on_facturas(engine, company):
    from tests.helpers.voucher_matrix import DNI_CUSTOMER, boleta

    request = boleta("B009", 1, [item("Servicio", "1", "1000")], DNI_CUSTOMER, detraccion=SPOT)
    assert "solo se admite en facturas" in _refused(engine, request)["detraccion"][0]


# ---------------------------------------------------------------- point 5: references (guías, orden de compra)

def _guias(root) -> list[tuple[str, str]]:
    return [(_text(ref, "cbc:ID"), _text(ref, "cbc:DocumentTypeCode"))
            for ref in root.findall("cac:DespatchDocumentReference", NS)]


@needs_xmlsec
def test_factura_with_line_and_global_discounts_and_a_guia(issue):
    root = issue(REQUESTS["factura-descuentos-guia"])
    assert _guias(root) == [("T001-245", "09")]
    assert _text(root, "cac:OrderReference/cbc:ID") == "OC-2026-0087"
    names = [etree.QName(child).localname for child in root]
    assert names.index("DocumentCurrencyCode") < names.index("OrderReference") < names.index(
        "DespatchDocumentReference") < names.index("Signature")
    line = root.find("cac:InvoiceLine", NS)
    assert _text(line, "cac:AllowanceCharge/cbc:AllowanceChargeReasonCode") == "00"
    assert _text(line, "cac:AllowanceCharge/cbc:Amount") == "40.00"
    assert _text(root, "cac:AllowanceCharge/cbc:AllowanceChargeReasonCode") == "02"
    # (40 × 25.42 − 40) + 20 × 38.14 = 976.80 + 762.80 = 1739.60; − 50 = 1689.60; IGV 304.13.
    assert _text(root, "cac:TaxTotal/cbc:TaxAmount") == "304.13"
    assert _text(root, "cac:LegalMonetaryTotal/cbc:PayableAmount") == "1993.73"
    assert _legend(root, "1000") == [amount_in_words(Decimal("1993.73"))]


@needs_xmlsec
@pytest.mark.parametrize(("name", "guias", "orden"), [
    ("factura-dos-guias", [("T001-246", "09"), ("EG01-34", "09")], None),
    ("boleta-guia", [("0001-1532", "09")], None),
    ("nc-orden-compra", [("T001-246", "09")], "OC-2026-0090"),
])
def test_references(issue, name, guias, orden):
    root = issue(REQUESTS[name])
    assert _guias(root) == guias
    assert root.findtext("cac:OrderReference/cbc:ID", namespaces=NS) == orden
    if name.startswith("nc"):  # a note: DiscrepancyResponse, OrderReference, BillingReference, guías
        names = [etree.QName(child).localname for child in root]
        assert names.index("DiscrepancyResponse") < names.index("OrderReference") < names.index(
            "BillingReference") < names.index("DespatchDocumentReference")


@pytest.mark.parametrize(("extra", "field", "code"), [
    ({"guias": [{"serie": "F001", "numero": 1}]}, "guias[0].serie", "4006"),
    ({"guias": [{"serie": "T001", "numero": 123456789}]}, "guias[0].serie", "4006"),
    ({"guias": [{"serie": "T001", "numero": 5}, {"serie": "T001", "numero": 5}]}, "guias[1]", "2364"),
    ({"orden_compra": "OC 15"}, "orden_compra", "4233"),
    ({"orden_compra": "X" * 21}, "orden_compra", "4233"),
], ids=["serie", "numero", "repetida", "espacio", "larga"])
def test_bad_references_are_refused(engine, company, extra, field, code):
    message, sunat_code = _refused(engine, factura("F010", 9, [item("Polo", "1", "30")], **extra))[field]
    assert sunat_code == code and field.split("[")[0] in message


# ---------------------------------------------------------------- point 6: the operation type (catalogue 51)

@needs_xmlsec
@pytest.mark.parametrize(("name", "code", "scheme"), [
    ("factura-exportacion-servicios", "0201", "4"), ("factura-exportacion-servicios-parcial", "0208", "0"),
    ("factura-exportacion-carga-ruc", "0206", "6"), ("boleta-exportacion-servicios", "0201", "7"),
    ("factura-exportacion-bienes-explicita", "0200", "0"), ("factura-exportacion", "0200", "0"),  # inferred
])
def test_operation_type(issue, name, code, scheme):
    request = REQUESTS[name]
    root = issue(request)
    assert root.find("cbc:InvoiceTypeCode", NS).get("listID") == code
    assert root.find("cac:AccountingCustomerParty/cac:Party/cac:PartyIdentification/cbc:ID", NS).get(
        "schemeID") == (scheme if scheme != "4" else request["receptor"]["tipo_documento"])
    (subtotal,) = root.findall("cac:TaxTotal/cac:TaxSubtotal", NS)
    assert _text(subtotal, "cac:TaxCategory/cac:TaxScheme/cbc:ID") == "9995"  # EXP
    assert _text(root, "cac:TaxTotal/cbc:TaxAmount") == "0.00"
    value = sum((i["cantidad"] * i["precio_unitario"] for i in request["items"]), Decimal(0))
    assert _money(root, "cac:LegalMonetaryTotal/cbc:PayableAmount") == value
    assert _legend(root, "1000") == [amount_in_words(value, request.get("moneda", "PEN"))]


FOREIGN = {"tipo_documento": "0", "numero_documento": "US-1", "razon_social": "ACME LLC"}


@pytest.mark.parametrize(("request_", "field", "code"), [
    (factura("F011", 9, [item("Servicio", "1", "10", "40")], receptor=FOREIGN, tipo_operacion="0202"),
     "items[0].huesped", "3136"),
    (factura("F011", 9, [item("Servicio", "1", "10", "40")], receptor=FOREIGN, tipo_operacion="9999"),
     "tipo_operacion", "3206"),
    (factura("F011", 9, [item("Servicio", "1", "10")], tipo_operacion="0201"), "items[0].tipo_afectacion_igv", "2642"),
    (factura("F011", 9, [item("Servicio", "1", "10", "40")], receptor=FOREIGN, tipo_operacion="0101"),
     "tipo_operacion", "3100"),
    (factura("F011", 9, [item("Servicio", "1", "1000")], tipo_operacion="1001"), "detraccion", "3127"),
    (factura("F011", 9, [item("Servicio", "1", "1000")], tipo_operacion="0101",
             detraccion={"codigo": "022", "cuenta": "00-741-123456"}), "tipo_operacion", "3128"),
    (factura("F011", 9, [item("Servicio", "1", "10", "40")], tipo_operacion="0201"), "receptor.tipo_documento", "2800"),
], ids=["hospedaje", "desconocido", "linea-no-40", "venta-interna-exportando", "1001-sin-detraccion",
        "detraccion-0101", "0201-a-ruc"])
def test_bad_operation_types_are_refused(engine, company, request_, field, code):
    message, sunat_code = _refused(engine, request_)[field]
    assert sunat_code == code and field.split("[")[0].split(".")[0] in message


# ---------------------------------------------------------------- point 7: every note reason SUNAT allows

def _reason(root) -> str:
    return _text(root, "cac:DiscrepancyResponse/cbc:ResponseCode")


@needs_xmlsec
def test_credit_note_13_carries_the_corrected_instalments(issue):
    root = issue(REQUESTS["nc-cuotas"])
    assert etree.QName(root).localname == "CreditNote" and _reason(root) == "13"
    assert _text(root, "cac:BillingReference/cac:InvoiceDocumentReference/cbc:ID") == "F001-10"
    assert _text(root, "cac:BillingReference/cac:InvoiceDocumentReference/cbc:DocumentTypeCode") == "01"
    terms = root.findall("cac:PaymentTerms", NS)
    assert [_text(t, "cbc:PaymentMeansID") for t in terms] == ["Credito", "Cuota001", "Cuota002"]
    assert [_text(t, "cbc:ID") for t in terms] == ["FormaPago"] * 3
    assert [_text(t, "cbc:Amount") for t in terms] == ["14160.00", "7080.00", "7080.00"]
    dues = [c["fecha_vencimiento"] for c in REQUESTS["nc-cuotas"]["forma_pago"]["cuotas"]]
    assert [_text(t, "cbc:PaymentDueDate") for t in terms[1:]] == dues
    names = [etree.QName(child).localname for child in root]
    assert names.index("AccountingCustomerParty") < names.index("PaymentTerms") < names.index("TaxTotal")
    assert _text(root, "cac:LegalMonetaryTotal/cbc:PayableAmount") == "0.00"  # nothing credited (SUNAT's 3315)
    assert _legend(root, "1000") == ["CERO CON 00/100 SOLES"]


@needs_xmlsec
@pytest.mark.parametrize(("name", "root_name", "reason", "total_element", "payable"), [
    ("nc-otros-conceptos", "CreditNote", "10", "LegalMonetaryTotal", "18.59"),
    ("nc-ajuste-exportacion", "CreditNote", "11", "LegalMonetaryTotal", "368.00"),
    ("nd-ajuste-exportacion", "DebitNote", "11", "RequestedMonetaryTotal", "350.00"),
])
def test_note_reasons(issue, name, root_name, reason, total_element, payable):
    root = issue(REQUESTS[name])
    assert etree.QName(root).localname == root_name and _reason(root) == reason
    assert _text(root, f"cac:{total_element}/cbc:PayableAmount") == payable
    if reason == "11":  # an export's adjustment: only export lines (scheme 9995)
        assert root.xpath("cac:TaxTotal/cac:TaxSubtotal/cac:TaxCategory/cac:TaxScheme/cbc:ID/text()",
                          namespaces=NS) == ["9995"]
    assert root.find("cac:PaymentTerms", NS) is None


@pytest.mark.parametrize(("request_", "field", "code"), [
    (REQUESTS["nc-cuotas"] | {"forma_pago": None}, "forma_pago.cuotas", "3257"),
    (REQUESTS["nc-cuotas"] | {"forma_pago": {"tipo": "Credito", "cuotas": []}}, "forma_pago.cuotas", "3257"),
    (REQUESTS["nc-cuotas"] | {"forma_pago": {"tipo": "Contado"}}, "forma_pago.cuotas", "3257"),
    (REQUESTS["nc-cuotas"] | {"items": [item("Maquinaria", "1", "100")]}, "items[0].precio_unitario", "3315"),
    (REQUESTS["nc-cuotas"] | {"documento_referencia": {"tipo": "03", "serie": "B001", "numero": 2},
                              "serie": "B001", "receptor": {"tipo_documento": "1", "numero_documento": "45678912",
                                                            "razon_social": "MARÍA QUISPE"}},
     "documento_referencia.tipo", "3259"),
    (REQUESTS["nc-ajuste-exportacion"] | {"items": [item("Café", "1", "10")]}, "items[0].tipo_afectacion_igv", "3107"),
    (REQUESTS["nd-ajuste-exportacion"] | {"codigo_motivo": "12"}, "items[0].tipo_afectacion_igv", "2172"),
    (REQUESTS["nc-otros-conceptos"] | {"codigo_motivo": "14"}, "codigo_motivo", "2172"),
], ids=["nc13-sin-cuotas", "nc13-cuotas-vacias", "nc13-contado", "nc13-con-monto", "nc13-de-boleta",
        "motivo11-no-exportacion", "motivo12-ivap", "motivo-desconocido"])
def test_bad_notes_are_refused(engine, company, request_, field, code):
    message, sunat_code = _refused(engine, {k: v for k, v in request_.items() if v is not None})[field]
    assert sunat_code == code and field.split("[")[0].split(".")[0] in message


def test_the_new_fields_leave_a_plain_requests_key_unchanged():
    """The idempotency key is computed from the request's JSON without None: a field a plain request leaves out must
    not appear there, or every voucher stored before would answer 409 when sent again."""
    from app.core.contract import GenerarXmlRequest
    from app.core.invoicing.voucher_keys import request_json

    text = request_json(GenerarXmlRequest.model_validate(factura("F001", 1, [item("Polo", "1", "30")])))
    for name in ("guias", "orden_compra", "detraccion", "tipo_operacion", "tipo_cambio"):
        assert name not in text


# ---------------------------------------------------------------- point 1: a factura subject to detracción without it

SERVICE = item("Consultoría", "1", "600", codigo_detraccion="037")  # 708.00 with IGV


def test_a_factura_above_700_with_a_line_subject_to_detraccion_needs_it(engine, company):
    message, code = _refused(engine, factura("F012", 1, [SERVICE]))["detraccion"]
    assert "items[0].codigo_detraccion" in message and "700" in message and "detraccion" in message and code == "3127"


def test_the_refusal_looks_at_the_amount_the_mark_and_the_currency(engine, company):
    small = factura("F012", 2, [item("Consultoría", "1", "593.22", codigo_detraccion="037")])  # 700.00: not above
    assert engine.invoicing.generate_xml(small).nombre_archivo.endswith("F012-2.xml")
    unmarked = factura("F012", 3, [item("Laptop", "1", "600")])  # goods, not marked: issued
    assert engine.invoicing.generate_xml(unmarked).nombre_archivo.endswith("F012-3.xml")
    dollars = factura("F012", 4, [SERVICE], moneda="USD")
    assert _refused(engine, dollars)["tipo_cambio"][1] == "3208"
    cheap = factura("F012", 5, [item("Consultoría", "1", "190", codigo_detraccion="037")], moneda="USD",
                    tipo_cambio=Decimal("3.1"))  # 224.20 × 3.1 = 695.02 soles: not above 700
    assert engine.invoicing.generate_xml(cheap).nombre_archivo.endswith("F012-5.xml")
    assert "detraccion" in _refused(engine, {**cheap, "numero": 6, "tipo_cambio": Decimal("3.2")})
    unknown = factura("F012", 7, [item("Consultoría", "1", "600", codigo_detraccion="777")])
    assert _refused(engine, unknown)["items[0].codigo_detraccion"][1] == "3033"


def test_a_line_without_value_is_refused_unless_nc_13(engine, company):
    """SUNAT rejects a line without taxable amount (3105): a sale of price 0 is a free transfer."""
    message, code = _refused(engine, factura("F013", 1, [item("Regalo", "2", "0")]))["items[0].precio_unitario"]
    assert "transferencia gratuita" in message and code == "3105"
    tiny = factura("F013", 2, [item("Tornillo", "0.001", "0.3", "20")])  # 0.0003 rounds to 0.00
    assert _refused(engine, tiny)["items[0].precio_unitario"][1] == "3105"


def test_an_exonerated_line_rounded_up_states_its_value_per_unit(engine, company):
    """0.001 × 5 = 0.005 → 0.01: the price per unit SUNAT checks (3270) is 0.01 / 0.001 = 10, not 5."""
    generated = engine.invoicing.generate_xml(factura("F013", 3, [item("Clavo", "0.001", "5", "20")]))
    root = etree.fromstring(generated.xml.encode())
    line = root.find("cac:InvoiceLine", NS)
    assert _text(line, "cbc:LineExtensionAmount") == "0.01"
    assert _text(line, "cac:PricingReference/cac:AlternativeConditionPrice/cbc:PriceAmount") == "10"
    assert _text(line, "cac:Price/cbc:PriceAmount") == "5"
