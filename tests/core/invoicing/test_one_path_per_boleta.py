"""One path per boleta (issue 31, point 2): a boleta a resumen diario (RC, status 1) reports is not sent alone by
sendBill, and one sent alone — or queued to be — is not put in a RC. The choice is made in the transaction that
records it: the outbox's row (checked against the RC's lines) or the RC's lines (checked against the outbox's rows).

The races are interleaved deterministically, without sleeps: the SUNAT sandbox holds a request until released, or a
barrier (two events) stops one side at a chosen point while the other runs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from app.core.errors import ErrorCode, YupanaError
from app.core.invoicing import statuses
from app.core.platform import clock
from tests.helpers.base import ISSUER_RUC
from tests.helpers.voucher_matrix import boleta, item

WAIT = 10  # seconds: the most a test waits for a condition


def signed_only(engine, serie: str, numero: int) -> int:
    """A boleta generated and signed, not sent: the day's resumen diario reports it, or it is sent alone."""
    xml = engine.invoicing.generate_xml(boleta(serie, numero, [item("Gaseosa 500 ml", "2", "3.50")])).xml
    certificado_id = engine.invoicing.default_certificate(ISSUER_RUC).certificado_id
    engine.invoicing.sign({"xml": xml, "certificado_id": certificado_id})
    return engine.invoicing.find_voucher(f"{serie}-{numero}")


class Barrier:
    """Stops a call at its start until `go()`: `reached` tells the test it is there."""

    def __init__(self, call: Callable[..., Any]) -> None:
        self.call = call
        self.reached, self.released = threading.Event(), threading.Event()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.reached.set()
        assert self.released.wait(WAIT), "the test never let the call go on"
        return self.call(*args, **kwargs)

    def go(self) -> None:
        self.released.set()


class Background:
    """A call on its own thread; `result()` joins it and gives its value (or raises its exception)."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.value: Any = None
        self.error: BaseException | None = None

        def run() -> None:
            try:
                self.value = call()
            except BaseException as exc:  # handed to the test
                self.error = exc

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def result(self) -> Any:
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), "the call did not end"
        if self.error is not None:
            raise self.error
        return self.value


def stem(serie: str, numero: int) -> str:
    return f"{ISSUER_RUC}-03-{serie}-{numero}"


def test_a_boleta_in_a_resumen_being_sent_is_not_sent_alone(voiding, voids_sandbox):
    """The resumen diario first: its lines are committed and its sendSummary is on the wire (held by SUNAT) when the
    same boleta is sent alone. Before, the boleta went by sendBill too (12 of 12 in the chaos run)."""
    first, second = signed_only(voiding, "B003", 1), signed_only(voiding, "B003", 2)
    voids_sandbox.fail_next("hang", operation="sendSummary")  # SUNAT holds the RC's request until released
    today = clock.today()
    name = f"{ISSUER_RUC}-RC-{today:%Y%m%d}-1"
    summary = Background(lambda: voiding.invoicing.daily_summary(today))
    assert voids_sandbox.summaries.wait_for(lambda: voids_sandbox.summaries.summary_counts[name] >= 1, WAIT)
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.resend(first)
    assert caught.value.code == ErrorCode.CONFLICT
    assert "B003-1" in caught.value.message and f"RC-{today:%Y%m%d}-1" in caught.value.message
    voids_sandbox.release()
    [outcome] = summary.result()
    assert outcome.accepted and [v.serie_numero for v in outcome.vouchers] == ["B003-1", "B003-2"]
    assert voiding.invoicing.voucher(first).status == voiding.invoicing.voucher(second).status == statuses.ACEPTADO
    assert voids_sandbox.send_count(stem("B003", 1)) == 0 and voids_sandbox.sends() == 0  # never by sendBill
    with pytest.raises(YupanaError) as caught:  # accepted through the RC: still not sent alone
        voiding.invoicing.resend(second)
    assert caught.value.code == ErrorCode.CONFLICT and voids_sandbox.sends() == 0


def test_a_boleta_queued_alone_is_left_out_of_the_resumen(voiding, voids_sandbox, monkeypatch):
    """The single send first: its outbox row is committed but nothing has gone out (the boleta is still firmado)
    when the resumen diario picks the day's boletas. Before, the RC reported it too and sendBill sent it as well."""
    alone, reported = signed_only(voiding, "B004", 2), signed_only(voiding, "B004", 1)
    barrier = Barrier(voiding._outbox.attempt)
    monkeypatch.setattr(voiding._outbox, "attempt", barrier)  # the attempt waits; the row is queued already
    sent = Background(lambda: voiding.invoicing.resend(alone))
    assert barrier.reached.wait(WAIT)
    assert voiding.invoicing.voucher(alone).status == statuses.FIRMADO
    [outcome] = voiding.invoicing.daily_summary(clock.today())
    barrier.go()
    emission = sent.result()
    assert [v.serie_numero for v in outcome.vouchers] == ["B004-1"] and outcome.accepted, outcome
    assert "<cbc:ID>B004-2</cbc:ID>" not in outcome.xml_firmado
    assert emission.outcome is not None and emission.outcome.estado == statuses.ACEPTADO
    assert voids_sandbox.send_count(stem("B004", 2)) == 1 and voids_sandbox.send_count(stem("B004", 1)) == 0
    assert voiding.invoicing.voucher(reported).status == statuses.ACEPTADO
    assert voiding.invoicing.voucher(alone).status == statuses.ACEPTADO


def test_a_boleta_sent_alone_while_the_resumen_was_being_built_is_left_out(voiding, voids_sandbox, monkeypatch):
    """The resumen diario read the day's boletas, then one of them was sent alone and accepted before the RC was
    numbered. Before, the RC still reported it and SUNAT refused the whole RC (2282: already informed)."""
    reported, alone = signed_only(voiding, "B005", 1), signed_only(voiding, "B005", 2)
    barrier = Barrier(voiding._voids.book.prepare)
    monkeypatch.setattr(voiding._voids.book, "prepare", barrier)  # the day's boletas read; the RC not numbered yet
    summary = Background(lambda: voiding.invoicing.daily_summary(clock.today()))
    assert barrier.reached.wait(WAIT)
    emission = voiding.invoicing.resend(alone)
    assert emission.outcome is not None and emission.outcome.estado == statuses.ACEPTADO
    barrier.go()
    [outcome] = summary.result()
    assert outcome.accepted, outcome  # not refused for a boleta SUNAT already has
    assert [v.serie_numero for v in outcome.vouchers] == ["B005-1"]
    assert "<cbc:ID>B005-2</cbc:ID>" not in outcome.xml_firmado
    assert voiding.invoicing.voucher(reported).status == voiding.invoicing.voucher(alone).status == statuses.ACEPTADO


def test_a_resumen_left_with_nothing_to_report_says_so(voiding, voids_sandbox, monkeypatch):
    """Every boleta the resumen diario read was sent alone before it was numbered: no RC is made."""
    alone = signed_only(voiding, "B006", 1)
    barrier = Barrier(voiding._voids.book.prepare)
    monkeypatch.setattr(voiding._voids.book, "prepare", barrier)
    summary = Background(lambda: voiding.invoicing.daily_summary(clock.today()))
    assert barrier.reached.wait(WAIT)
    assert voiding.invoicing.resend(alone).outcome.estado == statuses.ACEPTADO
    barrier.go()
    with pytest.raises(YupanaError) as caught:
        summary.result()
    assert caught.value.code == ErrorCode.NOT_FOUND and "No hay boletas firmadas" in caught.value.message
    assert voiding.invoicing.summaries() == [] and voids_sandbox.summaries.tickets() == []
