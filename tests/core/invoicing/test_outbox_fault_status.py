"""A SOAP fault to sendBill leaves the voucher with the status its code says: a rejection (2000-3999) spends the
number, so the voucher is `rechazado` as the emission's outcome says, not left `enviado`; an exception (0100-1999)
rejects nothing."""

from __future__ import annotations

import pytest

from app.core.invoicing import statuses
from tests.helpers.voucher_matrix import factura, item


@pytest.fixture
def emitting(sunat_engine, company):
    sunat_engine.invoicing.create_test_certificate(company.ruc)
    return sunat_engine


def test_a_rejection_as_a_fault_is_stored_on_the_voucher(emitting, sandbox, monkeypatch):
    # Fault injection in the sandbox: it finds the signature invalid and answers SOAP fault 2335, as SUNAT does.
    monkeypatch.setattr("app.sandbox.sunat.sunat_signer.signature_is_valid", lambda xml: False)
    emission = emitting.invoicing.issue(factura("F001", 4, [item("Servicio", "2", "50")]))
    assert emission.outcome is not None and (emission.outcome.estado, emission.outcome.codigo_respuesta) == (
        statuses.RECHAZADO, "2335")
    assert emitting.invoicing.voucher(emission.voucher_id).status == statuses.RECHAZADO  # was left «enviado»
    [listed] = emitting.invoicing.vouchers()
    assert listed.shown_status == statuses.RECHAZADO


def test_an_exception_as_a_fault_is_not_a_rejection(emitting, sandbox, company):
    emitting.invoicing.set_sol_credentials(company.ruc, "MODDATOS", "clave-equivocada")  # SUNAT answers 0102
    emission = emitting.invoicing.issue(factura("F001", 5, [item("Servicio", "2", "50")]))
    assert emission.outcome is not None and emission.outcome.codigo_respuesta == "0102"
    assert emitting.invoicing.voucher(emission.voucher_id).status != statuses.RECHAZADO
