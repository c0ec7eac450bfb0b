"""Lookups through providers, against the registry sandbox (a real HTTP server on loopback)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from app.api.local import LocalApi
from app.core.engine import Engine
from app.core.errors import ErrorCode, YupanaError
from app.core.lookup import providers, registry
from app.core.lookup.providers import FactilizaProvider
from app.core.platform.identifiers import normalize_ce, normalize_plate
from app.sandbox.registry import RegistrySandbox
from tests.helpers.base import ROOT
from tests.helpers.padron_files import make_padron
from tests.helpers.registry_support import running_registry


@pytest.fixture(scope="module")
def shared_sandbox():
    with running_registry(slow_seconds=10) as box:
        yield box


@pytest.fixture
def sandbox(shared_sandbox):
    shared_sandbox.reset()
    yield shared_sandbox
    shared_sandbox.reset()


@pytest.fixture
def own_sandbox():
    """A sandbox of its own, for the tests that stop it."""
    with running_registry() as box:
        yield box


def provide(engine, box: RegistrySandbox) -> None:
    """The settings a user gives for real providers (both shapes), here the registry sandbox standing in for them."""
    engine.admin.config_set("registry_yupana_url", box.contract_url)
    engine.admin.config_set("registry_factiliza_url", box.factiliza_url)
    engine.admin.config_set("registry_providers", "factiliza,yupana")
    engine.lookups.set_provider_token("factiliza", box.token)
    engine.lookups.set_provider_token("yupana", box.token)


@pytest.fixture
def configured(engine, sandbox):
    """An engine in beta whose providers are configured in its settings (the sandbox environment would use the
    running registry sandbox and ignore them: tests/core/platform/test_environments.py)."""
    engine.admin.config_set("environment", "beta")
    provide(engine, sandbox)
    engine.admin.config_set("registry_timeout_s", "1")
    return engine


def first(sandbox: RegistrySandbox, kind: str) -> dict:
    return next(iter(sandbox.records[kind].values()))


# ------------------------------------------------------------------ input checks

@pytest.mark.parametrize(("raw", "expected"), [("12345678", "012345678"), ("001234567", "001234567"),
                                               ("000123456789", "123456789"), ("1234-5678-90", "1234567890")])
def test_carnet_numbers_are_normalised(raw, expected):
    assert normalize_ce(raw) == expected


@pytest.mark.parametrize("raw", ["1234567", "1234567890123", "12A45678", ""])
def test_bad_carnet_numbers_are_400_naming_the_field(engine, raw):
    status, envelope = engine.call("ce", numero=raw or " ")
    assert status == 400 and envelope["error"]["details"][0]["field"] == "numero"


@pytest.mark.parametrize(("raw", "expected"), [("abc-123", "ABC123"), ("A1B234", "A1B234"), ("ab 1234", "AB1234"),
                                               ("1234-ab", "1234AB"), ("AB123C", "AB123C")])
def test_plates_are_upper_cased_without_hyphen(raw, expected):
    assert normalize_plate(raw) == expected


@pytest.mark.parametrize("raw", ["AB12", "ABCD123", "12345", "ÑBC123", "A-1"])
def test_bad_plates_are_400(engine, raw):
    status, envelope = engine.call("placa", numero=raw)
    assert status == 400 and "formatos" in envelope["error"]["message"]


def test_without_providers_ce_and_plates_say_what_to_configure(engine):
    status, envelope = engine.call("ce", numero="123456789")
    message = envelope["error"]["message"]
    assert status == 503 and "registry_providers" in message
    assert "«123456789»" in message and "«yupana sandbox --configure»" in message  # how to try it offline


def test_a_ruc_on_a_fresh_folder_names_the_sandbox_and_the_padron(engine):
    status, envelope = engine.call("ruc", numero="20100066603")
    message = envelope["error"]["message"]
    assert status == 503 and envelope["error"]["code"] == "NOT_CONFIGURED"
    assert "«yupana sandbox --configure»" in message and "«yupana padron import»" in message


# ------------------------------------------------------------------ both provider shapes

@pytest.mark.parametrize("provider", ["factiliza", "yupana"])
@pytest.mark.parametrize("kind", ["ruc", "ce", "placa"])
def test_each_provider_maps_every_field(configured, sandbox, provider, kind):
    configured.admin.config_set("registry_providers", provider)
    expected = first(sandbox, kind)
    record = getattr(configured.lookups, kind)(expected[{"ruc": "ruc", "ce": "ce", "placa": "placa"}[kind]])
    assert record.to_json() == {**expected, "fuente": provider}


def test_factiliza_answer_is_mapped_field_by_field():
    body = {"status": 200, "success": True, "message": "Exito", "data": {
        "numero": "20100066603", "nombre_o_razon_social": "EMPRESA PEÑA S.A.C.",
        "tipo_contribuyente": "SOCIEDAD ANONIMA CERRADA", "estado": "ACTIVO", "condicion": "HABIDO",
        "departamento": "LIMA", "provincia": "LIMA", "distrito": "MIRAFLORES", "direccion": "AV. LARCO NRO. 101",
        "direccion_completa": "AV. LARCO NRO. 101, MIRAFLORES - LIMA - LIMA", "ubigeo_sunat": "150122",
        "actividad_economica": "ACTIVIDADES DE RESTAURANTES"}}
    provider = FactilizaProvider("http://unused", None, httpx.Client())
    assert provider.record("ruc", body) == {
        "ruc": "20100066603", "razon_social": "EMPRESA PEÑA S.A.C.", "tipo_contribuyente": "SOCIEDAD ANONIMA CERRADA",
        "estado": "ACTIVO", "condicion": "HABIDO", "direccion": "AV. LARCO NRO. 101", "departamento": "LIMA",
        "provincia": "LIMA", "distrito": "MIRAFLORES", "actividad_economica": "ACTIVIDADES DE RESTAURANTES"}
    ce = {"status": 200, "success": True, "message": "Exito", "data": {
        "numero": "001234567", "nombres": "ANA MARÍA", "apellido_paterno": "NÚÑEZ", "apellido_materno": "ROJAS",
        "nacionalidad": "VENEZOLANA", "calidad_migratoria": "RESIDENTE"}}
    assert provider.record("ce", ce) == {
        "ce": "001234567", "nombre_completo": "ANA MARÍA NÚÑEZ ROJAS", "nombres": "ANA MARÍA",
        "apellido_paterno": "NÚÑEZ", "apellido_materno": "ROJAS", "nacionalidad": "VENEZOLANA", "estado": "RESIDENTE"}
    placa = {"status": 200, "success": True, "message": "Exito", "data": {
        "placa": "ABC123", "marca": "TOYOTA", "modelo": "YARIS", "color": "ROJO", "anio": "2019",
        "clase": "AUTOMOVIL", "serie": "9BR123", "motor": "2NZ456", "vin": "9BR123"}}
    assert provider.record("placa", placa) == {
        "placa": "ABC123", "marca": "TOYOTA", "modelo": "YARIS", "color": "ROJO", "año": 2019, "clase": "AUTOMOVIL",
        "serie": "9BR123", "motor": "2NZ456"}
    provider.client.close()


# ------------------------------------------------------------------ failure modes

@pytest.mark.parametrize("provider", ["factiliza", "yupana"])
@pytest.mark.parametrize(("mode", "status", "code"), [
    ("401", 502, "UPSTREAM_BAD_RESPONSE"), ("404", 404, "NOT_FOUND"), ("429", 503, "UPSTREAM_UNAVAILABLE"),
    ("500", 503, "UPSTREAM_UNAVAILABLE"), ("slow", 504, "UPSTREAM_TIMEOUT")])
def test_each_failure_mode_has_its_answer(configured, sandbox, provider, mode, status, code):
    configured.admin.config_set("registry_providers", provider)
    sandbox.fail_next(mode)
    got, envelope = configured.call("placa", numero=first(sandbox, "placa")["placa"])
    assert (got, envelope["error"]["code"]) == (status, code)
    if mode == "401":
        assert "token" in envelope["error"]["message"]


def test_a_wrong_token_is_a_502_naming_the_token(configured, sandbox):
    configured.lookups.set_provider_token("factiliza", "otro-token")
    configured.admin.config_set("registry_providers", "factiliza")
    status, envelope = configured.call("ruc", numero=first(sandbox, "ruc")["ruc"])
    assert status == 502 and "token" in envelope["error"]["message"]


def test_the_next_provider_answers_when_the_first_fails(configured, sandbox):
    sandbox.fail_next("500")
    record = configured.lookups.ce(first(sandbox, "ce")["ce"])
    assert record.fuente == "yupana" and sandbox.requests == 2


def test_unreachable_provider_is_503_and_never_hangs(engine, own_sandbox):
    own_sandbox.configure(engine)
    own_sandbox.stop()
    status, envelope = engine.call("ce", numero="123456789")
    assert status == 503 and envelope["error"]["code"] == "UPSTREAM_UNAVAILABLE"


def test_control_endpoint_injects_failures_out_of_process(configured, sandbox):
    answer = httpx.post(sandbox.base_url + "/_control/fail", json={"mode": "429", "count": 2})
    assert answer.status_code == 200
    status, _ = configured.call("placa", numero=first(sandbox, "placa")["placa"])
    assert status == 503 and sandbox.requests == 2  # both providers were rate-limited


# ------------------------------------------------------------------ cache

def test_fresh_cache_answers_without_asking_and_expired_cache_is_served_stale(configured, sandbox, monkeypatch):
    plate = first(sandbox, "placa")["placa"]
    clock = [1_000_000.0]
    monkeypatch.setattr(registry, "now", lambda: clock[0])
    monkeypatch.setattr(providers, "clock", lambda: clock[0])
    assert configured.lookups.placa(plate).fuente == "factiliza"
    assert configured.lookups.placa(plate).fuente == "cache" and sandbox.requests == 1
    clock[0] += int(configured.admin.config_get("registry_cache_ttl_s")) + 1
    sandbox.fail_next("500", count=2)
    stale = configured.lookups.placa(plate)
    assert stale.desactualizado is True and stale.fuente == "cache" and stale.marca == first(sandbox, "placa")["marca"]
    clock[0] += providers.BACKOFF_S
    assert configured.lookups.placa(plate).fuente == "factiliza"  # provider back: refreshed
    assert configured.lookups.placa(plate).desactualizado is None


def test_expired_cache_is_not_served_for_a_provider_404(configured, sandbox, monkeypatch):
    plate = first(sandbox, "placa")["placa"]
    clock = [1_000_000.0]
    monkeypatch.setattr(registry, "now", lambda: clock[0])
    configured.lookups.placa(plate)
    clock[0] += 10 ** 9
    sandbox.fail_next("404", count=2)
    with pytest.raises(YupanaError) as caught:
        configured.lookups.placa(plate)
    assert caught.value.code == ErrorCode.NOT_FOUND


# ------------------------------------------------------------------ register and providers together

def test_register_answers_when_every_provider_is_down(engine, own_sandbox, tmp_path):
    path = tmp_path / "padron.zip"
    known = make_padron(300, path)
    engine.lookups.import_padron(path)
    own_sandbox.configure(engine)
    own_sandbox.stop()
    record = engine.lookups.ruc(known[0][0])
    assert record.razon_social == known[0][1] and record.fuente == "padron"


def test_providers_add_what_the_register_lacks(configured, sandbox, tmp_path):
    path = tmp_path / "padron.zip"
    known = make_padron(300, path)
    configured.lookups.import_padron(path)
    extra = {**first(sandbox, "ruc"), "ruc": known[0][0]}
    sandbox.records["ruc"][known[0][0]] = extra
    record = configured.lookups.ruc(known[0][0])
    assert record.tipo_contribuyente == extra["tipo_contribuyente"]
    assert record.actividad_economica == extra["actividad_economica"]
    assert record.fuente == "factiliza"


def test_sandbox_command_serves_both_shapes_and_takes_failures_from_another_process(home):
    process = subprocess.Popen([sys.executable, "-m", "app", "sandbox", "registry"], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=dict(os.environ))
    try:
        base_url = json.loads(process.stdout.readline())["base_url"]
        box = RegistrySandbox()  # same seed: the same records as the process serves
        ruc = first(box, "ruc")["ruc"]
        auth = {"Authorization": "Bearer sandbox-registry-token"}
        assert httpx.post(base_url + "/_control/fail", json={"mode": "500"}).status_code == 200
        assert httpx.get(f"{base_url}/api/v1/ruc/{ruc}", headers=auth).status_code == 500
        answer = httpx.get(f"{base_url}/v1/ruc/info/{ruc}", headers=auth).json()
        assert answer["success"] is True and answer["data"]["nombre_o_razon_social"] == first(box, "ruc")["razon_social"]
        assert httpx.get(f"{base_url}/api/v1/ruc/{ruc}").status_code == 401  # no token
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_provider_that_timed_out_is_not_asked_again_for_a_while(configured, sandbox, monkeypatch):
    clock = [500.0]
    monkeypatch.setattr(providers, "clock", lambda: clock[0])
    configured.admin.config_set("registry_providers", "factiliza")
    ce = first(sandbox, "ce")["ce"]
    sandbox.fail_next("slow")
    assert configured.call("ce", numero=ce).status == 504
    assert configured.call("ce", numero=ce).status == 504 and sandbox.requests == 1  # answered without waiting
    clock[0] += providers.BACKOFF_S
    assert configured.lookups.ce(ce).fuente == "factiliza" and sandbox.requests == 2


def test_one_yupana_answers_another_through_the_contract_provider(engine, tmp_path):
    """Yupana A serves its padrón on its local API; Yupana B asks A with the "yupana" provider."""
    path = tmp_path / "padron.zip"
    known = make_padron(300, path)
    engine.lookups.import_padron(path)
    server = LocalApi(engine, port=0)
    server.start()
    other = Engine(tmp_path / "otra-yupana")
    try:
        other.admin.config_set("environment", "beta")
        other.admin.config_set("registry_yupana_url", server.base_url)
        other.admin.config_set("registry_providers", "yupana")
        other.lookups.set_provider_token("yupana", server.token)
        record = other.lookups.ruc(known[0][0])
        assert (record.razon_social, record.fuente) == (known[0][1], "yupana")
        assert record.departamento == engine.lookups.ruc(known[0][0]).departamento
        status, _ = other.call("ruc", numero="20100066603")  # valid, unknown to A: A's 404 is B's 404
        assert status == 404
    finally:
        other.close()
        server.stop()


def test_sandbox_taxpayers_follow_the_kind_their_ruc_says(sandbox):
    """RUC 10… is a person with a business, 20… a company: the sandbox never mixes them."""
    kinds = {"10": set(), "20": set()}
    for ruc, record in sandbox.records["ruc"].items():
        kinds[ruc[:2]].add(record["tipo_contribuyente"])
        if ruc.startswith("10"):
            assert not record["razon_social"].endswith(("S.A.C.", "S.A.", "E.I.R.L.")), record
    assert kinds["10"] == {"PERSONA NATURAL CON NEGOCIO"}
    assert kinds["20"] and "PERSONA NATURAL CON NEGOCIO" not in kinds["20"]


def test_the_readmes_example_ruc_answers_in_the_sandbox(configured):
    assert configured.lookups.ruc("20100066603").razon_social == "EMPRESA DE EJEMPLO YUPANA S.A.C."
