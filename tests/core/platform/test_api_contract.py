"""All eight operations over real HTTP (uvicorn on port 0), every body compared with the contract.

The field lists below are copied from ../shared/spec/service-contract.md (the outside oracle), not from
app.core.contract. The invoicing chain 1 → 2 → 3 runs against the SUNAT sandbox; the lookups against the
registry sandbox. Operations 4 and 5 answer NOT_CONFIGURED until a messaging gateway exists (the messaging
work adds it): their error envelopes are compared here.
"""

from __future__ import annotations

import base64
import hashlib
import json

import httpx
import pytest

from app.api.local import LocalApi, success_model
from app.core.invoicing import cdr
from tests.helpers.base import ISSUER_RUC
from tests.helpers.voucher_matrix import factura, item

CONTRACT_FIELDS = {
    "xml": {"xml": str, "hash": str, "nombre_archivo": str},
    "firmar": {"xml_firmado": str, "digest_value": str, "signature_value": str},
    "enviar": {"codigo_respuesta": str, "descripcion": str, "cdr": str, "hash_cdr": str},
    "ruc": dict.fromkeys(["ruc", "razon_social", "tipo_contribuyente", "estado", "condicion", "direccion",
                          "departamento", "provincia", "distrito", "actividad_economica"], str),
    "ce": dict.fromkeys(["ce", "nombre_completo", "nombres", "apellido_paterno", "apellido_materno", "nacionalidad",
                         "estado"], str),
    "placa": {"placa": str, "marca": str, "modelo": str, "color": str, "año": int, "clase": str, "serie": str,
              "motor": str},
    "chat-send": {"id": str, "status": str, "to": str, "timestamp": int},
    "chat-webhook": {"instance": str, "url": str, "events": list},
}
# Yupana's documented extras (docs/contract.md «Unknown fields»).
EXTRAS = {"xml": {"observaciones"}, "firmar": {"certificado_por_vencer"}, "enviar": {"estado", "observaciones"},
          "ruc": {"fuente", "desactualizado"}, "ce": {"fuente", "desactualizado"}, "placa": {"fuente", "desactualizado"},
          "chat-send": set(), "chat-webhook": {"id", "secret"}}


def assert_contract_body(operation: str, answer: httpx.Response) -> dict:
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    assert set(body) == {"success", "data"} and body["success"] is True
    data = body["data"]
    fields = CONTRACT_FIELDS[operation]
    assert set(fields) <= set(data) <= set(fields) | EXTRAS[operation], sorted(data)
    for name, kind in fields.items():
        assert data[name] is None or isinstance(data[name], kind), (name, data[name])
    return data


