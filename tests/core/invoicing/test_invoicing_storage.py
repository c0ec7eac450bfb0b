"""The invoicing's storage ports (issue 28) on each engine (issue 34: SQLite and PostgreSQL, `engine_database`): the
voucher, submission and summary repositories, each asked directly what the voucher store, the outbox and the voids
ask of it."""

from __future__ import annotations

import pytest

from app.core.invoicing import packed_texts
from app.core.invoicing.statuses import SUBMISSION_DONE, SUBMISSION_FAILED, SUBMISSION_PENDING
from app.core.storage.ports.submissions import Lease, SubmissionRepository
from app.core.storage.ports.summaries import SummaryEntry, SummaryRepository
from app.core.storage.ports.vouchers import NewVoucher, NumberTaken, VoucherRepository

RUC = "20100066603"
DAY = "2025-01-31"


@pytest.fixture
def vouchers(repos) -> VoucherRepository:
    return repos.vouchers


@pytest.fixture
def submissions(repos) -> SubmissionRepository:
    return repos.submissions


@pytest.fixture
def summaries(repos) -> SummaryRepository:
    return repos.summaries


def voucher(numero: int, *, environment: str = "sandbox", tipo: str = "01", serie: str = "F001",
            status: str = "generado", fecha: str = DAY, ruc: str = RUC) -> NewVoucher:
    return NewVoucher(environment, ruc, tipo, serie, numero, f"{ruc}-{tipo}-{serie}-{numero}", f"hash-{numero}",
                      f"sha-{serie}-{numero}", "content-key", status, "6", "20601030013", "DISTRIBUIDORA ANDINA",
                      "PEN", "118.00", fecha, b'{"request": 1}', f"<Invoice>{serie}-{numero}</Invoice>".encode())


# ---------------------------------------------------------------- vouchers

def test_a_voucher_is_stored_once_per_number_and_environment(vouchers):
    first = vouchers.add(voucher(1))
    with pytest.raises(NumberTaken):
        vouchers.add(voucher(1))
    elsewhere = vouchers.add(voucher(1, environment="beta"))  # another environment numbers on its own
    assert vouchers.id_of("sandbox", RUC, "01", "F001", 1) == first and vouchers.id_of("beta", RUC, "01", "F001", 1) == elsewhere
    assert vouchers.id_of("sandbox", RUC, "01", "F001", 2) is None
    row = vouchers.get(first)
    assert (row["xml"], row["request_json"], row["xml_firmado"], row["status"], row["canonical"]) == (
        b"<Invoice>F001-1</Invoice>", b'{"request": 1}', None, "generado", 1)
    assert vouchers.find("beta", RUC, "01", "F001", 1)["id"] == elsewhere
    assert vouchers.find("produccion", RUC, "01", "F001", 1) is None and vouchers.get(elsewhere + 1) is None
    vouchers.add(voucher(7))
    assert vouchers.last_numero("sandbox", RUC, "01", "F001") == 7 and vouchers.last_numero("beta", RUC, "01", "F002") == 0
    assert [r["id"] for r in vouchers.find_by_serie_numero("F001", 1)] == [elsewhere, first]  # newest first
    assert vouchers.find_by_serie_numero("F001", 1, RUC, "03") == []
    assert vouchers.issuer_and_type(first) == (RUC, "01") and vouchers.issuer_and_type(999) is None


def test_a_voucher_signed_in_memory_is_stored_signed(vouchers):
    signed = voucher(1, status="firmado")
    signed.signature, signed.signature_offset, signed.signed_sha256 = b"<ds:Signature/>", 38, "signed-sha"
    signed.digest_value, signed.signature_value, signed.certificado_id = "ZGln", "c2ln", "cert-1"
    signed.updated_at = "2025-01-31T12:00:00.000000Z"
    row = vouchers.get(vouchers.add(signed))
    assert (row["signature"], row["signature_offset"], row["signed_sha256"], row["certificado_id"], row["status"],
            row["updated_at"]) == (b"<ds:Signature/>", 38, "signed-sha", "cert-1", "firmado", signed.updated_at)


