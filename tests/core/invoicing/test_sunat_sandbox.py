"""The SUNAT sandbox answers as SUNAT beta does: faults with SUNAT's codes, signed CDR zips."""

from __future__ import annotations

import base64
import io
import json
import zipfile

import httpx
import pytest

from app.core.invoicing import cdr, soap
from app.sandbox.sunat_signer import signature_is_valid
from tests.helpers.sunat_support import SAMPLE_RUC, signed_sample, stem, unsigned_sample

USER = f"{SAMPLE_RUC}MODDATOS"


def client(server, user: str = USER, password: str = "moddatos") -> soap.SunatClient:
    return soap.SunatClient(server.bill_url, user, password, timeout=5, consult_url=server.consult_url)


def send(server, xml: bytes, name: str | None = None, **kwargs) -> cdr.Cdr:
    zip_name, data = soap.zip_document((name or stem()) + ".xml", xml)
    return cdr.read_zip(client(server, **kwargs).send_bill(zip_name, data))


def fault_of(call) -> soap.SoapFault:
    with pytest.raises(soap.SoapFault) as caught:
        call()
    return caught.value


def test_accepts_a_signed_voucher_with_a_signed_cdr(sandbox):
    answer = send(sandbox, signed_sample())
    assert (answer.codigo, answer.estado) == ("0", "aceptado")
    assert answer.descripcion == "La Factura numero F002-00000031, ha sido aceptada"
    assert signature_is_valid(answer.xml)
    with zipfile.ZipFile(io.BytesIO(answer.zip)) as archive:
        assert f"R-{stem()}.xml" in archive.namelist()
    assert sandbox.send_count(stem()) == 1


def test_wrong_credentials_are_fault_0102(sandbox):
    fault = fault_of(lambda: send(sandbox, signed_sample(), password="otra"))
    assert fault.code == "0102"
    assert fault.faultcode == "soap-env:Client.0102"
    assert fault.faultstring == "Usuario o contrasena incorrectos"


def test_user_of_another_ruc_is_0154(sandbox):
    assert fault_of(lambda: send(sandbox, signed_sample(), user="20100066603MODDATOS")).code == "0154"


def test_bad_zip_name_is_0151(sandbox):
    data = soap.zip_document(stem() + ".xml", signed_sample())[1]
    assert fault_of(lambda: client(sandbox).send_bill("factura.zip", data)).code == "0151"


def test_member_named_unlike_the_zip_is_0161(sandbox):
    data = soap.zip_document(stem("00000099") + ".xml", signed_sample())[1]
    assert fault_of(lambda: client(sandbox).send_bill(stem() + ".zip", data)).code == "0161"


@pytest.mark.parametrize("members,code", [([], "0155"), ([("a.xml", b"<x/>"), ("b.xml", b"<y/>")], "0158"),
                                          ([(f"{stem()}.txt", b"x")], "0157"), ([(f"{stem()}.xml", b" ")], "0160"),
                                          ([(f"{stem()}.xml", b"<no")], "0306")])
def test_zip_contents_are_checked(sandbox, members, code):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members:
            archive.writestr(name, data)
    assert fault_of(lambda: client(sandbox).send_bill(stem() + ".zip", buffer.getvalue())).code == code


def test_corrupt_zip_is_0156(sandbox):
    assert fault_of(lambda: client(sandbox).send_bill(stem() + ".zip", b"not a zip")).code == "0156"


def test_altered_voucher_is_2335(sandbox):
    altered = signed_sample().replace(b"<cbc:PayableAmount currencyID=\"PEN\">", b"<cbc:PayableAmount currencyID=\"PEN\">9", 1)
    assert altered != signed_sample()
    assert fault_of(lambda: send(sandbox, altered)).code == "2335"


def test_unsigned_voucher_is_2335(sandbox):
    assert fault_of(lambda: send(sandbox, unsigned_sample())).code == "2335"


def test_name_must_match_the_content(sandbox):
    xml = signed_sample("00000040")
    assert fault_of(lambda: send(sandbox, xml, name=stem("00000041"))).code == "1036"
    assert fault_of(lambda: send(sandbox, xml, name=f"{SAMPLE_RUC}-03-F002-00000040")).code == "1003"


