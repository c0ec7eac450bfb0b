"""Voucher content beyond the plain sale (issue 17): each feature's elements checked by XPath, and each voucher,
signed by operation 2, passes ../shared/tools/sunat_check.py --strict (schema, SUNAT's rules with no
observation, signature)."""

from __future__ import annotations

import shutil
from decimal import Decimal

import pytest
from lxml import etree

from app.core.errors import YupanaError
from app.core.invoicing.amounts import amount_in_words
from tests.helpers.voucher_matrix import CUSTOMER_NAME, CUSTOMER_RUC, DNI_CUSTOMER, boleta, factura, item, nota

NS = {"cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
      "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"}
needs_xmlsec = pytest.mark.skipif(shutil.which("xmlsec1") is None, reason="xmlsec1 is not installed")


def _refused(engine, request: dict) -> dict[str, tuple[str, str | None]]:
    with pytest.raises(YupanaError) as caught:
        engine.invoicing.generate_xml(request)
    return {d.field: (d.message, d.sunat_code) for d in caught.value.details}


# ---------------------------------------------------------------- point 8: the customer's address

ADDRESS = 'JR. DE LA UNIÓN 850 "A" & <B>, CERCADO DE LIMA'
CUSTOMER_ADDRESS = "cac:AccountingCustomerParty/cac:Party/cac:PartyLegalEntity/cac:RegistrationAddress"


@needs_xmlsec
@pytest.mark.parametrize("request_", [
    factura("F001", 101, [item("Servicio", "1", "100")],
            receptor={"ruc": CUSTOMER_RUC, "razon_social": CUSTOMER_NAME, "direccion": ADDRESS}),
    boleta("B001", 101, [item("Polo", "1", "30")], {**DNI_CUSTOMER, "direccion": ADDRESS}),
    nota("07", "F001", 101, ("01", "F001", 1), "01", [item("Servicio", "1", "100")],
         receptor={"ruc": CUSTOMER_RUC, "razon_social": CUSTOMER_NAME, "direccion": ADDRESS}),
], ids=["factura", "boleta", "nota"])
def test_customer_address_is_written(issue, request_):
    root = issue(request_)
    assert root.xpath(f"{CUSTOMER_ADDRESS}/cac:AddressLine/cbc:Line/text()", namespaces=NS) == [ADDRESS]
    # Inside PartyLegalEntity, after the name (the schema's order).
    legal = root.find("cac:AccountingCustomerParty/cac:Party/cac:PartyLegalEntity", NS)
    assert [etree.QName(child).localname for child in legal] == ["RegistrationName", "RegistrationAddress"]


def test_no_address_no_element(engine, company):
    xml = engine.invoicing.generate_xml(factura("F001", 102, [item("Servicio", "1", "100")])).xml
    assert etree.fromstring(xml.encode()).find(CUSTOMER_ADDRESS, NS) is None


@pytest.mark.parametrize(("direccion", "reason"), [("AV", "de 3 a 200"), ("A" * 201, "de 3 a 200"),
                                                    ("AV. LIMA\n123", "una sola línea")])
def test_bad_customer_address_is_refused(engine, company, direccion, reason):
    problems = _refused(engine, boleta("B001", 103, [item("Polo", "1", "30")], {**DNI_CUSTOMER, "direccion": direccion}))
    message, code = problems["receptor.direccion"]
    assert reason in message and "receptor.direccion" in message and code == "4236"


# ---------------------------------------------------------------- point 9: numbers with binary floating-point noise

NOISY = ('{"tipo": "01", "serie": "F001", "numero": 110, "emisor": {"ruc": "20100066603"}, '
         '"receptor": {"ruc": "%s", "razon_social": "%s"}, '
         '"items": [{"descripcion": "Gasolina", "cantidad": 31.830000000000002, "precio_unitario": 0.30000000000000004, '
         '"igv": 1.7199999999999999}], '
         '"forma_pago": {"tipo": "Credito", "cuotas": [{"monto": 11.270000000000001, "fecha_vencimiento": "%s"}]}}')


def _noisy(due: str) -> dict:
    from app.core.contract import parse_json

    return parse_json(NOISY % (CUSTOMER_RUC, CUSTOMER_NAME, due))


