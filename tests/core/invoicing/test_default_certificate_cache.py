"""The issuer's default certificate, read by every «Emitir», is kept in memory until it changes (issue 33): chosen
as a default, deleted or added here, or changed by another engine on the same folder."""

from __future__ import annotations

from collections import Counter

import pytest

from app.core.engine import Engine
from app.core.invoicing import statuses
from tests.helpers.voucher_matrix import factura, item


@pytest.fixture
def reads(sunat_engine, monkeypatch) -> Counter[str]:
    """The certificate repository's look-ups of a default, counted."""
    counts: Counter[str] = Counter()
    repository = sunat_engine._certificates._repository
    original = repository.default_of

    def default_of(ruc):
        counts["default_of"] += 1
        return original(ruc)

    monkeypatch.setattr(repository, "default_of", default_of)
    return counts


def signer_of(engine, numero: int) -> str:
    emission = engine.invoicing.issue(factura("F001", numero, [item("Servicio", "1", "10")]))
    assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO, emission
    return engine.invoicing.voucher(emission.voucher_id).certificado_id


def test_the_default_is_read_once_for_many_emissions(sunat_engine, company, reads):
    first = sunat_engine.invoicing.create_test_certificate(company.ruc).certificado_id
    assert [signer_of(sunat_engine, numero) for numero in (1, 2, 3)] == [first] * 3
    assert reads["default_of"] == 1


def test_a_new_default_signs_the_next_voucher(sunat_engine, company, reads):
    first = sunat_engine.invoicing.create_test_certificate(company.ruc).certificado_id
    assert signer_of(sunat_engine, 1) == first
    second = sunat_engine.invoicing.create_test_certificate(company.ruc).certificado_id
    assert signer_of(sunat_engine, 2) == first  # added, not chosen: the first stays the default
    sunat_engine.invoicing.set_default_certificate(company.ruc, second)
    assert signer_of(sunat_engine, 3) == second
    sunat_engine.invoicing.delete_certificate(second)  # the first becomes the default again
    assert signer_of(sunat_engine, 4) == first


def test_a_default_chosen_by_another_engine_is_seen(sunat_engine, company, home, reads):
    first = sunat_engine.invoicing.create_test_certificate(company.ruc).certificado_id
    second = sunat_engine.invoicing.create_test_certificate(company.ruc).certificado_id
    assert signer_of(sunat_engine, 1) == first
    other = Engine(home)  # another window or process on the same folder
    try:
        other.invoicing.set_default_certificate(company.ruc, second)
    finally:
        other.close()
    assert signer_of(sunat_engine, 2) == second
