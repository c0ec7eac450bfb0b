"""The printed voucher states what SUNAT's rules have it state for the sale's terms (issue 37), read back from the
PDF with poppler's pdftotext: the detracción's legend (RS 183-2004/SUNAT: «Operación sujeta al Sistema de Pago de
Obligaciones Tributarias con el Gobierno Central») with its code, rate, amount in soles and the seller's account at
the Banco de la Nación; the percepción's legend (RS 058-2006/SUNAT: «Comprobante de Percepción - Venta Interna", the
XML's legend 2000 with its regime) with its amount and the total with it; the retención of the IGV and the net
amount; each advance deducted; and the XML's other legends of catalogue 52 (IVAP 2007). The expected amounts are
read from the signed XML with XPath, not from the renderer."""

from __future__ import annotations

import re
import subprocess
from decimal import Decimal

import pytest
from lxml import etree

from app.core.invoicing.printing import layout
from app.core.platform import formatting as fmt
from tests.helpers.oracles import needs_poppler, pdf_text
from tests.helpers.voucher_breadth import BREADTH
from tests.helpers.voucher_matrix import MATRIX

NS = {"cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
      "cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"}
REQUESTS = dict(MATRIX) | dict(BREADTH)
SPOT = "Operación sujeta al Sistema de Pago de Obligaciones Tributarias con el Gobierno Central"


class Printed(str):
    """The PDF's text as pdftotext reads it (whitespace folded), and its lines as `pdftotext -layout` places them:
    a total's label and amount side by side."""

    lines: list[str]

    def row(self, label: str, amount: str) -> bool:
        return any(re.search(rf"{re.escape(label)}:?\s+{re.escape(amount)}(\s|$)", line) for line in self.lines)


def printed(engine, certificado_id, tmp_path, name: str, formato: str = "a4") -> tuple[Printed, etree._Element]:
    request = REQUESTS[name]
    generated = engine.invoicing.generate_xml(request)
    signed = engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado_id}).xml_firmado
    voucher_id = engine.invoicing.find_voucher(f"{request['serie']}-{request['numero']}", tipo=request["tipo"])
    target = tmp_path / f"{name}-{formato}.pdf"
    target.write_bytes(engine.invoicing.pdf(voucher_id, formato).content)
    text = Printed(pdf_text(target))
    text.lines = subprocess.run(["pdftotext", "-layout", str(target), "-"], capture_output=True,
                                check=True).stdout.decode("utf-8").splitlines()
    return text, etree.fromstring(signed.encode("utf-8"))


def xpath(root: etree._Element, path: str) -> str:
    found = root.xpath(f"string({path})", namespaces=NS)
    assert found, path
    return str(found)


def percent(text: str) -> str:
    return f"{Decimal(text).normalize():f}"


@needs_poppler
@pytest.mark.parametrize("formato", ["a4", "ticket"])
@pytest.mark.parametrize("name", ["factura-detraccion", "factura-detraccion-usd",
                                  "factura-credito-con-vencimiento-y-detraccion"])
def test_the_detraccion_is_printed_with_its_legend_code_rate_amount_and_account(engine, certificado_id, tmp_path,
                                                                                 name, formato):
    text, root = printed(engine, certificado_id, tmp_path, name, formato)
    terms = "cac:PaymentTerms[cbc:ID='Detraccion']"
    code, rate = xpath(root, f"{terms}/cbc:PaymentMeansID"), percent(xpath(root, f"{terms}/cbc:PaymentPercent"))
    amount = fmt.money(Decimal(xpath(root, f"{terms}/cbc:Amount")), "PEN")  # in soles, even on a USD voucher
    account = xpath(root, "cac:PaymentMeans[cbc:ID='Detraccion']/cac:PayeeFinancialAccount/cbc:ID")
    assert SPOT in text
    assert f"Detracción: código {code} ({rate} %), {amount}." in text
    assert f"Cuenta en el Banco de la Nación N.° {account}" in text
    assert text.row(f"Detracción ({rate} %)", amount)
    assert xpath(root, "cbc:Note[@languageLocaleID='2006']")  # the XML's legend, printed in full above


@needs_poppler
@pytest.mark.parametrize("name", ["factura-percepcion-venta-interna", "boleta-percepcion-combustible",
                                  "factura-percepcion-usd-tasa-especial"])
