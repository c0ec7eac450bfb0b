"""End to end through `yupana call` against the SUNAT sandbox: generate → sign → send.

The sandbox runs SUNAT's own rule sheets here (../shared/sunat/validation); the codes it answers
are compared with the outside oracle ../shared/tools/sunat_check.py, and the CDR's signature is
checked by xmlsec1 through the same oracle.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from app.core.invoicing import cdr
from app.sandbox.sunat import SunatSandbox
from tests.helpers import shared
from tests.helpers.base import ISSUER_RUC, run_cli
from tests.helpers.oracles import run_sunat_check
from tests.helpers.shared import RULES_DIR
from tests.helpers.sunat_support import sign
from tests.helpers.voucher_matrix import DNI_CUSTOMER, boleta, factura, item


def oracle(path: Path) -> dict:
    """The outside oracle, in its own process: it and Yupana's sheet runner both register lxml's global
    dp:variable function, so they must not share one."""
    done = run_sunat_check(path, "--name", path.name, "--json")
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def rules_sandbox():
    shared.require()
    server = SunatSandbox(rules_dir=str(RULES_DIR), hold_limit_s=10)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def folder(engine, company, rules_sandbox, home):
    """A data folder with the demo issuer, pointed at the sandbox, with a test certificate."""
    rules_sandbox.reset()
    rules_sandbox.configure(engine)
    return home, engine.invoicing.create_test_certificate(ISSUER_RUC).certificado_id


def call(home, operation: str, body: dict) -> tuple[int, dict]:
    done = run_cli("call", operation, "-", stdin=json.dumps(body, default=str), home=home)
    return done.returncode, json.loads(done.stdout)


def generate(home, numero: int) -> str:
    code, envelope = call(home, "xml", factura("F001", numero, [item("Servicio de consultoría", "1", "100")]))
    assert code == 0, envelope
    return envelope["data"]["xml"]


def signed_by_the_engine(engine, certificado_id: str, numero: int) -> str:
    """Generated and signed in-process (the CLI path is the first test's); sent through `yupana call`."""
    xml = engine.invoicing.generate_xml(factura("F001", numero, [item("Servicio de consultoría", "1", "100")])).xml
    return engine.invoicing.sign({"xml": xml, "certificado_id": certificado_id}).xml_firmado


def test_generate_sign_send_is_accepted_with_a_signed_cdr(folder, engine, rules_sandbox, tmp_path):
    home, certificado_id = folder
    code, signed = call(home, "firmar", {"xml": generate(home, 1), "certificado_id": certificado_id})
    assert code == 0, signed
    code, sent = call(home, "enviar", {"xml_firmado": signed["data"]["xml_firmado"]})
    assert code == 0, sent
    data = sent["data"]
    assert (data["codigo_respuesta"], data["estado"]) == ("0", "aceptado")
    answer = cdr.read_zip(base64.b64decode(data["cdr"]))
    assert answer.referencia == "F001-1"
    path = tmp_path / f"R-{ISSUER_RUC}-01-F001-1.xml"
    path.write_bytes(answer.xml)
    assert oracle(path)["signature"]["ok"] is True  # xmlsec1 verifies the sandbox's CDR signature
    assert data["hash_cdr"] == answer.hash_cdr
    voucher = engine._storage.query_one("SELECT status FROM vouchers WHERE serie = 'F001' AND numero = 1")
    assert voucher["status"] == "aceptado"
    assert rules_sandbox.send_count(f"{ISSUER_RUC}-01-F001-1") == 1


def test_voucher_the_rules_reject_is_rechazado_with_the_rules_code(folder, engine, rules_sandbox, tmp_path):
    home, _ = folder
    xml = engine.invoicing.generate_xml(factura("F001", 2, [item("Servicio de consultoría", "1", "100")])).xml
    wrong = xml.replace('<cbc:PayableAmount currencyID="PEN">118.00', '<cbc:PayableAmount currencyID="PEN">128.00', 1)
    assert wrong != xml
    signed = sign(wrong.encode("utf-8"))  # a voucher signed elsewhere: accepted because its signature verifies
    path = tmp_path / f"{ISSUER_RUC}-01-F001-2.xml"
    path.write_bytes(signed)
    expected = oracle(path)["sunat"]["rejection"]
    assert expected and 2000 <= int(expected) <= 3999
    code, sent = call(home, "enviar", {"xml_firmado": signed.decode("utf-8")})
    assert code == 0, sent
    assert sent["data"]["estado"] == "rechazado"
    assert sent["data"]["codigo_respuesta"] == expected
    assert cdr.read_zip(base64.b64decode(sent["data"]["cdr"])).codigo == expected


def test_wrong_sol_credentials_are_the_0102_fault(folder, engine):
    home, certificado_id = folder
    engine.invoicing.set_sol_credentials(ISSUER_RUC, "MODDATOS", "no-es-esta")
    code, sent = call(home, "enviar", {"xml_firmado": signed_by_the_engine(engine, certificado_id, 3)})
    assert code == 1
    assert sent["success"] is False
    assert sent["error"]["code"] == "UPSTREAM_REJECTED"
    assert sent["error"]["details"][0]["sunat_code"] == "0102"
    assert "Usuario o contrasena incorrectos" in sent["error"]["message"]


def test_altered_foreign_voucher_is_refused_before_sending(folder, engine, rules_sandbox):
    home, certificado_id = folder
    altered = signed_by_the_engine(engine, certificado_id, 4).replace("Servicio de consultoría", "Servicio alterado")
    code, sent = call(home, "enviar", {"xml_firmado": altered})
    assert code == 1
    assert sent["error"]["details"][0]["sunat_code"] == "2335"
    assert rules_sandbox.send_count(f"{ISSUER_RUC}-01-F001-4") == 0


def test_observations_come_back_as_observado(folder, engine, tmp_path):
    """A boleta whose payable total is off is accepted with observation 4312, as SUNAT treats it."""
    home, _ = folder
    xml = engine.invoicing.generate_xml(boleta("B001", 1, [item("Menú del día", "1", "100")], DNI_CUSTOMER)).xml
    wrong = xml.replace('<cbc:PayableAmount currencyID="PEN">118.00', '<cbc:PayableAmount currencyID="PEN">128.00', 1)
    assert wrong != xml
    signed = sign(wrong.encode("utf-8"))
    path = tmp_path / f"{ISSUER_RUC}-03-B001-1.xml"
    path.write_bytes(signed)
    verdict = oracle(path)["sunat"]
    assert verdict["rejection"] is None and verdict["observations"]
    code, sent = call(home, "enviar", {"xml_firmado": signed.decode("utf-8")})
    assert code == 0, sent
    data = sent["data"]
    assert (data["codigo_respuesta"], data["estado"]) == ("0", "observado")
    assert [note.split(" - ")[0] for note in data["observaciones"]] == verdict["observations"]
