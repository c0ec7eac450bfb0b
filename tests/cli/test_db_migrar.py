"""`yupana db migrar` (issue 34, item 4): a single desk's SQLite folder, used for real (vouchers issued and sent to the
SUNAT sandbox, one voided, one CDR asked for, customers, products, a draft, a message received from the gateway sandbox
and forwarded to a subscriber, one sent), copied into an empty PostgreSQL database by the command itself. Every row of
every table arrives as it was, the texts byte-exact with signatures xmlsec1 still verifies, an engine on PostgreSQL
shows it all and continues the numbering; the folder's file is not changed by a byte; a second run and a database
holding other data are refused in Spanish."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.core.engine import Engine
from app.core.errors import YupanaError
from app.core.invoicing import statuses
from app.core.platform.companies import Company
from app.core.platform.paths import database_path
from app.core.storage import schema
from app.core.storage.engines import open_shared_database
from tests.helpers.base import ISSUER_RUC, ROOT, run_cli
from tests.helpers.messaging_support import wait_for
from tests.helpers.oracles import xmlsec_verify
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import DNI_CUSTOMER, boleta, factura, item

pytestmark = pytest.mark.postgres


def _fingerprint(home: Path) -> str:
    """The SHA-256 of the folder's database file, checking that no change waits in its log either (SQLite's read-only
    connection leaves an empty -wal and a -shm beside it, as any reader does)."""
    wal = home / "yupana.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0
    return hashlib.sha256((home / "yupana.db").read_bytes()).hexdigest()


def _sqlite_rows(path: Path, table: schema.Table) -> list[tuple]:
    """A table's rows read from the folder's file with the driver itself (an outside look at what was there)."""
    columns = ", ".join(name for name, _kind in table.columns)
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return sorted((tuple(row) for row in conn.execute(f"SELECT {columns} FROM {table.name}")), key=repr)
    finally:
        conn.close()


def _shared_rows(storage, table: schema.Table) -> list[tuple]:
    columns = [name for name, _kind in table.columns]
    rows = storage.query(f"SELECT {', '.join(columns)} FROM {table.name}")
    return sorted((tuple(bytes(row[c]) if isinstance(row[c], memoryview) else row[c] for c in columns)
                   for row in rows), key=repr)


def _use_the_desk(engine, gateway, subscriber) -> dict:
    """A day of a shop on SQLite; what it leaves, to compare with afterwards."""
    engine.catalog.save_customer({"tipo_documento": "6", "numero": "20131312955", "nombre": "Ferretería Andina SAC"})
    engine.catalog.save_product({"codigo": "ARR-5", "codigo_barras": "7750000000017", "descripcion": "Arroz extra 5 kg",
                                 "precio": "23.90"})
    first = issued(engine, factura("F001", 1, [item("Servicio de consultoría", "1", "100")]))
    voided = issued(engine, factura("F001", 2, [item("Servicio de consultoría", "1", "50")]))
    sold = issued(engine, boleta("B001", 1, [item("Polo de algodón", "2", "59")], receptor=DNI_CUSTOMER))
    outcome = engine.invoicing.void(voided, "ERROR EN EL RUC DEL CLIENTE")
    assert outcome.accepted and engine.invoicing.voucher(voided).status == statuses.ANULADO
    assert engine.invoicing.query_cdr(ISSUER_RUC, "01", "F001", 1).guardado
    engine.invoicing.save_draft({"serie": "F001", "items": []}, cliente="Ferretería Andina SAC", total="11.80")
    engine.messaging.subscribe({"instance": "demo", "url": subscriber.url, "events": ["message.received"]})
    assert gateway.emit("message.received", "demo", sender="+51987000111", body="¿Me manda la factura?",
                        name="Rosa Quispe") == [200]
    subscriber.wait(1)
    wait_for(lambda: engine._storage.query_one("SELECT 1 AS done FROM deliveries WHERE state = 'delivered'"))
    engine.messaging.send_message("demo", "+51987000111", "Le envío la factura F001-1")
    return {
        "ids": (first, voided, sold),
        "vouchers": {v.id: v for v in engine.invoicing.vouchers()},
        "texts": {i: engine.invoicing.voucher(i) for i in (first, voided, sold)},
        "cdrs": {i: engine.invoicing.voucher_cdr(i) for i in (first, voided, sold)},
        "summaries": engine.invoicing.summaries(),
        "customers": engine.catalog.customers(),
        "products": engine.catalog.products(),
        "messages": engine.messaging.messages("demo", "+51987000111"),
        "subscriptions": engine.messaging.subscriptions(),
        "certificado_id": engine.invoicing.default_certificate(ISSUER_RUC).certificado_id,
    }


@pytest.mark.sunat_files
def test_a_used_folder_moves_into_postgresql_whole_and_stays_as_it_was(
        voiding, voids_sandbox, gateway, subscriber, postgres_server, home, tmp_path):
    engine = voiding
    engine.admin.config_set("listener_port", "0")
    engine.messaging.start_listener()
    gateway.configure(engine)
    before = _use_the_desk(engine, gateway, subscriber)
    certificate = engine._certificates.signing_material(before["certificado_id"])[1]
    engine.close()  # the desk is closed to move it (docs/desks.md)
    folder = _fingerprint(home)
    url = postgres_server.empty_database()

    done = run_cli("db", "migrar", url, home=home)
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    for line in ("comprobantes", "constancias de SUNAT (CDR)", "envíos a SUNAT",
                 "resúmenes diarios y comunicaciones de baja", "clientes", "productos", "mensajes", "suscripciones",
                 "entregas a suscriptores", "instancias de mensajería"):
        assert any(row.strip().startswith(line) for row in out.splitlines()), (line, out)
    assert [row.split()[-1] for row in out.splitlines() if row.strip().startswith("comprobantes ")] == ["3"]
    assert "F001 (tipo 01, RUC 20100066603, sandbox): último 2, sigue el 3" in out
    assert "quedó como estaba" in out and _fingerprint(home) == folder

    shared = open_shared_database(url)
    try:  # every row of every table, as the folder's file holds it
        for table in schema.TABLES:
            assert _shared_rows(shared, table) == _sqlite_rows(database_path(home), table), table.name
        assert shared.query_one("SELECT count(*) AS n FROM deliveries WHERE state = 'delivered'") == {"n": 1}
    finally:
        shared.close()

    again = run_cli("db", "migrar", url, home=home)
    assert again.returncode == 1 and "ya se copió" in again.stderr.decode(), again.stderr.decode()
    assert "Este puesto ya usa esa base." in again.stderr.decode()
    assert _fingerprint(home) == folder

    desk = Engine(home)  # puesto.json now names the shared database
    try:
        _check_on_postgres(desk, before, certificate, voids_sandbox, tmp_path)
        # A second desk (its own data folder, the business's frase secreta) joins and issues on the same database.
        second = tmp_path / "caja2"
        second.mkdir()
        assert run_cli("db", "usar", url, home=second).returncode == 0
        with Engine(second) as other:
            voids_sandbox.configure(other)  # each desk's sandbox is its own (its folder's): this one's is the test's
            fourth = issued(other, factura("F001", 4, [item("Servicio de consultoría", "1", "30")]))
        assert desk.invoicing.voucher(fourth).status == statuses.ACEPTADO
        assert desk.invoicing.next_number(ISSUER_RUC, "01", "F001") == 5
    finally:
        desk.close()
    assert _fingerprint(home) == folder


def _check_on_postgres(desk, before, certificate, voids_sandbox, tmp_path) -> None:
    assert desk.admin.config_get("database_url").startswith("postgresql://")
    assert {v.id: v for v in desk.invoicing.vouchers()} == before["vouchers"]
    for voucher_id, detail in before["texts"].items():
        moved = desk.invoicing.voucher(voucher_id)
        assert (moved.xml, moved.request_json, moved.xml_firmado) == (detail.xml, detail.request_json,
                                                                     detail.xml_firmado)
        path = tmp_path / f"moved-{voucher_id}.xml"
        path.write_bytes(moved.xml_firmado.encode("utf-8"))
        assert xmlsec_verify(path, certificate).returncode == 0
        assert desk.invoicing.voucher_cdr(voucher_id) == before["cdrs"][voucher_id]
    assert desk.invoicing.summaries() == before["summaries"]
    assert [v.serie_numero for v in desk.invoicing.vouchers(search="F001-1")] == ["F001-1"]  # the list's search
    assert desk.catalog.customers() == before["customers"] and desk.catalog.products() == before["products"]
    assert [c.nombre for c in desk.catalog.customers("ferreteria")] == ["Ferretería Andina SAC"]
    assert desk.catalog.scanned_product("7750000000017").codigo == "ARR-5"
    assert desk.messaging.messages("demo", "+51987000111") == before["messages"]
    assert desk.messaging.subscriptions() == before["subscriptions"]
    assert [d.cliente for d in desk.invoicing.drafts()] == ["Ferretería Andina SAC"]
    # The numbering goes on after the last number, and the new voucher is sent to SUNAT from the shared database.
    assert desk.invoicing.next_number(ISSUER_RUC, "01", "F001") == 3
    voids_sandbox.configure(desk)
    third = issued(desk, factura("F001", 3, [item("Servicio de consultoría", "1", "70")]))
    assert third > max(before["ids"]) and voids_sandbox.voucher_status(ISSUER_RUC, "01", "F001", 3) == statuses.ACEPTADO
    added = desk.catalog.save_customer({"tipo_documento": "1", "numero": "70123456", "nombre": "Juana Quispe"})
    assert added.id > max(c.id for c in before["customers"])  # the keys go on after the folder's


def test_a_database_holding_other_data_is_refused_and_nothing_is_copied(postgres_server, home, tmp_path):
    other = tmp_path / "otra-tienda"
    other.mkdir()
    for folder, ruc, name in ((home, ISSUER_RUC, "COMERCIAL YUPANA S.A.C."), (other, "20131312955", "OTRA TIENDA SAC")):
        with Engine(folder) as engine:
            engine.admin.set_company(Company(ruc=ruc, razon_social=name, ubigeo="150101", direccion="AV. LIMA 1"))
            engine.invoicing.create_test_certificate(ruc)
    url = postgres_server.empty_database()
    first = run_cli("db", "migrar", url, home=other)
    assert first.returncode == 0, first.stderr.decode()
    folder = _fingerprint(home)
    refused = run_cli("db", "migrar", url, home=home)
    message = refused.stderr.decode()
    assert refused.returncode == 1 and "no está vacía (tiene 1 empresas, 1 certificados" in message, message
    assert _fingerprint(home) == folder and not (home / "puesto.json").exists()  # this desk stays on its folder
    shared = open_shared_database(url)
    try:
        assert shared.query("SELECT ruc FROM companies") == [{"ruc": "20131312955"}]
    finally:
        shared.close()
    assert "Motor: SQLite" in run_cli("db", "estado", home=home).stdout.decode()


LEGACY = ROOT / "tests" / "fixtures" / "legacy-folder-5a24e9f.zip"


def test_a_folder_of_an_earlier_version_is_copied_once_this_version_opened_it(postgres_server, tmp_path,
                                                                              monkeypatch):
    """The folder written before the storage ports (tests/fixtures/make_legacy_folder.py), one of its texts kept as
    texts were before packing (a plain TEXT value): refused until this version opened it, then copied, and on
    PostgreSQL its signatures verify, its secrets open with its passphrase and the old text reads the same."""
    home = tmp_path / "legacy-home"
    home.mkdir()
    with zipfile.ZipFile(LEGACY) as archive:
        archive.extract("yupana.db", home)
        manifest = json.loads(archive.read("manifest.json"))
    monkeypatch.setenv("YUPANA_PASSPHRASE", manifest["passphrase"])
    url = postgres_server.empty_database()
    refused = run_cli("db", "migrar", url, home=home)
    assert refused.returncode == 1 and "es de una versión anterior de Yupana: ábrala una vez" in refused.stderr.decode()
    with Engine(home) as engine:
        first = engine.invoicing.find_voucher("F001-1")
        request_json = engine.invoicing.voucher(first).request_json
    conn = sqlite3.connect(home / "yupana.db")  # as a row stored before texts were packed
    with conn:
        conn.execute("UPDATE voucher_texts SET request_json = ? WHERE voucher_id = ?", (request_json, first))
    conn.close()
    done = run_cli("db", "migrar", url, home=home)
    assert done.returncode == 0, done.stderr.decode()
    assert [row.split()[-1] for row in done.stdout.decode().splitlines() if row.strip().startswith("comprobantes ")] \
        == [str(manifest["counts"]["vouchers"])]
    with Engine(home) as engine:
        assert engine.admin.config_get("database_url") == url
        vouchers = engine.invoicing.vouchers(limit=50)
        assert {v.serie_numero: v.digest_value for v in vouchers} == manifest["digests"]
        for voucher in vouchers:
            verification = engine.invoicing.verify_signature(engine.invoicing.voucher(voucher.id).xml_firmado)
            assert verification.valid, (voucher.serie_numero, verification.reason)
        assert engine.invoicing.voucher(first).request_json == request_json
        assert engine.invoicing.sol_credentials(ISSUER_RUC) == ("MODDATOS", "moddatos")  # the passphrase opens them
        assert [s.kind for s in engine.invoicing.summaries()] == ["RC", "RA"]
        assert {m.body for m in engine.messaging.messages()} >= {"¿Tienen arroz de 50 kg?"}
    # The folder kept a desk's own setting in its database (before the split): it stays with this desk alone.
    assert json.loads((home / "puesto.json").read_text(encoding="utf-8"))["listener_port"] == "0"
    shared = open_shared_database(url)
    try:
        assert {row["key"] for row in shared.query("SELECT key FROM settings")} == {"sunat_retry_base_s",
                                                                                  "signature_algorithm"}
    finally:
        shared.close()


def test_a_copy_that_fails_leaves_the_shared_database_without_any_of_the_folder(postgres_server, home):
    """A value PostgreSQL cannot take (text in a column of numbers, which SQLite keeps): the copy stops with the
    server's reason, nothing of the folder is left in the shared database and the desk stays on its folder."""
    with Engine(home) as engine:
        engine.admin.set_company(Company(ruc=ISSUER_RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                         direccion="AV. LIMA 1"))
        engine.catalog.save_product({"codigo": "ARR-5", "descripcion": "Arroz extra 5 kg", "precio": "23.90"})
    conn = sqlite3.connect(home / "yupana.db")
    with conn:
        conn.execute("UPDATE products SET icbper = 'dos'")
    conn.close()
    folder = _fingerprint(home)
    url = postgres_server.empty_database()
    done = run_cli("db", "migrar", url, home=home)
    message = done.stderr.decode()
    assert done.returncode == 1 and "La copia se detuvo y la base compartida quedó sin nada de esta carpeta" in message
    assert "Traceback" not in message and "bigint" in message, message
    shared = open_shared_database(url)
    try:
        assert shared.query_one("SELECT count(*) AS n FROM companies") == {"n": 0}
        assert shared.query_one("SELECT count(*) AS n FROM products") == {"n": 0}
    finally:
        shared.close()
    assert _fingerprint(home) == folder and not (home / "puesto.json").exists()


