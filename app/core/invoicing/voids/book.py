"""The stored RA and RC: numbered `RA-YYYYMMDD-N` / `RC-YYYYMMDD-N` per environment, issuer and day, built, signed
with the issuer's default certificate and stored before anything is sent; sent (sendSummary: the ticket written
durably at once); SUNAT's answer recorded once; read back as outcomes. The summary repository holds the rows, the
database is the unit of work, the voucher store packs and unpacks the texts."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

from app.core.errors import conflict, not_found
from app.core.invoicing import cdr as cdr_module
from app.core.invoicing import summaries, sunat_errors
from app.core.invoicing.certificates import CertificateStore
from app.core.invoicing.signing import check_certificate, no_default_certificate
from app.core.invoicing.soap import SoapFault, TransportFailure, zip_document
from app.core.invoicing.statuses import BAJA_POR_CONFIRMAR, SUBMISSION_FAILED, SUBMISSION_PENDING
from app.core.invoicing.voids.rules import (
    ALREADY_RECEIVED,
    SummaryOutcome,
    VoucherOutcome,
    document_name,
    summary_line,
    ticket_named,
)
from app.core.invoicing.voucher_keys import now_text
from app.core.invoicing.voucher_store import VoucherStore
from app.core.invoicing.xmldsig import sign_xml
from app.core.platform.settings import Settings
from app.core.storage.ports.database import Database
from app.core.storage.ports.submissions import SubmissionRepository
from app.core.storage.ports.summaries import SummaryEntry, SummaryRepository

log = logging.getLogger(__name__)

Lines = list[tuple[dict, str, str]]  # (voucher row, motivo, condition) of each line of a summary


def stored_zip(store: VoucherStore, row: dict) -> bytes | None:
    """A stored CDR's zip: made again from its XML (m004), or the zip stored before as it is."""
    if row["cdr_member"] is not None:
        return cdr_module.rebuild_zip(row["cdr_member"], store.unpack_bytes(row["cdr_xml"]) or b"")
    return row["cdr_zip"]


