"""Voucher content beyond the plain sale (issue 17): each feature's elements checked by XPath, and each voucher,
signed by operation 2, passes ../shared/tools/sunat_check.py --strict (schema, SUNAT's rules with no
observation, signature)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from lxml import etree

from app.core.errors import YupanaError
from tests.helpers.base import SUNAT_CHECK
from tests.helpers.voucher_matrix import CUSTOMER_NAME, CUSTOMER_RUC, DNI_CUSTOMER, boleta, factura, item, nota

NS = {"cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
      "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"}
needs_xmlsec = pytest.mark.skipif(shutil.which("xmlsec1") is None, reason="xmlsec1 is not installed")


@pytest.fixture
def issue(engine, company, tmp_path):
    """Generate, sign and judge a request with sunat_check.py --strict; answer the signed document's tree."""
    certificado_id = engine.create_test_certificate(company.ruc).certificado_id

    def run(request: dict):
        generated = engine.generar_xml(request)
        signed = engine.firmar({"xml": generated.xml, "certificado_id": certificado_id})
        path = tmp_path / generated.nombre_archivo
        path.write_text(signed.xml_firmado, encoding="utf-8")
        done = subprocess.run([sys.executable, str(SUNAT_CHECK), str(path), "--strict", "--json"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return etree.fromstring(signed.xml_firmado.encode())

    return run


def _refused(engine, request: dict) -> dict[str, tuple[str, str | None]]:
    with pytest.raises(YupanaError) as caught:
        engine.generar_xml(request)
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
    xml = engine.generar_xml(factura("F001", 102, [item("Servicio", "1", "100")])).xml
    assert etree.fromstring(xml.encode()).find(CUSTOMER_ADDRESS, NS) is None


@pytest.mark.parametrize(("direccion", "reason"), [("AV", "de 3 a 200"), ("A" * 201, "de 3 a 200"),
                                                    ("AV. LIMA\n123", "una sola línea")])
def test_bad_customer_address_is_refused(engine, company, direccion, reason):
    problems = _refused(engine, boleta("B001", 103, [item("Polo", "1", "30")], {**DNI_CUSTOMER, "direccion": direccion}))
    message, code = problems["receptor.direccion"]
    assert reason in message and "receptor.direccion" in message and code == "4236"
