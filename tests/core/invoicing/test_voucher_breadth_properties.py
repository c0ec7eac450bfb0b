"""Issue 37's acceptance, as properties: across random mixes of lines (gravado, exonerado, inafecto, free), ISC (its
three systems), line charges and discounts (00, 01, 47, 48), bags (on gravado, exonerado and inafecto lines), global charges and discounts
(02, 03, 45, 46, 49, 50), rounding, percepción and retención, every voucher Yupana builds passes SUNAT's rule sheets
(sunat_check imported once for the module) and PayableAmount = TaxInclusiveAmount − AllowanceTotalAmount +
ChargeTotalAmount − PrepaidAmount + PayableRoundingAmount, the discounts and charges that affect the base being
inside TaxInclusiveAmount (some mixes deduct an anticipo); the retención (62) and the percepción (51-53) never change
it."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from lxml import etree

from app.core.contract import GenerarXmlRequest, parse_model
from app.core.errors import YupanaError
from app.core.invoicing import ubl
from app.core.invoicing.amounts import amount_in_words, money
from tests.helpers.oracles import load_sunat_check

NS = {"cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
      "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"}
PARSER = etree.XMLParser(resolve_entities=False, no_network=True)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
D = Decimal
prices = st.decimals(min_value=D("0.50"), max_value=D("900"), places=2, allow_nan=False)
quantities = st.integers(min_value=1, max_value=40).map(D)
shares = st.decimals(min_value=D("0.01"), max_value=D("0.40"), places=2, allow_nan=False)


@st.composite
def paid_lines(draw) -> dict:
    """A paid line: gravado, exonerado or inafecto; sometimes bags; sometimes its discount (00) and other charges
    and discounts (01, 47, 48), each a share of its value."""
    afectacion = draw(st.sampled_from(["10", "10", "20", "30"]))
    line: dict = {"descripcion": "Artículo", "cantidad": draw(quantities), "precio_unitario": draw(prices),
                  "tipo_afectacion_igv": afectacion}
    if draw(st.integers(0, 4)) == 0:
        line.update(descripcion="Bolsa plástica", precio_unitario=draw(st.sampled_from([D("0.10"), D("0.20")])),
                    icbper=True)
    gross = money(line["cantidad"] * line["precio_unitario"])
    if draw(st.booleans()) and money(gross * D("0.2")) > 0:
        line["descuento"] = money(gross * draw(shares) / 2)
    extras = [{"codigo": code, "monto": money(gross * draw(shares) / 2)}
              for code in draw(st.lists(st.sampled_from(["01", "47", "48"]), max_size=2, unique=True))]
    extras = [extra for extra in extras if extra["monto"] > 0]
    if extras:
        line["cargos_descuentos"] = extras
    if afectacion == "10" and not line.get("icbper") and draw(st.integers(0, 3)) == 0:  # ISC, any of its systems
        system = draw(st.sampled_from(["01", "02", "03"]))
        line["isc"] = ({"sistema": "02", "monto": draw(st.sampled_from([D("0.50"), D("1.20")]))} if system == "02"
                       else {"sistema": system, "tasa": draw(st.sampled_from([D("10"), D("30"), D("50")])),
                             **({"precio_publico": line["precio_unitario"] * D("1.3")} if system == "03" else {})})
    return line


free_lines = st.fixed_dictionaries({"descripcion": st.just("Obsequio"), "cantidad": quantities,
                                    "precio_unitario": st.decimals(min_value=D("0.10"), max_value=D("50"), places=2,
                                                                   allow_nan=False),
                                    "tipo_afectacion_igv": st.sampled_from(["13", "15", "21", "31", "33"])})


@st.composite
def vouchers(draw) -> dict:
    lines = draw(st.lists(paid_lines(), min_size=1, max_size=4)) + draw(st.lists(free_lines, max_size=1))
    request: dict = {"tipo": "01", "serie": "F001", "numero": 1, "emisor": {"ruc": "20100066603"},
                     "receptor": {"ruc": "20601030013", "razon_social": "CLIENTE S.A.C."}, "items": lines}
    gravado = any(line["tipo_afectacion_igv"] == "10" for line in lines)
    globals_ = draw(st.lists(st.sampled_from(["03", "45", "46", "49", "50"] if gravado else ["03", "45", "46", "50"]),
                             max_size=3, unique=True))
    if globals_:
        request["cargos_descuentos"] = [{"codigo": code, "monto": draw(st.decimals(
            min_value=D("0.01"), max_value=D("5"), places=2, allow_nan=False))} for code in globals_]
    gravado_value = sum((money(line["cantidad"] * line["precio_unitario"]) - line.get("descuento", 0)
                         for line in lines if line["tipo_afectacion_igv"] == "10"), D(0))
    if gravado_value > 1 and draw(st.booleans()):
        request["descuento_global"] = D("0.50")
    if gravado_value > 10 and draw(st.booleans()):  # an advance of up to a third of the gravado value, with IGV
        request["anticipos"] = [{"tipo": "02", "serie": "F001", "numero": 1,
                                 "monto": money(gravado_value * draw(shares) * D("0.8") * D("1.18"))}]
    if draw(st.booleans()):
        request["redondeo"] = draw(st.decimals(min_value=D("-1"), max_value=D("1"), places=2, allow_nan=False))
    kept = draw(st.sampled_from(["nada", "retencion", "percepcion"]))
    if kept == "retencion":
        request["retencion"] = {}
    elif kept == "percepcion":
        request["percepcion"] = {"codigo": draw(st.sampled_from(["51", "52", "53"]))}
    return request


@pytest.fixture(scope="module")
def sunat_rules(tmp_path_factory):
    module = load_sunat_check()
    folder = tmp_path_factory.mktemp("rules")

    def judge(xml: str) -> dict:
        module._register_extensions()  # the checker's dp:variable, whatever ran before in this process
        path = folder / "20100066603-01-F001-1.xml"
        path.write_text(xml, encoding="utf-8")
        doc = module.etree.parse(str(path))
        local, tipo, *_ = module.describe(doc)
        return module.check_rules(doc, local, tipo, path.name)

    return judge


def _amounts(root) -> dict[str, Decimal]:
    return {child.tag.split("}")[1]: D(child.text) for child in root.find("cac:LegalMonetaryTotal", NS)}


def _built(engine, request: dict) -> str:
    return ubl.render(engine._generation.build(parse_model(GenerarXmlRequest, request)))


@SETTINGS
@given(request=vouchers())
def test_random_mixes_pass_sunats_sheets_and_the_payable_follows_sunats_formula(engine, company, sunat_rules, request):
    try:
        xml = _built(engine, request)
    except YupanaError as refused:  # only what SUNAT refuses too: a payable amount below zero (3280), a percepción
        # or retención that rounds to 0.00 (2968)
        assert {d.sunat_code for d in refused.details} <= {"3280", "2968"}, refused.details
        event("refused")
        return
    # libxml2 reads some amounts one ulp low («4.69» as 4.6899999999999995) while round(x × 100) div 100 gives the
    # nearest double, so the checker's 2509 (PrepaidAmount against the PaidAmount summed) fires for them; SUNAT's own
    # processor is not libxslt, so such advances are left out here rather than refused by Yupana (see the report).
    for paid in request.get("anticipos", ()):
        probe = etree.fromstring(f"<a>{paid['monto']:.2f}</a>")
        assume(not probe.xpath("(round(number(.) * 100) div 100) != number(.)"))
    verdict = sunat_rules(xml)
    assert verdict["rejection"] is None and verdict["observations"] == [], f"{verdict} {request}"
    root = etree.fromstring(xml.encode(), PARSER)
    totals = _amounts(root)
    payable = (totals["TaxInclusiveAmount"] - totals.get("AllowanceTotalAmount", D(0))
               + totals.get("ChargeTotalAmount", D(0)) - totals.get("PrepaidAmount", D(0))
               + totals.get("PayableRoundingAmount", D(0)))
    assert totals["PayableAmount"] == payable
    assert root.findtext("cbc:Note[@languageLocaleID='1000']", namespaces=NS) == amount_in_words(payable)
    # What affects the base is inside TaxInclusiveAmount: the lines' values (after 00, with 47) less 02 plus 49.
    paid = "cac:InvoiceLine[not(cac:PricingReference/cac:AlternativeConditionPrice/cbc:PriceTypeCode='02')]"
    lines_value = sum((D(v) for v in root.xpath(f"{paid}/cbc:LineExtensionAmount/text()", namespaces=NS)), D(0))
    inside = {code: sum((D(v) for v in root.xpath(
        f"cac:AllowanceCharge[cbc:AllowanceChargeReasonCode='{code}']/cbc:Amount/text()", namespaces=NS)), D(0))
        for code in ("02", "49")}
    assert totals["LineExtensionAmount"] == lines_value - inside["02"] + inside["49"]
    # The retención and the percepción are stated, never in the payable amount: the same sale without them pays
    # the same.
    if "retencion" in request or "percepcion" in request:
        plain = {key: value for key, value in request.items() if key not in ("retencion", "percepcion")}
        assert _amounts(etree.fromstring(_built(engine, plain).encode(), PARSER))["PayableAmount"] == payable
