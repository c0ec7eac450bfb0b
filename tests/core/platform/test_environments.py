"""Issue 16, point 2: sandbox, beta and production never mix.

Real servers on 127.0.0.1 port 0: the in-process sandboxes (SandboxMode, as the windows start them) and a
second SUNAT sandbox plus registry sandbox standing in for SUNAT beta and a real lookup provider. Every test
counts the requests each fake server received.
"""

from __future__ import annotations

import pytest

from app.core.engine import Engine
from app.core.invoicing import outbox
from app.sandbox.mode import SandboxMode
from app.sandbox.registry import RegistrySandbox
from app.sandbox.sunat import SunatSandbox
from tests.helpers.registry_support import running_registry
from tests.helpers.voucher_matrix import factura, item


@pytest.fixture
def beta():
    """A SUNAT stand-in at the address a user gives for SUNAT beta."""
    server = SunatSandbox(hold_limit_s=5)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def provider():
    """A lookup provider the user configured for real work (beta and production)."""
    with running_registry() as server:
        yield server


def point_settings_at(engine: Engine, beta: SunatSandbox, provider: RegistrySandbox) -> None:
    """What a user types in Ajustes for beta: SUNAT beta's address and their lookup provider."""
    engine.admin.config_set("sunat_url_beta", beta.bill_url)
    engine.admin.config_set("sunat_url_consulta", beta.consult_url)
    engine.admin.config_set("registry_factiliza_url", provider.factiliza_url)
    engine.admin.config_set("registry_providers", "factiliza")
    engine.lookups.set_provider_token("factiliza", provider.token)
    engine.admin.config_set("sunat_timeout_s", "1")
    engine.admin.config_set("sunat_retry_base_s", "0.05")
    engine.admin.config_set("sunat_retry_max_s", "0.1")


def issue(engine: Engine, certificado_id: str, ruc: str) -> tuple[str, int, dict]:
    """Generate, sign and send the next factura F001 of the current environment: (file stem, status, envelope)."""
    numero = engine.invoicing.next_number(ruc, "01", "F001")
    xml = engine.invoicing.generate_xml(factura("F001", numero, [item("Servicio", "1", "100")])).xml
    signed = engine.invoicing.sign({"xml": xml, "certificado_id": certificado_id}).xml_firmado
    status, envelope = engine.call("enviar", {"xml_firmado": signed, "ambiente": "beta"})
    return f"{ruc}-01-F001-{numero}", status, envelope


def port_of(server) -> int:
    return int(server.base_url.rsplit(":", 1)[1].split("/")[0])


