"""Bugs the rest of the suite once let through (issue 14, point 7): each test here fails when its bug is put back.

- IGV rounded half-even instead of half-up (1 × 0.25 gives IGV 0.04 instead of 0.05);
- the internal error's status changed from 500 (the error table, Engine.call's catch-all, the HTTP API);
- the API token compared by prefix (the token store and both checks of the HTTP layer);
- an expired lease of a live owner never reclaimed by the outbox.

The signature's Reference URI is in tests/core/invoicing/test_verifier_refusals.py.
"""

from __future__ import annotations

import json
import os
from decimal import Decimal

import httpx
import pytest
from lxml import etree

from app.api.local import LocalApi
from app.core.errors import HTTP_STATUS, ErrorCode, YupanaError
from app.core.invoicing import amounts, outbox
from app.core.invoicing.ubl_identity import identify
from app.core.platform import api_token
from app.core.storage.sqlite.database import DB_NOW
from tests.helpers.sunat_support import signed_sample, stem
from tests.helpers.voucher_matrix import factura, item

NS = {"cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
      "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"}
RUC = "20100066603"


# ---------------------------------------------------------------- IGV half-up

@pytest.mark.parametrize(("value", "cents"), [
    ("0.045", "0.05"), ("0.125", "0.13"), ("0.135", "0.14"), ("2.675", "2.68"), ("0.005", "0.01"),
    ("0.0449", "0.04"), ("-0.125", "-0.13"), ("7", "7.00")])
def test_money_rounds_half_up(value, cents):
    rounded = amounts.money(Decimal(value))
    assert rounded == Decimal(cents) and str(rounded) == cents


def test_igv_of_one_times_0_25_is_0_05(engine, company):
    """18 % of 0.25 is 0.045: SUNAT rounds half-up to 0.05 (half-even would give 0.04)."""
    xml = engine.invoicing.generate_xml(factura("F001", 1, [item("Caramelo", "1", "0.25")])).xml
    root = etree.fromstring(xml.encode())
    line = root.find("cac:InvoiceLine", NS)
    assert line.findtext("cac:TaxTotal/cbc:TaxAmount", namespaces=NS) == "0.05"
    assert root.findtext("cac:TaxTotal/cbc:TaxAmount", namespaces=NS) == "0.05"
    assert root.findtext("cac:LegalMonetaryTotal/cbc:PayableAmount", namespaces=NS) == "0.30"
    assert "CERO CON 30/100 SOLES" in xml


def test_line_value_is_rounded_half_up_too(engine, company):
    """3 × 0.125 = 0.375 → valor de venta 0.38 (half-even: 0.38 as well), 1 × 0.125 → 0.13 (half-even: 0.12)."""
    xml = engine.invoicing.generate_xml(factura("F001", 2, [item("Clavo", "1", "0.125")])).xml
    root = etree.fromstring(xml.encode())
    assert root.findtext("cac:InvoiceLine/cbc:LineExtensionAmount", namespaces=NS) == "0.13"
    assert root.findtext("cac:InvoiceLine/cac:TaxTotal/cbc:TaxAmount", namespaces=NS) == "0.02"  # 0.0234


# ---------------------------------------------------------------- the internal error is a 500

def test_internal_maps_to_500():
    assert HTTP_STATUS[ErrorCode.INTERNAL] == 500
    assert YupanaError(ErrorCode.INTERNAL, "x").http_status == 500
    assert all(HTTP_STATUS[code] != 500 for code in ErrorCode if code is not ErrorCode.INTERNAL)


def _explode(*_args, **_kwargs):
    raise RuntimeError("fallo inyectado por la prueba")


def assert_internal_envelope(status: int, envelope: dict, log_file) -> None:
    assert status == 500, envelope
    assert envelope["success"] is False
    assert envelope["error"]["code"] == "INTERNAL"
    assert envelope["error"]["message"] == f"Error interno de Yupana. Los detalles están en el registro: {log_file}"
    assert envelope["error"]["details"] == []
    assert "fallo inyectado" not in envelope["error"]["message"]  # the exception's text stays in the log


def test_engine_call_catch_all_answers_500_and_logs_the_traceback(engine, monkeypatch):
    monkeypatch.setattr(engine.lookups, "ruc", _explode)
    status, envelope = engine.call("ruc", numero=RUC)
    assert_internal_envelope(status, envelope, engine.admin.log_file())
    text = engine.admin.log_file().read_text(encoding="utf-8")
    assert "operation ruc failed unexpectedly" in text
    assert "Traceback (most recent call last)" in text
    assert "RuntimeError: fallo inyectado por la prueba" in text


@pytest.fixture
def api(engine):
    server = LocalApi(engine, port=0)
    server.start()
    yield server
    server.stop()


def test_http_api_answers_500_for_an_unexpected_exception_in_the_engine(api, engine, monkeypatch):
    monkeypatch.setattr(engine.lookups, "ruc", _explode)
    answer = httpx.get(f"{api.base_url}/api/v1/ruc/{RUC}", headers={"Authorization": f"Bearer {api.token}"},
                       timeout=10)
    assert answer.headers["content-type"] == "application/json"
    assert_internal_envelope(answer.status_code, answer.json(), engine.admin.log_file())


