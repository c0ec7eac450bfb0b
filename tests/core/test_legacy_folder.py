"""A data folder written before the storage ports (commit 5a24e9f, tests/fixtures/make_legacy_folder.py) opens with
this version: its schema's history is adopted as it is (no step runs again), every row is kept, and what it holds
still works — vouchers whose signatures verify, CDRs, secrets under the folder's passphrase, the API token."""

from __future__ import annotations

import json
import sqlite3
import zipfile

import pytest

from app.core.engine import Engine
from app.core.storage import schema
from app.core.storage.sqlite.schema import ADOPTED, UPGRADED
from tests.helpers.base import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "legacy-folder-5a24e9f.zip"
RUC = "20100066603"


@pytest.fixture
def legacy(tmp_path, monkeypatch):
    """The folder unpacked in a new home, opened with its passphrase: (home, manifest)."""
    home = tmp_path / "legacy-home"
    home.mkdir()
    with zipfile.ZipFile(FIXTURE) as archive:
        archive.extract("yupana.db", home)
        manifest = json.loads(archive.read("manifest.json"))
    monkeypatch.setenv("YUPANA_HOME", str(home))
    monkeypatch.setenv("YUPANA_PASSPHRASE", manifest["passphrase"])
    return home, manifest


def _counts(database) -> dict[str, int]:
    conn = sqlite3.connect(database)
    try:
        tables = [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%_fts_%' "
            "AND name NOT LIKE 'sqlite_%'")]
        return {table: conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0] for table in tables}
    finally:
        conn.close()


def _migrations(database) -> list[list[str]]:
    conn = sqlite3.connect(database)
    try:
        return [list(row) for row in conn.execute("SELECT migration_set, name FROM _sqlite_migrations ORDER BY id")]
    finally:
        conn.close()


def test_the_fixture_holds_every_aggregate(legacy):
    _home, manifest = legacy
    empty = {table for table, count in manifest["counts"].items() if count == 0}
    assert empty <= {"padron_current", "sandbox_endpoints"}  # no padrón was imported; no sandbox runs
    assert len(manifest["digests"]) == 5


def test_a_folder_of_the_previous_version_is_adopted_with_every_row(legacy):
    home, manifest = legacy
    with Engine(home):
        pass
    assert _migrations(home / "yupana.db") == manifest["migrations"]  # no step ran again, none is missing
    conn = sqlite3.connect(home / "yupana.db")
    # adopted as version 1, then what the later versions add (2: the form's drafts; 3: the deliveries' lease holder,
    # the desks' numbering, turns and product versions; 4: the guías' tickets; 5: the guías' vehicles, drivers and
    # carriers)
    assert conn.execute("SELECT version, how FROM schema_version").fetchall() == \
        [(1, ADOPTED)] + [(later, UPGRADED) for later in range(2, schema.VERSION + 1)]
    conn.close()
    with Engine(home):  # adopted once
        pass
    conn = sqlite3.connect(home / "yupana.db")
    assert conn.execute("SELECT COUNT(*) FROM schema_version").fetchone() == (schema.VERSION,)
    conn.close()
    counts = _counts(home / "yupana.db")
    assert {table: counts.get(table) for table in manifest["counts"]} == manifest["counts"]


def test_what_the_folder_holds_still_works(legacy):
    home, manifest = legacy
    with Engine(home) as engine:
        vouchers = engine.invoicing.vouchers(limit=50)
        assert {f"{v.serie}-{v.numero}": v.digest_value for v in vouchers} == manifest["digests"]
        for voucher in vouchers:
            detail = engine.invoicing.voucher(voucher.id)
            assert detail is not None and detail.xml_firmado
            verification = engine.invoicing.verify_signature(detail.xml_firmado)
            assert verification.valid, (voucher.serie_numero, verification.reason)
            assert verification.digest_value == voucher.digest_value
        statuses = {v.serie_numero: v.status for v in vouchers}
        assert statuses["F001-2"] == "anulado" and statuses["F001-1"] == "aceptado"
        cdr = engine.invoicing.voucher_cdr(engine.invoicing.find_voucher("F001-1"))
        assert cdr is not None and cdr.codigo == "0" and cdr.cdr_zip
        assert engine.invoicing.sol_credentials(RUC) == ("MODDATOS", "moddatos")  # decrypted with the passphrase
        assert len(engine.admin.api_token()) > 30
        assert [s.kind for s in engine.invoicing.summaries()] == ["RC", "RA"]
        assert engine.admin.print_options(RUC).formato == "ticket"
        assert engine.admin.config_get("signature_algorithm") == "rsa-sha256"
        assert [p.codigo for p in engine.catalog.products()] == ["ARR-5", "BOL-1"]
        assert engine.catalog.customer("1", "45678912").whatsapp == "+51987654321"
        assert {m.body for m in engine.messaging.messages()} >= {"¿Tienen arroz de 50 kg?"}