@dataclass(frozen=True)
class KeyringFolder:
    certificado: str
    token: str  # the local API's
    signed: str  # F001-1's signed XML
    secrets: int  # rows of the folder's secrets table


@pytest.fixture
def keyring_folder(home, monkeypatch) -> Iterator[KeyringFolder]:
    """A folder whose keys this computer's keyring protects (tests/helpers/keyrings.py's backend, in
    memory; no business passphrase given): its company, a test certificate, the SOL key, the API token and F001-1
    signed."""
    import keyring

    from app.core.platform import secrets
    from tests.helpers.keyrings import MemoryKeyring

    monkeypatch.setenv(secrets.KEYRING_ENV, "1")
    monkeypatch.delenv(secrets.PASSPHRASE_ENV)
    previous = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    try:
        with Engine(home) as engine:
            engine.admin.set_company(Company(ruc=ISSUER_RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                             direccion="AV. LIMA 1"))
            certificado = engine.invoicing.create_test_certificate(ISSUER_RUC).certificado_id
            engine.invoicing.set_sol_credentials(ISSUER_RUC, "MODDATOS", "moddatos")
            token = engine.admin.api_token()
            generated = engine.invoicing.generate_xml(factura("F001", 1, [item("Arroz Costeño 5 kg", "2", "25.37")]))
            signed = engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado}).xml_firmado
            stored = engine._storage.query_one("SELECT count(*) AS n FROM secrets")["n"]
        yield KeyringFolder(certificado, token, signed, stored)
    finally:
        keyring.set_keyring(previous)


