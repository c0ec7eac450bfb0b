"""The consulta de validez on the local API (issue 37, beyond the contract): POST /api/v1/facturacion/validar over a
real server on 127.0.0.1 (port 0) against the SUNAT sandbox's consulta integrada (REST with OAuth): a voucher that
exists, one that does not, one voided; Spanish 400s naming the field before anything is sent; the token required;
the route and its models in /openapi.json."""

from __future__ import annotations

import json

import httpx
import pytest

from app.api.local import LocalApi
from app.core.platform import clock
from tests.helpers.base import ISSUER_RUC, run_cli
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import factura, item

PATH = "/facturacion/validar"


@pytest.fixture
def api(voiding):
    server = LocalApi(voiding, port=0)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def http(api):
    with httpx.Client(base_url=api.base_url + "/api/v1", headers={"Authorization": f"Bearer {api.token}"},
                      timeout=30) as client:
        yield client


def ask(numero: int, **extra: object) -> dict:
    return {"ruc": ISSUER_RUC, "tipo": "01", "serie": "F001", "numero": numero, "fecha": clock.today().isoformat(),
            **extra}


def test_a_voucher_that_exists_is_valid(http, voiding, voids_sandbox):
    issued(voiding, factura("F001", 51, [item("Servicio de consultoría", "1", "100")]))
    before = voids_sandbox.validity.queries
    answer = http.post(PATH, json=ask(51, total="118.00"))
    assert answer.status_code == 200, answer.text
    data = answer.json()["data"]
    assert answer.json()["success"] is True
    assert (data["estado_cp"], data["estado"], data["valido"]) == ("1", "ACEPTADO", True)
    assert (data["ruc"], data["serie"], data["numero"], data["total"]) == (ISSUER_RUC, "F001", 51, "118.00")
    assert (data["estado_ruc_nombre"], data["cond_domicilio_nombre"]) == ("ACTIVO", "HABIDO")
    assert data["consultante"] == ISSUER_RUC
    assert voids_sandbox.validity.queries == before + 1  # SUNAT was asked


def test_a_voucher_that_does_not_exist_and_one_voided(http, voiding):
    missing = http.post(PATH, json=ask(999))
    assert missing.status_code == 200, missing.text
    assert (missing.json()["data"]["estado_cp"], missing.json()["data"]["valido"]) == ("0", False)
    voucher_id = issued(voiding, factura("F001", 52, [item("Servicio de consultoría", "1", "100")]))
    voiding.invoicing.void(voucher_id, "ERROR EN EL RUC DEL CLIENTE")
    voided = http.post(PATH, json=ask(52))
    assert voided.status_code == 200, voided.text
    assert (voided.json()["data"]["estado_cp"], voided.json()["data"]["estado"]) == ("2", "ANULADO")


def test_refusals_name_the_field_and_nothing_is_sent(api, http, voids_sandbox):
    before = voids_sandbox.validity.queries
    bad_type = http.post(PATH, json=ask(1, tipo="12"))
    assert bad_type.status_code == 400
    error = bad_type.json()["error"]
    assert error["code"] == "INVALID_INPUT" and "SUNAT no consulta comprobantes de tipo «12»" in error["message"]
    bad_date = http.post(PATH, json=ask(1, fecha="01/12/2026"))
    assert bad_date.status_code == 400 and "fecha" in bad_date.text
    unknown = http.post(PATH, json=ask(1, importe="10"))  # a typo: the contract's models refuse unknown fields
    assert unknown.status_code == 400 and "importe" in unknown.text
    no_token = httpx.post(api.base_url + "/api/v1" + PATH, json=ask(1), timeout=30)
    assert no_token.status_code == 401
    assert voids_sandbox.validity.queries == before


def test_the_route_and_its_models_are_in_the_openapi_document(api):
    document = httpx.get(api.base_url + "/openapi.json", timeout=30).json()
    operation = document["paths"]["/api/v1/facturacion/validar"]["post"]
    assert operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/ValidarRequest")
    request = document["components"]["schemas"]["ValidarRequest"]
    assert set(request["required"]) == {"ruc", "tipo", "serie", "numero", "fecha"}
    assert {"total", "consultante"} <= set(request["properties"])
    envelope = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    result = document["components"]["schemas"][envelope]["properties"]["data"]["$ref"].rsplit("/", 1)[1]
    assert {"estado_cp", "estado", "valido", "observaciones"} <= set(document["components"]["schemas"][result]
                                                                      ["properties"])


def test_yupana_call_validar_answers_the_same_envelope(voiding, home):
    issued(voiding, factura("F001", 53, [item("Servicio de consultoría", "1", "100")]))
    done = run_cli("call", "validar", "-", stdin=json.dumps(ask(53, total="118.00")), home=home)
    assert done.returncode == 0, done.stderr.decode()
    envelope = json.loads(done.stdout)
    assert envelope["success"] is True and envelope["data"]["estado"] == "ACEPTADO" and envelope["data"]["valido"]
