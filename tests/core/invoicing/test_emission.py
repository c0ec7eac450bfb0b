"""«Emitir» (app.core.invoicing.emission) through the engine against the SUNAT sandbox: one voucher generated,
signed by its id and sent; the request's own problems named before the certificate; the document built once."""

from __future__ import annotations

import pytest

from app.core.errors import ErrorCode, YupanaError
from app.core.invoicing import statuses, xmldsig
from app.core.invoicing.emission import STEPS
from tests.helpers.voucher_matrix import factura, item


def test_emitir_generates_signs_and_sends_one_voucher_by_its_id(voiding):
    *steps, last = voiding.invoicing.issue_steps(factura("F001", 31, [item("Servicio", "2", "50")]))
    assert [(step.index, step.words) for step in steps] == list(enumerate(STEPS))
    assert all(step.outcome is None for step in steps)
    emission = last.outcome
    assert emission.refusal is None and emission.sent is not None and emission.sent.estado == statuses.ACEPTADO
    stored = voiding.invoicing.voucher(emission.voucher_id)
    assert stored.status == statuses.ACEPTADO and stored.nombre_archivo == emission.nombre_archivo
    assert xmldsig.verify_xml(stored.xml_firmado).digest_value == emission.digest_value


def test_emitir_builds_the_document_once(voiding, monkeypatch):
    built = []
    build = voiding._generation.build
    monkeypatch.setattr(voiding._generation, "build", lambda request, checks=True: built.append(1) or build(request, checks))
    voiding.invoicing.issue(factura("F001", 32, [item("Servicio", "1", "10")]))
    assert len(built) == 1


def test_a_request_problem_is_named_before_a_missing_certificate(engine, company):
    bad = factura("F001", 33, [item("Servicio", "0", "10")])  # no certificate either: the request speaks first
    with pytest.raises(YupanaError) as caught:
        engine.invoicing.issue(bad)
    assert caught.value.code == ErrorCode.INVALID_INPUT
    assert any("cantidad" in (detail.field or "") for detail in caught.value.details)
    assert engine.invoicing.vouchers() == []  # nothing stored


def test_without_a_certificate_nothing_is_stored(engine, company):
    with pytest.raises(YupanaError) as caught:
        engine.invoicing.issue(factura("F001", 34, [item("Servicio", "1", "10")]))
    assert "certificado" in caught.value.message.lower()
    assert engine.invoicing.vouchers() == []