class SummaryBook:
    """The RA and RC of one engine, from their preparation to SUNAT's answer (see the module's doc)."""

    def __init__(self, store: VoucherStore, repository: SummaryRepository, database: Database, settings: Settings,
                 clients: Callable[[str, str], Any], certificates: CertificateStore,
                 issuer_name: Callable[[str], str | None], today: Callable[[], dt.date],
                 on_change: Callable[[dict[str, Any]], None], submissions: SubmissionRepository | None = None) -> None:
        self.store = store
        self.repository = repository  # the summaries
        self.submissions = submissions  # the outbox's rows: a boleta sent alone is not added to a resumen diario
        self.storage = database  # the unit of work
        self.settings = settings
        self.clients = clients  # SunatClients: (environment, ruc) → soap.SunatClient
        self.certificates = certificates
        self.issuer_name = issuer_name
        self.today = today
        self.on_change = on_change  # told {id, ident, state, ticket} whenever a summary changes (the engine's event)

    # ------------------------------------------------------------ prepared

    def prepare(self, kind: str, ruc: str, reference_date: dt.date, rows: Lines) -> int | None:
        """Number, build, sign and store the summary (durably, before it is sent); its id. One path per boleta: a line
        adding a boleta (status 1) that has a submission — sent alone, or queued to be — is left out, checked in the
        transaction that stores the lines (the outbox checks the lines in the one that queues); None when that left
        no line."""
        info = self.certificates.default_for(ruc)
        if info is None:
            raise no_default_certificate(ruc)
        check_certificate(info, ruc)
        _, key, certificate = self.certificates.for_signing(info.certificado_id)
        issuer = summaries.Issuer(ruc, self.issuer_name(ruc) or ruc)
        issued = self.today()
        environment = self.store.environment()
        with self.storage.transaction(durable=True):
            # The day's counter first: its row stays locked to the commit, so two «Anular» at once, on one desk or
            # two, make their summaries one after the other, and the check below sees the one stored before.
            counter = self.repository.take_counter(environment, ruc, kind, issued.isoformat())
            # The vouchers held before anything is checked: a desk queuing one of them alone commits first, or waits for
            # this commit (one path per boleta, app.core.invoicing.outbox).
            self.store.hold_paths([r["id"] for r, _, _ in rows])
            # Checked again inside the transaction: two «Anular» at once make one summary.
            taken = self.repository.first_pending_line([r["id"] for r, _, _ in rows])
            if taken is not None:
                raise conflict("voucher_id", f"El comprobante {taken[0]}-{taken[1]} ya está en {taken[2]}, que espera "
                                             "la respuesta de SUNAT.")
            rows = self._not_sent_alone(rows)
            if not rows:
                return None
            ident = summaries.summary_id(kind, issued, counter)
            if kind == "RA":
                xml = summaries.build_voided(issuer, ident, reference_date, issued,
                                             [summaries.VoidLine(r["tipo"], r["serie"], int(r["numero"]), m)
                                              for r, m, _ in rows])
            else:
                xml = summaries.build_summary(issuer, ident, reference_date, issued, [summary_line(r, c) for r, _, c in rows])
            signed = sign_xml(xml, key, certificate).xml
            summary_id = self.repository.add(
                environment=environment, emisor_ruc=ruc, kind=kind, ident=ident, issue_date=issued.isoformat(),
                counter=counter, reference_date=reference_date.isoformat(), xml_firmado=signed.decode("utf-8"),
                lines=[SummaryEntry(r["id"], r["tipo"], r["serie"], int(r["numero"]), c, m) for r, m, c in rows])
        log.info("summary %s prepared for %d voucher(s)", ident, len(rows))
        self.changed(summary_id)
        return summary_id

    def _not_sent_alone(self, rows: Lines) -> Lines:
        """The lines, less those adding a voucher that has a submission (inside the caller's transaction)."""
        adding = [r["id"] for r, _, condition in rows if condition != summaries.CONDITION_VOID]
        alone = self.submissions.submitted_vouchers(adding) if adding and self.submissions is not None else set()
        if alone:
            log.info("%d voucher(s) left out of the resumen diario: sent alone", len(alone))
        return [line for line in rows if line[0]["id"] not in alone or line[2] == summaries.CONDITION_VOID]

    # ------------------------------------------------------------ sent

    def send(self, summary_id: int) -> None:
        """sendSummary; the ticket is stored durably before anything else happens. A SOAP fault is final (the
        summary is fallido with SUNAT's code and the catalogue's text) except SUNAT saying it holds this very summary
        (`_refused`); SUNAT out of reach leaves it pendiente without a ticket, and the next poll sends it again (same
        name, same signed XML)."""
        row = self.row(summary_id)
        client = self.clients(row["environment"], row["emisor_ruc"])
        name = summaries.file_name(row["emisor_ruc"], row["ident"])
        # The claim: only one process sends what it read (compare and swap).
        if not self.repository.claim_send(summary_id, row["send_attempts"], now_text()):
            return  # another process sent it (or is sending it) since this one read it
        try:
            ticket = client.send_summary(*zip_document(f"{name}.xml", row["xml_firmado"].encode("utf-8")))
        except SoapFault as fault:
            self._refused(row, fault)
            return
        except TransportFailure as failure:
            log.warning("sendSummary of %s failed (%s): sent again at the next poll", row["ident"], failure.kind)
            self.repository.note(summary_id, f"SUNAT no respondió al envío ({failure.kind}); se reintentará")
            return
        with self.storage.transaction(durable=True):
            self.repository.store_ticket(summary_id, ticket, now_text())
        log.info("summary %s sent: ticket %s", row["ident"], ticket)
        self.changed(summary_id)

    def _refused(self, row: dict, fault: SoapFault) -> None:
        """sendSummary answered a fault: the summary is fallido — unless it is this very summary sent again (an
        earlier attempt arrived, its answer lost) and SUNAT says it has it (2403, 2324, 2223): then it stays pending
        (`_received`). On a first send the same codes mean another document took the name: fallido."""
        text = sunat_errors.describe(fault.code, self.settings.get("sunat_rules_dir")) if fault.code else \
            fault.faultstring
        if row["send_attempts"] and fault.code in ALREADY_RECEIVED:
            self._received(row, fault, text)
            return
        self.finish(row["id"], SUBMISSION_FAILED, fault.code, text)

    def _received(self, row: dict, fault: SoapFault, text: str) -> None:
        """SUNAT holds this summary, sent before with its answer lost. Once processed it names the summary's ticket
        (2324/2223 «… - Detalle: ticket: …»): kept, the summary is followed by it like any other. Otherwise its ticket
        is lost for now, and its outcome is learnt as app.core.invoicing.voids.lost says."""
        if self.row(row["id"])["ticket"]:  # another poller got the ticket meanwhile
            return
        ticket = ticket_named(fault.faultstring)
        if ticket is not None:
            with self.storage.transaction(durable=True):
                self.repository.store_ticket(row["id"], ticket, now_text())
            log.warning("summary %s: SUNAT has it (%s) and names its ticket %s", row["ident"], fault.code, ticket)
            self.changed(row["id"])
            return
        text = (f"SUNAT ya había recibido la {document_name(row['kind'])} {row['ident']} en un envío anterior "
                f"cuya respuesta se perdió ({text}): su resultado se confirma con su ticket o consultando a SUNAT el "
                "estado de los comprobantes")
        if self.repository.mark_received(row["id"], codigo=fault.code, descripcion=text, updated_at=now_text()) \
                and row["codigo"] != fault.code:  # told once per answer: the poller sends it again each round
            log.warning("summary %s: SUNAT has it (%s), its ticket lost", row["ident"], fault.code)
            self.changed(row["id"])

    # ------------------------------------------------------------ answered

    def finish(self, summary_id: int, state: str, codigo: str | None, descripcion: str,
               answer: cdr_module.Cdr | None = None, notify: bool = True) -> bool:
        """Record SUNAT's answer once: False when another poll (the background one, another window) got there first.
        A CDR is kept as its XML and member name (m004)."""
        with self.storage.transaction(durable=True):
            first = record_answer(self.store, self.repository, summary_id, state, codigo, descripcion, answer)
        if first and notify:
            self.changed(summary_id)
        return first

    def changed(self, summary_id: int) -> None:
        """Tell the engine a summary changed."""
        row = self.repository.brief(summary_id)
        if row is not None:
            self.on_change(row)

    # ------------------------------------------------------------ read back

    def row(self, summary_id: int) -> dict:
        row = self.repository.get(summary_id)
        if row is None:
            raise not_found("summary_id", f"No existe el resumen o baja con id {summary_id}.")
        return row

    def outcome(self, summary_id: int) -> SummaryOutcome:
        row = self.row(summary_id)
        lines = self.repository.lines(summary_id)
        status_of = self.store.statuses_of([line["voucher_id"] for line in lines])  # the voucher store's
        unknown = row["state"] == SUBMISSION_PENDING  # its outcome not known yet: its voids «Baja por confirmar»
        vouchers = [VoucherOutcome(line["voucher_id"], f"{line['serie']}-{line['numero']}",
                                   BAJA_POR_CONFIRMAR if unknown and line["condition"] == summaries.CONDITION_VOID
                                   else status_of[line["voucher_id"]])
                    for line in lines if line["voucher_id"] in status_of]
        return SummaryOutcome(row["id"], row["emisor_ruc"], row["ident"], row["kind"], row["ticket"], row["state"], row["codigo"],
                              row["descripcion"], row["xml_firmado"], vouchers, stored_zip(self.store, row),
                              environment=row["environment"])


def record_answer(store: VoucherStore, repository: Any, summary_id: int, state: str, codigo: str | None,
                  descripcion: str, answer: cdr_module.Cdr | None = None) -> bool:
    """SUNAT's answer recorded on a summary inside the caller's transaction, once (False when it was recorded
    before): its state, code and text, and a CDR kept as its XML and member name (m004). `SummaryBook.finish` and a
    restore reading the RA/RC's answers back from the files (app.core.invoicing.recovered_summaries) record it so."""
    cdr_xml = None if answer is None else store.pack_bytes("cdr-xml:summaries", answer.xml)
    return repository.finish(summary_id, state=state, codigo=codigo, descripcion=descripcion, cdr_xml=cdr_xml,
                             cdr_member=answer.member if answer else None, updated_at=now_text())
