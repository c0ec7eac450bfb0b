"""Lookups answered from memory by the local API (app.api.local.LookupMemory): never older than the database.

Real parts: the API on uvicorn (port 0), the registry sandbox as the provider, a second Engine on the same folder
standing for another process (the settings window, `yupana serve --new-token`)."""

import httpx
import pytest

from app.api.local import LocalApi
from app.core.engine import Engine
from app.core.lookup import registry


@pytest.fixture
def api(engine, registry_sandbox):
    registry_sandbox.reset()
    registry_sandbox.configure(engine)
    server = LocalApi(engine, port=0)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def calls(api, monkeypatch):
    """How many requests went the whole way (`LocalApi.call` in the pool) instead of being answered from memory."""
    counted = []
    whole_way = api.call

    def counting(*args):
        counted.append(args[1])
        return whole_way(*args)

    monkeypatch.setattr(api, "call", counting)
    return counted


def client(api, token=None):
    return httpx.Client(base_url=api.base_url + "/api/v1", timeout=10,
                        headers={"Authorization": f"Bearer {token if token is not None else api.token}"})


def remembered_ruc(api, registry_sandbox) -> tuple[str, bytes]:
    """A RUC asked once from the provider and once from the cache: from then on memory may answer it."""
    ruc = next(iter(registry_sandbox.records["ruc"]))
    with client(api) as http:
        assert http.get(f"/ruc/{ruc}").json()["data"]["fuente"] != "cache"  # the provider's answer, now cached
        cached = http.get(f"/ruc/{ruc}")
    assert cached.status_code == 200 and cached.json()["data"]["fuente"] == "cache"
    return ruc, cached.content


def test_a_cached_lookup_is_answered_from_memory_with_the_engines_own_envelope(api, engine, registry_sandbox, calls):
    ruc, cached = remembered_ruc(api, registry_sandbox)
    assert calls == ["ruc", "ruc"]
    with client(api) as http:
        again = [http.get(f"/ruc/{ruc}") for _ in range(5)]
    assert calls == ["ruc", "ruc"]  # no more trips through Engine.call
    assert {answer.content for answer in again} == {cached}
    assert all(answer.status_code == 200 and answer.headers["content-type"] == "application/json" for answer in again)
    assert again[0].json() == engine.call("ruc", numero=ruc).envelope
    assert registry_sandbox.requests == 1


def test_a_record_changed_by_another_process_is_answered_at_once(api, home, registry_sandbox, calls):
    ruc, cached = remembered_ruc(api, registry_sandbox)
    with Engine(home) as other:  # e.g. the app refreshing the same RUC from its provider
        record = dict(registry_sandbox.records["ruc"][ruc], razon_social="OTRA RAZON SOCIAL S.A.C.")
        other._registry._cache_put("ruc", ruc, record)
    with client(api) as http:
        answer = http.get(f"/ruc/{ruc}")
        assert answer.json()["data"]["razon_social"] == "OTRA RAZON SOCIAL S.A.C."
        assert calls[-1] == "ruc" and len(calls) == 3
        # That answer also updated the customer catalogue (the new razón social): one more change the memory sees.
        assert http.get(f"/ruc/{ruc}").content == answer.content
        settled = len(calls)
        assert http.get(f"/ruc/{ruc}").content == answer.content and len(calls) == settled  # remembered again


def test_a_token_rotated_by_another_process_stops_memory_answers_at_once(api, home, registry_sandbox):
    ruc, _ = remembered_ruc(api, registry_sandbox)
    old = api.token
    with Engine(home) as other:
        new = other.admin.new_api_token()
    with client(api, old) as http:
        assert http.get(f"/ruc/{ruc}").status_code == 401
    with client(api, new) as http:
        assert http.get(f"/ruc/{ruc}").json()["data"]["fuente"] == "cache"
    with client(api, "otro") as http:
        assert http.get(f"/ruc/{ruc}").status_code == 401


def test_a_settings_change_in_this_process_forgets_what_memory_kept(api, engine, registry_sandbox, calls):
    ruc, _ = remembered_ruc(api, registry_sandbox)
    engine.admin.config_set("registry_cache_ttl_s", "0")  # nothing in the cache is fresh any more
    with client(api) as http:
        answer = http.get(f"/ruc/{ruc}").json()["data"]
    assert answer["fuente"] != "cache" and len(calls) == 3 and registry_sandbox.requests == 2


def test_memory_answers_only_while_the_cache_entry_is_fresh(api, engine, registry_sandbox, calls, monkeypatch):
    ruc, _ = remembered_ruc(api, registry_sandbox)
    later = registry.now() + int(engine.admin.config_get("registry_cache_ttl_s")) + 1
    monkeypatch.setattr(registry, "now", lambda: later)
    with client(api) as http:
        answer = http.get(f"/ruc/{ruc}").json()["data"]
    assert answer["fuente"] != "cache"  # asked the provider again, the whole way
    assert len(calls) == 3 and registry_sandbox.requests == 2


def test_only_fresh_cache_answers_are_kept(api, registry_sandbox, calls):
    registry_sandbox.fail_next("404", 3)  # errors are never remembered
    with client(api) as http:
        for _ in range(3):
            assert http.get("/ruc/20131312955").status_code == 404
    assert len(calls) == 3
    assert api.memory._entries == {}


def test_envelopes_are_encoded_as_json_dumps_would_and_never_fail():
    import json

    from app.api.local import _encode

    envelope = {"success": True, "data": {"xml": '<?xml version="1.0"?>\n<a b="ñ">S/ 1,234.50 \\ \x1f \u2028</a>',
                                          "observaciones": [], "numero": 10**20, "total": "118.00"}}
    assert _encode(envelope) == json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode()
    lone = {"success": False, "error": {"code": "INVALID_INPUT", "message": "«\ud800»", "details": []}}
    assert json.loads(_encode(lone)) == lone
