"""The durable outbox of submissions to SUNAT, and the background worker that finishes them.

Every submission is written to the database before anything is sent. One attempt (by the caller
of operation 3, or later by the worker) is:
1. claim the row: a lease whose owner is this one attempt (host, process id and a random token), so two
   attempts never send the same voucher at once, whether they run on two computers sharing the database, in two
   processes or in two threads of one (the worker thread and a caller of operation 3). The lease's expiry is
   written and compared with the database's clock, never a process's, and it is renewed every third of its length
   while the attempt runs, so a slow SUNAT answer never lets another holder take the row; an attempt that died on
   this host is taken over at once, another host's only once its lease ran out;
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

One path per boleta: a voucher a resumen diario reports (a line with status 1, in a RC pending or accepted) is not
queued here, checked in the transaction that writes the row; the resumen diario checks the rows in the transaction
that writes its lines (app.core.invoicing.voids.book), so of the two, the first to commit decides. Both hold the
voucher (VoucherStore.hold_paths: its row locked on PostgreSQL) before they check, so on several desks the second
waits for the first's commit and then sees its choice.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from lxml import etree

from app.core.errors import ErrorCode, YupanaError, conflict
from app.core.invoicing import cdr as cdr_reader
from app.core.invoicing import statuses, sunat_codes
from app.core.invoicing.documents import registry
from app.core.invoicing.documents.kind import Channel
from app.core.invoicing.namespaces import DS
from app.core.invoicing.soap import SoapFault, SunatClient, TransportFailure, zip_document
from app.core.invoicing.ubl_identity import DocumentId
from app.core.invoicing.voucher_store import VoucherStore
from app.core.platform.environments import ambiente_of
from app.core.platform.events import EventBus, SunatCdrStored
from app.core.platform.loops import BackgroundLoop
from app.core.platform.processes import owner_alive, owner_of_this_process
from app.core.platform.settings import Settings
from app.core.storage.ports.database import Database
from app.core.storage.ports.submissions import SubmissionRepository
from app.core.storage.ports.summaries import SummaryRepository

log = logging.getLogger(__name__)


# "registrado previamente" (1033) and "... rechazado previamente" (1032): SUNAT has it; fetch its CDR, never
# resend blindly, never report it as a rejection.
# must_reconcile: 0 nothing may have reached SUNAT; 1 something may have (ask before sending); HELD_BY_SUNAT it
# answered 1033/1032, so it has the voucher: only ask, never send again.
HELD_BY_SUNAT = 2
PENDING, DONE, FAILED = statuses.SUBMISSION_PENDING, statuses.SUBMISSION_DONE, statuses.SUBMISSION_FAILED


# The `xml` of a submission of a voucher Yupana keeps (voucher_id not NULL): no copy, the voucher's own stored signed
# text is what is sent (docs/vouchers.md, «Muchos comprobantes»). A foreign voucher's submission keeps its copy.
NO_COPY = b""

OwnText = tuple[int, bytes]  # (voucher id, its signed text as stored): what a caller that just read or signed it holds


@dataclass(frozen=True)
class Attempt:
    """How one attempt ended: `cdr`, `fault` (code, text) or `queued` (retry later or in progress)."""

    kind: str
    cdr: cdr_reader.Cdr | None = None
    fault_code: str = ""
    fault_text: str = ""
    in_flight: bool = False  # queued because another attempt holds the row (it may be sending right now)


@dataclass(frozen=True)
class Held:
    """A submission written by `Outbox.hold_new`, claimed and marked as sending: its row as written, with its lease."""

    row: dict


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
    """The outbox of one engine: attempts, retry schedule and the worker (a background loop)."""

    def __init__(self, database: Database, submissions: SubmissionRepository, settings: Settings, events: EventBus,
                 vouchers: VoucherStore, environment: Callable[[], str],
                 client_factory: Callable[[str, str], SunatClient], clock: Callable[[], float] = time.time,
                 owner: str | None = None, summaries: SummaryRepository | None = None) -> None:
        self.storage = database  # the unit of work
        self.submissions = submissions
        self.summaries = summaries  # the RA/RC: a boleta a resumen diario reports is not sent alone
        self.settings = settings
        self.events = events
        self.vouchers = vouchers
        self.environment = environment  # the environment in use: only its pending submissions are worked on
        self.client_factory = client_factory  # (environment, ruc) -> SunatClient at that environment's addresses
        self.clock = clock  # the retry schedule's clock (next_attempt_at); leases are on the database's
        # «<host>/<pid>:<token>»: each attempt's lease adds its own token (`owner` given: another identity, for tests)
        self.owner = owner or owner_of_this_process(uuid.uuid4().hex[:12])
        self._worker = BackgroundLoop("sunat-outbox", self._work_round, what="outbox worker", logger=log)
        self._settled = threading.Condition()
        self._leases: set[str] = set()  # this outbox's attempts under way (their lease tokens)
        self._leases_lock = threading.Lock()
        self._keeper = _LeaseKeeper(self.submissions.renew_lease, lambda: self.lease_seconds())
        self.repair()

    # ------------------------------------------------------------ rows

    def enqueue(self, doc: DocumentId, xml: bytes, environment: str, voucher_id: int | None,
                digest: str | None = None, own: bool = False) -> dict:
        """The submission of this voucher in `environment`, written before anything is sent (or the existing one).

        A failed row (a fault: wrong credentials, a bad file) takes the new XML and becomes pending
        again; a pending row that never went out takes the new XML; anything that may have reached
        SUNAT, or has a CDR, keeps the XML it had. `digest` is the signed document's ds:DigestValue. `own`: the
        caller knows `xml` is the voucher's own stored signed text (it just read or signed it), so it is not read
        again to be compared.
        """
        key = (environment, doc.ruc, doc.tipo, doc.serie, doc.numero)
        # A voucher Yupana keeps is sent from its own stored text: no copy, once that text is these very bytes
        ours = voucher_id is not None and (own or self.vouchers.signed_bytes(voucher_id) == xml)
        with self.storage.transaction():
            self._check_one_path(doc, voucher_id)
            stored = NO_COPY if ours else self.vouchers.pack_bytes(f"signed:{doc.ruc}:{doc.tipo}", xml)
            self.submissions.enqueue(*key, voucher_id=voucher_id, ambiente=ambiente_of(environment),
                                     file_name=doc.stem, xml=stored, digest=digest)
        row = self.submissions.find(*key)
        unpacked = self._unpacked(row, (voucher_id, xml) if ours and voucher_id is not None else None)
        assert unpacked is not None  # the row written just above
        return unpacked

    def _new_lease(self) -> str:
        """A lease of this outbox, known alive (`_holder_alive`) from now until `_release`."""
        lease = f"{self.owner}:{uuid.uuid4().hex[:8]}"
        with self._leases_lock:
            self._leases.add(lease)
        return lease

    def hold_new(self, doc: DocumentId, voucher_id: int, environment: str, digest: str, xml: bytes) -> Held | None:
        """The submission of a voucher stored in the caller's transaction this very moment («Emitir»), written there
        too, claimed by a new lease of this outbox and marked as sending: the voucher, its row and the mark that
        something may reach SUNAT commit together, once; `send_held` then posts it. None, and nothing written, when
        the serie-número has a submission already (a foreign voucher sent through operation 3 before): the caller
        goes through `enqueue` and `attempt` after its commit. A caller whose transaction fails calls `let_go`.

        No resumen diario can report a voucher that did not exist before this transaction: the one-path check of
        `enqueue` has nothing to find."""
        lease = self._new_lease()
        submission_id = self.submissions.enqueue_sending(
            environment, doc.ruc, doc.tipo, doc.serie, doc.numero, voucher_id=voucher_id,
            ambiente=ambiente_of(environment), file_name=doc.stem, xml=NO_COPY, digest=digest, owner=lease,
            seconds=self.lease_seconds())
        if submission_id is None:
            self._release(lease)
            return None
        # The row as written, kept in memory (never read back). `must_reconcile` and `attempts` as they were before
        # this attempt's mark, as `attempt` reads them: a failure that surely reached nothing needs no look-up.
        return Held({"id": submission_id, "voucher_id": voucher_id, "environment": environment, "ruc": doc.ruc,
                     "tipo": doc.tipo, "serie": doc.serie, "numero": doc.numero, "file_name": doc.stem, "xml": xml,
                     "must_reconcile": 0, "attempts": 0, "lease": lease})

    def let_go(self, held: Held) -> None:
        """Forget a held submission whose transaction did not commit."""
        self._release(held.row["lease"])

    def send_held(self, held: Held, channel: Channel) -> Attempt:
        """Post a held submission through `channel` (built for it), its ending stored as any attempt's."""
        return self._run(held.row, channel, lambda chosen: self._post(chosen, held.row))

    def _check_one_path(self, doc: DocumentId, voucher_id: int | None) -> None:
        """Refuse a voucher a resumen diario reports (inside the transaction that queues it: see the module's doc)."""
        if voucher_id is None or self.summaries is None:
            return
        self.vouchers.hold_paths([voucher_id])  # a resumen diario choosing it on another desk commits first, or waits
        ident = self.summaries.reported_by([voucher_id]).get(voucher_id)
        if ident is not None:
            raise conflict("voucher_id", f"El comprobante {doc.serie}-{doc.numero} va en el resumen diario {ident}, que "
                                         "lo informa a SUNAT: no se envía también solo (un comprobante llega a SUNAT "
                                         "por un solo camino).")

    def repair(self) -> int:
        """Derive the states from what is stored: a submission with a CDR is finished and its voucher has the CDR's
        status. A process killed between two writes (the CDR committed, the statuses not yet) leaves them behind;
        the next engine to open the folder puts them right. Returns how many rows it changed."""
        unfinished = self.submissions.unfinished_with_cdr()
        for submission_id in unfinished:
            self.submissions.finish(submission_id)
        # Vouchers still on their way (the voucher store's status index) with a CDR stored; the latest CDR wins.
        on_their_way = self.vouchers.ids_in_status(statuses.ENVIADO, statuses.PENDIENTE)
        stale = self.submissions.cdr_states_of_vouchers(on_their_way) if on_their_way else []
        for voucher_id, estado in stale:
            self.vouchers.set_status(voucher_id, estado)
        if unfinished or stale:
            log.warning("repaired on open: %s submissions, %s voucher statuses", len(unfinished), len(stale))
        return len(unfinished) + len(stale)

    def submission(self, submission_id: int) -> dict | None:
        return self._unpacked(self.submissions.get(submission_id))

    def _unpacked(self, row: dict | None, own: OwnText | None = None) -> dict | None:
        """A stored row with its signed XML or CDR zip unpacked, byte for byte as received (a row stored before
        packing as it is); a submission without a copy takes its voucher's stored signed text (`own`'s, when the
        caller holds it)."""
        if row is not None:
            if "xml" in row and row["xml"] is not None and len(row["xml"]) == 0 and row.get("voucher_id") is not None:
                held = own is not None and own[0] == row["voucher_id"]
                row["xml"] = own[1] if own is not None and held else self.vouchers.signed_bytes(row["voucher_id"])
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
        row = self._unpacked(self.submissions.cdr(submission_id))
        if row is None:
            return None
        return cdr_reader.Cdr(codigo=row["codigo"], descripcion=row["descripcion"], notas=json.loads(row["notas"]),
                              hash_cdr=row["hash_cdr"], zip=row["cdr_zip"], member=row["cdr_member"] or "")

    def cdr_for_voucher(self, voucher_id: int) -> dict | None:
        """The latest CDR received for a voucher Yupana generated (the detail window shows it), or None."""
        row = self._unpacked(self.submissions.latest_cdr_of_voucher(voucher_id))
        if row is None:
            return None
        row.pop("cdr_member")
        return {**row, "notas": json.loads(row["notas"])}

    def due_ids(self, now: float) -> list[int]:
        """Pending submissions of the current environment whose time has come; the others wait for theirs."""
        return self.submissions.due(self.environment(), now)

    def next_due_at(self) -> float | None:
        return self.submissions.next_due_at(self.environment())

    def pending_by_environment(self) -> dict[str, int]:
        """How many submissions wait in each environment."""
        return self.submissions.pending_by_environment()

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

        A lease runs until the database's clock passes its expiry; a running one is taken over only when its
        holder is known to be dead (an attempt of this outbox that ended, a process of this host that is gone).
        The claim itself is one compare-and-set statement, so of two attempts (threads, processes, hosts) one wins.
        """
        lease = f"{self.owner}:{uuid.uuid4().hex[:8]}"
        with self.storage.transaction():
            current = self.submissions.lease(submission_id)
            if current is None or current.state != PENDING:
                return None
            if current.running and current.owner and self._holder_alive(current.owner):
                return None
            replacing = current.owner if current.running else None  # a dead holder's lease, still running
            if not self.submissions.claim(submission_id, lease, self.lease_seconds(), replacing):
                return None
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
        self._keeper.let_go(lease)
        with self._leases_lock:
            self._leases.discard(lease)

    # ------------------------------------------------------------ one attempt

    def attempt(self, submission_id: int, channel: Channel | None = None, own: OwnText | None = None) -> Attempt:
        """One attempt at a submission: through `channel` when the caller built it for this very submission (one
        client per «Emitir»), else through its document type's sender; `own`: the voucher's signed text the caller
        holds (not read again)."""
        lease = self._claim(submission_id)
        if lease is None:
            return Attempt("queued", in_flight=True)
        row = self._unpacked(self.submissions.get(submission_id), own)
        assert row is not None
        row["lease"] = lease
        return self._run(row, channel, lambda chosen: self._reconcile_or_send(chosen, row))

    def _reconcile_or_send(self, channel: Channel, row: dict) -> Attempt:
        """An attempt's steps: ask SUNAT first when something may have reached it, else send."""
        answer = self._reconcile(channel, row) if row["must_reconcile"] else None
        if answer is None and row["must_reconcile"] == HELD_BY_SUNAT:
            answer = self._retry_later(row, HELD_BY_SUNAT, "SUNAT ya tiene el comprobante y su CDR aún no se "
                                                           "pudo consultar")
        return answer if answer is not None else self._send(channel, row)

    def _run(self, row: dict, channel: Channel | None, steps: Callable[[Channel], Attempt]) -> Attempt:
        """`steps` of an attempt holding the row's lease (`row["lease"]`), through `channel` or the row's own; its
        failures end as retries, and the lease is let go at the end."""
        self._keeper.hold(row["id"], row["lease"])  # renewed while the attempt runs (a slow SUNAT answer included)
        try:
            try:
                channel = channel or self.channel_for(row)
            except YupanaError as exc:  # no sandbox running, no clave SOL: nothing went out, wait for it
                return self._retry_later(row, row["must_reconcile"], exc.message)
            answer = steps(channel)
        except TransportFailure as failure:
            return self._retry_later(row, max(int(failure.may_have_arrived), row["must_reconcile"]), str(failure))
        except YupanaError as exc:  # an unreadable CDR: SUNAT may hold a good one, ask for it later
            return self._retry_later(row, max(1, row["must_reconcile"]), exc.message)
        except Exception as exc:
            log.exception("submission %s: unexpected failure", row["file_name"])
            return self._retry_later(row, max(1, row["must_reconcile"]), type(exc).__name__)
        finally:
            self._release(row["lease"])
            self._notify()
        return answer

    def channel_for(self, row: dict) -> Channel:
        """The channel of a submission: its document type's sender, for the submission's environment and RUC
        (SUNAT's types: a SUNAT client from `client_factory`)."""
        return registry.sender_for(row["tipo"]).channel(self.client_factory, row["environment"], row["ruc"])

    def _send(self, channel: Channel, row: dict) -> Attempt:
        # Committed before the request leaves: if this process dies now, the next attempt reconciles.
        if not self.submissions.mark_sending(row["id"], row["lease"]):
            # The lease ran out and another attempt took the row: it sends, not this one.
            return Attempt("queued")
        self._set_voucher_status(row.get("voucher_id"), statuses.ENVIADO)
        return self._post(channel, row)

    def _post(self, channel: Channel, row: dict) -> Attempt:
        """The document to SUNAT, the attempt marked (committed) as sending before; its answer stored."""
        xml_name = row["file_name"] + ".xml"
        name, content = zip_document(xml_name, row["xml"]) if channel.zipped else (xml_name, row["xml"])
        log.info("%s %s (attempt %s)", channel.send_operation, name, row["attempts"] + 1)
        try:
            answer = channel.send_document(name, content)
        except SoapFault as fault:
            if sunat_codes.is_held_by_sunat(fault.code):  # SUNAT holds it: its CDR, now or later; never a rejection
                held = self._reconcile(channel, row, after_fault=fault)
                assert held is not None  # after a fault it ends with the CDR or waits: never "send it"
                return held
            return self._fail(row, fault.code, fault.faultstring)
        # A TransportFailure goes up to `attempt`: its retry replaces the mark above with what may have reached SUNAT.
        return self._store(row, answer)

    def _reconcile(self, channel: Channel, row: dict, after_fault: SoapFault | None = None) -> Attempt | None:
        """getStatusCdr (or the channel's look-up): the receiver's CDR for this voucher if it has one; None means
        "send it".

        After a 1033 (`after_fault`) SUNAT has the voucher: without its CDR the row waits and asks again later.
        """
        log.info("%s %s", channel.status_operation, row["file_name"])
        try:
            answer = channel.document_cdr(row["ruc"], row["tipo"], row["serie"], int(row["numero"]))
        except SoapFault as fault:  # e.g. no look-up service for beta: fall back to sending
            log.info("%s %s answered fault %s", channel.status_operation, row["file_name"], fault.code)
            if after_fault is not None:
                return self._retry_later(row, HELD_BY_SUNAT, f"SUNAT ya tiene el comprobante ({after_fault.code}) "
                                                             f"y la consulta de su CDR falló ({fault.code})")
            return None
        if answer is not None:
            return self._store(row, answer)
        if after_fault is not None:
            return self._retry_later(row, HELD_BY_SUNAT, f"SUNAT ya tiene el comprobante ({after_fault.code}) y "
                                                         "aún no entrega su CDR")
        return None

    # ------------------------------------------------------------ endings

    def _store(self, row: dict, answer: cdr_reader.Cdr) -> Attempt:
        """The CDR and the row's end in one transaction; the voucher's status follows."""
        if answer.estado is None:  # 0100-1999 in a CDR: an exception, the number is not used up
            return self._fail(row, answer.codigo, answer.descripcion)
        voucher_id, estado = row.get("voucher_id"), answer.estado
        with self.vouchers.keeping(), self.storage.transaction(durable=True):  # a CDR: what a power cut must not take
            kept = self.submissions.store_cdr(  # kept as its XML: the zip is made again when read (m005)
                row["id"], codigo=answer.codigo, descripcion=answer.descripcion,
                notas=json.dumps(answer.notas, ensure_ascii=False), estado=answer.estado, hash_cdr=answer.hash_cdr,
                cdr_xml=self.vouchers.pack_bytes(f"cdr-xml:{row['environment']}", answer.xml), member=answer.member)
            mirrored = kept and self._write_voucher_status(voucher_id, estado)
        if kept:  # the answer as `stored_cdr` would read it (its zip made again), without reading it back
            stored = cdr_reader.Cdr(codigo=answer.codigo, descripcion=answer.descripcion, notas=list(answer.notas),
                                    hash_cdr=answer.hash_cdr, zip=cdr_reader.rebuild_zip(answer.member, answer.xml),
                                    member=answer.member)
        else:  # the first CDR stored stays the answer
            found = self.stored_cdr(row["id"])
            assert found is not None
            stored = found
            self._set_voucher_status(voucher_id, stored.estado)
        if mirrored and voucher_id is not None:
            self.vouchers.on_change(voucher_id, estado)
        log.info("CDR %s: %s %s", row["file_name"], stored.codigo, stored.estado)
        self.events.emit(SunatCdrStored(row["file_name"], stored.codigo, stored.estado or ""))
        return Attempt("cdr", cdr=stored)

    def _write_voucher_status(self, voucher_id: int | None, status: str) -> bool:
        """The voucher's status with its CDR, in the CDR's transaction (one commit; a kill in between loses both and
        the next attempt asks SUNAT). A status refused is warned, and the CDR kept: whether it was written."""
        if voucher_id is None:
            return False
        try:
            return self.vouchers.write_status(voucher_id, status)  # one statement: refused, it wrote nothing
        except YupanaError as exc:
            log.warning("voucher %s: status %s not recorded: %s", voucher_id, status, exc.message)
            return False

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
        if not self.submissions.fail(row["id"], code=code, text=text[:500], owner=row.get("lease")):
            # Finished by another attempt meanwhile: its answer stands.
            stored = self.stored_cdr(row["id"])
            log.info("submission %s: fault %s ignored, the row was finished meanwhile", row["file_name"], code)
            return Attempt("cdr", cdr=stored) if stored is not None else Attempt("queued")
        log.info("submission %s: SUNAT fault %s", row["file_name"], code)
        if sunat_codes.is_rejection(code):  # 2000-3999 as a fault: rejected, the number spent (no CDR to store)
            self._set_voucher_status(row.get("voucher_id"), statuses.RECHAZADO)
        return Attempt("fault", fault_code=code, fault_text=text)

    def _retry_later(self, row: dict, must_reconcile: int, reason: str) -> Attempt:
        current = self.submission(row["id"]) or row
        delay = self.backoff(max(1, current["attempts"]))
        if not self.submissions.retry_later(row["id"], owner=row["lease"], must_reconcile=int(must_reconcile),
                                            next_attempt_at=self.clock() + delay, reason=reason[:500]):
            # Finished, or taken over, meanwhile: leave it to what happened there.
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

    # ------------------------------------------------------------ the worker (app.core.platform.loops)

    def start_if_pending(self) -> None:
        if self.next_due_at() is not None:
            self.start()

    def start(self) -> None:
        self._worker.start()

    def wake(self) -> None:
        self._worker.wake()

    def stop(self, timeout: float = 5.0) -> None:
        self._worker.stop(timeout)
        self._keeper.stop(timeout)

    def _work_round(self) -> float:
        """One round of the worker: every due submission attempted; then the wait until the next one is due."""
        for submission_id in self.due_ids(self.clock()):
            if self._worker.stopping:
                return 0.0
            self.attempt(submission_id)
        return self._seconds_to_next()

    def _seconds_to_next(self) -> float:
        at = self.next_due_at()
        if at is None:
            return 300.0
        # a row claimed by someone else stays due: look again once its lease could have run out
        return max(0.05, min(300.0, at - self.clock()) if at > self.clock() else 0.25)


