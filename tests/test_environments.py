"""Issue 16, point 2: sandbox, beta and production never mix.

Real servers on 127.0.0.1 port 0: the in-process sandboxes (SandboxMode, as the windows start them) and a
second SUNAT sandbox plus registry sandbox standing in for SUNAT beta and a real lookup provider. Every test
counts the requests each fake server received.
"""

from __future__ import annotations

import pytest

from app.core import outbox
from app.core.engine import Engine
from app.gui.sandbox_mode import SandboxMode
from app.sandbox.registry import RegistrySandbox
from app.sandbox.sunat import SunatSandbox
from tests.voucher_matrix import factura, item


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
    server = RegistrySandbox()
    server.start()
    yield server
    server.stop()


def point_settings_at(engine: Engine, beta: SunatSandbox, provider: RegistrySandbox) -> None:
    """What a user types in Ajustes for beta: SUNAT beta's address and their lookup provider."""
    engine.config_set("sunat_url_beta", beta.bill_url)
    engine.config_set("sunat_url_consulta", beta.consult_url)
    engine.config_set("registry_factiliza_url", provider.factiliza_url)
    engine.config_set("registry_providers", "factiliza")
    engine.set_provider_token("factiliza", provider.token)
    engine.config_set("sunat_timeout_s", "1")
    engine.config_set("sunat_retry_base_s", "0.05")
    engine.config_set("sunat_retry_max_s", "0.1")


def issue(engine: Engine, certificado_id: str, ruc: str) -> tuple[str, int, dict]:
    """Generate, sign and send the next factura F001 of the current environment: (file stem, status, envelope)."""
    numero = engine.next_numero(ruc, "01", "F001")
    xml = engine.generar_xml(factura("F001", numero, [item("Servicio", "1", "100")])).xml
    signed = engine.firmar({"xml": xml, "certificado_id": certificado_id}).xml_firmado
    status, envelope = engine.call("enviar", {"xml_firmado": signed, "ambiente": "beta"})
    return f"{ruc}-01-F001-{numero}", status, envelope


def port_of(server) -> int:
    return int(server.base_url.rsplit(":", 1)[1].split("/")[0])


def test_sandbox_beta_sandbox_keeps_addresses_vouchers_and_cache_apart(home, engine, company, beta, provider):
    point_settings_at(engine, beta, provider)
    certificado_id = engine.create_test_certificate(company.ruc).certificado_id
    mode = SandboxMode(engine)
    mode.start()
    first_local, local_registry = mode.running["sunat"], mode.running["registry"]
    local = first_local
    ruc = next(iter(local_registry.records["ruc"]))

    # 1. sandbox: the voucher and the lookup go to the local stand-ins only
    sandbox_stem, status, envelope = issue(engine, certificado_id, company.ruc)
    assert status == 200 and envelope["data"]["codigo_respuesta"] == "0", envelope
    assert engine.ruc(ruc).fuente == "factiliza"
    assert local.send_count(sandbox_stem) == 1 and local_registry.requests == 1
    assert beta.sends() == 0 and provider.requests == 0

    # 2. beta (the sandboxes stop, as when the app restarts): no sandbox address anywhere in settings
    engine.config_set("environment", "beta")
    local_ports = [port_of(local), port_of(local_registry)]
    mode.stop()
    for settings in (engine.config_list(), _reopened_settings(home)):
        leaked = [f"{k}={v}" for k, v in settings.items() for p in local_ports if f":{p}" in v]
        assert leaked == []
        assert settings["sunat_url_beta"] == beta.bill_url
    # the cache does not answer beta with the sandbox's record: the beta provider is asked
    assert engine.ruc(ruc).fuente == "factiliza" and provider.requests == 1
    # SUNAT beta does not answer: the factura waits, pending, in beta
    beta.fail_next("500", 1000)
    beta_stem, status, envelope = issue(engine, certificado_id, company.ruc)
    assert status == 503, envelope
    assert beta_stem == sandbox_stem  # numbered in beta's own series: the sandbox trial used up no number
    pending = submission(engine, "beta", beta_stem)
    assert pending["state"] == outbox.PENDING

    # 3. back to sandbox, new sandboxes on new ports: the beta factura is never sent to them
    engine.config_set("environment", "sandbox")
    mode.start()
    local = mode.running["sunat"]
    next_stem, status, envelope = issue(engine, certificado_id, company.ruc)
    assert status == 200 and envelope["data"]["codigo_respuesta"] == "0", envelope
    engine.outbox.wake()
    assert not local.wait_for_sends(2, timeout=1.5)  # the worker had many rounds: only the sandbox voucher came
    assert local.send_count(beta_stem) == 0 and local.sends() == 1
    assert submission(engine, "beta", beta_stem)["state"] == outbox.PENDING
    assert next_stem.endswith("-F001-2")

    # 4. beta again, SUNAT beta answers: the pending factura goes there, once accepted
    mode.stop()
    beta.reset_failures()
    engine.config_set("environment", "beta")
    engine.outbox.wake()
    done = engine.outbox.wait_settled(pending["id"], timeout=10)
    assert done["state"] == outbox.DONE
    assert beta.processed_counts[beta_stem] == 1
    # each fake SUNAT received only its own environment's vouchers
    assert set(beta.received_counts) == {beta_stem} and set(local.received_counts) == {next_stem}
    assert dict(first_local.received_counts) == {sandbox_stem: 1}
    assert [v["numero"] for v in engine.list_vouchers()] == [1]  # beta's list: its one factura
    engine.config_set("environment", "sandbox")
    assert [v["numero"] for v in engine.list_vouchers()] == [2, 1]


def submission(engine: Engine, environment: str, stem: str) -> dict:
    return engine.storage.query_one("SELECT * FROM sunat_submissions WHERE environment = ? AND file_name = ?",
                                    (environment, stem))


def _reopened_settings(home) -> dict[str, str]:
    with Engine(home) as again:
        return again.config_list()
