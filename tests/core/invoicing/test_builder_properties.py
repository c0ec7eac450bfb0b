"""Acceptance 3: properties of the generator over random requests (Hypothesis)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from app.core.contract import GenerarXmlRequest, parse_model
from app.core.errors import YupanaError
from app.core.invoicing import ubl
from app.core.invoicing.amounts import amount_in_words, integer_words, money
from tests.helpers.oracles import load_sunat_check

NS = {"cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
      "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"}
PARSER = etree.XMLParser(resolve_entities=False, no_network=True)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

quantities = st.decimals(min_value=Decimal("0.001"), max_value=Decimal("100000"), places=3, allow_nan=False)
prices = st.decimals(min_value=Decimal("0"), max_value=Decimal("50000"), places=4, allow_nan=False)
# Printable text (what a description can hold): markup characters, accents and emoji included.
texts = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from('<&>"\'ñÁé😀'),
                min_size=1, max_size=60).filter(lambda s: s.strip() == s and s)
# A line is worth at least a cent (a line without value is refused, as SUNAT's 3105 wants).
items = st.fixed_dictionaries({"descripcion": texts, "cantidad": quantities, "precio_unitario": prices,
                               "tipo_afectacion_igv": st.sampled_from(["10", "20", "30"])}).filter(
    lambda line: money(line["cantidad"] * line["precio_unitario"]) > 0)


def _factura(lines: list[dict], numero: int) -> dict:
    return {"tipo": "01", "serie": "F001", "numero": numero, "emisor": {"ruc": "20100066603"},
            "receptor": {"ruc": "20601030013", "razon_social": "CLIENTE S.A.C."}, "items": lines}


def _document(engine, request: dict) -> ubl.Document:
    return engine._generation.build(parse_model(GenerarXmlRequest, request))


@SETTINGS
@given(lines=st.lists(items, min_size=1, max_size=8))
def test_totals_equal_the_sum_of_lines(engine, company, lines):
    doc = _document(engine, _factura(lines, 1))
    root = etree.fromstring(ubl.render(doc).encode(), PARSER)
    line_values = [Decimal(v) for v in root.xpath("cac:InvoiceLine/cbc:LineExtensionAmount/text()", namespaces=NS)]
    line_taxes = [Decimal(v) for v in root.xpath("cac:InvoiceLine/cac:TaxTotal/cbc:TaxAmount/text()", namespaces=NS)]
    total_value = Decimal(root.findtext("cac:LegalMonetaryTotal/cbc:LineExtensionAmount", namespaces=NS))
    total_tax = Decimal(root.findtext("cac:TaxTotal/cbc:TaxAmount", namespaces=NS))
    payable = Decimal(root.findtext("cac:LegalMonetaryTotal/cbc:PayableAmount", namespaces=NS))
    assert sum(line_values) == total_value and sum(line_taxes) == total_tax
    assert payable == total_value + total_tax
    subtotal_bases = [Decimal(v) for v in root.xpath("cac:TaxTotal/cac:TaxSubtotal/cbc:TaxableAmount/text()",
                                                     namespaces=NS)]
    assert sum(subtotal_bases) == total_value
    for value, line in zip(line_values, lines, strict=True):
        assert value == money(line["cantidad"] * line["precio_unitario"])


@SETTINGS
@given(amount=st.decimals(min_value=Decimal("0"), max_value=Decimal("999999999.99"), places=2))
def test_legend_spells_the_total(amount):
    words = amount_in_words(amount, "PEN")
    whole, cents = divmod(amount, 1)
    assert words == f"{integer_words(int(whole))} CON {int(cents * 100):02d}/100 SOLES"
    assert "  " not in words and not words.startswith(" ")
    assert _parse_spanish(integer_words(int(whole))) == int(whole)


_VALUES = {"CERO": 0, "UN": 1, "UNO": 1, "DOS": 2, "TRES": 3, "CUATRO": 4, "CINCO": 5, "SEIS": 6, "SIETE": 7,
           "OCHO": 8, "NUEVE": 9, "DIEZ": 10, "ONCE": 11, "DOCE": 12, "TRECE": 13, "CATORCE": 14, "QUINCE": 15,
           "DIECISÉIS": 16, "DIECISIETE": 17, "DIECIOCHO": 18, "DIECINUEVE": 19, "VEINTE": 20, "VEINTIUNO": 21,
           "VEINTIÚN": 21, "VEINTIDÓS": 22, "VEINTITRÉS": 23, "VEINTICUATRO": 24, "VEINTICINCO": 25,
           "VEINTISÉIS": 26, "VEINTISIETE": 27, "VEINTIOCHO": 28, "VEINTINUEVE": 29, "TREINTA": 30,
           "CUARENTA": 40, "CINCUENTA": 50, "SESENTA": 60, "SETENTA": 70, "OCHENTA": 80, "NOVENTA": 90,
           "CIEN": 100, "CIENTO": 100, "DOSCIENTOS": 200, "TRESCIENTOS": 300, "CUATROCIENTOS": 400,
           "QUINIENTOS": 500, "SEISCIENTOS": 600, "SETECIENTOS": 700, "OCHOCIENTOS": 800, "NOVECIENTOS": 900}


def _parse_spanish(words: str) -> int:
    """An independent reader of the words back into a number."""
    total, group = 0, 0
    for word in words.split():
        if word == "Y":
            continue
        if word in ("MILLÓN", "MILLONES"):
            total += group * 1_000_000
            group = 0
        elif word == "MIL":
            total += group * 1000
            group = 0
        else:
            group += _VALUES[word]
    return total + group


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5)
                           | st.decimals(allow_nan=True, allow_infinity=True),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                        max_size=3), max_leaves=8)


@SETTINGS
@given(serie=st.text(max_size=6), numero=st.integers(min_value=-5, max_value=10 ** 10), tipo=st.text(max_size=3),
       cantidad=st.decimals(allow_nan=True, allow_infinity=True), precio=st.decimals(allow_nan=True,
                                                                                    allow_infinity=True),
       igv=st.none() | st.decimals(allow_nan=True, allow_infinity=True), extra=json_values,
       descripcion=st.text(max_size=20), moneda=st.text(max_size=4))
def test_no_input_crashes_the_generator(engine, company, serie, numero, tipo, cantidad, precio, igv, extra,
                                        descripcion, moneda):
    request = {"tipo": tipo, "serie": serie, "numero": numero, "emisor": {"ruc": "20100066603"},
               "receptor": {"ruc": "20601030013", "razon_social": "CLIENTE"}, "moneda": moneda,
               "items": [{"descripcion": descripcion, "cantidad": cantidad, "precio_unitario": precio, "igv": igv}],
               "documento_referencia": extra if isinstance(extra, dict) else None}
    status, envelope = engine.call("xml", request)
    assert status in (200, 400, 409), envelope
    if status == 200:
        etree.fromstring(envelope["data"]["xml"].encode(), PARSER)


@SETTINGS
@given(text=texts)
def test_descriptions_round_trip_escaped(engine, company, text):
    try:
        doc = _document(engine, _factura([{"descripcion": text, "cantidad": Decimal(1),
                                           "precio_unitario": Decimal(1)}], 1))
    except YupanaError:
        raise AssertionError(f"printable description refused: {text!r}") from None
    xml = ubl.render(doc)
    root = etree.fromstring(xml.encode(), PARSER)
    assert root.findtext("cac:InvoiceLine/cac:Item/cbc:Description", namespaces=NS) == text
    assert "<" not in xml.split("<cbc:Description>")[1].split("</cbc:Description>")[0]


bag_lines = st.fixed_dictionaries({"descripcion": st.just("Bolsa plástica"),
                                   "cantidad": st.integers(min_value=1, max_value=99_999).map(Decimal),
                                   "precio_unitario": st.decimals(min_value=Decimal("0.01"), max_value=Decimal("1"),
                                                                  places=2, allow_nan=False),
                                   # a paid bag is gravado, or exonerado or inafecto (the Amazonía, issue 37)
                                   "tipo_afectacion_igv": st.sampled_from(["10", "10", "20", "30"]),
                                   "icbper": st.just(True)})
years = st.sampled_from([("2019-09-01", "0.10"), ("2020-01-01", "0.20"), ("2021-01-01", "0.30"),
                         ("2022-01-01", "0.40"), ("2023-01-01", "0.50"), ("2026-01-01", "0.50")])


@st.composite
def discounted(draw, lines=items | bag_lines) -> dict:
    """A line, and half the time a discount from 0 up to (not including) its value (cantidad × precio_unitario)."""
    line = draw(lines)
    if draw(st.booleans()):
        gross = money(line["cantidad"] * line["precio_unitario"])
        descuento = money(gross * draw(st.decimals(min_value=0, max_value=Decimal("0.999"), places=3)))
        if descuento < gross:
            line = {**line, "descuento": descuento}
    return line


FREE_GRAVADO = ["11", "12", "13", "14", "15", "16"]
FREE = [*FREE_GRAVADO, "21", "31", "32", "33", "34", "35", "36", "37"]
# A free transfer: its price is the reference value (above 0), nothing charged; sometimes free bags (ICBPER is
# still due on them), whose free IGV stays within SUNAT's 3292 tolerance of 1.00 (beyond it: refused, issue 37).
free_lines = st.fixed_dictionaries(
    {"descripcion": texts, "cantidad": st.integers(min_value=1, max_value=500).map(Decimal),
     "precio_unitario": st.decimals(min_value=Decimal("0.01"), max_value=Decimal("5000"), places=4, allow_nan=False),
     "tipo_afectacion_igv": st.sampled_from(FREE)}) | st.fixed_dictionaries(
    {"descripcion": st.just("Bolsa de regalo"), "cantidad": st.integers(min_value=1, max_value=18).map(Decimal),
     "precio_unitario": st.decimals(min_value=Decimal("0.01"), max_value=Decimal("0.30"), places=2, allow_nan=False),
     "tipo_afectacion_igv": st.sampled_from(FREE), "icbper": st.just(True)})
PAID = "[not(cac:TaxCategory/cac:TaxScheme/cbc:ID='9996')]"
GRA = "cac:TaxTotal/cac:TaxSubtotal[cac:TaxCategory/cac:TaxScheme/cbc:ID='9996']"


@SETTINGS
@given(lines=st.lists(discounted() | free_lines, min_size=1, max_size=8), year=years,
       share=st.none() | st.decimals(min_value=0, max_value=Decimal("0.999"), places=3))
def test_totals_with_bags_discounts_and_free_lines_add_up_and_the_legend_spells_the_payable(engine, company, lines,
                                                                                             year, share):
    """Issue 17's acceptance: with discounts, bags and free lines mixed, the totals add up (free lines stated in the
    9996 subtotal, never charged) and legend 1000 spells the payable amount."""
    fecha, rate = year
    gravado = sum((money(line["cantidad"] * line["precio_unitario"]) - line.get("descuento", 0)
                   for line in lines if line["tipo_afectacion_igv"] == "10"), Decimal(0))
    descuento_global = money(gravado * share) if share is not None and gravado else None
    if descuento_global is not None and descuento_global >= gravado:
        descuento_global = None
    request = {**_factura(lines, 1), "fecha_emision": fecha}
    if descuento_global:
        request["descuento_global"] = descuento_global
    doc = _document(engine, request)
    root = etree.fromstring(ubl.render(doc).encode(), PARSER)

    def amounts(path: str, node=root) -> list[Decimal]:
        return [Decimal(v) for v in node.xpath(path, namespaces=NS)]

    bag_path = "cac:TaxTotal/cac:TaxSubtotal[cac:TaxCategory/cac:TaxScheme/cbc:ID='7152']/cbc:TaxAmount/text()"
    line_bags = amounts(f"cac:InvoiceLine/{bag_path}")
    bags = sum(line["cantidad"] for line in lines if line.get("icbper"))
    assert sum(line_bags) == bags * Decimal(rate)
    assert amounts(bag_path) == ([sum(line_bags)] if bags else [])
    total_value = amounts("cac:LegalMonetaryTotal/cbc:LineExtensionAmount/text()")[0]
    total_tax = amounts("cac:TaxTotal/cbc:TaxAmount/text()")[0]
    free = [line.get("tipo_afectacion_igv") in FREE for line in lines]
    paid_lines = "cac:InvoiceLine[not(cac:PricingReference/cac:AlternativeConditionPrice/cbc:PriceTypeCode='02')]"
    assert sum(amounts(f"{paid_lines}/cbc:LineExtensionAmount/text()")) - (descuento_global or 0) == total_value
    assert sum(amounts(f"cac:TaxTotal/cac:TaxSubtotal{PAID}/cbc:TaxAmount/text()")) == total_tax
    assert sum(amounts(f"cac:TaxTotal/cac:TaxSubtotal{PAID}/cbc:TaxableAmount/text()")) == total_value
    free_values = [money(line["cantidad"] * line["precio_unitario"]) for line, f in zip(lines, free, strict=True) if f]
    free_igv = [money(money(line["cantidad"] * line["precio_unitario"]) * Decimal("0.18"))
                for line, f in zip(lines, free, strict=True) if f and line["tipo_afectacion_igv"] in FREE_GRAVADO]
    free_igv_on_lines = free_igv  # every free line states its IGV in its TaxAmount, bags or not (issue 37)
    assert amounts(f"{GRA}/cbc:TaxableAmount/text()") == ([sum(free_values)] if any(free) else [])
    assert amounts(f"{GRA}/cbc:TaxAmount/text()") == ([sum(free_igv, Decimal("0.00"))] if any(free) else [])
    assert root.xpath("cbc:Note[@languageLocaleID='1002']/text()", namespaces=NS) == (
        [ubl.FREE_LEGEND] if any(free) else [])
    assert amounts("cac:InvoiceLine/cac:Price/cbc:PriceAmount/text()") == [
        Decimal(0) if f else line["precio_unitario"] for line, f in zip(lines, free, strict=True)]
    assert amounts("cac:AllowanceCharge/cbc:Amount/text()") == ([descuento_global] if descuento_global else [])
    if descuento_global:  # the IGV is the rate on the base after the discount
        igv_path = "cac:TaxTotal/cac:TaxSubtotal[cac:TaxCategory/cac:TaxScheme/cbc:ID='1000']/cbc:{}/text()"
        base = amounts(igv_path.format("TaxableAmount"))[0]
        assert base == gravado - descuento_global
        assert amounts(igv_path.format("TaxAmount")) == [money(base * Decimal("0.18"))]
    else:  # the lines' taxes (bags included: a free bag pays ICBPER) are the charged taxes plus the free IGV
        assert sum(amounts("cac:InvoiceLine/cac:TaxTotal/cbc:TaxAmount/text()")) == total_tax + sum(free_igv_on_lines)
    payable = amounts("cac:LegalMonetaryTotal/cbc:PayableAmount/text()")[0]
    assert payable == total_value + total_tax == amounts("cac:LegalMonetaryTotal/cbc:TaxInclusiveAmount/text()")[0]
    assert root.findtext("cbc:Note[@languageLocaleID='1000']", namespaces=NS) == amount_in_words(payable)
    for line, node in zip(lines, root.findall("cac:InvoiceLine", NS), strict=True):
        count = node.findtext("cac:TaxTotal/cac:TaxSubtotal/cbc:BaseUnitMeasure", namespaces=NS)
        assert count == (str(line["cantidad"]) if line.get("icbper") else None)
        discount = line.get("descuento")
        value = amounts("cbc:LineExtensionAmount/text()", node)[0]
        assert value == money(line["cantidad"] * line["precio_unitario"]) - (discount or 0)
        price_type = "02" if line.get("tipo_afectacion_igv") in FREE else "01"
        assert node.findtext("cac:PricingReference/cac:AlternativeConditionPrice/cbc:PriceTypeCode",
                             namespaces=NS) == price_type
        assert amounts("cac:AllowanceCharge/cbc:Amount/text()", node) == ([discount] if discount else [])


spots = st.fixed_dictionaries({"codigo": st.sampled_from(["022", "037", "999", ""]) | st.text(max_size=4),
                               "cuenta": st.sampled_from(["00-741-123456", ""]) | st.text(max_size=22)},
                              optional={"porcentaje": st.decimals(allow_nan=True, allow_infinity=True),
                                        "medio_pago": st.sampled_from(["001", "003", "777"]) | st.text(max_size=4)})
references = st.lists(st.fixed_dictionaries({"serie": st.sampled_from(["T001", "EG01", "F001"]) | st.text(max_size=5),
                                             "numero": st.integers(min_value=-3, max_value=10 ** 9)}), max_size=3)


@SETTINGS
@given(detraccion=json_values | spots, guias=json_values | references, orden=json_values, tipo_operacion=json_values | st.sampled_from(["0101", "0201", "1001"]),
       tipo_cambio=json_values | st.decimals(allow_nan=True, allow_infinity=True), codigo_detraccion=json_values, motivo=st.sampled_from([None, "10", "11", "12", "13"]),
       tipo=st.sampled_from(["01", "03", "07", "08"]), forma_pago=json_values,
       afectacion=st.sampled_from(["10", "13", "21", "31", "40"]))
def test_no_content_extra_crashes_the_generator(engine, company, detraccion, guias, orden, tipo_operacion, tipo_cambio,
                                                codigo_detraccion, motivo, tipo, forma_pago, afectacion):
    """Issue 17's extras, any JSON in them: a 200 with well-formed XML or a 400, never a crash."""
    request = {"tipo": tipo, "serie": "F001", "numero": 1, "emisor": {"ruc": "20100066603"},
               "receptor": {"ruc": "20601030013", "razon_social": "CLIENTE"},
               "items": [{"descripcion": "Servicio", "cantidad": Decimal(1), "precio_unitario": Decimal("900"),
                          "tipo_afectacion_igv": afectacion, "codigo_detraccion": codigo_detraccion}],
               "detraccion": detraccion, "guias": guias, "orden_compra": orden, "tipo_operacion": tipo_operacion,
               "tipo_cambio": tipo_cambio, "forma_pago": forma_pago, "codigo_motivo": motivo,
               "documento_referencia": {"tipo": "01", "serie": "F001", "numero": 1} if tipo in ("07", "08") else None}
    status, envelope = engine.call("xml", request)
    assert status in (200, 400, 409), envelope
    if status == 200:
        etree.fromstring(envelope["data"]["xml"].encode(), PARSER)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(discounted() | free_lines, min_size=1, max_size=5), year=years,
       share=st.none() | st.decimals(min_value=0, max_value=Decimal("0.999"), places=3))
