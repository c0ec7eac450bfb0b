"""Acceptance: every voucher of the vouchers matrix, signed by operation 2, verifies with xmlsec1 and passes
SUNAT's checker in full (schema, rules with no observation, signature)."""

from __future__ import annotations

import shutil

import pytest

from app.core.invoicing import xmldsig
from tests.helpers.oracles import load_sunat_check
from tests.helpers.voucher_matrix import MATRIX

pytestmark = pytest.mark.skipif(shutil.which("xmlsec1") is None, reason="xmlsec1 is not installed")


@pytest.mark.slow  # about 30 vouchers through SUNAT's schema and rule sheets
def test_every_matrix_voucher_signed_passes_the_oracle(engine, company, tmp_path):
    oracle = load_sunat_check()
    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    failures = {}
    for name, request in MATRIX:
        generated = engine.invoicing.generate_xml(request)
        signed = engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado_id})
        assert xmldsig.verify_xml(signed.xml_firmado).valid, name
        path = tmp_path / generated.nombre_archivo
        path.write_text(signed.xml_firmado, encoding="utf-8")
        result = oracle.check(str(path))
        signature = result["signature"]
        if not (result["ok"] and not result["sunat"]["observations"] and "skipped" not in signature):
            failures[name] = {k: result[k] for k in ("xsd", "sunat", "signature")}
    assert not failures, failures
    assert len(MATRIX) >= 25