@needs_xmlsec
def test_float_noise_is_rounded_to_the_fields_decimals(issue):
    from tests.helpers.voucher_matrix import _due

    root = issue(_noisy(_due(30)))
    line = root.find("cac:InvoiceLine", NS)
    assert line.findtext("cbc:InvoicedQuantity", namespaces=NS) == "31.83"  # 10 decimals allowed: 31.8300000000
    assert line.findtext("cac:Price/cbc:PriceAmount", namespaces=NS) == "0.3"
    assert line.findtext("cbc:LineExtensionAmount", namespaces=NS) == "9.55"  # 31.83 × 0.3 = 9.549
    assert line.findtext("cac:TaxTotal/cbc:TaxAmount", namespaces=NS) == "1.72"  # the noisy 1.719999… → 1.72
    assert root.xpath("cac:PaymentTerms[cbc:PaymentMeansID='Cuota001']/cbc:Amount/text()", namespaces=NS) == ["11.27"]


@pytest.mark.parametrize(("raw", "kind", "expected"), [
    ("31.830000000000002", "Money", "31.83"), ("0.30000000000000004", "Quantity", "0.3000000000"),
    ("1.7199999999999999", "Money", "1.72"), ("1234567.8900000001", "Money", "1234567.89"),
    ("12.345", "Money", "12.345"), ("0.001", "Money", "0.001"), ("1.005", "Money", "1.005"), ("100", "Money", "100"),
    ("1.5", "Quantity", "1.5"), ("1E-20", "Money", "1E-20"), ("0.12345678901", "Quantity", "0.12345678901"),
])
def test_noise_is_rounded_to_the_fields_decimals(raw, kind, expected):
    from pydantic import TypeAdapter

    from app.core import contract

    adapter = TypeAdapter(getattr(contract, kind))
    assert str(adapter.validate_python(Decimal(raw))) == expected
    assert str(adapter.validate_python(raw)) == expected  # a string is read the same way


def test_a_python_float_is_read_as_its_repr():
    from pydantic import TypeAdapter

    from app.core.contract import Money

    assert TypeAdapter(Money).validate_python(1.5 + 9 * 3.37) == Decimal("31.83")
    assert TypeAdapter(Money).validate_python(0.1) == Decimal("0.1")


def test_real_extra_decimals_are_still_refused(engine, company):
    from tests.helpers.voucher_matrix import _due

    request = _noisy(_due(30))
    request["forma_pago"]["cuotas"][0]["monto"] = Decimal("11.275")  # a real third decimal, not noise
    request["items"][0]["cantidad"] = "31.83000000001"  # 11 decimals: no double's noise either
    problems = _refused(engine, request)
    assert problems["forma_pago.cuotas[0].monto"][1] == "3253"
    assert "items[0].cantidad" in problems


# ---------------------------------------------------------------- point 2: ICBPER, the plastic bag tax

def _bag_subtotal(node) -> list:
    return node.xpath("cac:TaxTotal/cac:TaxSubtotal[cac:TaxCategory/cac:TaxScheme/cbc:ID='7152']", namespaces=NS)


def _text(node, path: str) -> str:
    return node.findtext(path, namespaces=NS)


@needs_xmlsec
@pytest.mark.parametrize(("fecha", "rate"), [("2019-08-01", "0.10"), ("2020-12-31", "0.20"), ("2021-06-15", "0.30"),
                                             ("2022-01-01", "0.40"), ("2023-01-01", "0.50"), (None, "0.50")])
def test_restaurant_boleta_with_bags(issue, fecha, rate):
    extra = {"fecha_emision": fecha} if fecha else {}
    root = issue(boleta("B005", 1, [item("Menú ejecutivo", "2", "12.71"),
                                    item("Bolsa plástica", "3", "0.10", icbper=True)], **extra))
    bags = root.findall("cac:InvoiceLine", NS)[1]
    (line_subtotal,) = _bag_subtotal(bags)
    tax = Decimal(rate) * 3
    assert _text(line_subtotal, "cbc:TaxAmount") == f"{tax:.2f}"
    assert line_subtotal.find("cbc:TaxableAmount", NS) is None
    assert _text(line_subtotal, "cbc:BaseUnitMeasure") == "3"
    assert line_subtotal.find("cbc:BaseUnitMeasure", NS).get("unitCode") == "NIU"
    assert _text(line_subtotal, "cac:TaxCategory/cbc:PerUnitAmount") == rate
    assert _text(line_subtotal, "cac:TaxCategory/cac:TaxScheme/cbc:Name") == "ICBPER"
    assert _text(line_subtotal, "cac:TaxCategory/cac:TaxScheme/cbc:TaxTypeCode") == "OTH"
    assert Decimal(_text(bags, "cac:TaxTotal/cbc:TaxAmount")) == Decimal("0.05") + tax  # IGV of 0.30 and the bags
    (total_subtotal,) = _bag_subtotal(root)
    assert Decimal(_text(total_subtotal, "cbc:TaxAmount")) == tax
    igv = Decimal("4.58") + Decimal("0.05")
    assert Decimal(_text(root, "cac:TaxTotal/cbc:TaxAmount")) == igv + tax
    payable = Decimal("25.42") + Decimal("0.30") + igv + tax
    assert Decimal(_text(root, "cac:LegalMonetaryTotal/cbc:PayableAmount")) == payable
    assert Decimal(_text(root, "cac:LegalMonetaryTotal/cbc:TaxInclusiveAmount")) == payable
    assert root.findtext("cbc:Note[@languageLocaleID='1000']", namespaces=NS) == amount_in_words(payable)


