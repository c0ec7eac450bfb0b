"""Helpers of the SUNAT submission tests: a signed voucher and a running sandbox."""

from __future__ import annotations

import re

import pytest
from lxml import etree

from app.core.invoicing.xmldsig import sign_xml
from app.sandbox.sunat_signer import self_signed
from tests.helpers import shared

SAMPLE = shared.SAMPLES / "vouchers" / "20605446788-01-F002-00000031.xml"
SAMPLE_RUC = "20605446788"
DS = "http://www.w3.org/2000/09/xmldsig#"
_KEY, _CERT = None, None


def _credentials():
    global _KEY, _CERT
    if _KEY is None:
        _KEY, _CERT = self_signed("EMPRESA DE PRUEBA")
    return _KEY, _CERT


def sign(xml: bytes) -> bytes:
    key, cert = _credentials()
    return sign_xml(xml, key, cert, algorithm="rsa-sha1").xml


def unsigned_sample(numero: str | None = None) -> bytes:
    """SUNAT's sample factura without its signature, optionally renumbered (F002-<numero>)."""
    shared.require()
    root = etree.fromstring(SAMPLE.read_bytes())
    for signature in root.iter(f"{{{DS}}}Signature"):
        signature.getparent().remove(signature)
    xml = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    if numero is not None:
        xml = re.sub(rb"<cbc:ID>F002-00000031</cbc:ID>", f"<cbc:ID>F002-{numero}</cbc:ID>".encode(), xml, count=1)
    return xml


def signed_sample(numero: str | None = None) -> bytes:
    return sign(unsigned_sample(numero))


def enviar(engine, xml: bytes | None = None) -> tuple[int, dict]:
    """Operation 3 with `xml` (the signed sample by default): (status, envelope)."""
    status, envelope = engine.call("enviar", {"xml_firmado": (xml if xml is not None else signed_sample()).decode("utf-8")})
    return status, envelope


def only_submission(engine) -> dict:
    """The one submission row of a test that sent one voucher."""
    rows = engine._storage.query("SELECT * FROM sunat_submissions")
    assert len(rows) == 1, rows
    return rows[0]


def accepted_cdrs(engine) -> list[dict]:
    return engine._storage.query("SELECT * FROM sunat_cdrs WHERE estado = 'aceptado'")


def stem(numero: str = "00000031") -> str:
    return f"{SAMPLE_RUC}-01-F002-{numero}"


@pytest.fixture(scope="session")
def _running_sandbox():
    """One SUNAT sandbox on loopback (port 0) for the session, stopped at its end."""
    from app.sandbox.sunat import SunatSandbox

    server = SunatSandbox(hold_limit_s=20)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def sandbox(_running_sandbox):
    """The shared sandbox, with nothing registered, counted or pending."""
    _running_sandbox.reset()
    yield _running_sandbox
    _running_sandbox.release()  # let go of anything a test left held


@pytest.fixture
def sunat_engine(engine, sandbox):
    """An engine whose beta and CDR look-up point at the sandbox; short time-outs and retries."""
    sandbox.configure(engine)
    engine.admin.config_set("sunat_timeout_s", "1")
    engine.admin.config_set("sunat_retry_base_s", "0.05")
    engine.admin.config_set("sunat_retry_max_s", "0.2")
    return engine


@pytest.fixture
def gre():
    """A GRE sandbox (SUNAT's REST platform for guías) on 127.0.0.1 port 0, stopped after the test."""
    from app.sandbox.sunat_gre import SunatGreSandbox

    server = SunatGreSandbox()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def guias(engine, company, gre):
    """The engine sending guías to the GRE sandbox, with the issuer's test certificate and short retries."""
    gre.configure(engine)
    engine.invoicing.create_test_certificate(company.ruc)
    engine.admin.config_set("sunat_retry_base_s", "0.05")
    engine.admin.config_set("sunat_retry_max_s", "0.2")
    engine.admin.config_set("sunat_gre_wait_s", "2")
    return engine