class _LeaseKeeper:
    """Renews the leases of an outbox's attempts while they run: each one every third of the lease's length, so an
    attempt waiting on a slow SUNAT keeps its row however long the answer takes. One background loop per outbox,
    started with the first lease. Holding a lease never wakes it (an «Emitir» holds one for each send, and a wake
    cost the sender a thread switch and a settings read at the moment it zips and posts): the loop looks at the held
    leases at least every third of a lease, held or not, so a new lease is renewed on time all the same.

    `renew(submission_id, lease, seconds)` extends a lease on the database's clock (False once it is no longer this
    attempt's: finished, or taken over after this process stalled past its expiry); `seconds()` is the lease's length.
    The schedule itself runs on this process's monotonic clock: it only says when to renew, never whether a lease
    holds."""

    def __init__(self, renew: Callable[[int, str, float], bool], seconds: Callable[[], float]) -> None:
        self._renew = renew
        self._seconds = seconds
        self._held: dict[str, tuple[int, float]] = {}  # lease → (submission id, when it was last written: monotonic)
        self._changed = threading.Condition()  # guards `_held` and `renewals`; notified when they change
        self._loop = BackgroundLoop("sunat-outbox-leases", self._renew_due, what="lease keeper", logger=log)
        self.renewals = 0  # leases renewed so far (tests wait on it)

    def hold(self, submission_id: int, lease: str) -> None:
        if self._loop.stopping:
            return
        with self._changed:
            self._held[lease] = (submission_id, time.monotonic())
            self._changed.notify_all()
        self._loop.start()  # with the first lease; it looks again before this one is due (`_renew_due`)

    def let_go(self, lease: str) -> None:
        with self._changed:
            self._held.pop(lease, None)
            self._changed.notify_all()

    def stop(self, timeout: float = 5.0) -> None:
        self._loop.stop(timeout)

    def _renew_due(self) -> float:
        """One round: the leases due renewed; the seconds until the next one is due, and at most a third of a lease
        (a lease held meanwhile is due no earlier: it is renewed on time without a wake)."""
        every = max(0.05, self._seconds() / 3)  # read outside the lock: a setting
        with self._changed:
            now = time.monotonic()
            due = [(lease, submission_id) for lease, (submission_id, at) in self._held.items() if now - at >= every]
        if due:
            seconds = self._seconds()
            for lease, submission_id in due:
                self._renew_one(lease, submission_id, seconds)
        with self._changed:
            now = time.monotonic()
            return min((at + every - now for _id, at in self._held.values()), default=every)

    def _renew_one(self, lease: str, submission_id: int, seconds: float) -> None:
        kept: bool | None
        try:
            kept = self._renew(submission_id, lease, seconds)
        except Exception:  # the database is busy or gone: try again a third of a lease later
            log.warning("renewing the lease of submission %s failed", submission_id, exc_info=True)
            kept = None
        with self._changed:
            if lease not in self._held:
                return  # its attempt ended meanwhile
            if kept is not False:  # renewed, or to be tried again a third of a lease later
                self._held[lease] = (submission_id, time.monotonic())
                if kept:
                    self.renewals += 1
            else:  # finished, or taken over: nothing left to keep
                log.info("submission %s: its lease %s is no longer this attempt's", submission_id, lease)
                del self._held[lease]
            self._changed.notify_all()