@pytest.mark.parametrize(("change", "field", "code"), [
    ({"cantidad": Decimal("2.5")}, "items[0].cantidad", "3236"),
    ({"cantidad": Decimal("100000")}, "items[0].cantidad", "3236"),
    ({"tipo_afectacion_igv": "40"}, "items[0].icbper", None),
    ({"cantidad": Decimal("2.5"), "precio_unitario": Decimal("-1")}, "items[0].precio_unitario", "2369"),
])
def test_bad_bag_lines_are_refused(engine, company, change, field, code):
    request = factura("F005", 9, [{**item("Bolsa", "2", "0.10", icbper=True), **change}])
    message, sunat_code = _refused(engine, request)[field]
    assert field in message and sunat_code == code


def test_bags_before_the_tax_and_in_dollars_are_refused(engine, company):
    early = boleta("B005", 9, [item("Bolsa", "2", "0.10", icbper=True)], fecha_emision="2019-07-31")
    assert "2019" in _refused(engine, early)["items[0].icbper"][0]
    dollars = boleta("B005", 9, [item("Polo", "1", "10"), item("Bolsa", "2", "0.10", icbper=True)], moneda="USD")
    assert "PEN" in _refused(engine, dollars)["items[1].icbper"][0]


def test_a_plain_line_and_a_bag_line_of_equal_fields_are_not_confused(engine, company):
    """The line cache keys on the bag mark and the rate: the same item with and without bags are two lines."""
    plain = engine.invoicing.generate_xml(boleta("B006", 1, [item("Bolsa", "2", "0.10")])).xml
    bags = engine.invoicing.generate_xml(boleta("B006", 2, [item("Bolsa", "2", "0.10", icbper=True)],
                                                fecha_emision="2022-05-05")).xml
    again = engine.invoicing.generate_xml(boleta("B006", 3, [item("Bolsa", "2", "0.10", icbper=True)],
                                                 fecha_emision="2021-05-05")).xml
    assert "7152" not in plain
    assert _bag_subtotal(etree.fromstring(bags.encode()).find("cac:InvoiceLine", NS))[0].findtext(
        "cbc:TaxAmount", namespaces=NS) == "0.80"
    assert _bag_subtotal(etree.fromstring(again.encode()).find("cac:InvoiceLine", NS))[0].findtext(
        "cbc:TaxAmount", namespaces=NS) == "0.60"


# ---------------------------------------------------------------- point 3: line discounts

@needs_xmlsec
@pytest.mark.parametrize(("afectacion", "igv"), [("10", "16.20"), ("20", "0.00"), ("30", "0.00")])
def test_line_discount_reduces_the_base(issue, afectacion, igv):
    root = issue(factura("F006", int(afectacion), [
        item("Zapatillas", "2", "50", afectacion, descuento=Decimal("10.00")),
        item("Medias", "3", "5.00", afectacion)]))
    line = root.find("cac:InvoiceLine", NS)
    (allowance,) = line.findall("cac:AllowanceCharge", NS)
    assert _text(allowance, "cbc:ChargeIndicator") == "false"
    assert _text(allowance, "cbc:AllowanceChargeReasonCode") == "00"
    assert _text(allowance, "cbc:Amount") == "10.00" and _text(allowance, "cbc:BaseAmount") == "100.00"
    assert _text(allowance, "cbc:MultiplierFactorNumeric") == "0.10000"
    assert [etree.QName(c).localname for c in line].index("AllowanceCharge") == [
        etree.QName(c).localname for c in line].index("PricingReference") + 1
    assert _text(line, "cbc:LineExtensionAmount") == "90.00"
    assert _text(line, "cac:TaxTotal/cbc:TaxAmount") == igv
    assert root.find("cac:InvoiceLine[2]/cac:AllowanceCharge", NS) is None
    total_igv = Decimal(igv) + (Decimal("2.70") if afectacion == "10" else 0)
    assert _text(root, "cac:LegalMonetaryTotal/cbc:LineExtensionAmount") == "105.00"
    assert Decimal(_text(root, "cac:LegalMonetaryTotal/cbc:PayableAmount")) == Decimal("105.00") + total_igv