def test_second_send_is_1033_and_the_cdr_can_be_fetched(sandbox):
    first = send(sandbox, signed_sample())
    assert fault_of(lambda: send(sandbox, signed_sample())).code == "1033"
    status = client(sandbox).get_status_cdr(SAMPLE_RUC, "01", "F002", 31)
    assert status.content == first.zip
    missing = client(sandbox).get_status_cdr(SAMPLE_RUC, "01", "F002", 32)
    assert missing.content is None and missing.status_code == "0011"
    assert sandbox.processed_counts[stem()] == 1


def test_get_status_cdr_needs_credentials(sandbox):
    fault = fault_of(lambda: client(sandbox, password="x").get_status_cdr(SAMPLE_RUC, "01", "F002", 31))
    assert fault.code == "0102"


def test_summary_without_sunats_namespace_is_refused_at_the_door(sandbox):
    """Summaries and tickets have their own tests (tests/core/invoicing/test_sunat_sandbox_summaries.py)."""
    name, data = soap.zip_document(f"{SAMPLE_RUC}-RC-20240105-1.xml", b"<SummaryDocuments/>")
    assert fault_of(lambda: client(sandbox).send_summary(name, data)).code == "0301"


def test_failure_injection_by_control_endpoint(sandbox):
    answer = httpx.post(sandbox.base_url + "/control/fail", json={"mode": "500", "count": 1})
    assert answer.json()["pending_failures"] == ["500"]
    with pytest.raises(soap.TransportFailure) as caught:
        send(sandbox, signed_sample())
    assert caught.value.kind == "http"
    assert send(sandbox, signed_sample()).estado == "aceptado"
    stats = httpx.get(sandbox.base_url + "/control/stats").json()
    assert stats["received"][stem()] == 2 and stats["processed"][stem()] == 1
    assert httpx.post(sandbox.base_url + "/control/fail", json={"mode": "nope"}).status_code == 400


def test_drop_after_receive_registers_but_answers_nothing(sandbox):
    sandbox.fail_next("drop_after_receive")
    with pytest.raises(soap.TransportFailure) as caught:
        send(sandbox, signed_sample())
    assert caught.value.may_have_arrived
    assert sandbox.processed_counts[stem()] == 1
    assert client(sandbox).get_status_cdr(SAMPLE_RUC, "01", "F002", 31).content is not None


def test_fault_envelope_shape(sandbox):
    data = soap.zip_document(stem() + ".xml", b"<x/>")[1]
    envelope = soap.build_envelope("sendBill", [("fileName", "x.zip"),
                                                ("contentFile", base64.b64encode(data).decode())], USER, "moddatos")
    answer = httpx.post(sandbox.bill_url, content=envelope, headers={"Content-Type": "text/xml"})
    assert answer.status_code == 500
    assert b"<faultcode>soap-env:Client.0151</faultcode>" in answer.content
    assert json.loads(httpx.get(sandbox.base_url + "/control/stats").text)["received"] == {}


def test_yupana_sandbox_sunat_prints_its_url_and_configures_the_folder(home):
    import os
    import signal
    import subprocess
    import sys

    from app.core.engine import Engine
    from tests.helpers.base import ROOT

    process = subprocess.Popen([sys.executable, "-m", "app", "sandbox", "sunat", "--port", "0", "--configure"],
                               cwd=ROOT, env=dict(os.environ, YUPANA_HOME=str(home)), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        line = json.loads(process.stdout.readline())
        assert line["name"] == "sunat" and line["base_url"].startswith("http://127.0.0.1:")
        with Engine(home) as engine:  # the sandbox environment uses it; the settings of beta are untouched
            assert engine._addresses.endpoint("sunat_url_beta", "sandbox") == line["base_url"] + "/ol-ti-itcpfegem-beta/billService"
            assert engine._addresses.endpoint("sunat_url_consulta", "sandbox") == (line["base_url"]
                                                                         + "/ol-it-wsconscpegem/billConsultService")
            assert engine.admin.config_get("sunat_url_beta").startswith("https://e-beta.sunat.gob.pe")
            assert engine._addresses.endpoint("sunat_url_beta", "beta").startswith("https://e-beta.sunat.gob.pe")
            assert engine.admin.config_get("sunat_url_produccion").startswith("https://e-factura.sunat.gob.pe")
            assert line["base_url"] not in json.dumps({v.key: v.value for v in engine.admin.config_list()})
        stats = httpx.get(line["base_url"] + "/control/stats").json()
        assert stats["received"] == {}
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(10)
    assert process.returncode == 0
    with Engine(home) as engine:  # stopped: its addresses went with it
        assert engine._addresses.endpoint("sunat_url_beta", "sandbox") == "" and engine._sandbox_endpoints.all() == {}
