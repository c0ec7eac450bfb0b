"""The pure RA (comunicación de baja) and RC (resumen diario) builders, checked by SUNAT's own sheets."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from lxml import etree

from app.core.invoicing import summaries as s
from app.core.invoicing.certificates import make_test_certificate
from app.core.invoicing.namespaces import UBL
from app.core.invoicing.xmldsig import sign_xml
from app.core.platform import clock
from tests.helpers.oracles import run_sunat_check

ISSUER = s.Issuer("20600000005", "COMERCIAL ANDINA & HIJOS S.A.C.")
TODAY = clock.today()


@pytest.fixture(scope="module")
def signer():
    return make_test_certificate(ISSUER.ruc, ISSUER.razon_social)


def sunat_check(tmp_path, xml: bytes, ident: str) -> dict:
    path = tmp_path / f"{s.file_name(ISSUER.ruc, ident)}.xml"
    path.write_bytes(xml)
    done = run_sunat_check(path, "--strict", "--json")
    report = json.loads(done.stdout)
    report["returncode"] = done.returncode
    return report


def voided(lines=None) -> tuple[str, bytes]:
    ident = s.summary_id("RA", TODAY, 1)
    return ident, s.build_voided(ISSUER, ident, TODAY - dt.timedelta(days=2), TODAY, lines or [
        s.VoidLine("01", "F001", 482, "ERROR EN EL RUC DEL CLIENTE Ñ <&>"),
        s.VoidLine("07", "FC01", 3, "OPERACIÓN ANULADA POR EL CLIENTE")])


def summary() -> tuple[str, bytes]:
    ident = s.summary_id("RC", TODAY, 2)
    gravadas = {"gravadas": Decimal("216")}
    return ident, s.build_summary(ISSUER, ident, TODAY - dt.timedelta(days=1), TODAY, [
        s.SummaryLine("03", "B001", 215, s.CONDITION_ADD, Decimal("254.88"), Decimal("38.88"), "1", "45781236",
                      montos=gravadas),
        s.SummaryLine("03", "B001", 198, s.CONDITION_VOID, Decimal("59"), Decimal("9"), "1", "40127765",
                      montos={"gravadas": Decimal("50")}),
        s.SummaryLine("07", "BC01", 12, s.CONDITION_ADD, Decimal("23.60"), Decimal("3.60"), "1", "45781236",
                      montos={"gravadas": Decimal("20")}, referencia=s.Reference("03", "B001", 180)),
        s.SummaryLine("03", "B002", 7, s.CONDITION_ADD, Decimal("100"), Decimal("0"),
                      montos={"exoneradas": Decimal("100")})])


@pytest.mark.parametrize("build", [voided, summary], ids=["RA", "RC"])
def test_signed_summaries_pass_sunats_sheets_schema_and_signature(tmp_path, signer, build):
    ident, xml = build()
    signed = sign_xml(xml, *signer).xml
    report = sunat_check(tmp_path, signed, ident)
    assert report["returncode"] == 0, report
    assert report["signature"]["ok"] is True and report["xsd"]["ok"] is True and report["sunat"]["ok"] is True, report


def test_the_oracle_agrees_a_boleta_is_not_voided_by_ra(tmp_path, signer):
    ident, xml = voided([s.VoidLine("03", "B001", 9, "ANULADA")])
    report = sunat_check(tmp_path, sign_xml(xml, *signer).xml, ident)
    assert report["returncode"] == 1 and "2308" in json.dumps(report)


def test_text_is_escaped_and_read_back_as_written():
    _ident, xml = voided()
    root = etree.fromstring(xml)
    assert root.findtext("cac:AccountingSupplierParty/cac:Party/cac:PartyLegalEntity/cbc:RegistrationName",
                         namespaces=UBL) == "COMERCIAL ANDINA & HIJOS S.A.C."
    reasons = root.xpath("//sac:VoidReasonDescription/text()", namespaces=UBL)
    assert reasons[0] == "ERROR EN EL RUC DEL CLIENTE Ñ <&>"
    assert root.xpath("//cbc:LineID/text()", namespaces=UBL) == ["1", "2"]


def test_rc_writes_only_the_amounts_it_has_with_two_decimals():
    _ident, xml = summary()
    root = etree.fromstring(xml)
    line = root.xpath("//sac:SummaryDocumentsLine", namespaces=UBL)[3]
    assert line.xpath("sac:BillingPayment/cbc:InstructionID/text()", namespaces=UBL) == ["02"]
    assert line.findtext("sac:TotalAmount", namespaces=UBL) == "100.00"
    assert line.findtext("cac:AccountingCustomerParty/cbc:AdditionalAccountID", namespaces=UBL) == "0"


def test_ids_and_file_names():
    assert s.summary_id("RA", dt.date(2026, 11, 21), 3) == "RA-20261121-3"
    assert s.parse_summary_id("RC-20261121-12") == ("RC", dt.date(2026, 11, 21), 12)
    assert s.file_name("20600000005", "RA-20261121-1") == "20600000005-RA-20261121-1"
    with pytest.raises(ValueError):
        s.summary_id("RX", TODAY, 1)
    with pytest.raises(ValueError):
        s.parse_summary_id("RA-2026-1")
    with pytest.raises(ValueError):
        s.build_voided(ISSUER, "RA-20261121-1", TODAY, TODAY, [])


def test_a_summary_of_no_voucher_is_refused():
    from datetime import date

    from app.core.invoicing import summaries

    issuer = summaries.Issuer("20100066603", "EMPRESA DEMO S.A.C.")
    for build in (summaries.build_voided, summaries.build_summary):
        with pytest.raises(ValueError, match="at least one voucher"):
            build(issuer, "RA-20261124-1", date(2026, 11, 24), date(2026, 11, 24), [])


def test_a_signed_summary_is_read_back_as_it_was_built(signer):
    """After a restore a RA/RC file is stored again from what it says (app.core.invoicing.recovered_summaries)."""
    ident, xml = voided()
    read = s.read_summary(sign_xml(xml, *signer).xml)
    assert (read.kind, read.ident, read.emisor_ruc) == ("RA", ident, ISSUER.ruc)
    assert (read.reference_date, read.issue_date) == (TODAY - dt.timedelta(days=2), TODAY)
    assert read.lines == [s.ReadLine("01", "F001", 482, s.CONDITION_VOID, "ERROR EN EL RUC DEL CLIENTE Ñ <&>"),
                          s.ReadLine("07", "FC01", 3, s.CONDITION_VOID, "OPERACIÓN ANULADA POR EL CLIENTE")]
    ident, xml = summary()
    read = s.read_summary(xml)
    assert (read.kind, read.ident, read.reference_date) == ("RC", ident, TODAY - dt.timedelta(days=1))
    assert [(line.tipo, line.serie, line.numero, line.condition) for line in read.lines] == [
        ("03", "B001", 215, "1"), ("03", "B001", 198, "3"), ("07", "BC01", 12, "1"), ("03", "B002", 7, "1")]
    with pytest.raises(ValueError, match="not a RA/RC"):
        s.read_summary(b"<Invoice xmlns='urn:oasis:names:specification:ubl:schema:xsd:Invoice-2'/>")
