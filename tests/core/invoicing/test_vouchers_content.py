"""Voucher content beyond the plain sale (issue 17): each feature's elements checked by XPath, and each voucher,
signed by operation 2, passes ../shared/tools/sunat_check.py --strict (schema, SUNAT's rules with no
observation, signature)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from decimal import Decimal

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


@pytest.mark.parametrize(("raw", "places", "expected"), [
    ("31.830000000000002", 2, "31.83"), ("0.30000000000000004", 10, "0.3000000000"), ("1.7199999999999999", 2, "1.72"),
    ("1234567.8900000001", 2, "1234567.89"), ("12.345", 2, "12.345"), ("0.001", 2, "0.001"), ("1.005", 2, "1.005"),
    ("100", 2, "100"), ("1.5", 10, "1.5"), ("1E-20", 2, "1E-20"),
])
def test_denoised(raw, places, expected):
    from app.core.contract import denoised

    assert str(denoised(Decimal(raw), places)) == expected


def test_a_python_float_is_read_as_its_repr():
    from app.core.contract import denoised

    assert denoised(1.5 + 9 * 3.37, 2) == Decimal("31.83") and denoised(0.1, 2) == Decimal("0.1")


def test_real_extra_decimals_and_strings_are_still_refused(engine, company):
    from tests.helpers.voucher_matrix import _due

    request = _noisy(_due(30))
    request["forma_pago"]["cuotas"][0]["monto"] = Decimal("11.275")  # a real third decimal, not noise
    request["items"][0]["cantidad"] = "31.830000000000002"  # a string is taken as typed
    problems = _refused(engine, request)
    assert problems["forma_pago.cuotas[0].monto"][1] == "3253"
    assert "items[0].cantidad" in problems
