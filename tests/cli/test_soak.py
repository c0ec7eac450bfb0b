"""`make soak` (scripts/soak): each of its checks passes on a clean day and fails on crafted data that breaks it, the
phases scale with MINUTES, and CI runs it as its own step after `make test` and `make lint` (never inside
`make test`: it takes minutes)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from app.core.api import statuses
from scripts.soak import checks
from scripts.soak.__main__ import phases
from tests.helpers.base import ROOT

F1, F2, B1, B2 = "01-F001-1", "01-F001-2", "03-B001-1", "03-B001-2"
RA, RC, RC_VOID = "RA-20261124-1", "RC-20261124-1", "RC-20261124-2"


def clean_day() -> checks.Observed:
    """F001-1 accepted and voided by a RA; F001-2 accepted; B001-1 sent alone; B001-2 in an accepted RC; one
    webhook stored once and forwarded to both subscribers."""
    return checks.Observed(
        sendbill_registered={F1: 1, F2: 1, B1: 1}, sendbill_received={F1: 2, F2: 1, B1: 1},
        tickets=[checks.SunatTicket(RA, "RA", checks.TICKET_ACCEPTED, (checks.TicketLine(F1, "3"),)),
                 checks.SunatTicket(RC, "RC", checks.TICKET_ACCEPTED, (checks.TicketLine(B2, "1"),))],
        sunat_status={F1: statuses.ANULADO, F2: statuses.ACEPTADO, B1: statuses.ACEPTADO, B2: statuses.ACEPTADO},
        app_vouchers=[checks.AppVoucher(F1, statuses.ANULADO, "h1"), checks.AppVoucher(F2, statuses.OBSERVADO, "h2"),
                      checks.AppVoucher(B1, statuses.ACEPTADO, "h3"), checks.AppVoucher(B2, statuses.ACEPTADO, "h4")],
        app_summaries=[checks.AppSummary(RA, statuses.SUBMISSION_DONE, ("F001-1",)),
                       checks.AppSummary(RC, statuses.SUBMISSION_DONE, ("B001-2",))],
        issued={F1: "h1", F2: "h2", B1: "h3", B2: "h4"},
        acked_webhooks={"3EB0A"}, stored_messages={"3EB0A": ["msg_1"]},
        forwarded={"rápido": {"msg_1": {"wh_1"}}, "lento": {"3EB0A": {"wh_2"}}},
        memory_kb=(100_000, 110_000))


def failing(observed: checks.Observed) -> dict[str, list[str]]:
    return {check.name: check.violations for check in checks.run_all(observed) if not check.passed}


def test_a_clean_day_passes_every_check():
    results = checks.run_all(clean_day())
    assert [check.name for check in results] == [c.__name__ for c in checks.CHECKS]
    assert all(check.passed for check in results), [c.violations for c in results]


def test_a_voucher_registered_twice_or_not_as_the_app_says_fails_sunat_once():
    twice = clean_day()
    twice.tickets.append(checks.SunatTicket("RC-20261124-3", "RC", checks.TICKET_ACCEPTED,
                                            (checks.TicketLine(B1, "1"),)))
    assert "03-B001-1: registrado 2 veces en SUNAT" in failing(twice)["sunat_once"]
    differs = clean_day()
    differs.sunat_status[F2] = statuses.RECHAZADO
    assert failing(differs)["sunat_once"] == ["01-F001-2: la app dice observado, SUNAT rechazado"]
    phantom = clean_day()
    phantom.sendbill_registered["01-F001-9"] = 1
    assert failing(phantom)["sunat_once"] == ["01-F001-9: registrado en SUNAT, desconocido en la app"]


def test_a_voucher_in_two_voids_fails_one_void_and_a_rejected_first_void_does_not():
    again = clean_day()
    again.tickets.append(checks.SunatTicket("RA-20261124-2", "RA", checks.TICKET_PENDING,
                                            (checks.TicketLine(F1, "3"),)))
    assert failing(again)["one_void"] == [f"{F1}: en RA-20261124-1, RA-20261124-2"]
    retried = clean_day()
    retried.tickets.insert(0, checks.SunatTicket("RA-20261123-1", "RA", checks.TICKET_REJECTED,
                                                 (checks.TicketLine(F1, "3"),)))
    assert "one_void" not in failing(retried)


def test_a_boleta_sent_alone_and_in_a_summary_fails_one_path_whatever_the_summary_became():
    both = clean_day()
    both.tickets.append(checks.SunatTicket("RC-20261124-3", "RC", checks.TICKET_REJECTED,
                                           (checks.TicketLine(B1, "1"),)))
    assert failing(both)["one_path"] == [f"{B1}: enviada sola y en RC-20261124-3"]


def test_a_number_held_twice_or_with_other_content_fails_numbers():
    double = clean_day()
    double.app_vouchers.append(checks.AppVoucher(F2, statuses.ACEPTADO, "h2"))
    assert f"{F2}: 2 comprobantes con ese número" in failing(double)["numbers"]
    other = clean_day()
    other.issued[F2] = "otro"
    assert failing(other)["numbers"] == [f"{F2}: la app guarda otro contenido que el emitido"]
    lost = clean_day()
    lost.issued["01-F001-3"] = "h9"
    assert failing(lost)["numbers"] == ["01-F001-3: emitido, ausente en la app"]
    reused = clean_day()
    reused.reused_numbers.append(F1)
    assert failing(reused)["numbers"] == [f"{F1}: aceptado con otro contenido"]


def test_a_webhook_stored_twice_lost_or_forwarded_under_two_ids_fails_webhooks():
    twice = clean_day()
    twice.stored_messages["3EB0A"] = ["msg_1", "msg_2"]
    assert failing(twice)["webhooks"] == ["3EB0A: guardado 2 veces"]
    lost = clean_day()
    lost.stored_messages["3EB0A"] = []
    assert failing(lost)["webhooks"] == ["3EB0A: guardado 0 veces"]
    unsent = clean_day()
    unsent.forwarded["lento"] = {}
    assert failing(unsent)["webhooks"] == ["3EB0A: nunca llegó a lento"]
    two_ids = clean_day()
    two_ids.forwarded["rápido"]["msg_1"] = {"wh_1", "wh_9"}
    assert failing(two_ids)["webhooks"] == ["3EB0A: llegó a rápido con 2 webhook-id distintos"]


def test_anything_left_pending_fails_settled_unless_its_summary_answer_was_dropped():
    queued = clean_day()
    queued.outbox_pending = 2
    assert failing(queued)["settled"] == ["2 envíos a SUNAT aún en cola"]
    signed = clean_day()
    signed.app_vouchers[3] = checks.AppVoucher(B2, statuses.FIRMADO, "h4")
    assert failing(signed)["settled"] == [f"{B2}: firmado"]
    open_summary = clean_day()
    open_summary.app_summaries[1] = checks.AppSummary(RC, statuses.SUBMISSION_PENDING, ("B001-2",))
    assert failing(open_summary)["settled"] == [f"{RC}: pendiente"]
    failed_but_accepted = clean_day()
    failed_but_accepted.app_summaries[0] = checks.AppSummary(RA, statuses.SUBMISSION_FAILED, ("F001-1",))
    assert failing(failed_but_accepted)["settled"] == [f"{RA}: fallido en la app, aceptado por SUNAT"]

    unconfirmed = clean_day()  # B001-1's void: a RC whose answer was lost, not by the injector
    unconfirmed.app_vouchers[2] = checks.AppVoucher(B1, statuses.ACEPTADO, "h3", void_pending=RC_VOID)
    unconfirmed.app_summaries.append(checks.AppSummary(RC_VOID, statuses.SUBMISSION_PENDING, ("B001-1",)))
    unconfirmed.tickets.append(checks.SunatTicket(RC_VOID, "RC", checks.TICKET_ACCEPTED, (checks.TicketLine(B1, "3"),)))
    unconfirmed.sunat_status[B1] = statuses.ANULADO
    assert set(failing(unconfirmed)) == {"settled", "sunat_once"}
    dropped = dataclasses.replace(unconfirmed, dropped_summaries={RC_VOID})
    assert failing(dropped) == {}
    [apart] = [check.apart for check in checks.run_all(dropped) if check.name == "settled"]
    assert apart == [f"{B1}: baja por confirmar ({RC_VOID}: respuesta perdida por el inyector)"]


def test_memory_growing_past_a_fifth_or_not_measured_fails_memory():
    grown = dataclasses.replace(clean_day(), memory_kb=(100_000, 121_000))
    assert failing(grown)["memory"] == ["97.7 MB → 118.2 MB (+21%)"]
    assert failing(dataclasses.replace(clean_day(), memory_kb=None))["memory"] == ["no se midió la memoria de la app"]


def test_an_internal_error_or_a_traceback_fails_no_errors():
    broken = dataclasses.replace(clean_day(), errors=["op1: Error interno"])
    assert failing(broken) == {"no_errors": ["op1: Error interno"]}


@pytest.mark.parametrize(("minutes", "kills", "quiet"), [(3, 120, 60), (10, 420, 180), (60, 3420, 180)])
def test_minutes_split_into_kills_then_a_quiet_third_of_at_most_three_minutes(minutes, kills, quiet):
    assert phases(minutes) == (kills, quiet)


def test_ci_runs_make_soak_as_its_own_step_after_test_and_lint_and_make_test_does_not():
    run = (ROOT / ".ci" / "run").read_text()
    steps = [m.group(1) for m in re.finditer(r'step "([^"]+)"', run)]
    first_test = next(at for at, name in enumerate(steps) if name.startswith("make test"))
    assert steps.index("make soak MINUTES=3") > steps.index("make lint") > first_test
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^MINUTES \?= 10$", makefile, flags=re.M)
    assert re.search(r"^soak: .*\n\t.*-m scripts\.soak --minutes \$\(MINUTES\)", makefile, flags=re.M)
    test_recipe = re.search(r"^test: .*\n((?:\t.*\n)+)", makefile, flags=re.M)
    assert test_recipe and "soak" not in test_recipe.group(1)


def test_a_status_sunat_changed_by_a_summary_whose_answer_was_dropped_is_listed_apart_not_failed():
    taken_as_not_made = clean_day()  # B001-1's void RC: received by SUNAT, its answer lost, taken as not made
    taken_as_not_made.app_summaries.append(checks.AppSummary(RC_VOID, statuses.SUMMARY_UNCONFIRMED, ("B001-1",)))
    taken_as_not_made.tickets.append(checks.SunatTicket(RC_VOID, "RC", checks.TICKET_ACCEPTED,
                                                        (checks.TicketLine(B1, "3"),)))
    taken_as_not_made.sunat_status[B1] = statuses.ANULADO
    assert failing(taken_as_not_made) == {"sunat_once": [f"{B1}: la app dice aceptado, SUNAT anulado"]}
    dropped = dataclasses.replace(taken_as_not_made, dropped_summaries={RC_VOID})
    assert failing(dropped) == {}
    [apart] = [check.apart for check in checks.run_all(dropped) if check.name == "sunat_once"]
    assert apart == [f"{B1}: la app dice aceptado, SUNAT anulado ({RC_VOID}: respuesta perdida por el inyector)"]