def test_finds_by_text_answer_in_each_view(storage, vouchers):
    voucher_id = vouchers.add(voucher(3))
    [row] = vouchers.with_number(("sandbox", "beta"), RUC, "01", "F001", 3, text="xml", view="signing")
    assert row == {"id": voucher_id, "emisor_ruc": RUC, "tipo": "01", "serie": "F001", "numero": 3, "canonical": 1,
                   "certificado_id": None, "digest_value": None, "signature_value": None, "signature": None,
                   "signature_offset": None, "signed": 0, "text_sha256": "sha-F001-3"}
    assert vouchers.with_number(("beta",), RUC, "01", "F001", 3, text="xml", view="id") == []
    assert vouchers.with_number(("sandbox",), RUC, "01", "F001", 3, text="signed", view="environment") == [
        {"environment": "sandbox", "text_sha256": None}]
    assert vouchers.legacy_by_hash("sha-F001-3", ("sandbox",), "xml", "id") is None  # a canonical row: found by number
    with storage.write() as conn:  # as stored before canonical texts
        conn.execute("UPDATE vouchers SET canonical = 0, signed_sha256 = 'old-signed' WHERE id = ?", (voucher_id,))
    assert vouchers.legacy_by_hash("sha-F001-3", ("sandbox",), "xml", "id") == {"id": voucher_id}
    assert vouchers.legacy_by_hash("old-signed", ("beta", "sandbox"), "signed", "environment") == {
        "environment": "sandbox"}
    assert vouchers.legacy_by_hash("old-signed", ("beta",), "signed", "id") is None


def test_a_signature_is_recorded_once(vouchers):
    voucher_id = vouchers.add(voucher(1))
    assert vouchers.mark_signed_fragment(voucher_id, b"<ds:Signature/>", 38, "sha", "ZGln", "c2ln", "cert-1", "t1")
    assert not vouchers.mark_signed_fragment(voucher_id, b"<other/>", 1, "sha2", "x", "y", "cert-2", "t2")
    row = vouchers.get(voucher_id)
    assert (row["signature"], row["certificado_id"], row["status"], row["updated_at"]) == (
        b"<ds:Signature/>", "cert-1", "firmado", "t1")
    assert not vouchers.mark_signed_fragment(voucher_id + 1, b"<s/>", 1, "sha", "x", "y", "cert-1", "t3")
    assert vouchers.mark_signed(voucher_id, "whole-sha", "ZGln", "c2ln", "cert-1", "t4")  # the whole signed text
    vouchers.set_signed_text(voucher_id, b"<Invoice>signed</Invoice>")
    row = vouchers.get(voucher_id)
    assert (row["xml_firmado"], row["signature"], row["signature_offset"], row["signed_sha256"]) == (
        b"<Invoice>signed</Invoice>", None, None, "whole-sha")
    assert not vouchers.mark_signed(voucher_id + 1, "sha", "x", "y", "cert-1", "t5")
    assert vouchers.set_status(voucher_id, "aceptado", "t6") and not vouchers.set_status(voucher_id + 1, "aceptado", "t6")
    assert (vouchers.get(voucher_id)["status"], vouchers.get(voucher_id)["updated_at"]) == ("aceptado", "t6")


def test_a_dictionary_is_kept_once_and_goes_with_a_rolled_back_transaction(storage, vouchers):
    first, second = b"<Invoice>first</Invoice>", b"<Invoice>second</Invoice>"
    assert vouchers.latest_dictionary("xml:scope") is None
    vouchers.keep_dictionary(packed_texts.digest_of(first), "xml:scope", first)
    vouchers.keep_dictionary(packed_texts.digest_of(first), "xml:scope", first)  # stored: nothing happens
    vouchers.keep_dictionary(packed_texts.digest_of(second), "xml:scope", second)
    assert vouchers.latest_dictionary("xml:scope") == second and vouchers.latest_dictionary("xml:other") is None
    assert vouchers.dictionary(packed_texts.digest_of(first)) == first
    assert storage.query_one("SELECT COUNT(*) AS n FROM voucher_dictionaries")["n"] == 2
    third = b"<Invoice>third</Invoice>"
    with pytest.raises(RuntimeError), storage.transaction():
        vouchers.keep_dictionary(packed_texts.digest_of(third), "xml:other", third)
        assert vouchers.latest_dictionary("xml:other") == third  # the caller's transaction sees its own write
        raise RuntimeError("the block fails")
    assert vouchers.dictionary(packed_texts.digest_of(third)) is None


