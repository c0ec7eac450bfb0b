"""Operation 3 through the engine against the SUNAT sandbox: answers, faults, credentials."""

from __future__ import annotations

import base64

from app.core.errors import ErrorCode
from app.core.invoicing import cdr
from app.sandbox.sunat_signer import signature_is_valid
from tests.helpers.sunat_support import SAMPLE_RUC, signed_sample, stem


def enviar(engine, xml: bytes, ambiente: str = "beta") -> tuple[int, dict]:
    status, envelope = engine.call("enviar", {"xml_firmado": xml.decode("utf-8"), "ambiente": ambiente})
    return status, envelope


def cdr_rows(engine) -> list[dict]:
    return engine._storage.query("SELECT c.*, s.file_name FROM sunat_cdrs c JOIN sunat_submissions s "
                                 "ON s.id = c.submission_id")


def test_accepted_answer_has_the_contract_fields(sunat_engine, sandbox):
    status, envelope = enviar(sunat_engine, signed_sample())
    assert status == 200, envelope
    data = envelope["data"]
    assert data["codigo_respuesta"] == "0"
    assert data["estado"] == "aceptado"
    assert data["descripcion"] == "La Factura numero F002-00000031, ha sido aceptada"
    answer = cdr.read_zip(base64.b64decode(data["cdr"]))
    assert signature_is_valid(answer.xml)
    assert data["hash_cdr"] == answer.hash_cdr
    assert "observaciones" not in data  # an empty extra stays out of the JSON
    rows = cdr_rows(sunat_engine)
    assert len(rows) == 1 and rows[0]["estado"] == "aceptado" and rows[0]["file_name"] == stem()


def test_sending_an_accepted_voucher_again_returns_the_stored_cdr(sunat_engine, sandbox):
    first = enviar(sunat_engine, signed_sample())[1]["data"]
    second = enviar(sunat_engine, signed_sample())[1]["data"]
    assert second == first
    assert sandbox.send_count(stem()) == 1
    assert len(cdr_rows(sunat_engine)) == 1


def test_wrong_sol_credentials_are_a_0102_error_envelope(sunat_engine, sandbox):
    sunat_engine.invoicing.set_sol_credentials(SAMPLE_RUC, "MODDATOS", "equivocada")
    status, envelope = enviar(sunat_engine, signed_sample())
    assert status == 502
    error = envelope["error"]
    assert error["code"] == ErrorCode.UPSTREAM_REJECTED
    assert error["details"][0]["sunat_code"] == "0102"
    assert error["details"][0]["field"] == "xml_firmado"
    assert "Usuario o contrasena incorrectos" in error["message"]
    assert cdr_rows(sunat_engine) == []
    # with the right credentials the same voucher goes through
    sunat_engine.invoicing.set_sol_credentials(SAMPLE_RUC, "moddatos", "moddatos")
    assert enviar(sunat_engine, signed_sample())[1]["data"]["codigo_respuesta"] == "0"


def test_sol_credentials_are_encrypted_and_beta_defaults_to_moddatos(engine):
    assert engine.invoicing.sol_credentials(SAMPLE_RUC) == ("MODDATOS", "moddatos")
    engine.invoicing.set_sol_credentials(SAMPLE_RUC, "usuario1", "clave-secreta-1")
    assert engine.invoicing.sol_credentials(SAMPLE_RUC, "produccion") == ("USUARIO1", "clave-secreta-1")
    raw = engine._storage.query("SELECT blob FROM secrets")
    assert raw and all(b"clave-secreta-1" not in row["blob"] for row in raw)
    assert b"clave-secreta-1" not in engine.admin.database_file().read_bytes()


def test_production_without_credentials_is_not_configured(sunat_engine):
    sunat_engine.admin.config_set("environment", "produccion")
    status, envelope = enviar(sunat_engine, signed_sample(), ambiente="produccion")
    assert status == 503
    assert envelope["error"]["code"] == ErrorCode.NOT_CONFIGURED
    assert "SOL" in envelope["error"]["message"]


def test_not_a_voucher_is_a_400_naming_the_field(sunat_engine):
    status, envelope = sunat_engine.call("enviar", {"xml_firmado": "<hola"})
    assert status == 400
    assert envelope["error"]["details"][0]["field"] == "xml_firmado"
    status, envelope = sunat_engine.call("enviar", {"xml_firmado": "<Invoice/>"})
    assert status == 400 and envelope["error"]["details"][0]["sunat_code"] == "0301"


def test_the_password_never_reaches_the_log(sunat_engine, sandbox):
    sunat_engine.invoicing.set_sol_credentials(SAMPLE_RUC, "MODDATOS", "clave-que-no-se-ve")
    enviar(sunat_engine, signed_sample())
    assert "clave-que-no-se-ve" not in sunat_engine.admin.log_file().read_text(encoding="utf-8")


def test_yupana_sol_set_keeps_the_clave_out_of_sight(home):
    from tests.helpers.base import run_cli

    done = run_cli("sol", "set", SAMPLE_RUC, "--usuario", "ventas01", "--clave-stdin", stdin="Clave-Muy-Secreta\n",
                   home=home)
    assert done.returncode == 0, done.stderr
    shown = run_cli("sol", "show", SAMPLE_RUC, "--ambiente", "produccion", home=home)
    assert shown.stdout.decode().strip() == f"{SAMPLE_RUC}VENTAS01"
    assert b"Clave-Muy-Secreta" not in done.stdout + shown.stdout
    from app.core.engine import Engine

    with Engine(home) as engine:
        assert engine.invoicing.sol_credentials(SAMPLE_RUC, "produccion") == ("VENTAS01", "Clave-Muy-Secreta")
    refused = run_cli("sol", "set", "20100066604", "--usuario", "x", "--clave-stdin", stdin="y\n", home=home)
    assert refused.returncode == 1 and "dígito verificador" in refused.stderr.decode()
