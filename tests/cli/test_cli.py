"""The `yupana` command, run as a real process."""

import json
import os
import subprocess
import sys

import pytest

from app.core.api import OPERATIONS
from tests.helpers.base import ISSUER_RUC, ROOT, run_cli


def test_call_ruc_with_a_bad_number_names_the_field_and_exits_1():
    done = run_cli("call", "ruc", "123")
    assert done.returncode == 1
    envelope = json.loads(done.stdout)
    assert envelope["success"] is False
    assert envelope["error"]["code"] == "INVALID_INPUT"
    assert envelope["error"]["details"][0]["field"] == "numero"
    assert "11 dígitos" in envelope["error"]["message"]


@pytest.mark.parametrize("operation", [name for name, op in OPERATIONS.items() if op.request is not None])
def test_malformed_json_gives_an_envelope_not_a_traceback(operation):
    done = run_cli("call", operation, "-", stdin='{"tipo": "01", ')
    assert done.returncode == 1
    assert b"Traceback" not in done.stderr
    envelope = json.loads(done.stdout)
    assert envelope == {"success": False, "error": {"code": "INVALID_JSON", "message": envelope["error"]["message"],
                                                    "details": envelope["error"]["details"]}}
    assert "JSON" in envelope["error"]["message"]


def test_call_reads_a_file_and_reports_a_missing_file(tmp_path):
    missing = run_cli("call", "xml", str(tmp_path / "nope.json"))
    assert missing.returncode == 1
    assert "No se pudo leer" in json.loads(missing.stdout)["error"]["message"]
    request = tmp_path / "send.json"
    request.write_text('{"instance": "tienda", "to": "987", "message": "Hola"}')
    done = run_cli("call", "chat-send", str(request))
    envelope = json.loads(done.stdout)
    assert done.returncode == 1
    assert envelope["error"]["details"][0]["field"] == "to"


def test_company_set_and_show(home):
    done = run_cli("company", "set", "--ruc", ISSUER_RUC, "--razon-social", "COMERCIAL YUPANA S.A.C.",
                   "--ubigeo", "150131", "--direccion", "AV. JAVIER PRADO 100")
    assert done.returncode == 0, done.stderr
    shown = json.loads(run_cli("company", "show", ISSUER_RUC).stdout)
    assert shown["razon_social"] == "COMERCIAL YUPANA S.A.C."
    assert shown["distrito"] == "San Isidro"
    bad = run_cli("company", "set", "--ruc", "20100066604", "--razon-social", "X", "--ubigeo", "150101",
                  "--direccion", "Y")
    assert bad.returncode == 1
    assert "dígito verificador" in bad.stderr.decode()


def test_config_set_get_list():
    changed = run_cli("config", "set", "environment", "beta")
    assert changed.returncode == 0  # and it says what changes (tests/core/platform/test_environments.py keeps them apart)
    assert "servidor de pruebas de SUNAT" in changed.stderr.decode() and "numeración" in changed.stderr.decode()
    assert run_cli("config", "get", "environment").stdout.decode().strip() == "beta"
    listed = json.loads(run_cli("config", "list", "--json").stdout)
    assert listed["environment"] == "beta"
    wrong = run_cli("config", "set", "environment", "marte")
    assert wrong.returncode == 1
    assert "valores válidos" in wrong.stderr.decode()
    unknown = run_cli("config", "get", "no_existe")
    assert unknown.returncode == 1
    assert "no existe" in unknown.stderr.decode()


def test_help_is_in_spanish():
    done = run_cli("--help")
    text = done.stdout.decode()
    assert done.returncode == 0
    assert "uso: yupana" in text and "muestra esta ayuda" in text
    for command in ("call", "company", "config", "cert", "sandbox", "serve", "padron", "demo"):
        assert command in text
    sub = run_cli("call", "--help").stdout.decode()
    assert "OPERACION" in sub and "entrada estándar" in sub


def test_a_reader_that_goes_away_gets_no_traceback(home):
    """`yupana config list | head -0`: the pipe closes before the command writes."""
    import os
    import subprocess
    import sys

    from tests.helpers.base import ROOT

    env = dict(os.environ, YUPANA_HOME=str(home))
    proc = subprocess.Popen([sys.executable, "-m", "app", "config", "list"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, env=env)
    proc.stdout.close()  # the reader leaves at once, like `head -0`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) in (0, 141)
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_a_missing_file_is_named_in_spanish(home):
    from tests.helpers.base import run_cli

    done = run_cli("call", "xml", "no-existe.json", home=home)
    assert done.returncode == 1
    said = done.stdout.decode() + done.stderr.decode()
    assert "«no-existe.json»: no existe" in said and "No such file" not in said


def test_without_a_display_yupana_says_so_in_spanish_and_exits(home):
    env = {key: value for key, value in os.environ.items()
           if key not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["YUPANA_HOME"] = str(home)
    done = subprocess.run([sys.executable, "-m", "app"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "No hay una pantalla donde abrir las ventanas" in done.stderr
    assert "PySide6" not in done.stderr  # it stopped before loading Qt


def test_a_display_or_a_chosen_qt_platform_opens_the_windows():
    from app.cli import display_missing

    assert display_missing({}, "linux")
    assert not display_missing({"DISPLAY": ":0"}, "linux")
    assert not display_missing({"WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert not display_missing({"QT_QPA_PLATFORM": "offscreen"}, "linux")
    assert not display_missing({}, "win32")


def test_yupana_pdf_says_which_characters_it_could_not_print(engine, company, home, tmp_path):
    """`yupana pdf` of a voucher with Arabic text (outside the fonts on purpose: docs/pdf.md) writes the PDF and
    says on stderr which characters print as a mark."""
    from tests.helpers.voucher_matrix import factura, item

    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    generated = engine.invoicing.generate_xml(factura("F106", 1, [item("Té شاي", "1", "10")]))
    engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado_id})
    done = run_cli("pdf", "F106-1", "--salida", str(tmp_path), home=home)
    assert done.returncode == 0, done.stderr
    assert [path.name for path in tmp_path.glob("*.pdf")] == [done.stdout.decode().strip().rsplit("/", 1)[-1]]
    warning = done.stderr.decode()
    assert warning.startswith("Aviso: ") and "«ش» (U+0634)" in warning
