"""The submission repository's writes for «Emitir» (a submission stored already claimed and sending, in the voucher's
transaction; a CDR kept once) on each engine (SQLite and PostgreSQL: `engine_database`)."""

from __future__ import annotations

RUC = "20100066603"


def _enqueue(submissions, numero: str = "9"):
    return submissions.enqueue_sending("sandbox", RUC, "01", "F001", numero, voucher_id=9, ambiente="beta",
                                       file_name=f"F001-{numero}", xml=b"<x/>", digest="ZGln", owner="desk/1:a",
                                       seconds=30)


def test_a_submission_stored_while_sending_is_claimed_once_and_its_cdr_kept_once(repos):
    submissions = repos.submissions
    submission_id = _enqueue(submissions)
    assert submission_id is not None and _enqueue(submissions) is None  # the serie-número has its row
    row = submissions.get(submission_id)
    assert (row["attempts"], row["must_reconcile"], row["claimed_by"]) == (1, 1, "desk/1:a")
    assert row["claimed_until"] > submissions.now() and not submissions.claim(submission_id, "desk/2:b", 30)
    kept = [submissions.store_cdr(submission_id, codigo="0", descripcion="ok", notas="[]", estado="aceptado",
                                  hash_cdr=f"h{n}", cdr_xml=b"<ar/>", member="R.xml") for n in (1, 2)]
    assert kept == [True, False] and submissions.cdr(submission_id)["hash_cdr"] == "h1"
