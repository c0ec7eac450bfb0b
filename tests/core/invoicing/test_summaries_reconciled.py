"""A resumen diario (RC, status 1) whose sendSummary answer was lost (issue 31, points 1 and 2), against the SUNAT
sandbox over real SOAP.

SUNAT received the RC: it processes it whether its ticket is asked for or not, so its boletas are reported — or will
be. While its outcome is unknown its boletas are neither sent alone nor put in another RC; its outcome is learnt from
its ticket, which SUNAT names when the same RC is sent again once processed (2223, «ya fue presentado anteriormente
- Detalle: ticket: …»; SUNAT's voucher status query does not answer for boletas). When even that cannot tell, its
boletas stay held («por confirmar»), never reported again. And a RC SUNAT refuses for a boleta it already has
(2282) does not drag that boleta into every later resumen.

Reproduction (/tmp/repro/repro_rc_lost.py, the soak's finding): before, the resend's 2403 made the first RC
`sin_confirmar` at once (the status query cannot answer for boletas), its boletas went into the next RC, SUNAT refused
that one whole (2282) and every later resumen repeated them: no boleta reached SUNAT any more."""

from __future__ import annotations

import datetime as dt

import pytest

from app.core.errors import ErrorCode, YupanaError
from app.core.invoicing import statuses
from app.core.invoicing.voids import rules
from app.core.platform import clock
from tests.helpers.base import ISSUER_RUC
from tests.helpers.voucher_matrix import boleta, item

WAIT = 10  # seconds: the most a test waits for a condition


def signed_only(engine, serie: str, numero: int) -> int:
    """A boleta generated and signed, not sent: the day's resumen diario reports it, or it is sent alone."""
    xml = engine.invoicing.generate_xml(boleta(serie, numero, [item("Polo de algodón", "1", "59")])).xml
    certificado_id = engine.invoicing.default_certificate(ISSUER_RUC).certificado_id
    engine.invoicing.sign({"xml": xml, "certificado_id": certificado_id})
    return engine.invoicing.find_voucher(f"{serie}-{numero}")


def reported_by_accepted_rcs(sandbox, serie: str, numero: int) -> int:
    """How many RCs SUNAT (the sandbox) accepted that add this boleta."""
    tickets = [sandbox.summaries.ticket(number) for number in sandbox.summaries.tickets()]
    return sum(1 for t in tickets if t is not None and t.status == "0" and t.kind == "RC"
               for line in t.lines if (line.serie, line.numero, line.estado) == (serie, numero, "1"))


def status_of(engine, voucher_id: int) -> str:
    return engine.invoicing.voucher(voucher_id).status


def lost_answer_resumen(engine, sandbox):
    """The day's resumen diario with SUNAT's answer to its first sendSummary lost (SUNAT received it)."""
    sandbox.fail_next("drop_after_receive", operation="sendSummary")
    [first] = engine.invoicing.daily_summary(clock.today())
    return first


def test_a_resumen_whose_answer_was_lost_holds_its_boletas_until_its_ticket_tells(voiding, voids_sandbox):
    """Reproduction: SUNAT processes the first RC; its boletas are not reported again nor sent alone, the next RC
    carries only the new boleta and is accepted, and the first RC's ticket (named by SUNAT's 2223 to the same RC
    sent again) makes its boletas accepted."""
    one, two = signed_only(voiding, "B011", 1), signed_only(voiding, "B011", 2)
    voids_sandbox.summaries.hold()  # SUNAT has not processed the first RC yet
    first = lost_answer_resumen(voiding, voids_sandbox)
    assert first.kind == "RC" and first.ticket is None
    assert first.state == statuses.SUBMISSION_PENDING and first.codigo == "2403", first  # never sin_confirmar here
    assert first.received_without_ticket
    # While its outcome is unknown its boletas go by no other path: not alone …
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.resend(one)
    assert caught.value.code == ErrorCode.CONFLICT and first.ident in caught.value.message
    assert voids_sandbox.sends() == 0
    # … nor in another RC: the next resumen carries only the boleta signed since.
    three = signed_only(voiding, "B011", 3)
    voids_sandbox.summaries.release()  # SUNAT processes what it holds (the first RC too), polled or not
    [second] = voiding.invoicing.daily_summary(clock.today())
    assert [v.serie_numero for v in second.vouchers] == ["B011-3"] and second.accepted, second
    assert status_of(voiding, three) == statuses.ACEPTADO
    # The first RC's outcome: SUNAT names its ticket to the same RC sent again (2223), and the ticket tells.
    assert voiding._voids.join(WAIT)
    final = voiding._voids.outcome(first.summary_id)
    assert final.state == statuses.SUBMISSION_DONE and final.ticket is not None and final.cdr_zip, final
    assert final.ticket in voids_sandbox.summaries.tickets()
    assert status_of(voiding, one) == status_of(voiding, two) == statuses.ACEPTADO
    for numero in (1, 2, 3):  # each boleta reached SUNAT once, by one path
        assert reported_by_accepted_rcs(voids_sandbox, "B011", numero) == 1
    assert voids_sandbox.sends() == 0
    # Later boletas still flow, in a new RC.
    four = signed_only(voiding, "B011", 4)
    [third] = voiding.invoicing.daily_summary(clock.today())
    assert [v.serie_numero for v in third.vouchers] == ["B011-4"] and third.accepted, third
    assert status_of(voiding, four) == statuses.ACEPTADO
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.daily_summary(clock.today())
    assert caught.value.code == ErrorCode.NOT_FOUND  # nothing left to report


