"""`yupana guia SOLICITUD.json` (issue 36, point 4): a real `yupana` process issues a guía from a JSON file through
the GRE sandbox (127.0.0.1, port 0) and ends with its number and state; a bad request is refused naming the field and
SUNAT's code, with nothing sent."""

from __future__ import annotations

import json

import pytest

from app.sandbox.sunat_gre import SunatGreSandbox
from tests.helpers.base import ISSUER_RUC, run_cli
from tests.helpers.guia_matrix import remitente


@pytest.fixture
def folder(tmp_path):
    from app.core.engine import Engine
    from app.core.platform.companies import Company

    server = SunatGreSandbox()
    server.start()
    engine = Engine(tmp_path)
    try:
        engine.admin.set_company(Company(ruc=ISSUER_RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                         direccion="AV. ABANCAY 123"))
        engine.invoicing.create_test_certificate(ISSUER_RUC)
        server.configure(engine)  # the folder's sandbox environment sends guías to this server
    finally:
        engine.close()
    yield tmp_path, server
    server.stop()


def test_the_command_issues_a_guia_and_ends_with_its_number_and_state(folder):
    home, server = folder
    path = home / "guia.json"
    path.write_text(json.dumps(remitente(1)), encoding="utf-8")
    done = run_cli("guia", str(path), home=home)
    assert done.returncode == 0, done.stderr.decode()
    lines = done.stdout.decode().strip().splitlines()
    assert lines[0] == f"Archivo: {ISSUER_RUC}-09-T001-1.xml"
    assert lines[-1] == "T001-1 aceptado"
    assert server.received_counts == {f"{ISSUER_RUC}-09-T001-1": 1}


def test_a_bad_request_is_refused_with_the_field_and_sunat_s_code(folder):
    home, server = folder
    done = run_cli("guia", "-", stdin=json.dumps(remitente(1, vehiculos=[{"placa": "ABC-123"}])), home=home)
    assert done.returncode == 1
    assert "vehiculos[0].placa" in done.stderr.decode() and "[2567]" in done.stderr.decode()
    assert server.received_counts == {}
