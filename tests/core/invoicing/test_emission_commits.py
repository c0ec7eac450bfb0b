"""«Emitir» with a send, counted on a real SQLite database and a real SUNAT sandbox (issue 33): one durable transaction
before the POST (the voucher, signed, and its outbox row, claimed and marked as sending), one after the CDR, two
syncs in all. What SQLite runs is read from the storage's statement watch (Storage.watch); when the POST arrives,
from the sandbox's own request handler."""

from __future__ import annotations

import base64
import threading

import pytest

from app.core.invoicing import statuses, xmldsig
from app.core.invoicing.ubl_identity import DocumentId
from app.sandbox.sunat import SunatSandbox
from tests.helpers.base import ISSUER_RUC
from tests.helpers.voucher_matrix import CUSTOMER_RUC, factura, item

WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


class Journal:
    """What happened, in order: each transaction's end (`commit`, or `durable` when it synced the WAL) and each
    POST the sandbox received. Statements come from every connection (threads included), each with its own
    `synchronous` setting and transaction state."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self._lock = threading.Lock()
        self._full: set[int] = set()  # connections running with synchronous = FULL
        self._open: set[int] = set()  # connections inside a transaction
        self.watching = False  # POSTs are noted only while statements are

    def statement(self, conn: int, sql: str) -> None:
        words = sql.strip().upper()
        with self._lock:
            if words.startswith("PRAGMA SYNCHRONOUS"):
                (self._full.add if words.endswith("FULL") else self._full.discard)(conn)
            elif words.startswith("BEGIN"):
                self._open.add(conn)
            elif words.startswith(("COMMIT", "END")):
                self._open.discard(conn)
                self.events.append("durable" if conn in self._full else "commit")
            elif words.startswith("ROLLBACK") and not words.startswith("ROLLBACK TO"):
                self._open.discard(conn)
            elif words.startswith("-- FSYNC"):
                self.events.append("sync")
            elif words.startswith(WRITES) and conn not in self._open:  # autocommit: a transaction of its own
                self.events.append("durable" if conn in self._full else "commit")

    def post(self) -> None:
        with self._lock:
            if self.watching:
                self.events.append("POST")

    def syncs(self) -> int:
        return sum(event in ("durable", "sync") for event in self.events)


class WatchedSandbox(SunatSandbox):
    """The SUNAT sandbox, noting each SOAP request as it arrives (before it is answered)."""

    def __init__(self, journal: Journal) -> None:
        super().__init__(hold_limit_s=20)
        self.journal = journal

    def handle_soap(self, request, body: bytes) -> None:
        self.journal.post()
        super().handle_soap(request, body)


@pytest.fixture
def journal() -> Journal:
    return Journal()


@pytest.fixture
def watched(engine, company, journal):
    """An engine on a watched sandbox (port 0) with the issuer's test certificate as its default."""
    server = WatchedSandbox(journal)
    server.start()
    server.configure(engine)
    engine.admin.config_set("sunat_timeout_s", "5")
    engine.invoicing.create_test_certificate(ISSUER_RUC)
    yield engine
    server.unconfigure(engine)
    server.stop()


def counted(engine, journal: Journal, request: dict):
    engine._storage.watch(journal.statement)
    journal.watching = True
    try:
        return engine.invoicing.issue(request)
    finally:
        journal.watching = False
        engine._storage.watch(None)


def test_one_emitir_is_one_durable_commit_before_the_post_and_one_after_the_cdr(watched, journal):
    emission = counted(watched, journal, factura("F001", 1, [item("Servicio", "2", "50")]))
    assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO, emission
    assert journal.events == ["durable", "POST", "durable"], " ".join(journal.events)
    assert journal.syncs() == 2
    stored = watched.invoicing.voucher(emission.voucher_id)  # what was committed is the whole story
    assert stored.status == statuses.ACEPTADO
    assert xmldsig.verify_xml(stored.xml_firmado).digest_value == emission.digest_value
    cdr = watched.invoicing.voucher_cdr(emission.voucher_id)
    assert cdr.codigo == "0" and cdr.estado == statuses.ACEPTADO
    assert base64.b64decode(emission.sent.cdr) == cdr.cdr_zip  # the answer is the CDR as stored
    assert [c.numero for c in watched.catalog.customers()] == [CUSTOMER_RUC]  # remembered in the same commit


