"""Fixtures shared by the invoicing tests: the voucher content checks (issue 17) and a fresh database."""

from __future__ import annotations

import pytest
from lxml import etree

from tests.helpers.oracles import run_sunat_check


@pytest.fixture
def issue(engine, company, tmp_path):
    """Generate, sign and judge a request with sunat_check.py --strict; answer the signed document's tree."""
    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id

    def run(request: dict):
        generated = engine.invoicing.generate_xml(request)
        signed = engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado_id})
        path = tmp_path / generated.nombre_archivo
        path.write_text(signed.xml_firmado, encoding="utf-8")
        done = run_sunat_check(path, "--strict", "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        return etree.fromstring(signed.xml_firmado.encode())

    return run


@pytest.fixture
def certificado_id(engine, company) -> str:
    """The issuer's test certificate (the printed-voucher tests sign what they print)."""
    return engine.invoicing.create_test_certificate(company.ruc).certificado_id


@pytest.fixture
def storage(engine_database):
    """A fresh database of each engine in turn, SQLite and PostgreSQL (the storage repositories' tests ask it
    directly; tests/helpers/postgres.py)."""
    return engine_database