def test_sandbox_beta_sandbox_keeps_addresses_vouchers_and_cache_apart(home, engine, company, beta, provider):
    point_settings_at(engine, beta, provider)
    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    mode = SandboxMode(engine)
    mode.start()
    first_local, local_registry = mode.running["sunat"], mode.running["registry"]
    local = first_local
    ruc = next(iter(local_registry.records["ruc"]))

    # 1. sandbox: the voucher and the lookup go to the local stand-ins only
    sandbox_stem, status, envelope = issue(engine, certificado_id, company.ruc)
    assert status == 200 and envelope["data"]["codigo_respuesta"] == "0", envelope
    assert engine.lookups.ruc(ruc).fuente == "factiliza"
    assert local.send_count(sandbox_stem) == 1 and local_registry.requests == 1
    assert beta.sends() == 0 and provider.requests == 0

    # 2. beta (the sandboxes stop, as when the app restarts): no sandbox address anywhere in settings
    engine.admin.config_set("environment", "beta")
    local_ports = [port_of(local), port_of(local_registry)]
    mode.stop()
    for settings in (_settings(engine), _reopened_settings(home)):
        leaked = [f"{k}={v}" for k, v in settings.items() for p in local_ports if f":{p}" in v]
        assert leaked == []
        assert settings["sunat_url_beta"] == beta.bill_url
    # the cache does not answer beta with the sandbox's record: the beta provider is asked
    assert engine.lookups.ruc(ruc).fuente == "factiliza" and provider.requests == 1
    # SUNAT beta does not answer: the factura waits, pending, in beta
    beta.fail_next("500", 1000)
    beta_stem, status, envelope = issue(engine, certificado_id, company.ruc)
    assert status == 503, envelope
    assert beta_stem == sandbox_stem  # numbered in beta's own series: the sandbox trial used up no number
    pending = submission(engine, "beta", beta_stem)
    assert pending["state"] == outbox.PENDING

    # 3. back to sandbox, new sandboxes on new ports: the beta factura is never sent to them
    engine.admin.config_set("environment", "sandbox")
    mode.start()
    local = mode.running["sunat"]
    next_stem, status, envelope = issue(engine, certificado_id, company.ruc)
    assert status == 200 and envelope["data"]["codigo_respuesta"] == "0", envelope
    engine._outbox.wake()
    assert not local.wait_for_sends(2, timeout=1.5)  # the worker had many rounds: only the sandbox voucher came
    assert local.send_count(beta_stem) == 0 and local.sends() == 1
    assert submission(engine, "beta", beta_stem)["state"] == outbox.PENDING
    assert next_stem.endswith("-F001-2")

    # 4. beta again, SUNAT beta answers: the pending factura goes there, once accepted
    mode.stop()
    beta.reset_failures()
    engine.admin.config_set("environment", "beta")
    engine._outbox.wake()
    done = engine._outbox.wait_settled(pending["id"], timeout=10)
    assert done["state"] == outbox.DONE
    assert beta.processed_counts[beta_stem] == 1
    # each fake SUNAT received only its own environment's vouchers
    assert set(beta.received_counts) == {beta_stem} and set(local.received_counts) == {next_stem}
    assert dict(first_local.received_counts) == {sandbox_stem: 1}
    assert [v.numero for v in engine.invoicing.vouchers()] == [1]  # beta's list: its one factura
    engine.admin.config_set("environment", "sandbox")
    assert [v.numero for v in engine.invoicing.vouchers()] == [2, 1]


def submission(engine: Engine, environment: str, stem: str) -> dict:
    return engine._storage.query_one("SELECT * FROM sunat_submissions WHERE environment = ? AND file_name = ?",
                                     (environment, stem))


def _settings(engine: Engine) -> dict[str, str]:
    return {value.key: value.value for value in engine.admin.config_list()}


def _reopened_settings(home) -> dict[str, str]:
    with Engine(home) as again:
        return _settings(again)


def test_a_folder_of_the_previous_version_is_split_by_environment(tmp_path):
    import sqlite3

    import sqlite_utils

    from app.core.platform.paths import database_path
    from app.core.storage.sqlite.migrations import SETS

    home = tmp_path / "old"
    home.mkdir()
    db = sqlite_utils.Database(sqlite3.connect(database_path(home), isolation_level=None))
    for migrations in SETS:  # the folder as the previous version left it
        migrations.apply(db, stop_before={"m004_environment", "m003_environment", "m002_cache_per_environment"})
    for numero in (1, 2):
        db.execute("INSERT INTO vouchers (id, emisor_ruc, tipo, serie, numero, nombre_archivo, hash, xml_sha256,"
                   " content_key, status, moneda, total, fecha_emision) VALUES (?, '20100066603', '01', 'F001', ?,"
                   " 'f.xml', 'h', 'x', 'k', 'aceptado', 'PEN', '1.00', '2024-01-01')", (numero, numero))
        db.execute("INSERT INTO voucher_texts (voucher_id, request_json, xml) VALUES (?, '{}', '<Invoice/>')", (numero,))
    for numero, ambiente in ((1, "beta"), (2, "produccion")):
        db.execute("INSERT INTO sunat_submissions (id, voucher_id, ambiente, ruc, tipo, serie, numero, file_name, xml,"
                   " state) VALUES (?, ?, ?, '20100066603', '01', 'F001', ?, ?, x'00', 'terminado')",
                   (numero, numero, ambiente, str(numero), f"20100066603-01-F001-{numero}"))
        db.execute("INSERT INTO sunat_cdrs (submission_id, codigo, descripcion, notas, estado, hash_cdr, cdr_zip)"
                   " VALUES (?, '0', 'ok', '[]', 'aceptado', 'h', x'00')", (numero,))
    db.execute("INSERT INTO registry_cache (kind, numero, record, fetched_at) VALUES ('ruc', '20100066603', '{}', 1)")
    db.conn.close()
    with Engine(home) as engine:  # the folder never set an environment: it was the sandbox's
        environments = {r["numero"]: r["environment"] for r in engine._storage.query("SELECT * FROM vouchers")}
        assert environments == {1: "sandbox", 2: "produccion"}
        submissions = {r["numero"]: r["environment"] for r in engine._storage.query("SELECT * FROM sunat_submissions")}
        assert submissions == {"1": "sandbox", "2": "produccion"}
        assert engine.invoicing.voucher_cdr(2).codigo == "0"  # the CDRs still point at their submissions
        assert engine._storage.query("PRAGMA foreign_key_check") == []
        assert engine._storage.query_one("SELECT environment FROM registry_cache")["environment"] == "sandbox"
        assert engine.invoicing.next_number("20100066603", "01", "F001") == 2
        engine.admin.config_set("environment", "produccion")
        assert engine.invoicing.next_number("20100066603", "01", "F001") == 3