def assert_error_body(answer: httpx.Response, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert set(body) == {"success", "error"} and body["success"] is False
    assert set(body["error"]) == {"code", "message", "details"} and body["error"]["code"] == code


@pytest.fixture
def http(sunat_engine, company, registry_sandbox):
    registry_sandbox.reset()
    registry_sandbox.configure(sunat_engine)
    api = LocalApi(sunat_engine, port=0)
    api.start()
    with httpx.Client(base_url=api.base_url + "/api/v1", headers={"Authorization": f"Bearer {api.token}"},
                      timeout=30) as client:
        yield client
    api.stop()


def test_the_invoicing_chain_1_2_3_against_the_sunat_sandbox(http, sunat_engine):
    certificado_id = sunat_engine.invoicing.create_test_certificate(ISSUER_RUC).certificado_id
    request = factura("F001", 7, [item("Servicio de consultoría", "1", "100")])
    generated = assert_contract_body("xml", http.post("/facturacion/xml", content=json.dumps(request, default=str),
                                                      headers={"Content-Type": "application/json"}))
    assert generated["nombre_archivo"] == f"{ISSUER_RUC}-01-F001-7.xml"  # rule 3
    assert generated["hash"] == base64.b64encode(hashlib.sha256(generated["xml"].encode()).digest()).decode()

    signed = assert_contract_body("firmar", http.post("/facturacion/firmar", json={
        "xml": generated["xml"], "certificado_id": certificado_id}))  # rule 2: the xml of operation 1
    assert signed["digest_value"] in signed["xml_firmado"]

    sent = assert_contract_body("enviar", http.post("/facturacion/enviar", json={
        "xml_firmado": signed["xml_firmado"]}))  # ambiente omitted: beta (rule 4)
    assert sent["codigo_respuesta"] == "0" and "aceptad" in sent["descripcion"].lower()
    answer = cdr.read_zip(base64.b64decode(sent["cdr"]))
    assert answer.referencia == "F001-7" and sent["hash_cdr"] == answer.hash_cdr


@pytest.mark.parametrize("operation, key", [("ruc", "ruc"), ("ce", "ce"), ("placa", "placa")])
def test_the_lookups_answer_the_contract_records(http, registry_sandbox, operation, key):
    record = next(iter(registry_sandbox.records[operation].values()))
    data = assert_contract_body(operation, http.get(f"/{operation}/{record[key]}"))
    assert data[key] == record[key]


@pytest.mark.parametrize("operation, number", [("ruc", "20131312955"), ("ce", "009999999"), ("placa", "ZZZ999")])
def test_unknown_numbers_are_404_envelopes(http, operation, number):
    assert_error_body(http.get(f"/{operation}/{number}"), 404, "NOT_FOUND")


def test_the_messaging_operations_over_http_against_the_gateway_sandbox(http, sunat_engine, gateway):
    sunat_engine.admin.config_set("listener_port", "0")
    sunat_engine.messaging.start_listener()
    gateway.configure(sunat_engine)
    sent = assert_contract_body("chat-send", http.post("/chat/send", json={
        "instance": "demo", "to": "+51987654321", "message": "Hola"}))
    assert sent["id"].startswith("msg_") and sent["to"] == "+51987654321" and sent["status"] == "sent"
    hooked = assert_contract_body("chat-webhook", http.post("/chat/webhook", json={
        "instance": "demo", "url": "http://127.0.0.1:9/eventos", "events": ["message.received"]}))
    assert hooked["events"] == ["message.received"] and hooked["secret"].startswith("whsec_")
    unknown = http.post("/chat/send", json={"instance": "tienda", "to": "+51987654321", "message": "Hola"})
    assert_error_body(unknown, 404, "NOT_FOUND")
    assert "«tienda»" in unknown.json()["error"]["message"]
    wrong_event = http.post("/chat/webhook", json={"instance": "demo", "url": "http://127.0.0.1:9/eventos",
                                                   "events": ["message.sent"]})
    assert_error_body(wrong_event, 400, "INVALID_INPUT")


def test_the_openapi_document_has_the_contract(http):
    document = http.get("/../../openapi.json").json()
    paths = document["paths"]
    schemas = document["components"]["schemas"]
    assert document["components"]["securitySchemes"]["bearerAuth"] == {"type": "http", "scheme": "bearer"}
    for method, path, request in [("post", "/api/v1/facturacion/xml", "GenerarXmlRequest"),
                                  ("post", "/api/v1/facturacion/firmar", "FirmarRequest"),
                                  ("post", "/api/v1/facturacion/enviar", "EnviarRequest"),
                                  ("post", "/api/v1/chat/send", "ChatSendRequest"),
                                  ("post", "/api/v1/chat/webhook", "ChatWebhookRequest")]:
        operation = paths[path][method]
        assert operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(request)
        assert operation["security"] == [{"bearerAuth": []}]
        assert {"200", "400", "401", "413", "415", "500", "503"} <= set(operation["responses"])
        assert "422" not in operation["responses"]
    assert set(schemas["GenerarXmlRequest"]["required"]) == {"tipo", "serie", "numero", "emisor", "items"}
    assert set(schemas["FirmarRequest"]["required"]) == {"xml", "certificado_id"}
    assert schemas["EnviarRequest"]["properties"]["ambiente"]["enum"] == ["beta", "produccion"]
    assert schemas["EnviarRequest"]["properties"]["ambiente"]["default"] == "beta"
    assert set(schemas["ChatWebhookRequest"]["properties"]["events"]["items"]["enum"]) == {
        "message.received", "message.delivered", "message.read", "instance.connected", "instance.disconnected"}
    assert set(schemas["ChatSendRequest"]["required"]) == {"instance", "to", "message"}
    lookup = paths["/api/v1/placa/{numero}"]["get"]
    assert lookup["parameters"][0]["name"] == "numero" and lookup["parameters"][0]["required"] is True
    placa = schemas["PlacaRecord"]["properties"]
    assert set(CONTRACT_FIELDS["placa"]) <= set(placa)
    assert {"type": "integer"} in placa["año"]["anyOf"]
    error = schemas["ErrorEnvelope"]
    assert set(error["required"]) == {"success", "error"}
    assert paths["/api/v1/health"]["get"].get("security") is None


def test_every_error_envelope_fits_the_documented_model(http):
    from app.api.local import ErrorEnvelope

    for answer in [http.get("/ruc/123"), http.get("/nada"), http.patch("/ruc/1"),
                   http.post("/facturacion/xml", content=b"{", headers={"Content-Type": "application/json"})]:
        ErrorEnvelope.model_validate(answer.json())


def test_success_models_validate_the_answers(http, registry_sandbox):
    from app.core.contract import RucRecord

    record = next(iter(registry_sandbox.records["ruc"].values()))
    success_model(RucRecord).model_validate(http.get(f"/ruc/{record['ruc']}").json())