def test_http_api_answers_500_for_an_unexpected_exception_in_its_own_layer(api, engine, monkeypatch):
    monkeypatch.setattr(api, "call", _explode)
    answer = httpx.get(f"{api.base_url}/api/v1/ruc/{RUC}", headers={"Authorization": f"Bearer {api.token}"},
                       timeout=10)
    assert_internal_envelope(answer.status_code, answer.json(), engine.admin.log_file())
    assert "local API: unexpected error on GET" in engine.admin.log_file().read_text(encoding="utf-8")


# ---------------------------------------------------------------- the whole token, never a prefix

def _near_misses(token: str) -> list[str]:
    return [token[:-1], token[:8], token[:1], token + "x", token + token, " " + token, token.upper(), ""]


def test_token_store_matches_only_the_whole_token(engine):
    token = engine.admin.api_token()
    assert engine._api_tokens.matches(token) and engine.admin.api_token_matches(token)
    assert api_token.hash_matches(token, engine._api_tokens.stored_hash())
    assert api_token.hash_matches(token.encode(), engine._api_tokens.stored_hash())
    for wrong in _near_misses(token):
        assert not engine._api_tokens.matches(wrong), wrong
        assert not api_token.hash_matches(wrong, engine._api_tokens.stored_hash()), wrong
    assert not api_token.hash_matches(token, None)


def test_http_api_refuses_prefixes_and_extensions_of_the_token(api):
    token = api.token
    ok = httpx.get(f"{api.base_url}/api/v1/ruc/{RUC}", headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert ok.status_code != 401
    for wrong in _near_misses(token):
        if wrong.strip() in ("", token):  # surrounding spaces are the header's, not the token's
            continue
        answer = httpx.get(f"{api.base_url}/api/v1/ruc/{RUC}", headers={"Authorization": f"Bearer {wrong}"},
                           timeout=10)
        assert answer.status_code == 401, wrong
        assert answer.json()["error"]["code"] == "UNAUTHORIZED"


def test_the_pool_check_refuses_a_prefix_too(api, engine):
    """`LocalApi.call` checks the token again against the database (a rotation elsewhere shows at once)."""
    token = api.token
    for wrong in _near_misses(token):
        status, encoded, _kept = api.call(wrong, "ruc", None, RUC)
        assert status == 401 and json.loads(encoded)["error"]["code"] == "UNAUTHORIZED", wrong
    status, _encoded, _kept = api.call(token, "ruc", None, "123")
    assert status == 400  # the right token goes through to the engine


# ---------------------------------------------------------------- leases

def _queued_row(engine) -> dict:
    xml = signed_sample()
    return engine._outbox.enqueue(identify(etree.fromstring(xml)), xml, "sandbox", None)


def _lease(engine, row: dict, owner: str, seconds_left: float) -> None:
    """A lease held by `owner`, running out `seconds_left` from now on the database's clock (the one leases use)."""
    with engine._storage.write() as conn:
        conn.execute(f"UPDATE sunat_submissions SET claimed_by = ?, claimed_until = {DB_NOW} + ? WHERE id = ?",
                     (owner, seconds_left, row["id"]))


def test_an_expired_lease_of_a_live_owner_is_reclaimed(sunat_engine, sandbox):
    """The parent process (pytest's launcher) is alive: its lease counts only until its time runs out."""
    row = _queued_row(sunat_engine)
    live_owner = f"{os.getppid()}:other:lease"
    _lease(sunat_engine, row, live_owner, -1)
    attempt = sunat_engine._outbox.attempt(row["id"])
    assert attempt.kind == "cdr", attempt
    assert sandbox.send_count(stem()) == 1
    assert sunat_engine._outbox.submission(row["id"])["state"] == outbox.DONE


def test_an_expired_lease_of_this_outbox_still_running_is_reclaimed(sunat_engine, sandbox):
    """A lease of one of this outbox's own attempts, still under way but out of time, is taken over too."""
    row = _queued_row(sunat_engine)
    box = sunat_engine._outbox
    own = f"{box.owner}:stuck"
    with box._leases_lock:
        box._leases.add(own)
    try:
        _lease(sunat_engine, row, own, -0.001)
        assert box.attempt(row["id"]).kind == "cdr"
    finally:
        box._release(own)


def test_a_current_lease_of_a_live_owner_is_respected(sunat_engine, sandbox):
    row = _queued_row(sunat_engine)
    _lease(sunat_engine, row, f"{os.getppid()}:other:lease", 60)
    attempt = sunat_engine._outbox.attempt(row["id"])
    assert attempt.kind == "queued" and attempt.in_flight
    assert sandbox.send_count(stem()) == 0


def test_a_claim_sets_a_lease_of_the_configured_length(sunat_engine):
    row = _queued_row(sunat_engine)
    box = sunat_engine._outbox
    box.clock = lambda: 1_000_000.0  # the schedule's clock: leases are on the database's
    before = box.submissions.now()
    lease = box._claim(row["id"])
    after = box.submissions.now()
    assert lease is not None and lease.startswith(box.owner + ":")
    stored = sunat_engine._outbox.submission(row["id"])
    assert stored["claimed_by"] == lease
    # sunat_timeout_s is 1 in these tests: 2 * 1 + 15 seconds from the database's now
    assert before + 2 * 1 + 15 <= stored["claimed_until"] <= after + 2 * 1 + 15
    assert box._claim(row["id"]) is None  # its own attempt under way holds it
    box._release(lease)
    assert box._claim(row["id"]) is not None  # released, but the row left behind: an attempt that died