def test_the_outbox_and_the_voids_ask_vouchers_by_id_and_status(vouchers):
    ids = [vouchers.add(voucher(n, status="enviado" if n % 2 else "aceptado")) for n in range(1, 601)]
    pending_beta = vouchers.add(voucher(1, environment="beta", status="pendiente"))
    assert vouchers.ids_in_status(("sandbox", "beta", "produccion"), ("enviado", "pendiente")) == [
        *ids[0::2], pending_beta]
    assert vouchers.ids_in_status(("produccion",), ("enviado",)) == []
    statuses = vouchers.statuses_of([*ids, 999_999])  # more ids than one IN (…) list holds
    assert len(statuses) == 600 and statuses[ids[0]] == "enviado" and statuses[ids[1]] == "aceptado"
    assert vouchers.statuses_of([]) == {}


def test_a_resumen_diario_reports_the_days_boletas_and_their_notes(vouchers):
    boleta = vouchers.add(voucher(2, tipo="03", serie="B001", status="firmado"))
    note = vouchers.add(voucher(1, tipo="07", serie="b001", status="firmado"))  # a boleta's note (series B…)
    first = vouchers.add(voucher(1, tipo="03", serie="B001", status="firmado"))
    vouchers.add(voucher(1, tipo="01", serie="F001", status="firmado"))  # a factura: its own RA
    vouchers.add(voucher(1, tipo="07", serie="F001", status="firmado"))  # a factura's note
    vouchers.add(voucher(3, tipo="03", serie="B001", status="aceptado"))  # sent one by one already
    vouchers.add(voucher(4, tipo="03", serie="B001", status="firmado", fecha="2025-01-30"))  # another day
    vouchers.add(voucher(5, tipo="03", serie="B001", status="firmado", environment="beta"))
    vouchers.add(voucher(6, tipo="03", serie="B001", status="firmado", fecha=f"{DAY}T10:00:00"))
    sixth = vouchers.id_of("sandbox", RUC, "03", "B001", 6)
    assert vouchers.summary_candidates("sandbox", "firmado", DAY) == [first, boleta, sixth, note]


def test_a_page_of_vouchers_comes_from_the_index(vouchers):
    ids = [vouchers.add(voucher(n)) for n in range(1, 6)]
    page = vouchers.list_page("sandbox", search=None, cliente=None, status=None, tipo=None, desde=None, hasta=None,
                              before_id=None, offset=0, limit=2)
    assert [r["id"] for r in page] == [ids[4], ids[3]] and "xml" not in page[0]
    assert [r["id"] for r in vouchers.list_page("sandbox", search="F001-00000003", cliente="20601030013", status=None,
                                                tipo="01", desde=DAY, hasta=DAY, before_id=None, offset=0,
                                                limit=10)] == [ids[2]]
    assert vouchers.list_page("sandbox", search='"" -', cliente=None, status=None, tipo=None, desde=None, hasta=None,
                              before_id=None, offset=0, limit=10) == []  # nothing searchable
    assert [r["id"] for r in vouchers.list_page("sandbox", search="andina", cliente=None, status="generado", tipo=None,
                                                desde=None, hasta=None, before_id=ids[1], offset=0, limit=10)] == [ids[0]]


# ---------------------------------------------------------------- submissions

KEY = ("sandbox", RUC, "01", "F001", "1")


def _enqueue(submissions, xml: bytes = b"<Invoice>1</Invoice>", voucher_id: int | None = 1, digest: str = "d1") -> dict:
    submissions.enqueue(*KEY, voucher_id=voucher_id, ambiente="beta", file_name="F001-1", xml=xml, digest=digest)
    return submissions.find(*KEY)


