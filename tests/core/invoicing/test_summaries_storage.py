"""The summary and submission repositories' answers for issue 31 on each engine (SQLite and PostgreSQL), asked directly: the boletas a resumen
diario reports (one path per boleta), the vouchers with a submission, the lines voiding vouchers whose summary is
pending or `sin_confirmar`, and a summary SUNAT holds without its ticket."""

from __future__ import annotations

from app.core.invoicing.statuses import SUBMISSION_DONE, SUBMISSION_FAILED, SUBMISSION_PENDING, SUMMARY_UNCONFIRMED
from app.core.storage.ports.summaries import SummaryEntry, SummaryRepository

RUC = "20100066603"
DAY = "2025-01-31"
NOW = "2025-01-31T12:00:00.000000Z"


def add(summaries: SummaryRepository, counter: int, kind: str, *lines: tuple[int, str]) -> int:
    """A summary of `kind` with (voucher id, condition) lines."""
    tipo, serie = ("01", "F001") if kind == "RA" else ("03", "B001")
    return summaries.add(environment="sandbox", emisor_ruc=RUC, kind=kind, ident=f"{kind}-20250131-{counter}",
                         issue_date=DAY, counter=counter, reference_date=DAY, xml_firmado="<x/>",
                         lines=[SummaryEntry(voucher_id, tipo, serie, voucher_id, condition, "")
                                for voucher_id, condition in lines])


def finish(summaries: SummaryRepository, summary_id: int, state: str) -> None:
    assert summaries.finish(summary_id, state=state, codigo="0", descripcion="", cdr_xml=None, cdr_member=None,
                            updated_at=NOW)


def test_reported_by_names_the_rc_adding_a_boleta_while_it_is_pending_accepted_or_unconfirmed(repos):
    """A RC whose outcome was never learnt (sin_confirmar) still reports its boletas: SUNAT may have them (before,
    they were freed, and went to SUNAT again alone or in the next RC, refused whole with 2282)."""
    summaries = repos.summaries
    pending = add(summaries, 1, "RC", (1, "1"), (2, "3"))
    accepted = add(summaries, 2, "RC", (3, "1"))
    refused = add(summaries, 3, "RC", (4, "1"))
    unconfirmed = add(summaries, 4, "RC", (5, "1"))
    finish(summaries, accepted, SUBMISSION_DONE)
    finish(summaries, refused, SUBMISSION_FAILED)
    finish(summaries, unconfirmed, SUMMARY_UNCONFIRMED)
    assert summaries.reported_by([1, 2, 3, 4, 5, 6]) == {1: "RC-20250131-1", 3: "RC-20250131-2", 5: "RC-20250131-4"}
    assert pending and summaries.reported_by([]) == {}


def test_held_vouchers_are_those_of_pending_summaries_and_the_boletas_of_unconfirmed_ones(repos):
    """What no other RA/RC may take: any line of a pending summary; a boleta a sin_confirmar RC reports (held «por
    confirmar»), but not a void taken as not made (offered again), nor what a finished summary had."""
    summaries = repos.summaries
    add(summaries, 1, "RC", (1, "1"), (2, "3"))
    finish(summaries, add(summaries, 2, "RC", (3, "1")), SUMMARY_UNCONFIRMED)
    finish(summaries, add(summaries, 3, "RC", (4, "3")), SUMMARY_UNCONFIRMED)
    finish(summaries, add(summaries, 4, "RC", (5, "1")), SUBMISSION_FAILED)
    finish(summaries, add(summaries, 5, "RC", (6, "1")), SUBMISSION_DONE)
    assert summaries.held_voucher_ids([1, 2, 3, 4, 5, 6, 7]) == {1, 2, 3}
    assert summaries.first_pending_line([4, 3]) == ("B001", 3, "RC-20250131-2")
    assert summaries.first_pending_line([4, 5, 6]) is None
    assert summaries.held_voucher_ids([]) == set()


def test_refused_with_names_the_boletas_of_rcs_sunat_refused_with_that_code(repos):
    summaries = repos.summaries
    informed = add(summaries, 1, "RC", (1, "1"), (2, "1"))
    other = add(summaries, 2, "RC", (3, "1"))
    voiding = add(summaries, 3, "RC", (4, "3"))
    for summary_id, codigo in ((informed, "2282"), (other, "2987"), (voiding, "2282")):
        assert summaries.finish(summary_id, state=SUBMISSION_FAILED, codigo=codigo, descripcion="", cdr_xml=None,
                                cdr_member=None, updated_at=NOW)
    add(summaries, 4, "RC", (5, "1"))  # pending: not refused
    assert summaries.refused_with([1, 2, 3, 4, 5], "2282") == {1, 2}
    assert summaries.refused_with([*range(1000), 3], "2987") == {3}  # more ids than one IN (…) list holds
    assert summaries.refused_with([], "2282") == set()


def test_void_lines_are_those_of_pending_and_unconfirmed_summaries_oldest_first(repos):
    summaries = repos.summaries
    unconfirmed = add(summaries, 1, "RA", (7, "3"))
    finish(summaries, unconfirmed, SUMMARY_UNCONFIRMED)
    pending = add(summaries, 2, "RA", (7, "3"))
    add(summaries, 3, "RC", (8, "1"))  # reports, does not void
    finish(summaries, add(summaries, 4, "RA", (9, "3")), SUBMISSION_DONE)
    found = [(row["voucher_id"], row["ident"], row["state"], row["kind"], row["serie"])
             for row in summaries.void_lines([7, 8, 9])]
    assert found == [(7, "RA-20250131-1", SUMMARY_UNCONFIRMED, "RA", "F001"),
                     (7, "RA-20250131-2", SUBMISSION_PENDING, "RA", "F001")]
    assert pending


def test_a_summary_is_marked_received_only_while_pending_without_a_ticket(repos):
    summaries = repos.summaries
    lost = add(summaries, 1, "RA", (1, "3"))
    assert summaries.mark_received(lost, codigo="2403", descripcion="SUNAT ya la tiene", updated_at=NOW)
    row = summaries.get(lost)
    assert (row["state"], row["ticket"], row["codigo"], row["descripcion"]) == (
        SUBMISSION_PENDING, None, "2403", "SUNAT ya la tiene")
    with_ticket = add(summaries, 2, "RA", (2, "3"))
    summaries.store_ticket(with_ticket, "123456789012345", NOW)
    assert not summaries.mark_received(with_ticket, codigo="2403", descripcion="x", updated_at=NOW)
    finish(summaries, lost, SUMMARY_UNCONFIRMED)
    assert not summaries.mark_received(lost, codigo="2324", descripcion="x", updated_at=NOW)


def test_submitted_vouchers_are_those_with_a_row_in_any_state(repos):
    submissions = repos.submissions
    for voucher_id, numero in ((11, "1"), (12, "2")):
        submissions.enqueue("sandbox", RUC, "03", "B001", numero, voucher_id=voucher_id, ambiente="beta",
                            file_name=f"{RUC}-03-B001-{numero}", xml=b"", digest=None)
    row = submissions.find("sandbox", RUC, "03", "B001", "2")
    assert submissions.fail(row["id"], code="0102", text="clave", owner=None)
    assert submissions.submitted_vouchers([10, 11, 12, 13]) == {11, 12}
    assert submissions.submitted_vouchers([]) == set()