def test_an_ambiente_of_another_environment_is_refused_and_nothing_is_queued(engine, company):
    engine.admin.config_set("environment", "beta")
    status, envelope = engine.call("enviar", {"xml_firmado": "<Invoice/>", "ambiente": "produccion"})
    assert status == 400 and envelope["error"]["details"][0]["field"] == "ambiente"
    assert "SUNAT beta" in envelope["error"]["message"] and "«beta»" in envelope["error"]["message"]
    assert engine._storage.query("SELECT * FROM sunat_submissions") == []


def test_without_a_running_sandbox_the_sandbox_environment_sends_nowhere(engine, company, beta):
    engine.admin.config_set("sunat_url_beta", beta.bill_url)  # beta is reachable, but this is the sandbox environment
    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    _stem, status, envelope = issue(engine, certificado_id, company.ruc)
    assert status == 503 and envelope["error"]["code"] == "NOT_CONFIGURED"
    assert "yupana sandbox --configure" in envelope["error"]["message"]
    assert beta.sends() == 0 and engine._storage.query("SELECT * FROM sunat_submissions") == []


def test_a_voucher_generated_in_the_sandbox_is_not_sent_in_beta(engine, company, beta):
    mode = SandboxMode(engine)
    mode.start()
    engine.admin.config_set("sunat_url_beta", beta.bill_url)
    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    xml = engine.invoicing.generate_xml(factura("F001", 1, [item("Servicio", "1", "100")])).xml
    signed = engine.invoicing.sign({"xml": xml, "certificado_id": certificado_id}).xml_firmado
    engine.admin.config_set("environment", "beta")
    status, envelope = engine.call("enviar", {"xml_firmado": signed, "ambiente": "beta"})
    assert status == 409 and "sandbox" in envelope["error"]["message"]
    assert beta.sends() == 0 and mode.running["sunat"].sends() == 0
    mode.stop()


def test_a_voucher_pending_in_the_sandbox_is_never_sent_to_beta(engine, company, beta):
    engine.admin.config_set("sunat_url_beta", beta.bill_url)
    engine.admin.config_set("sunat_retry_base_s", "0.05")
    engine.admin.config_set("sunat_retry_max_s", "0.1")
    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    mode = SandboxMode(engine)
    mode.start()
    local = mode.running["sunat"]
    local.fail_next("500", 1000)
    stem, status, _ = issue(engine, certificado_id, company.ruc)
    assert status == 503 and submission(engine, "sandbox", stem)["state"] == outbox.PENDING
    engine.admin.config_set("environment", "beta")  # the sandbox keeps running: only the environment changed
    engine._outbox.wake()
    assert not beta.wait_for_sends(1, timeout=1.5)  # many worker rounds: nothing reached SUNAT beta
    assert submission(engine, "sandbox", stem)["state"] == outbox.PENDING
    local_sends = local.sends()
    local.reset_failures()
    engine.admin.config_set("environment", "sandbox")
    done = engine._outbox.wait_settled(submission(engine, "sandbox", stem)["id"], timeout=10)
    assert done["state"] == outbox.DONE and local.processed_counts[stem] == 1 and local.sends() > local_sends
    assert beta.sends() == 0
    mode.stop()