def test_the_next_emitir_counts_the_same(watched, journal):
    watched.invoicing.issue(factura("F001", 1, [item("Servicio", "1", "10")]))
    emission = counted(watched, journal, factura("F001", 2, [item("Servicio", "3", "10")]))
    assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO, emission
    assert journal.events == ["durable", "POST", "durable"], " ".join(journal.events)


# ---------------------------------------------------------------- what the one commit leaves behind

@pytest.fixture
def emitting(sunat_engine, company):
    """The engine on the shared sandbox with the issuer's test certificate as its default."""
    sunat_engine.invoicing.create_test_certificate(ISSUER_RUC)
    return sunat_engine


def test_a_kill_after_the_commit_before_the_post_is_sent_once_by_the_next_engine(emitting, sandbox, home,
                                                                                   monkeypatch):
    class Killed(BaseException):
        pass

    def dies_before_posting(held, channel):
        raise Killed  # the process dies here: the voucher and its row are committed, nothing went out

    monkeypatch.setattr(emitting._outbox, "send_held", dies_before_posting)
    with pytest.raises(Killed):
        emitting.invoicing.issue(factura("F001", 5, [item("Servicio", "1", "10")]))
    monkeypatch.undo()
    voucher = emitting._storage.query_one("SELECT id, status, digest_value FROM vouchers WHERE numero = 5")
    row = emitting._storage.query_one("SELECT * FROM sunat_submissions")
    assert voucher["status"] == statuses.ENVIADO and voucher["digest_value"]
    assert (row["voucher_id"], row["state"], row["attempts"], row["must_reconcile"]) == (voucher["id"], statuses.SUBMISSION_PENDING, 1, 1)
    assert row["claimed_by"] and row["digest_value"] == voucher["digest_value"] and row["xml"] == b""
    assert sandbox.sends() == 0
    with emitting._storage.write() as conn:  # the dead attempt's lease ran out
        conn.execute("UPDATE sunat_submissions SET claimed_by = NULL, claimed_until = NULL")
    from app.core.engine import Engine

    reopened = Engine(home)  # asks SUNAT first (something may have gone out), then sends
    try:
        assert reopened._outbox.wait_settled(row["id"], 20)["state"] == statuses.SUBMISSION_DONE
        assert reopened.invoicing.voucher(voucher["id"]).status == statuses.ACEPTADO
    finally:
        reopened.close()
    assert sandbox.send_count(f"{ISSUER_RUC}-01-F001-5") == 1


def test_a_number_whose_submission_exists_is_sent_through_that_row(emitting, sandbox):
    """A serie-número sent before through operation 3 (a foreign text, never attempted) has its row: «Emitir» stores
    its voucher alone, then queues and sends it through that row."""
    doc = DocumentId(ISSUER_RUC, "01", "F001", "6")
    earlier = emitting._outbox.enqueue(doc, b"<Invoice/>", "sandbox", None, "otro")
    emission = emitting.invoicing.issue(factura("F001", 6, [item("Servicio", "1", "10")]))
    assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO, emission
    [row] = emitting._storage.query("SELECT * FROM sunat_submissions")
    assert (row["id"], row["voucher_id"], row["state"]) == (earlier["id"], emission.voucher_id, statuses.SUBMISSION_DONE)
    assert sandbox.send_count(f"{ISSUER_RUC}-01-F001-6") == 1
    assert emitting.invoicing.voucher(emission.voucher_id).status == statuses.ACEPTADO


def test_without_a_sandbox_running_the_voucher_is_stored_signed_in_one_commit(engine, company, journal):
    engine.invoicing.create_test_certificate(ISSUER_RUC)
    emission = counted(engine, journal, factura("F001", 8, [item("Servicio", "1", "10")]))
    assert emission.outcome is None and emission.refusal is not None  # nothing went out: said, not queued
    assert journal.events == ["durable"], " ".join(journal.events)
    assert engine.invoicing.voucher(emission.voucher_id).status == statuses.FIRMADO
    assert engine._storage.query("SELECT * FROM sunat_submissions") == []