def test_the_percepcion_is_printed_with_its_legend_and_the_total_with_it(engine, certificado_id, tmp_path, name):
    text, root = printed(engine, certificado_id, tmp_path, name)
    charge = "cac:AllowanceCharge[cbc:AllowanceChargeReasonCode='51' or cbc:AllowanceChargeReasonCode='52' or " \
             "cbc:AllowanceChargeReasonCode='53']"
    rate = percent(str(Decimal(xpath(root, f"{charge}/cbc:MultiplierFactorNumeric")) * 100))
    amount = fmt.money(Decimal(xpath(root, f"{charge}/cbc:Amount")), "PEN")
    with_it = fmt.money(Decimal(xpath(root, "cac:PaymentTerms[cbc:ID='Percepcion']/cbc:Amount")), "PEN")
    legend = xpath(root, "cbc:Note[@languageLocaleID='2000']")  # catalogue 52: «COMPROBANTE DE PERCEPCIÓN»
    assert legend in text  # the XML's legend, as SUNAT's catalogue 52 words it
    assert text.count("COMPROBANTE DE PERCEPCIÓN") == 1
    assert text.row(f"Percepción ({rate} %)", amount)
    assert text.row("Total con percepción", with_it)
    payable = Decimal(xpath(root, "cac:LegalMonetaryTotal/cbc:PayableAmount"))
    assert text.row("IMPORTE TOTAL", fmt.money(payable, xpath(root, "cbc:DocumentCurrencyCode")))  # not in it


@needs_poppler
@pytest.mark.parametrize("name", ["factura-retencion", "factura-retencion-credito"])
def test_the_retencion_is_printed_with_its_legend_and_the_net_amount(engine, certificado_id, tmp_path, name):
    text, root = printed(engine, certificado_id, tmp_path, name)
    charge = "cac:AllowanceCharge[cbc:AllowanceChargeReasonCode='62']"
    rate = percent(str(Decimal(xpath(root, f"{charge}/cbc:MultiplierFactorNumeric")) * 100))
    retained = Decimal(xpath(root, f"{charge}/cbc:Amount"))
    payable = Decimal(xpath(root, "cac:LegalMonetaryTotal/cbc:PayableAmount"))
    assert rate == "3"
    assert f"Operación sujeta a retención del IGV: el cliente, agente de retención, retiene 3 % " \
           f"({fmt.money(retained, 'PEN')})." in text
    assert text.row("Retención del IGV (3 %)", fmt.money(retained, "PEN"))
    assert text.row("Neto a pagar", fmt.money(payable - retained, "PEN"))
    assert text.row("IMPORTE TOTAL", fmt.money(payable, "PEN"))


@needs_poppler
@pytest.mark.parametrize("name", ["factura-con-anticipo", "factura-dos-anticipos-y-exonerado"])
def test_each_advance_deducted_is_printed_with_its_voucher_and_amount(engine, certificado_id, tmp_path, name):
    text, root = printed(engine, certificado_id, tmp_path, name)
    moneda = xpath(root, "cbc:DocumentCurrencyCode")
    payments = root.xpath("cac:PrepaidPayment", namespaces=NS)
    assert payments
    for payment in payments:
        advance = xpath(root, f"cac:AdditionalDocumentReference[cbc:DocumentStatusCode='{xpath(payment, 'cbc:ID')}']"
                              "/cbc:ID")
        assert text.row(f"Anticipo {advance}", f"- {fmt.money(Decimal(xpath(payment, 'cbc:PaidAmount')), moneda)}")
    payable = Decimal(xpath(root, "cac:LegalMonetaryTotal/cbc:PayableAmount"))
    assert text.row("IMPORTE TOTAL", fmt.money(payable, moneda))


@needs_poppler
def test_the_xmls_other_legends_are_printed(engine, certificado_id, tmp_path):
    text, root = printed(engine, certificado_id, tmp_path, "factura-arroz-pilado-ivap")
    assert xpath(root, "cbc:Note[@languageLocaleID='2007']") in text  # «Operación sujeta al IVAP»


@pytest.mark.parametrize("with_legend", [True, False])
def test_the_percepcion_legend_is_the_xmls_and_printed_once(engine, certificado_id, with_legend):
    """The printed legend is the XML's legend 2000; a voucher signed before it carried one (a stored XML) still
    prints it, once."""
    from app.core.invoicing.printing.document import parse

    request = REQUESTS["factura-percepcion-venta-interna"]
    generated = engine.invoicing.generate_xml(request)
    signed = engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado_id}).xml_firmado
    root = etree.fromstring(signed.encode("utf-8"))
    (note,) = root.xpath("cbc:Note[@languageLocaleID='2000']", namespaces=NS)
    if with_legend:
        note.text = "Comprobante de percepción (texto del XML)"
    else:
        root.remove(note)
    found = layout.notices(parse(etree.tostring(root, encoding="unicode")))
    expected = ("Comprobante de percepción (texto del XML)" if with_legend else "COMPROBANTE DE PERCEPCIÓN")
    assert found == [expected]


def test_a_voucher_without_sale_terms_prints_no_notices(engine, certificado_id):
    from app.core.invoicing.printing.document import parse

    request = REQUESTS["factura-ferreteria-sacos-rollos-pies"]
    generated = engine.invoicing.generate_xml(request)
    signed = engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado_id}).xml_firmado
    assert layout.notices(parse(signed)) == []
