"""The local API beyond the contract for guías de remisión (issue 36, point 4), over real HTTP against the GRE
sandbox: operation 1 builds a guía, operation 2 signs it like a voucher, operation 3 refuses it with a 400 that names
the guías' own route, and that route (POST /api/v1/guias/enviar) sends it through the GRE outbox to an accepted CDR;
the guías' route refuses a factura naming operation 3."""

from __future__ import annotations

import base64
import io
import zipfile

import httpx
import pytest
from lxml import etree

from app.api.local import LocalApi
from app.core.api import statuses
from app.core.invoicing import xmldsig
from app.sandbox.sunat_gre import QR_LINK
from tests.helpers.base import ISSUER_RUC
from tests.helpers.guia_matrix import remitente

CBC = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"


@pytest.fixture
def certificado_id(engine, company) -> str:
    return engine.invoicing.create_test_certificate(company.ruc).certificado_id


@pytest.fixture
def api(engine, certificado_id, gre):
    gre.configure(engine)
    engine.admin.config_set("sunat_gre_wait_s", "2")
    server = LocalApi(engine, port=0)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def http(api):
    with httpx.Client(base_url=api.base_url + "/api/v1", headers={"Authorization": f"Bearer {api.token}"},
                      timeout=30) as client:
        yield client


def _signed_guia(http: httpx.Client, numero: int, certificado_id: str) -> str:
    generated = http.post("/facturacion/xml", json=remitente(numero))
    assert generated.status_code == 200, generated.text
    assert etree.fromstring(generated.json()["data"]["xml"].encode()).tag.endswith("DespatchAdvice")
    signed = http.post("/facturacion/firmar", json={"xml": generated.json()["data"]["xml"],
                                                   "certificado_id": certificado_id})
    assert signed.status_code == 200, signed.text
    return signed.json()["data"]["xml_firmado"]


def test_operation_2_signs_a_guia_like_a_voucher(http, engine, certificado_id):
    xml_firmado = _signed_guia(http, 1, certificado_id)
    verification = xmldsig.verify_xml(xml_firmado.encode())
    assert verification.valid, verification.reason
    stored = engine.invoicing.voucher(engine.invoicing.find_voucher("T001-1", ISSUER_RUC, "09"))
    assert stored is not None and stored.status == statuses.FIRMADO


def test_operation_3_refuses_a_guia_naming_its_route_which_sends_it_through_the_gre_outbox(http, engine, gre,
                                                                                        certificado_id):
    xml_firmado = _signed_guia(http, 2, certificado_id)
    refused = http.post("/facturacion/enviar", json={"xml_firmado": xml_firmado})
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == "INVALID_INPUT" and error["details"][0]["field"] == "xml_firmado"
    assert "POST /api/v1/guias/enviar" in error["message"] and "T001-2" in error["message"]
    assert gre.received_counts == {}  # refused before anything was queued or sent

    sent = http.post("/guias/enviar", json={"xml_firmado": xml_firmado})
    assert sent.status_code == 200, sent.text
    data = sent.json()["data"]
    assert (data["codigo_respuesta"], data["estado"]) == ("0", statuses.ACEPTADO)
    with zipfile.ZipFile(io.BytesIO(base64.b64decode(data["cdr"]))) as archive:
        cdr = etree.fromstring(archive.read(archive.namelist()[-1]))
    assert cdr.findtext(f".//{{{CBC}}}DocumentDescription").startswith(QR_LINK)
    assert gre.received_counts == {f"{ISSUER_RUC}-09-T001-2": 1}
    again = http.post("/guias/enviar", json={"xml_firmado": xml_firmado})  # the outbox answers from its CDR
    assert again.status_code == 200 and again.json()["data"]["hash_cdr"] == data["hash_cdr"]
    assert gre.received_counts == {f"{ISSUER_RUC}-09-T001-2": 1}
    voucher_id = engine.invoicing.find_voucher("T001-2", ISSUER_RUC, "09")
    assert engine.invoicing.voucher(voucher_id).status == statuses.ACEPTADO


def test_the_guias_route_refuses_a_factura_naming_operation_3(http, gre):
    from tests.helpers.sunat_support import signed_sample

    refused = http.post("/guias/enviar", json={"xml_firmado": signed_sample().decode("utf-8")})
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["details"][0]["field"] == "xml_firmado"
    assert "no una guía de remisión" in error["message"] and "POST /api/v1/facturacion/enviar" in error["message"]
    assert gre.received_counts == {}


def test_the_guias_route_is_in_the_openapi_document(api):
    document = httpx.get(api.base_url + "/openapi.json", timeout=10).json()
    route = document["paths"]["/api/v1/guias/enviar"]["post"]
    assert route["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/EnviarRequest")
    assert route["security"] == [{"bearerAuth": []}]
    assert "400" in route["responses"] and "200" in route["responses"]