def test_the_soaks_reproduction_a_resumen_processed_before_the_next_one(voiding, voids_sandbox):
    """/tmp/repro/repro_rc_lost.py: the lost answer, SUNAT processing the RC on its own, then the next resumen —
    before, RC-2 was fallido 2282 and every boleta stayed firmado."""
    one, two = signed_only(voiding, "B012", 1), signed_only(voiding, "B012", 2)
    first = lost_answer_resumen(voiding, voids_sandbox)
    assert first.state == statuses.SUBMISSION_PENDING or first.accepted, first
    with voids_sandbox.lock:
        voids_sandbox.summaries.settle_due()  # SUNAT processes a summary it received, whether polled or not
    three = signed_only(voiding, "B012", 3)
    [second] = voiding.invoicing.daily_summary(clock.today())
    assert second.accepted and [v.serie_numero for v in second.vouchers] == ["B012-3"], second
    assert voiding._voids.join(WAIT)
    assert voiding._voids.outcome(first.summary_id).accepted
    assert [status_of(voiding, v) for v in (one, two, three)] == [statuses.ACEPTADO] * 3
    assert {s.state for s in voiding.invoicing.summaries()} == {statuses.SUBMISSION_DONE}


def test_a_resumen_whose_ticket_sunat_never_names_keeps_its_boletas_por_confirmar(voiding, voids_sandbox):
    """SUNAT says it has the RC (2223) without naming its ticket: its outcome cannot be learnt. Its boletas are held
    «por confirmar» — listed apart with the RC, neither reported again nor sent alone — rather than reissued."""
    one, two = signed_only(voiding, "B013", 1), signed_only(voiding, "B013", 2)
    voids_sandbox.summaries.hold()
    first = lost_answer_resumen(voiding, voids_sandbox)
    assert first.received_without_ticket
    # The background poller sends it again: SUNAT answers it processed it, naming no ticket.
    voids_sandbox.fail_next("fault:2223", operation="sendSummary")
    assert voiding._voids.join(WAIT) and voiding._voids.pending() == []
    held = voiding._voids.outcome(first.summary_id)
    assert held.state == statuses.SUMMARY_UNCONFIRMED and held.codigo == "2223", held
    assert "B013-1, B013-2" in held.descripcion and "por confirmar" in held.descripcion
    [listed] = [s for s in voiding.invoicing.summaries() if s.ident == first.ident]
    assert listed.state == statuses.SUMMARY_UNCONFIRMED and listed.comprobantes == "B013-1, B013-2"
    with pytest.raises(YupanaError) as caught:  # not sent alone …
        voiding.invoicing.resend(two)
    assert caught.value.code == ErrorCode.CONFLICT and first.ident in caught.value.message
    with pytest.raises(YupanaError) as caught:  # … nor reported again
        voiding.invoicing.daily_summary(clock.today())
    assert caught.value.code == ErrorCode.NOT_FOUND
    assert status_of(voiding, one) == status_of(voiding, two) == statuses.FIRMADO
    voids_sandbox.summaries.release()
    three = signed_only(voiding, "B013", 3)  # later boletas still flow
    [second] = voiding.invoicing.daily_summary(clock.today())
    assert [v.serie_numero for v in second.vouchers] == ["B013-3"] and second.accepted, second
    assert status_of(voiding, three) == statuses.ACEPTADO and voids_sandbox.sends() == 0