def test_sunat_rules_accept_mixed_free_bag_and_discounted_vouchers(engine, company, sunat_rules, lines, year, share):
    """The same mixes, judged by SUNAT's own rule sheets (unsigned: rules only): no rejection, no observation."""
    gravado = sum((money(line["cantidad"] * line["precio_unitario"]) - line.get("descuento", 0)
                   for line in lines if line["tipo_afectacion_igv"] == "10"), Decimal(0))
    request = {**_factura(lines, 1), "fecha_emision": year[0]}
    if share is not None and gravado and money(gravado * share) < gravado:
        request["descuento_global"] = money(gravado * share)
    try:
        doc = _document(engine, request)
    except YupanaError as refused:  # only what SUNAT would refuse too: a line left without value (3105)
        assert {d.sunat_code for d in refused.details} <= {"3105"}, refused.details
        return
    verdict = sunat_rules(ubl.render(doc), "20100066603-01-F001-1.xml")
    assert verdict["rejection"] is None and verdict["observations"] == [], f"{verdict} {request}"


@pytest.fixture(scope="module")
def sunat_rules(tmp_path_factory):
    module = load_sunat_check()
    folder = tmp_path_factory.mktemp("rules")

    def judge(xml: str, file_name: str) -> dict:
        path = folder / file_name
        path.write_text(xml, encoding="utf-8")
        doc = module.etree.parse(str(path))
        local, tipo, *_ = module.describe(doc)
        return module.check_rules(doc, local, tipo, file_name)

    return judge