def test_a_submission_takes_a_new_text_only_while_nothing_may_have_reached_sunat(storage, submissions):
    row = _enqueue(submissions)
    assert (row["state"], row["xml"], row["digest_value"], row["attempts"], row["claimed_by"]) == (
        SUBMISSION_PENDING, b"<Invoice>1</Invoice>", "d1", 0, None)
    assert _enqueue(submissions, b"<Invoice>2</Invoice>", None, "d2")["xml"] == b"<Invoice>2</Invoice>"  # never tried
    assert submissions.find(*KEY)["voucher_id"] == 1  # COALESCE: a foreign resend keeps the voucher it had
    assert submissions.claim(row["id"], "desk/1:a", 60) and submissions.mark_sending(row["id"], "desk/1:a")
    assert _enqueue(submissions, b"<Invoice>3</Invoice>")["xml"] == b"<Invoice>2</Invoice>"  # it may have arrived
    assert submissions.fail(row["id"], code="0306", text="no", owner="desk/1:a")
    again = _enqueue(submissions, b"<Invoice>4</Invoice>", digest="d4")  # a fault: sent again with the new text
    assert (again["state"], again["xml"], again["fault_code"], again["next_attempt_at"]) == (
        SUBMISSION_PENDING, b"<Invoice>4</Invoice>", None, 0)
    submissions.store_cdr(row["id"], codigo="0", descripcion="ok", notas="[]", estado="aceptado", hash_cdr="h",
                          cdr_xml=b"<ar/>", member="R-1.xml")
    with storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET state = ?", (SUBMISSION_FAILED,))
    assert _enqueue(submissions, b"<Invoice>5</Invoice>")["xml"] == b"<Invoice>4</Invoice>"  # a CDR: final


def test_submissions_are_due_by_the_schedules_clock(storage, submissions):
    first = _enqueue(submissions)["id"]
    submissions.enqueue("beta", RUC, "01", "F001", "2", voucher_id=None, ambiente="beta", file_name="F001-2",
                        xml=b"<x/>", digest=None)
    assert submissions.due("sandbox", 0.0) == [first] and submissions.next_due_at("sandbox") == 0
    assert submissions.claim(first, "desk/1:a", 60)
    assert submissions.retry_later(first, owner="desk/1:a", must_reconcile=1, next_attempt_at=500.0, reason="r")
    assert submissions.due("sandbox", 499.0) == [] and submissions.due("sandbox", 500.0) == [first]
    assert submissions.next_due_at("sandbox") == 500.0 and submissions.next_due_at("produccion") is None
    assert submissions.pending_by_environment() == {"sandbox": 1, "beta": 1}
    row = submissions.get(first)
    assert (row["must_reconcile"], row["last_error"], row["claimed_by"], row["claimed_until"]) == (1, "r", None, None)


def test_a_lease_is_claimed_renewed_and_taken_over_on_the_database_clock(storage, submissions):
    submission_id = _enqueue(submissions)["id"]
    assert submissions.lease(submission_id) == Lease(SUBMISSION_PENDING, None, False)
    assert submissions.lease(submission_id + 1) is None
    before = submissions.now()
    assert submissions.claim(submission_id, "desk-a/1:x", 30)
    lease = submissions.lease(submission_id)
    assert lease.owner == "desk-a/1:x" and lease.running
    assert before + 30 <= submissions.get(submission_id)["claimed_until"] <= submissions.now() + 30
    assert not submissions.claim(submission_id, "desk-b/2:y", 30)  # running
    assert not submissions.claim(submission_id, "desk-b/2:y", 30, replacing="desk-c/3:z")  # not that holder's
    assert not submissions.renew_lease(submission_id, "desk-b/2:y", 30)  # not its lease
    assert submissions.renew_lease(submission_id, "desk-a/1:x", 60)
    assert submissions.get(submission_id)["claimed_until"] >= before + 60
    assert submissions.claim(submission_id, "desk-b/2:y", 30, replacing="desk-a/1:x")  # its holder is known dead
    assert not submissions.mark_sending(submission_id, "desk-a/1:x")
    assert submissions.mark_sending(submission_id, "desk-b/2:y")
    with storage.write() as conn:  # ran out a second ago
        conn.execute("UPDATE sunat_submissions SET claimed_until = ? WHERE id = ?",
                     (submissions.now() - 1, submission_id))
    assert submissions.lease(submission_id) == Lease(SUBMISSION_PENDING, "desk-b/2:y", False)
    assert submissions.claim(submission_id, "desk-a/1:w", 30)
    assert not submissions.retry_later(submission_id, owner="desk-b/2:y", must_reconcile=1, next_attempt_at=1.0,
                                       reason="r")  # taken over: nothing written
    assert not submissions.fail(submission_id, code="0306", text="no", owner="desk-b/2:y")
    assert submissions.fail(submission_id, code="0306", text="no", owner=None)  # a fault outside an attempt
    assert not submissions.claim(submission_id, "desk-a/1:v", 30)  # no longer pending