def test_keys_a_desks_keyring_protected_are_left_out_and_entered_again_under_the_business_passphrase(
        postgres_server, home, keyring_folder, monkeypatch):
    """A folder whose keys this computer's keyring protects (tests/core/platform/test_keyring_path.py's backend): its
    ciphertexts open on no other desk, so the certificates, SOL key, tokens and API token are not copied and the
    output says what to enter again; then, on the shared database, a certificate imported again under the business
    passphrase signs, and the folder's signed vouchers still verify."""
    from app.core.platform import secrets

    url = postgres_server.empty_database()
    done = run_cli("db", "migrar", url, home=home)
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    assert "estaban protegidas por el llavero de este equipo" in out

    assert "(RUC 20100066603): impórtelo de nuevo" in out and "la clave SOL y los tokens" in out
    assert "el token de la API local: se genera otro" in out
    shared = open_shared_database(url)
    try:
        for table in ("secret_meta", "secrets", "api_token", "certificates", "default_certificates"):
            assert shared.query_one(f"SELECT count(*) AS n FROM {table}") == {"n": 0}, table
        assert shared.query_one("SELECT count(*) AS n FROM vouchers") == {"n": 1}
    finally:
        shared.close()
    monkeypatch.setenv(secrets.PASSPHRASE_ENV, "frase del negocio 2026")  # typed once on this desk
    with Engine(home) as desk:
        again = desk.invoicing.create_test_certificate(ISSUER_RUC).certificado_id
        second = desk.invoicing.generate_xml(factura("F001", 2, [item("Arroz Costeño 5 kg", "1", "25.37")]))
        assert "<ds:Signature" in desk.invoicing.sign({"xml": second.xml, "certificado_id": again}).xml_firmado
        desk.invoicing.set_sol_credentials(ISSUER_RUC, "MODDATOS", "moddatos")
        assert desk.invoicing.sol_credentials(ISSUER_RUC) == ("MODDATOS", "moddatos")
        old = desk.invoicing.voucher(desk.invoicing.find_voucher("F001-1")).xml_firmado
        assert old == keyring_folder.signed and desk.invoicing.verify_signature(old).valid


