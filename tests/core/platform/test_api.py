"""The local HTTP API (FastAPI on uvicorn): loopback only, token required, the same envelopes as the engine."""

import json
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from app.api.local import LocalApi
from app.core.contract import MAX_BODY_BYTES
from app.core.engine import Engine
from app.core.errors import YupanaError
from app.core.platform.settings import is_loopback
from tests.helpers.base import ROOT, run_cli


@pytest.fixture
def api(engine):
    server = LocalApi(engine, port=0)
    server.start()
    yield server
    server.stop()


def client(api, token=None):
    headers = {"Authorization": f"Bearer {token if token is not None else api.token}"}
    return httpx.Client(base_url=api.base_url, headers=headers, timeout=10)


def error_code(answer: httpx.Response) -> str:
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    assert body["success"] is False
    return body["error"]["code"]


def test_requests_without_or_with_a_wrong_token_get_401(api):
    bare = httpx.get(api.base_url + "/api/v1/ruc/20100066603", timeout=10)
    assert bare.status_code == 401 and error_code(bare) == "UNAUTHORIZED"
    with client(api, token="otro") as wrong:
        assert wrong.get("/api/v1/ruc/20100066603").status_code == 401
    with client(api, token=api.token[:-1]) as almost:  # the whole token is compared, not a prefix
        assert almost.get("/api/v1/ruc/20100066603").status_code == 401
    basic = httpx.get(api.base_url + "/api/v1/ruc/20100066603", headers={"Authorization": f"Basic {api.token}"})
    assert basic.status_code == 401


def test_health_and_openapi_need_no_token(api, engine):
    health = httpx.get(api.base_url + "/api/v1/health", timeout=10)
    assert health.status_code == 200
    from app import __version__

    assert health.json() == {"success": True, "data": {"version": __version__, "environment": "sandbox",
                                                       "listener": "receptor detenido"}}
    document = httpx.get(api.base_url + "/openapi.json", timeout=10).json()
    assert set(document["paths"]) >= {"/api/v1/facturacion/xml", "/api/v1/ruc/{numero}", "/api/v1/health"}


def test_the_docs_page_is_served_only_when_the_setting_allows_it(api, engine):
    hidden = httpx.get(api.base_url + "/docs", timeout=10)
    assert hidden.status_code == 404 and "api_docs" in hidden.json()["error"]["message"]
    engine.admin.config_set("api_docs", "si")
    shown = httpx.get(api.base_url + "/docs", timeout=10)
    assert shown.status_code == 200 and "/openapi.json" in shown.text


def test_lookup_input_errors_come_back_as_envelopes(api):
    with client(api) as http:
        answer = http.get("/api/v1/ruc/123")
    assert answer.status_code == 400
    assert answer.json()["error"]["details"][0]["field"] == "numero"


def test_malformed_json_and_unknown_routes(api):
    with client(api) as http:
        bad = http.post("/api/v1/facturacion/xml", content=b'{"tipo": ', headers={"Content-Type": "application/json"})
        assert bad.status_code == 400 and error_code(bad) == "INVALID_JSON"
        missing = http.get("/api/v1/nada")
        assert missing.status_code == 404 and error_code(missing) == "NOT_FOUND"
        trailing = http.get("/api/v1/ruc/20100066603/")
        assert trailing.status_code == 404 and error_code(trailing) == "NOT_FOUND"


@pytest.mark.parametrize("method, path", [
    ("GET", "/api/v1/facturacion/xml"), ("PUT", "/api/v1/facturacion/firmar"), ("DELETE", "/api/v1/chat/send"),
    ("PATCH", "/api/v1/ruc/20100066603"), ("HEAD", "/api/v1/ruc/20100066603"), ("OPTIONS", "/api/v1/ce/001234567"),
    ("POST", "/api/v1/placa/ABC123"), ("TRACE", "/api/v1/health"),
])
def test_methods_outside_the_contract_answer_a_json_405(api, method, path):
    with client(api) as http:
        answer = http.request(method, path)
    assert answer.status_code == 405
    assert answer.headers["allow"] in ("GET", "POST")
    if method != "HEAD":  # a HEAD answer has no body, by definition
        assert error_code(answer) == "METHOD_NOT_ALLOWED"


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data"])
def test_bodies_that_are_not_json_answer_415(api, content_type):
    with client(api) as http:
        answer = http.post("/api/v1/facturacion/xml", content=b"tipo=01", headers={"Content-Type": content_type})
    assert answer.status_code == 415 and error_code(answer) == "UNSUPPORTED_MEDIA_TYPE"
    assert content_type in answer.json()["error"]["message"]


def test_json_with_a_charset_is_accepted(api):
    with client(api) as http:
        answer = http.post("/api/v1/facturacion/firmar", content=b'{"xml": "", "certificado_id": ""}',
                           headers={"Content-Type": "application/json; charset=utf-8"})
    assert answer.status_code == 400 and error_code(answer) == "INVALID_INPUT"


def test_oversized_body_is_413_without_reading_it(api):
    with client(api) as http:
        answer = http.post("/api/v1/facturacion/xml", content=b"x" * (MAX_BODY_BYTES + 10),
                           headers={"Content-Type": "application/json"})
    assert answer.status_code == 413 and error_code(answer) == "PAYLOAD_TOO_LARGE"
    assert answer.headers["connection"] == "close"


