"""The summary and submission repositories' answers for issue 31 on SQLite, asked directly: the boletas a resumen
diario reports (one path per boleta), the vouchers with a submission, the lines voiding vouchers whose summary is
pending or `sin_confirmar`, and a summary SUNAT holds without its ticket."""

from __future__ import annotations

from app.core.invoicing.statuses import SUBMISSION_DONE, SUBMISSION_FAILED, SUBMISSION_PENDING, SUMMARY_UNCONFIRMED
from app.core.storage.ports.summaries import SummaryEntry
from app.core.storage.sqlite.submissions import SqliteSubmissionRepository
from app.core.storage.sqlite.summaries import SqliteSummaryRepository

RUC = "20100066603"
DAY = "2025-01-31"
NOW = "2025-01-31T12:00:00.000000Z"


def add(summaries: SqliteSummaryRepository, counter: int, kind: str, *lines: tuple[int, str]) -> int:
    """A summary of `kind` with (voucher id, condition) lines."""
    tipo, serie = ("01", "F001") if kind == "RA" else ("03", "B001")
    return summaries.add(environment="sandbox", emisor_ruc=RUC, kind=kind, ident=f"{kind}-20250131-{counter}",
                         issue_date=DAY, counter=counter, reference_date=DAY, xml_firmado="<x/>",
                         lines=[SummaryEntry(voucher_id, tipo, serie, voucher_id, condition, "")
                                for voucher_id, condition in lines])


def finish(summaries: SqliteSummaryRepository, summary_id: int, state: str) -> None:
    assert summaries.finish(summary_id, state=state, codigo="0", descripcion="", cdr_xml=None, cdr_member=None,
                            updated_at=NOW)


def test_reported_by_names_the_rc_adding_a_boleta_while_it_is_pending_or_accepted(storage):
    summaries = SqliteSummaryRepository(storage)
    pending = add(summaries, 1, "RC", (1, "1"), (2, "3"))
    accepted = add(summaries, 2, "RC", (3, "1"))
    refused = add(summaries, 3, "RC", (4, "1"))
    unconfirmed = add(summaries, 4, "RC", (5, "1"))
    finish(summaries, accepted, SUBMISSION_DONE)
    finish(summaries, refused, SUBMISSION_FAILED)
    finish(summaries, unconfirmed, SUMMARY_UNCONFIRMED)
    assert summaries.reported_by([1, 2, 3, 4, 5, 6]) == {1: "RC-20250131-1", 3: "RC-20250131-2"}
    assert pending and summaries.reported_by([]) == {}


def test_void_lines_are_those_of_pending_and_unconfirmed_summaries_oldest_first(storage):
    summaries = SqliteSummaryRepository(storage)
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


def test_a_summary_is_marked_received_only_while_pending_without_a_ticket(storage):
    summaries = SqliteSummaryRepository(storage)
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


def test_submitted_vouchers_are_those_with_a_row_in_any_state(storage):
    submissions = SqliteSubmissionRepository(storage)
    for voucher_id, numero in ((11, "1"), (12, "2")):
        submissions.enqueue("sandbox", RUC, "03", "B001", numero, voucher_id=voucher_id, ambiente="beta",
                            file_name=f"{RUC}-03-B001-{numero}", xml=b"", digest=None)
    row = submissions.find("sandbox", RUC, "03", "B001", "2")
    assert submissions.fail(row["id"], code="0102", text="clave", owner=None)
    assert submissions.submitted_vouchers([10, 11, 12, 13]) == {11, 12}
    assert submissions.submitted_vouchers([]) == set()