def test_keys_a_desks_keyring_protected_are_wrapped_again_under_the_business_passphrase(postgres_server, home,
                                                                                         keyring_folder, tmp_path,
                                                                                         monkeypatch):
    """`yupana db migrar` on the computer whose keyring protects the folder's keys, with the business passphrase
    (YUPANA_PASSPHRASE, or typed at the prompt): the keyring opens them and they are copied encrypted under the
    passphrase — the same certificate signs on the shared database, the SOL key and the API token are the same, and
    another desk (no keyring) opens them with the passphrase; the folder is left as it was."""
    from app.core.api import shared_database
    from app.core.platform import secrets

    folder = _fingerprint(home)
    url = postgres_server.empty_database()
    with pytest.raises(YupanaError, match="al menos"):  # a passphrase too short: refused, nothing copied
        shared_database.migrate(home, url, lambda: "corta")
    asked = []
    done = shared_database.migrate(home, url, lambda: asked.append(1) or "frase del negocio 2026")
    assert asked == [1] and done.rewrapped and done.to_enter_again == ()
    assert _fingerprint(home) == folder  # the folder's file only read
    shared = open_shared_database(url)
    try:
        assert shared.query_one("SELECT value FROM secret_meta WHERE key = 'key_source'") == {"value": "passphrase"}
        assert shared.query_one("SELECT count(*) AS n FROM secrets") == {"n": keyring_folder.secrets}
        assert shared.query_one("SELECT count(*) AS n FROM certificates") == {"n": 1}
    finally:
        shared.close()
    with Engine(home) as desk:  # this desk: the business key it kept in its keyring at the copy, nothing asked
        second = desk.invoicing.generate_xml(factura("F001", 2, [item("Arroz Costeño 5 kg", "1", "25.37")]))
        resigned = desk.invoicing.sign({"xml": second.xml, "certificado_id": keyring_folder.certificado}).xml_firmado
        assert desk.invoicing.verify_signature(resigned).valid
        assert desk.invoicing.sol_credentials(ISSUER_RUC) == ("MODDATOS", "moddatos")
        assert desk.admin.api_token() == keyring_folder.token
        old = desk.invoicing.voucher(desk.invoicing.find_voucher("F001-1")).xml_firmado
        assert old == keyring_folder.signed and desk.invoicing.verify_signature(old).valid
    other = tmp_path / "caja2"
    other.mkdir()
    (other / "puesto.json").write_text(json.dumps({"database_url": url}), encoding="utf-8")
    monkeypatch.setenv(secrets.KEYRING_ENV, "0")  # another computer: no keyring, the passphrase typed
    monkeypatch.setenv(secrets.PASSPHRASE_ENV, "frase del negocio 2026")
    with Engine(other) as desk:
        assert desk.invoicing.sol_credentials(ISSUER_RUC) == ("MODDATOS", "moddatos")
        assert desk.admin.api_token() == keyring_folder.token