def test_oversized_chunked_body_is_413(api):
    def pieces():
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b" " * 65536

    with client(api) as http:
        answer = http.post("/api/v1/facturacion/xml", content=pieces(), headers={"Content-Type": "application/json"})
    assert answer.status_code == 413 and error_code(answer) == "PAYLOAD_TOO_LARGE"


def test_messaging_validation_reaches_the_engine(api):
    with client(api) as http:
        answer = http.post("/api/v1/chat/send", json={"instance": "tienda", "to": "51987", "message": "Hola"})
    assert answer.status_code == 400
    assert answer.json()["error"]["details"][0]["field"] == "to"


def test_json_limits_are_400_over_http(api):
    with client(api) as http:
        deep = http.post("/api/v1/facturacion/xml", content=b"[" * 100_000 + b"]" * 100_000,
                         headers={"Content-Type": "application/json"})
        huge = http.post("/api/v1/facturacion/xml", content=b'{"numero": ' + str(10 ** 40).encode() + b"}",
                         headers={"Content-Type": "application/json"})
    assert (deep.status_code, error_code(deep)) == (400, "INVALID_JSON")
    assert (huge.status_code, error_code(huge)) == (400, "INVALID_JSON")


def test_only_loopback_addresses_are_allowed(engine):
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.10")
    with pytest.raises(YupanaError) as caught:
        LocalApi(engine, host="0.0.0.0", port=0)
    assert caught.value.details[0].field == "api_host"


def test_a_busy_port_is_a_clear_409(api, engine):
    with pytest.raises(YupanaError) as caught:
        LocalApi(engine, port=int(api.base_url.rsplit(":", 1)[1])).start()
    assert "No se pudo abrir la API local" in caught.value.message


def test_the_token_is_stable_renewable_and_stored_as_hash_and_ciphertext(engine):
    first = engine.admin.api_token()
    assert engine.admin.api_token() == first
    second = engine.admin.new_api_token()
    assert second != first and engine.admin.api_token() == second
    row = engine._storage.query_one("SELECT hash, blob FROM api_token")
    assert second.encode() not in bytes(row["blob"]) and second.encode() not in bytes(row["hash"])
    assert engine.admin.api_token_matches(second) and not engine.admin.api_token_matches(first)


def test_a_token_from_before_the_hash_is_kept(engine):
    engine._secrets.put("api.token", b"token-de-una-version-anterior")
    assert engine.admin.api_token() == "token-de-una-version-anterior"


def test_rotation_takes_effect_at_once_in_a_running_server(api, engine, home):
    old = api.token
    with client(api, old) as http:
        assert http.get("/api/v1/ruc/123").status_code == 400
    new = engine.admin.new_api_token()  # the settings window, in this process
    with client(api, old) as http:
        assert http.get("/api/v1/ruc/123").status_code == 401
    with client(api, new) as http:
        assert http.get("/api/v1/ruc/123").status_code == 400
    with Engine(home) as other:  # another process on the same folder (yupana serve --new-token)
        newest = other.admin.new_api_token()
    with client(api, newest) as http:
        assert http.get("/api/v1/ruc/123").status_code == 400
    with client(api, new) as http:
        assert http.get("/api/v1/ruc/123").status_code == 401


def serve(home, *args):
    env = dict(os.environ, YUPANA_HOME=str(home))
    return subprocess.Popen([sys.executable, "-m", "app", "serve", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_processes_on_a_new_folder_agree_on_one_token(tmp_path):
    """Reported: `yupana serve` and `yupana serve --show-token` started together each created a token. Three real
    processes at once, forked from a process that imported the command already (run_cli): the race is between the
    processes, not their interpreters' start-up."""
    for attempt in range(3):
        home = tmp_path / f"nueva-{attempt}"
        home.mkdir()
        with ThreadPoolExecutor(3) as starter:
            started = [starter.submit(run_cli, "serve", "--show-token", home=home, timeout=60) for _ in range(3)]
            done = [process.result() for process in started]
        assert all(process.returncode == 0 for process in done), [process.stderr for process in done]
        tokens = {process.stdout.decode().strip() for process in done}
        assert len(tokens) == 1 and "" not in tokens
        with Engine(home) as engine:
            assert engine.admin.api_token() in tokens


def test_yupana_serve_runs_as_a_process_and_rotates_its_token(home):
    env = dict(os.environ, YUPANA_HOME=str(home))
    proc = serve(home, "--port", "0", "--no-listener")  # the API alone: no port of its own beyond the OS's
    try:
        line = json.loads(proc.stdout.readline())
        token = subprocess.run([sys.executable, "-m", "app", "serve", "--show-token"], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=60).stdout.strip()
        answer = httpx.get(line["base_url"] + "/ruc/20100066604", headers={"Authorization": f"Bearer {token}"},
                           timeout=10)
        assert answer.status_code == 400
        assert "dígito verificador" in answer.json()["error"]["message"]
        new = subprocess.run([sys.executable, "-m", "app", "serve", "--new-token"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=60).stdout.strip()
        assert new != token
        assert httpx.get(line["base_url"] + "/ruc/20100066604", headers={"Authorization": f"Bearer {token}"},
                         timeout=10).status_code == 401
        assert httpx.get(line["base_url"] + "/ruc/20100066604", headers={"Authorization": f"Bearer {new}"},
                         timeout=10).status_code == 400
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert err == ""