@pytest.mark.parametrize(("descuento", "code", "words"), [
    (Decimal("100.01"), None, "mayor que el valor de la línea (100.00"),
    (Decimal("-1"), "2955", "no negativo"), (Decimal("1.234"), "2955", "2 decimales"),
])
def test_bad_line_discounts_are_refused(engine, company, descuento, code, words):
    problems = _refused(engine, factura("F006", 9, [item("Zapatillas", "2", "50", descuento=descuento)]))
    message, sunat_code = problems["items[0].descuento"]
    assert words in message and "items[0].descuento" in message and sunat_code == code


def test_a_discount_of_the_whole_line_is_refused(engine, company):
    """SUNAT rejects a line left without a taxable amount (3105): that is a free transfer, not a discount."""
    problems = _refused(engine, factura("F006", 10, [item("Regalo", "1", "20", descuento=Decimal("20")),
                                                     item("Polo", "1", "30")]))
    message, code = problems["items[0].descuento"]
    assert "sin valor" in message and code == "3105"


@needs_xmlsec
def test_a_zero_discount_is_no_discount(issue):
    root = issue(factura("F006", 11, [item("Polo", "1", "30", descuento=Decimal("0"))]))
    assert root.find("cac:InvoiceLine/cac:AllowanceCharge", NS) is None
    assert root.findtext("cac:LegalMonetaryTotal/cbc:PayableAmount", namespaces=NS) == "35.40"


# ---------------------------------------------------------------- point 3: the global discount

@needs_xmlsec
@pytest.mark.parametrize("tipo", ["01", "03"])
def test_global_discount_reduces_the_gravado_base(issue, tipo):
    lines = [item("Laptop", "1", "1000", descuento=Decimal("50")), item("Mouse", "2", "25"),
             item("Libro", "1", "40", "20")]
    request = (factura("F007", 1, lines, descuento_global=Decimal("100")) if tipo == "01"
               else boleta("B007", 1, lines, DNI_CUSTOMER, descuento_global=Decimal("100")))
    root = issue(request)
    (allowance,) = root.findall("cac:AllowanceCharge", NS)
    assert _text(allowance, "cbc:AllowanceChargeReasonCode") == "02"
    assert _text(allowance, "cbc:ChargeIndicator") == "false"
    assert _text(allowance, "cbc:Amount") == "100.00" and _text(allowance, "cbc:BaseAmount") == "1000.00"
    assert _text(allowance, "cbc:MultiplierFactorNumeric") == "0.10000"
    names = [etree.QName(c).localname for c in root]
    assert names.index("AllowanceCharge") + 1 == names.index("TaxTotal")
    igv = root.xpath("cac:TaxTotal/cac:TaxSubtotal[cac:TaxCategory/cac:TaxScheme/cbc:ID='1000']", namespaces=NS)[0]
    assert _text(igv, "cbc:TaxableAmount") == "900.00" and _text(igv, "cbc:TaxAmount") == "162.00"
    assert _text(root, "cac:TaxTotal/cbc:TaxAmount") == "162.00"
    assert _text(root, "cac:LegalMonetaryTotal/cbc:LineExtensionAmount") == "940.00"
    assert _text(root, "cac:LegalMonetaryTotal/cbc:PayableAmount") == "1102.00"
    assert root.findtext("cbc:Note[@languageLocaleID='1000']", namespaces=NS) == amount_in_words(Decimal("1102.00"))


@pytest.mark.parametrize(("request_", "words", "code"), [
    (factura("F007", 9, [item("Mouse", "2", "25"), item("Libro", "1", "40", "20")],
             descuento_global=Decimal("50.01")), "menor que ella (50.00", None),
    (factura("F007", 9, [item("Libro", "1", "40", "20")], descuento_global=Decimal("1")), "(0.00", None),
    (factura("F007", 9, [item("Mouse", "2", "25")], descuento_global=Decimal("1.001")), "2 decimales", "2955"),
    (nota("07", "F007", 9, ("01", "F001", 1), "01", [item("Mouse", "2", "25")], descuento_global=Decimal("1")),
     "facturas y boletas", None),
], ids=["mayor", "sin-gravadas", "decimales", "nota"])
def test_bad_global_discounts_are_refused(engine, company, request_, words, code):
    message, sunat_code = _refused(engine, request_)["descuento_global"]
    assert words in message and "descuento_global" in message and sunat_code == code