def test_a_resumen_sunat_still_processes_after_48_hours_keeps_its_boletas_held(voiding, voids_sandbox):
    """Still 2403 (SUNAT's «en estado 98») 48 hours after the first send: the RC is sin_confirmar, and — unlike a
    void taken as not made — its boletas stay held, for SUNAT may still report them."""
    one = signed_only(voiding, "B014", 1)
    voids_sandbox.summaries.hold()
    first = lost_answer_resumen(voiding, voids_sandbox)
    lost = voiding._voids.tickets.lost
    lost.now = lambda: clock.now() + dt.timedelta(hours=47)  # time seam: within the 48 hours
    assert voiding._voids.check_ticket(first.summary_id).state == statuses.SUBMISSION_PENDING
    lost.now = lambda: clock.now() + dt.timedelta(hours=48, minutes=1)
    held = voiding._voids.check_ticket(first.summary_id)
    assert held.state == statuses.SUMMARY_UNCONFIRMED and "48 horas" in held.descripcion, held
    assert "B014-1" in held.descripcion
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.daily_summary(clock.today())
    assert caught.value.code == ErrorCode.NOT_FOUND
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.resend(one)
    assert caught.value.code == ErrorCode.CONFLICT


def test_a_resumen_whose_ticket_sunat_forgets_keeps_its_boletas_held(voiding, voids_sandbox):
    """getStatus answers 0127 («El ticket no existe») for a RC SUNAT received: its boletas may be reported, so they
    are held, not freed (a void's ticket so lost stays fallido: tests/core/invoicing/test_voids.py)."""
    one = signed_only(voiding, "B018", 1)
    voids_sandbox.fail_next("fault:0127", operation="getStatus")
    [first] = voiding.invoicing.daily_summary(clock.today())
    assert (first.state, first.codigo) == (statuses.SUMMARY_UNCONFIRMED, "0127"), first
    assert f"no reconoce su ticket {first.ticket}" in first.descripcion and "B018-1" in first.descripcion
    assert status_of(voiding, one) == statuses.FIRMADO
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.daily_summary(clock.today())
    assert caught.value.code == ErrorCode.NOT_FOUND
    with pytest.raises(YupanaError) as caught:
        voiding.invoicing.resend(one)
    assert caught.value.code == ErrorCode.CONFLICT and voids_sandbox.sends() == 0


def test_a_resumen_refused_for_a_boleta_sunat_already_has_does_not_repeat_it_forever(voiding, voids_sandbox):
    """2282 («Existe documento ya informado anteriormente»: SUNAT refuses the whole RC, without naming the boleta):
    the next resumen reports each boleta of that RC in a RC of its own, so the one SUNAT has is named by its own
    2282 and reconciled as accepted, the others reported, and later boletas flow."""
    ids = [signed_only(voiding, "B017", n) for n in (1, 2, 3)]
    # B017-2 reached SUNAT by another way (another system of the issuer): the app does not know
    voids_sandbox.register_external(voiding._vouchers.get(ids[1])["xml_firmado"].encode("utf-8"))
    [refused] = voiding.invoicing.daily_summary(clock.today())
    assert (refused.state, refused.codigo) == (statuses.SUBMISSION_FAILED, rules.INFORMED_BEFORE), refused
    four = signed_only(voiding, "B017", 4)
    outcomes = voiding.invoicing.daily_summary(clock.today())
    by_lines = {tuple(v.serie_numero for v in o.vouchers): o for o in outcomes}
    assert set(by_lines) == {("B017-1",), ("B017-2",), ("B017-3",), ("B017-4",)}, by_lines
    assert by_lines[("B017-2",)].codigo == rules.INFORMED_BEFORE  # SUNAT names it by refusing it alone
    assert all(by_lines[(name,)].accepted for name in ("B017-1", "B017-3", "B017-4"))
    assert [status_of(voiding, v) for v in [*ids, four]] == [statuses.ACEPTADO] * 4  # B017-2 reconciled
    with pytest.raises(YupanaError) as caught:  # nothing is repeated any more
        voiding.invoicing.daily_summary(clock.today())
    assert caught.value.code == ErrorCode.NOT_FOUND
    five = signed_only(voiding, "B017", 5)
    [later] = voiding.invoicing.daily_summary(clock.today())
    assert [v.serie_numero for v in later.vouchers] == ["B017-5"] and later.accepted
    assert status_of(voiding, five) == statuses.ACEPTADO
