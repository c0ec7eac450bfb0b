"""The local HTTP API: loopback only, token required, the same envelopes as the engine."""

import json
import os
import signal
import subprocess
import sys

import httpx
import pytest

from app.core.api import LocalApi, api_token, is_loopback
from app.core.contract import MAX_BODY_BYTES
from app.core.errors import YupanaError
from tests.conftest import ROOT


@pytest.fixture
def api(engine):
    server = LocalApi(engine, port=0)
    server.start()
    yield server
    server.stop()


def client(api, token=None):
    headers = {"Authorization": f"Bearer {token if token is not None else api.token}"}
    return httpx.Client(base_url=api.base_url, headers=headers, timeout=10)


def test_requests_without_or_with_a_wrong_token_get_401(api):
    bare = httpx.get(api.base_url + "/api/v1/ruc/20100066603", timeout=10)
    assert bare.status_code == 401
    assert bare.json()["error"]["code"] == "UNAUTHORIZED"
    with client(api, token="otro") as wrong:
        assert wrong.get("/api/v1/ruc/20100066603").status_code == 401


def test_lookup_input_errors_come_back_as_envelopes(api):
    with client(api) as http:
        answer = http.get("/api/v1/ruc/123")
    assert answer.status_code == 400
    assert answer.json()["error"]["details"][0]["field"] == "numero"


def test_malformed_json_and_unknown_routes(api):
    with client(api) as http:
        bad = http.post("/api/v1/facturacion/xml", content=b'{"tipo": ', headers={"Content-Type": "application/json"})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "INVALID_JSON"
        missing = http.get("/api/v1/nada")
        assert missing.status_code == 404 and missing.json()["success"] is False
        wrong_method = http.get("/api/v1/facturacion/xml")
        assert wrong_method.status_code == 400


def test_oversized_body_is_413_without_reading_it(api):
    with client(api) as http:
        answer = http.post("/api/v1/facturacion/xml", content=b"x" * (MAX_BODY_BYTES + 10))
    assert answer.status_code == 413


def test_messaging_validation_reaches_the_engine(api):
    with client(api) as http:
        answer = http.post("/api/v1/chat/send", json={"instance": "tienda", "to": "51987", "message": "Hola"})
    assert answer.status_code == 400
    assert answer.json()["error"]["details"][0]["field"] == "to"


def test_only_loopback_addresses_are_allowed(engine):
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.10")
    with pytest.raises(YupanaError) as caught:
        LocalApi(engine, host="0.0.0.0", port=0)
    assert caught.value.details[0].field == "api_host"


def test_the_token_is_stable_and_renewable(engine):
    first = api_token(engine)
    assert api_token(engine) == first
    assert api_token(engine, renew=True) != first


def test_yupana_serve_runs_as_a_process(home):
    env = dict(os.environ, YUPANA_HOME=str(home))
    token = subprocess.run([sys.executable, "-m", "app", "serve", "--show-token"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=60).stdout.strip()
    proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", "0"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = json.loads(proc.stdout.readline())
        answer = httpx.get(line["base_url"] + "/ruc/20100066604", headers={"Authorization": f"Bearer {token}"},
                           timeout=10)
        assert answer.status_code == 400
        assert "dígito verificador" in answer.json()["error"]["message"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    assert proc.returncode == 0