def test_a_cdr_ends_its_submission_and_the_first_stays(submissions):
    submission_id = _enqueue(submissions)["id"]
    assert submissions.claim(submission_id, "desk/1:a", 60)
    submissions.store_cdr(submission_id, codigo="0", descripcion="aceptada", notas="[]", estado="aceptado",
                          hash_cdr="h1", cdr_xml=b"<ar>1</ar>", member="R-1.xml")
    submissions.store_cdr(submission_id, codigo="2800", descripcion="otra", notas="[]", estado="rechazado",
                          hash_cdr="h2", cdr_xml=b"<ar>2</ar>", member="R-1.xml")
    cdr = submissions.cdr(submission_id)
    assert (cdr["codigo"], cdr["cdr_xml"], cdr["cdr_zip"], cdr["cdr_member"]) == ("0", b"<ar>1</ar>", b"", "R-1.xml")
    row = submissions.get(submission_id)
    assert (row["state"], row["claimed_by"], row["must_reconcile"]) == (SUBMISSION_DONE, None, 0)
    assert submissions.latest_cdr_of_voucher(1)["hash_cdr"] == "h1" and submissions.latest_cdr_of_voucher(2) is None
    assert not submissions.fail(submission_id, code="0306", text="no", owner=None)  # final


def test_repair_on_open_finds_rows_and_vouchers_left_behind(storage, submissions):
    for numero in range(1, 603):  # more vouchers than one IN (…) list holds
        submissions.enqueue("sandbox", RUC, "01", "F001", str(numero), voucher_id=numero, ambiente="beta",
                            file_name=f"F001-{numero}", xml=b"<x/>", digest=None)
    by_voucher = {row["voucher_id"]: row["id"] for row in storage.query("SELECT id, voucher_id FROM sunat_submissions")}
    for voucher_id, estado in ((601, "aceptado"), (2, "rechazado"), (602, None)):
        submissions.store_cdr(by_voucher[voucher_id], codigo="0", descripcion="d", notas="[]", estado=estado,
                              hash_cdr="h", cdr_xml=b"<ar/>", member="R.xml")
    with storage.write() as conn:  # as a kill between the CDR and the row's end leaves them
        conn.execute("UPDATE sunat_submissions SET state = ? WHERE voucher_id IN (2, 602)", (SUBMISSION_PENDING,))
    assert sorted(submissions.unfinished_with_cdr()) == sorted([by_voucher[2], by_voucher[602]])
    submissions.finish(by_voucher[2])
    assert submissions.unfinished_with_cdr() == [by_voucher[602]]
    assert submissions.cdr_states_of_vouchers(range(1, 603)) == [(601, "aceptado"), (2, "rechazado")]  # oldest first
    assert submissions.cdr_states_of_vouchers([]) == []


# ---------------------------------------------------------------- summaries

def _summary(summaries, voucher_ids: list[int], counter: int = 1, kind: str = "RA", environment: str = "sandbox") -> int:
    return summaries.add(environment=environment, emisor_ruc=RUC, kind=kind, ident=f"{kind}-20250131-{counter}",
                         issue_date=DAY, counter=counter, reference_date="2025-01-30", xml_firmado="<VoidedDocuments/>",
                         lines=[SummaryEntry(v, "01", "F001", v, "3", f"motivo {v}") for v in voucher_ids])


