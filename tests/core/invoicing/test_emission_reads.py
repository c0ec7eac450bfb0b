"""One «Emitir», no read (issues 29 and 33): against the SUNAT sandbox, one voucher generated, signed and sent reads
none of the voucher's texts back, rebuilds no signed text and builds one SUNAT client for its one sendBill. Counted by wrapping the voucher repository's reads of texts and the SUNAT client factory."""

from __future__ import annotations

from collections import Counter

import pytest

from app.core.invoicing import packed_texts, statuses
from app.core.invoicing.sunat import SunatClients
from app.core.invoicing.voucher_keys import splice_signature
from tests.helpers.voucher_matrix import factura, item

# The repository's methods that hand out a voucher's texts (its row joined with voucher_texts).
TEXT_READS = ("get", "find")


@pytest.fixture
def counted(sunat_engine, company, monkeypatch):
    """The engine on the sandbox, with its voucher repository's text reads, the signed texts it rebuilds, the texts
    it unpacks and the SUNAT clients it builds counted."""
    sunat_engine.invoicing.create_test_certificate(company.ruc)
    counts: Counter[str] = Counter()
    repository = sunat_engine._vouchers.repository
    for name in TEXT_READS:
        original = getattr(repository, name)

        def reading(*args, _original=original, _name=name, **kwargs):
            counts[f"repository.{_name}"] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(repository, name, reading)

    def splicing(*args, _original=splice_signature):
        counts["signed text rebuilt"] += 1
        return _original(*args)

    monkeypatch.setattr("app.core.invoicing.voucher_store.splice_signature", splicing)
    build_client = SunatClients.__call__

    def client(self, environment, ruc):
        counts["SUNAT client"] += 1
        return build_client(self, environment, ruc)

    monkeypatch.setattr(SunatClients, "__call__", client)
    sent = []
    send_bill = sunat_engine._sunat_http.client  # every SUNAT request takes its connection from the pool

    def pooled(url, _original=send_bill):
        sent.append(url)
        return _original(url)

    monkeypatch.setattr(sunat_engine._sunat_http, "client", pooled)
    unpack = packed_texts.unpack

    def unpacking(value, dictionary_of, _original=unpack):
        if value is not None:
            counts["text unpacked"] += 1
        return _original(value, dictionary_of)

    monkeypatch.setattr(packed_texts, "unpack", unpacking)
    return sunat_engine, counts, sent


def test_one_emitir_reads_the_texts_once_and_builds_one_sunat_client(counted, sandbox, company):
    engine, counts, sent = counted
    emission = engine.invoicing.issue(factura("F001", 41, [item("Servicio", "2", "50")]))
    assert emission.refusal is None and emission.sent is not None, emission
    assert emission.sent.estado == statuses.ACEPTADO
    assert sandbox.stats()["received"] == {f"{company.ruc}-01-F001-41": 1} and len(sent) == 1  # one request: the sendBill
    reads = counts["repository.get"] + counts["repository.find"]
    assert reads == 0, counts  # built, signed and sent from memory: nothing written is read back (issue 33)
    assert counts["signed text rebuilt"] == 0 and counts["text unpacked"] == 0, counts
    assert counts["SUNAT client"] == 1, counts
    # The voucher as stored is the one sent and accepted.
    stored = engine.invoicing.voucher(emission.voucher_id)
    assert stored.status == statuses.ACEPTADO and stored.digest_value == emission.digest_value
