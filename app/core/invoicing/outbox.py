"""The durable outbox of submissions to SUNAT, and the background worker that finishes them.

Every submission is written to the database before anything is sent. One attempt (by the caller
of operation 3, or later by the worker) is:
1. claim the row: a lease whose owner is this one attempt (process id + a random token), so two
   attempts never send the same voucher at once, whether they run in two processes or in two threads of
   one (the worker thread and a caller of operation 3);
2. if an earlier attempt may have reached SUNAT (time-out, dropped connection, 5xx, a process
   killed mid-send, a 1033 answer), ask getStatusCdr first and take that CDR when there is one;
3. otherwise mark the attempt (committed) and sendBill;
4. a CDR is stored in the same transaction that finishes the row, before anyone is answered;
   a fault finishes the row as failed, only while it is still pending and without a CDR (a terminal
   state is never overwritten); a 1033 ("registered before") is answered by getStatusCdr and, when the
   look-up fails, retried later: never reported as a rejection; a network problem schedules a retry with
   exponential backoff and jitter.
A row with a CDR is never sent again: resending the voucher returns the stored CDR. The state is derived
from what is stored: opening a folder repairs a row or voucher left behind by a kill (`repair`).
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from lxml import etree
from sqlite_utils import Migrations

from app.core.errors import ErrorCode, YupanaError
from app.core.invoicing import cdr as cdr_reader
from app.core.invoicing import packed_texts, statuses, sunat_codes
from app.core.invoicing.namespaces import DS
from app.core.invoicing.soap import SoapFault, SunatClient, TransportFailure, zip_document
from app.core.invoicing.ubl_identity import DocumentId
from app.core.invoicing.voucher_store import VoucherStore, dictionaries_in, signed_text_of
from app.core.platform.environments import ambiente_of
from app.core.platform.events import EventBus, SunatCdrStored
from app.core.platform.processes import owner_alive
from app.core.platform.settings import Settings
from app.core.platform.storage import Storage, register_migrations, table_names

log = logging.getLogger(__name__)

migrations = register_migrations(Migrations("yupana.outbox"))

# "registrado previamente" (1033) and "... rechazado previamente" (1032): SUNAT has it; fetch its CDR, never
# resend blindly, never report it as a rejection.
# must_reconcile: 0 nothing may have reached SUNAT; 1 something may have (ask before sending); HELD_BY_SUNAT it
# answered 1033/1032, so it has the voucher: only ask, never send again.
HELD_BY_SUNAT = 2
PENDING, DONE, FAILED = statuses.SUBMISSION_PENDING, statuses.SUBMISSION_DONE, statuses.SUBMISSION_FAILED


# Columns as m001 created them; m003 rebuilds both tables with the same ones (only the key moves to the
# environment), so they are written once. Frozen: a later change of schema is a new migration, never an edit here.
QUEUE_COLUMNS = """file_name TEXT NOT NULL,
        xml BLOB NOT NULL,
        state TEXT NOT NULL DEFAULT 'pendiente',
        attempts INTEGER NOT NULL DEFAULT 0,
        must_reconcile INTEGER NOT NULL DEFAULT 0,
        next_attempt_at REAL NOT NULL DEFAULT 0,
        claimed_by TEXT, claimed_until REAL,
        fault_code TEXT, last_error TEXT,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
        updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),"""
CDR_COLUMNS = """codigo TEXT NOT NULL, descripcion TEXT NOT NULL, notas TEXT NOT NULL, estado TEXT,
        hash_cdr TEXT NOT NULL, cdr_zip BLOB NOT NULL,
        received_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"""


@migrations()
def m001_outbox(db) -> None:
    # voucher_id is vouchers.id for a voucher Yupana generated (NULL for a foreign one); no FOREIGN
    # KEY clause so this module does not depend on the order the vouchers module migrates in.
    db.execute(f"""CREATE TABLE sunat_submissions (
        id INTEGER PRIMARY KEY,
        voucher_id INTEGER,
        ambiente TEXT NOT NULL,
        ruc TEXT NOT NULL, tipo TEXT NOT NULL, serie TEXT NOT NULL, numero TEXT NOT NULL,
        {QUEUE_COLUMNS}
        UNIQUE (ambiente, ruc, tipo, serie, numero))""")
    db.execute("CREATE INDEX sunat_submissions_due ON sunat_submissions (state, next_attempt_at)")
    db.execute(f"""CREATE TABLE sunat_cdrs (
        id INTEGER PRIMARY KEY,
        submission_id INTEGER NOT NULL UNIQUE REFERENCES sunat_submissions(id),
        {CDR_COLUMNS})""")


@migrations()
def m002_signed_digest(db) -> None:
    # The ds:DigestValue of the document sent: a stored CDR is handed out only for that same signed content.
    db.execute("ALTER TABLE sunat_submissions ADD COLUMN digest_value TEXT")
    # Repair on open looks up the submissions of the few vouchers still `enviado` or `pendiente`.
    db.execute("CREATE INDEX sunat_submissions_voucher ON sunat_submissions (voucher_id) WHERE voucher_id IS NOT NULL")


@migrations()
def m003_environment(db) -> None:
    """Each submission belongs to the environment it was made in (sandbox, beta, produccion) and is only sent to
    that environment's addresses; the sandbox and beta both speak `ambiente` beta, so the key moves to the
    environment. Rows stored before: production ones are production's; the others belong to the folder's
    environment when it is sandbox or beta (the sandbox used to stand in for beta's address), else to beta."""
    row = db.execute("SELECT value FROM settings WHERE key = 'environment'").fetchone()
    folder = row[0] if row and row[0] in ("sandbox", "beta") else ("sandbox" if row is None else "beta")
    # sunat_cdrs references this table: both are rebuilt, the CDRs pointing at the new table, whose renaming
    # carries the reference along (dropping a referenced table would fail its foreign key check).
    db.execute(f"""CREATE TABLE sunat_submissions_m003 (
        id INTEGER PRIMARY KEY,
        voucher_id INTEGER,
        environment TEXT NOT NULL,
        ambiente TEXT NOT NULL,
        ruc TEXT NOT NULL, tipo TEXT NOT NULL, serie TEXT NOT NULL, numero TEXT NOT NULL,
        {QUEUE_COLUMNS}
        digest_value TEXT,
        UNIQUE (environment, ruc, tipo, serie, numero))""")
    columns = ("id, voucher_id, ambiente, ruc, tipo, serie, numero, file_name, xml, state, attempts, must_reconcile, "
               "next_attempt_at, claimed_by, claimed_until, fault_code, last_error, created_at, updated_at, "
               "digest_value")
    db.execute(f"INSERT INTO sunat_submissions_m003 (environment, {columns}) "
               f"SELECT CASE ambiente WHEN 'produccion' THEN 'produccion' ELSE ? END, {columns} "
               "FROM sunat_submissions", [folder])
    db.execute(f"""CREATE TABLE sunat_cdrs_m003 (
        id INTEGER PRIMARY KEY,
        submission_id INTEGER NOT NULL UNIQUE REFERENCES sunat_submissions_m003(id),
        {CDR_COLUMNS})""")
    db.execute("INSERT INTO sunat_cdrs_m003 SELECT id, submission_id, codigo, descripcion, notas, estado, hash_cdr, "
               "cdr_zip, received_at FROM sunat_cdrs")
    db.execute("DROP TABLE sunat_cdrs")
    db.execute("DROP TABLE sunat_submissions")
    db.execute("ALTER TABLE sunat_submissions_m003 RENAME TO sunat_submissions")
    db.execute("ALTER TABLE sunat_cdrs_m003 RENAME TO sunat_cdrs")
    db.execute("CREATE INDEX sunat_submissions_due ON sunat_submissions (environment, state, next_attempt_at)")
    db.execute("CREATE INDEX sunat_submissions_voucher ON sunat_submissions (voucher_id) WHERE voucher_id IS NOT NULL")


# The `xml` of a submission of a voucher Yupana keeps (voucher_id not NULL): no copy, the voucher's own stored signed
# text is what is sent (docs/vouchers.md, «Muchos comprobantes»). A foreign voucher's submission keeps its copy.
NO_COPY = b""


@migrations()
def m004_no_copy_of_our_vouchers(db) -> None:
    """Submissions of vouchers Yupana keeps stored a second (packed) copy of the signed XML: each copy that is, byte for
    byte, the voucher's stored signed text is emptied; any other (none expected) is kept as it is. Where the vouchers'
    texts are not where this version keeps them (their own migrations not run yet), nothing is compared: the copies
    stay."""
    tables = table_names(db)
    columns = {row[1] for row in db.execute("PRAGMA table_info(vouchers)")}
    if "voucher_texts" not in tables or not {"signature", "signature_offset"} <= columns:
        return

    dictionary_of = dictionaries_in(db)

    cursor = db.execute(
        "SELECT s.id, s.xml AS copy, t.xml, t.xml_firmado, v.signature, v.signature_offset FROM sunat_submissions s "
        "JOIN vouchers v ON v.id = s.voucher_id JOIN voucher_texts t ON t.voucher_id = v.id "
        "WHERE s.voucher_id IS NOT NULL AND length(s.xml) > 0")
    names = [c[0] for c in cursor.description]
    emptied = []
    while rows := cursor.fetchmany(500):
        for values in rows:
            row = dict(zip(names, values, strict=True))
            try:
                copy = packed_texts.unpack_bytes(row.pop("copy"), dictionary_of)
                signed = signed_text_of(row, dictionary_of)
            except (KeyError, ValueError):  # unreadable here: keep the copy
                continue
            if signed is not None and signed.encode("utf-8") == copy:
                emptied.append(row["id"])
    for submission_id in emptied:
        db.execute("UPDATE sunat_submissions SET xml = ? WHERE id = ?", [NO_COPY, submission_id])


@migrations()
def m005_cdr_as_its_xml(db) -> None:
    """A CDR is stored as its signed ApplicationResponse (packed against the environment's first one) and the name
    it had in SUNAT's zip; the zip is made again when handed out (cdr.rebuild_zip). Rows stored before keep their
    zip as received in `cdr_zip`; new rows leave it empty."""
    db.execute("ALTER TABLE sunat_cdrs ADD COLUMN cdr_xml BLOB")
    db.execute("ALTER TABLE sunat_cdrs ADD COLUMN cdr_member TEXT")


@dataclass(frozen=True)
class Attempt:
    """How one attempt ended: `cdr`, `fault` (code, text) or `queued` (retry later or in progress)."""

    kind: str
    cdr: cdr_reader.Cdr | None = None
    fault_code: str = ""
    fault_text: str = ""
    in_flight: bool = False  # queued because another attempt holds the row (it may be sending right now)


# ---------------------------------------------------------------- rows

def stored_digest(row: dict) -> str | None:
    """The ds:DigestValue of the document a submission holds (read from its XML for rows stored before m002)."""
    if row.get("digest_value"):
        return row["digest_value"]
    try:
        root = etree.fromstring(row["xml"], cdr_reader.safe_parser())
    except etree.XMLSyntaxError:
        return None
    found = root.find(f".//{{{DS}}}Signature/{{{DS}}}SignedInfo/{{{DS}}}Reference/{{{DS}}}DigestValue")
    return "".join((found.text or "").split()) if found is not None else None


# ---------------------------------------------------------------- the outbox

class Outbox:
    """The outbox of one engine: attempts, retry schedule and the worker thread."""

    def __init__(self, storage: Storage, settings: Settings, events: EventBus, vouchers: VoucherStore,
                 environment: Callable[[], str], client_factory: Callable[[str, str], SunatClient],
                 clock: Callable[[], float] = time.time) -> None:
        self.storage = storage
        self.settings = settings
        self.events = events
        self.vouchers = vouchers
        self.environment = environment  # the environment in use: only its pending submissions are worked on
        self.client_factory = client_factory  # (environment, ruc) -> SunatClient at that environment's addresses
        self.clock = clock
        self.owner = f"{os.getpid()}:{uuid.uuid4().hex[:12]}"  # each attempt's lease adds its own token
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._thread_lock = threading.Lock()
        self._settled = threading.Condition()
        self._leases: set[str] = set()  # this outbox's attempts under way (their lease tokens)
        self._leases_lock = threading.Lock()
        self.repair()

    # ------------------------------------------------------------ rows

    def enqueue(self, doc: DocumentId, xml: bytes, environment: str, voucher_id: int | None,
                digest: str | None = None) -> dict:
        """The submission of this voucher in `environment`, written before anything is sent (or the existing one).

        A failed row (a fault: wrong credentials, a bad file) takes the new XML and becomes pending
        again; a pending row that never went out takes the new XML; anything that may have reached
        SUNAT, or has a CDR, keeps the XML it had. `digest` is the signed document's ds:DigestValue.
        """
        key = (environment, doc.ruc, doc.tipo, doc.serie, doc.numero)
        # A voucher Yupana keeps is sent from its own stored text: no copy, once that text is these very bytes
        ours = voucher_id is not None and self.vouchers.signed_bytes(voucher_id) == xml
        with self.storage.write() as conn:
            xml = NO_COPY if ours else self.vouchers.pack_bytes(conn, f"signed:{doc.ruc}:{doc.tipo}", xml)
            conn.execute(
                "INSERT INTO sunat_submissions (voucher_id, environment, ruc, tipo, serie, numero, ambiente, file_name, "
                "xml, digest_value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (environment, ruc, tipo, serie, numero) DO NOTHING",
                (voucher_id, *key, ambiente_of(environment), doc.stem, xml, digest))
            conn.execute(
                "UPDATE sunat_submissions SET xml = ?, digest_value = ?, state = ?, fault_code = NULL, "
                "next_attempt_at = 0, voucher_id = COALESCE(?, voucher_id), "
                "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
                "WHERE environment = ? AND ruc = ? AND tipo = ? AND serie = ? AND numero = ? "
                "AND (state = ? OR (state = ? AND attempts = 0 AND must_reconcile = 0)) "
                "AND NOT EXISTS (SELECT 1 FROM sunat_cdrs WHERE submission_id = sunat_submissions.id)",
                (xml, digest, PENDING, voucher_id, *key, FAILED, PENDING))
        row = self.storage.query_one(
            "SELECT * FROM sunat_submissions WHERE environment = ? AND ruc = ? AND tipo = ? AND serie = ? AND numero = ?",
            key)
        unpacked = self._unpacked(row)
        assert unpacked is not None  # the row written just above
        return unpacked

    def repair(self) -> int:
        """Derive the states from what is stored: a submission with a CDR is finished and its voucher has the CDR's
        status. A process killed between two writes (the CDR committed, the statuses not yet) leaves them behind;
        the next engine to open the folder puts them right. Returns how many rows it changed."""
        unfinished = [row["id"] for row in self.storage.query(  # through the (state, next_attempt_at) index
            "SELECT s.id FROM sunat_submissions s WHERE s.state IN (?, ?) "
            "AND EXISTS (SELECT 1 FROM sunat_cdrs c WHERE c.submission_id = s.id)", (PENDING, FAILED))]
        for submission_id in unfinished:
            with self.storage.write() as conn:
                conn.execute(
                    "UPDATE sunat_submissions SET state = ?, must_reconcile = 0, claimed_by = NULL, claimed_until = NULL, "
                    "fault_code = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
                    (DONE, submission_id))
        stale = self.storage.query(  # vouchers still on their way (status index) with a CDR stored; the latest wins
            "SELECT v.id, c.estado FROM vouchers v JOIN sunat_submissions s ON s.voucher_id = v.id "
            "JOIN sunat_cdrs c ON c.submission_id = s.id WHERE v.status IN ('enviado', 'pendiente') "
            "AND c.estado IS NOT NULL ORDER BY c.id")
        for row in stale:
            self.vouchers.set_status(row["id"], row["estado"])
        if unfinished or stale:
            log.warning("repaired on open: %s submissions, %s voucher statuses", len(unfinished), len(stale))
        return len(unfinished) + len(stale)

    def submission(self, submission_id: int) -> dict | None:
        return self._unpacked(self.storage.query_one("SELECT * FROM sunat_submissions WHERE id = ?", (submission_id,)))

    def _unpacked(self, row: dict | None) -> dict | None:
        """A stored row with its signed XML or CDR zip unpacked, byte for byte as received (a row stored before
        packing as it is); a submission without a copy takes its voucher's stored signed text."""
        if row is not None:
            if "xml" in row and row["xml"] is not None and len(row["xml"]) == 0 and row.get("voucher_id") is not None:
                row["xml"] = self.vouchers.signed_bytes(row["voucher_id"])
                if row["xml"] is None:  # never expected: a voucher is never deleted nor unsigned
                    raise YupanaError(ErrorCode.INTERNAL, f"El comprobante {row['file_name']} no tiene su XML firmado "
                                                          "guardado: no se puede enviar.")
            for column in ("xml", "cdr_zip"):
                if column in row:
                    row[column] = self.vouchers.unpack_bytes(row[column])
            if row.get("cdr_member") is not None:  # stored as its XML (m005): the zip made again
                row["cdr_zip"] = cdr_reader.rebuild_zip(row["cdr_member"],
                                                        self.vouchers.unpack_bytes(row["cdr_xml"]) or b"")
            row.pop("cdr_xml", None)
        return row

    def stored_cdr(self, submission_id: int) -> cdr_reader.Cdr | None:
        row = self._unpacked(self.storage.query_one("SELECT * FROM sunat_cdrs WHERE submission_id = ?",
                                                    (submission_id,)))
        if row is None:
            return None
        return cdr_reader.Cdr(codigo=row["codigo"], descripcion=row["descripcion"], notas=json.loads(row["notas"]),
                              hash_cdr=row["hash_cdr"], zip=row["cdr_zip"], member=row["cdr_member"] or "")

    def cdr_for_voucher(self, voucher_id: int) -> dict | None:
        """The latest CDR received for a voucher Yupana generated (the detail window shows it), or None."""
        row = self.storage.query_one(
            "SELECT c.codigo, c.descripcion, c.notas, c.estado, c.hash_cdr, c.cdr_zip, c.cdr_xml, c.cdr_member, "
            "c.received_at "
            "FROM sunat_cdrs c JOIN sunat_submissions s ON s.id = c.submission_id "
            "WHERE s.voucher_id = ? ORDER BY c.id DESC LIMIT 1", (voucher_id,))
        row = self._unpacked(row)
        if row is None:
            return None
        row.pop("cdr_member")
        return {**row, "notas": json.loads(row["notas"])}

    def due_ids(self, now: float) -> list[int]:
        """Pending submissions of the current environment whose time has come; the others wait for theirs."""
        rows = self.storage.query(
            "SELECT id FROM sunat_submissions WHERE environment = ? AND state = ? AND next_attempt_at <= ? "
            "ORDER BY next_attempt_at, id", (self.environment(), PENDING, now))
        return [r["id"] for r in rows]

    def next_due_at(self) -> float | None:
        rows = self.storage.query("SELECT MIN(next_attempt_at) AS at FROM sunat_submissions "
                                  "WHERE environment = ? AND state = ?", (self.environment(), PENDING))
        return rows[0]["at"]  # an aggregate has its one row, NULL when nothing is pending

    def pending_by_environment(self) -> dict[str, int]:
        """How many submissions wait in each environment."""
        rows = self.storage.query("SELECT environment, COUNT(*) AS n FROM sunat_submissions WHERE state = ? "
                                    "GROUP BY environment", (PENDING,))
        return {r["environment"]: r["n"] for r in rows}

    # ------------------------------------------------------------ schedule

    def backoff(self, attempts: int) -> float:
        """Exponential with "equal jitter": half fixed, half random, capped."""
        base = float(self.settings.get("sunat_retry_base_s"))
        cap = float(self.settings.get("sunat_retry_max_s"))
        delay = min(cap, base * 2 ** max(0, attempts - 1))
        return delay / 2 + random.uniform(0, delay / 2)

    def lease_seconds(self) -> float:
        return 2 * float(self.settings.get("sunat_timeout_s")) + 15

    def _claim(self, submission_id: int) -> str | None:
        """The lease of one attempt (its owner token), or None while another live attempt holds the row.

        Checked and taken in one IMMEDIATE transaction, so of two attempts (threads or processes) one wins.
        """
        now = self.clock()
        lease = f"{self.owner}:{uuid.uuid4().hex[:8]}"
        with self.storage.write() as conn:
            row = conn.execute("SELECT state, claimed_by, claimed_until FROM sunat_submissions WHERE id = ?",
                               (submission_id,)).fetchone()
            if row is None or row[0] != PENDING:
                return None
            _state, owner, until = row
            if owner and until and until > now and self._holder_alive(owner):
                return None
            conn.execute("UPDATE sunat_submissions SET claimed_by = ?, claimed_until = ? WHERE id = ?",
                         (lease, now + self.lease_seconds(), submission_id))
            with self._leases_lock:
                self._leases.add(lease)
        return lease

    def _holder_alive(self, owner: str) -> bool:
        """Whether the attempt holding a lease may still be running. One of this outbox's own is known exactly
        (an attempt that died with an exception left it behind); another process's, by its process."""
        if owner.startswith(self.owner + ":"):
            with self._leases_lock:
                return owner in self._leases
        return owner_alive(owner)

    def _release(self, lease: str) -> None:
        with self._leases_lock:
            self._leases.discard(lease)

    # ------------------------------------------------------------ one attempt

    def attempt(self, submission_id: int) -> Attempt:
        lease = self._claim(submission_id)
        if lease is None:
            return Attempt("queued", in_flight=True)
        row = self.submission(submission_id)
        assert row is not None
        row["lease"] = lease
        try:
            try:
                client = self.client_factory(row["environment"], row["ruc"])
            except YupanaError as exc:  # no sandbox running, no clave SOL: nothing went out, wait for it
                return self._retry_later(row, row["must_reconcile"], exc.message)
            answer = self._reconcile(client, row) if row["must_reconcile"] else None
            if answer is None and row["must_reconcile"] == HELD_BY_SUNAT:
                answer = self._retry_later(row, HELD_BY_SUNAT, "SUNAT ya tiene el comprobante y su CDR aún no se "
                                                               "pudo consultar")
            if answer is None:
                answer = self._send(client, row)
        except TransportFailure as failure:
            return self._retry_later(row, max(int(failure.may_have_arrived), row["must_reconcile"]), str(failure))
        except YupanaError as exc:  # an unreadable CDR: SUNAT may hold a good one, ask for it later
            return self._retry_later(row, max(1, row["must_reconcile"]), exc.message)
        except Exception as exc:
            log.exception("submission %s: unexpected failure", row["file_name"])
            return self._retry_later(row, max(1, row["must_reconcile"]), type(exc).__name__)
        finally:
            self._release(lease)
            self._notify()
        return answer

    def _send(self, client: SunatClient, row: dict) -> Attempt:
        # Committed before the request leaves: if this process dies now, the next attempt reconciles.
        with self.storage.write() as conn:
            marked = conn.execute(
                "UPDATE sunat_submissions SET attempts = attempts + 1, must_reconcile = 1 "
                "WHERE id = ? AND state = ? AND claimed_by = ?", (row["id"], PENDING, row["lease"])).rowcount
        if not marked:  # the lease ran out and another attempt took the row: it sends, not this one
            return Attempt("queued")
        self._set_voucher_status(row.get("voucher_id"), statuses.ENVIADO)
        zip_name, zip_bytes = zip_document(row["file_name"] + ".xml", row["xml"])
        log.info("sendBill %s (attempt %s)", zip_name, row["attempts"] + 1)
        try:
            cdr_zip = client.send_bill(zip_name, zip_bytes)
        except SoapFault as fault:
            if sunat_codes.is_held_by_sunat(fault.code):  # SUNAT holds it: its CDR, now or later; never a rejection
                held = self._reconcile(client, row, after_fault=fault)
                assert held is not None  # after a fault it ends with the CDR or waits: never "send it"
                return held
            return self._fail(row, fault.code, fault.faultstring)
        # A TransportFailure goes up to `attempt`: its retry replaces the mark above with what may have reached SUNAT.
        return self._store(row, cdr_reader.read_zip(cdr_zip))

    def _reconcile(self, client: SunatClient, row: dict, after_fault: SoapFault | None = None) -> Attempt | None:
        """getStatusCdr: SUNAT's CDR for this voucher if it has one; None means "send it".

        After a 1033 (`after_fault`) SUNAT has the voucher: without its CDR the row waits and asks again later.
        """
        log.info("getStatusCdr %s", row["file_name"])
        try:
            status = client.get_status_cdr(row["ruc"], row["tipo"], row["serie"], int(row["numero"]))
        except SoapFault as fault:  # e.g. no look-up service for beta: fall back to sending
            log.info("getStatusCdr %s answered fault %s", row["file_name"], fault.code)
            if after_fault is not None:
                return self._retry_later(row, HELD_BY_SUNAT, f"SUNAT ya tiene el comprobante ({after_fault.code}) "
                                                             f"y la consulta de su CDR falló ({fault.code})")
            return None
        if status.content:
            return self._store(row, cdr_reader.read_zip(status.content))
        if after_fault is not None:
            return self._retry_later(row, HELD_BY_SUNAT, f"SUNAT ya tiene el comprobante ({after_fault.code}) y "
                                                         "aún no entrega su CDR")
        return None

    # ------------------------------------------------------------ endings

    def _store(self, row: dict, answer: cdr_reader.Cdr) -> Attempt:
        """The CDR and the row's end in one transaction; the voucher's status follows."""
        if answer.estado is None:  # 0100-1999 in a CDR: an exception, the number is not used up
            return self._fail(row, answer.codigo, answer.descripcion)
        with self.storage.write(durable=True) as conn:  # a CDR is what a power cut must never take
            conn.execute(
                "INSERT INTO sunat_cdrs (submission_id, codigo, descripcion, notas, estado, hash_cdr, cdr_zip, cdr_xml, "
                "cdr_member) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (submission_id) DO NOTHING",
                (row["id"], answer.codigo, answer.descripcion, json.dumps(answer.notas, ensure_ascii=False),
                 answer.estado, answer.hash_cdr, b"",  # the zip is made again when read (m005)
                 self.vouchers.pack_bytes(conn, f"cdr-xml:{row['environment']}", answer.xml), answer.member))
            conn.execute(
                "UPDATE sunat_submissions SET state = ?, must_reconcile = 0, claimed_by = NULL, claimed_until = NULL, "
                "fault_code = NULL, last_error = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
                "WHERE id = ?", (DONE, row["id"]))
        stored = self.stored_cdr(row["id"])  # the first CDR stored stays the answer
        assert stored is not None
        self._set_voucher_status(row.get("voucher_id"), stored.estado)
        log.info("CDR %s: %s %s", row["file_name"], stored.codigo, stored.estado)
        self.events.emit(SunatCdrStored(row["file_name"], stored.codigo, stored.estado or ""))
        return Attempt("cdr", cdr=stored)

    def _set_voucher_status(self, voucher_id: int | None, status: str | None) -> None:
        """Mirror the submission on the voucher (after the CDR is safe: a failure here loses nothing)."""
        if voucher_id is None or status is None:
            return
        try:
            self.vouchers.set_status(voucher_id, status)
        except YupanaError as exc:
            log.warning("voucher %s: status %s not recorded: %s", voucher_id, status, exc.message)

    def _fail(self, row: dict, code: str, text: str) -> Attempt:
        """A fault (SUNAT's `code` and `text`, from a SOAP fault or a CDR with an exception code) ends a row only while
        it is pending, without a CDR, and (for an attempt) still its own."""
        with self.storage.write() as conn:
            changed = conn.execute(
                "UPDATE sunat_submissions SET state = ?, must_reconcile = 0, claimed_by = NULL, claimed_until = NULL, "
                "fault_code = ?, last_error = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
                "WHERE id = ? AND state = ? AND (? IS NULL OR claimed_by = ?) "
                "AND NOT EXISTS (SELECT 1 FROM sunat_cdrs WHERE submission_id = sunat_submissions.id)",
                (FAILED, code, text[:500], row["id"], PENDING, row.get("lease"),
                 row.get("lease"))).rowcount
        if not changed:  # finished by another attempt meanwhile: its answer stands
            stored = self.stored_cdr(row["id"])
            log.info("submission %s: fault %s ignored, the row was finished meanwhile", row["file_name"], code)
            return Attempt("cdr", cdr=stored) if stored is not None else Attempt("queued")
        log.info("submission %s: SUNAT fault %s", row["file_name"], code)
        return Attempt("fault", fault_code=code, fault_text=text)

    def _retry_later(self, row: dict, must_reconcile: int, reason: str) -> Attempt:
        current = self.submission(row["id"]) or row
        delay = self.backoff(max(1, current["attempts"]))
        with self.storage.write() as conn:
            changed = conn.execute(
                "UPDATE sunat_submissions SET must_reconcile = ?, next_attempt_at = ?, claimed_by = NULL, "
                "claimed_until = NULL, last_error = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
                "WHERE id = ? AND state = ? AND claimed_by = ?",
                (int(must_reconcile), self.clock() + delay, reason[:500], row["id"], PENDING, row["lease"])).rowcount
        if not changed:  # finished, or taken over, meanwhile: leave it to what happened there
            stored = self.stored_cdr(row["id"])
            return Attempt("cdr", cdr=stored) if stored is not None else Attempt("queued")
        self._set_voucher_status(row.get("voucher_id"), statuses.PENDIENTE)
        log.info("submission %s queued: %s; next try in %.2f s", row["file_name"], reason, delay)
        self.wake()
        return Attempt("queued")

    # ------------------------------------------------------------ waiting for an end

    def _notify(self) -> None:
        with self._settled:
            self._settled.notify_all()

    def wait_settled(self, submission_id: int, timeout: float) -> dict | None:
        """Block until the submission is no longer pending or `timeout` passes; returns its row."""
        deadline = time.monotonic() + timeout
        with self._settled:
            while True:
                row = self.submission(submission_id)
                left = deadline - time.monotonic()
                if row is None or row["state"] != PENDING or left <= 0:
                    return row
                self._settled.wait(min(left, 0.5))  # other processes finish rows too: look again now and then

    # ------------------------------------------------------------ the worker thread

    def start_if_pending(self) -> None:
        if self.next_due_at() is not None:
            self.start()

    def start(self) -> None:
        with self._thread_lock:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._run, name="sunat-outbox", daemon=True)
                self._thread.start()

    def wake(self) -> None:
        self.start()
        self._wake.set()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                for submission_id in self.due_ids(self.clock()):
                    if self._stop.is_set():
                        return
                    self.attempt(submission_id)
                wait = self._seconds_to_next()
            except Exception:
                if self._stop.is_set():
                    return
                log.exception("outbox worker round failed")
                wait = 5.0
            self._wake.wait(wait)
            self._wake.clear()

    def _seconds_to_next(self) -> float:
        at = self.next_due_at()
        if at is None:
            return 300.0
        # a row claimed by someone else stays due: look again once its lease could have run out
        return max(0.05, min(300.0, at - self.clock()) if at > self.clock() else 0.25)