def test_a_summary_is_numbered_stored_and_found_by_its_vouchers(summaries):
    assert summaries.last_counter("sandbox", RUC, "RA", DAY) == 0
    first = _summary(summaries, [12, 3])
    assert summaries.last_counter("sandbox", RUC, "RA", DAY) == 1 and summaries.last_counter("beta", RUC, "RA", DAY) == 0
    assert summaries.pending_ident_of_voucher(3) == "RA-20250131-1" and summaries.pending_ident_of_voucher(4) is None
    assert summaries.first_pending_line([5, 12]) == ("F001", 12, "RA-20250131-1")
    assert summaries.first_pending_line([5]) is None
    assert summaries.held_voucher_ids([*range(1000), 12]) == {3, 12}  # more ids than one IN (…) list holds
    assert [line["voucher_id"] for line in summaries.lines(first)] == [3, 12]
    assert summaries.lines(first)[0] == {"voucher_id": 3, "tipo": "01", "serie": "F001", "numero": 3, "condition": "3",
                                         "motivo": "motivo 3"}
    second = _summary(summaries, [7], counter=2)
    _summary(summaries, [8], environment="beta")
    assert [(s["id"], s["comprobantes"]) for s in summaries.recent("sandbox", 10)] == [
        (second, "F001-7"), (first, "F001-3, F001-12")]
    assert [s["id"] for s in summaries.recent("sandbox", 0)] == [second]  # at least one
    assert [(s["ident"], s["condition"], s["motivo"]) for s in summaries.for_voucher(12)] == [
        ("RA-20250131-1", "3", "motivo 12")]
    assert summaries.brief(first) == {"id": first, "ident": "RA-20250131-1", "state": SUBMISSION_PENDING,
                                      "ticket": None}
    assert summaries.get(first)["xml_firmado"] == "<VoidedDocuments/>" and summaries.get(999) is None
    assert len(summaries.pending()) == 3


def test_a_summary_is_sent_once_and_answered_once(summaries):
    summary_id = _summary(summaries, [1])
    assert summaries.claim_send(summary_id, 0, "t1") and not summaries.claim_send(summary_id, 0, "t1")  # read before
    summaries.note(summary_id, "SUNAT no respondió")
    assert summaries.claim_send(summary_id, 1, "t2")
    summaries.store_ticket(summary_id, "1234567", "t3")
    assert not summaries.claim_send(summary_id, 2, "t4")  # it has its ticket
    summaries.count_poll(summary_id)
    row = summaries.get(summary_id)
    assert (row["send_attempts"], row["ticket"], row["descripcion"], row["polls"], row["updated_at"]) == (
        2, "1234567", None, 1, "t3")
    assert summaries.finish(summary_id, state=SUBMISSION_DONE, codigo="0", descripcion="aceptada", cdr_xml=b"<ar/>",
                            cdr_member="R-RA.xml", updated_at="t5")
    assert not summaries.finish(summary_id, state=SUBMISSION_FAILED, codigo="2324", descripcion="otra", cdr_xml=None,
                                cdr_member=None, updated_at="t6")
    assert summaries.pending() == [] and summaries.pending_ident_of_voucher(1) is None
    assert (summaries.get(summary_id)["state"], summaries.get(summary_id)["cdr_xml"]) == (SUBMISSION_DONE, b"<ar/>")


def test_consulted_cdrs_keep_the_latest(summaries):
    assert summaries.latest_consulted_cdr(1) is None
    for codigo in ("0", "2800"):
        summaries.add_consulted_cdr(voucher_id=1, environment="sandbox", codigo=codigo, descripcion=f"d{codigo}",
                                    cdr_xml=b"<ar/>", cdr_member="R.xml")
    latest = summaries.latest_consulted_cdr(1)
    assert (latest["codigo"], latest["cdr_zip"], latest["cdr_xml"], latest["cdr_member"]) == ("2800", b"", b"<ar/>",
                                                                                               "R.xml")
