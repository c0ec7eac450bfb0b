"""Voiding vouchers: comunicaciones de baja (RA) and resúmenes diarios (RC) sent to SUNAT and followed to their CDR.

`Voids.anular(voucher_id, motivo)` chooses the document SUNAT takes for the voucher's type (a RA for facturas and
their notes, a RC with status 3 for boletas and theirs), numbers it `RA-YYYYMMDD-N` / `RC-YYYYMMDD-N` per
environment, issuer and day, signs it with the issuer's default certificate and stores it before sending. The
ticket sendSummary answers is written durably at once; `poll` asks getStatus until SUNAT has processed it, stores
the CDR and, on acceptance, sets each voucher to `anulado` (a rejection leaves them as they were, with SUNAT's code
and reason kept on the summary). `resume_pending` picks up, after a restart, every ticket still waiting.

Like the other invoicing pieces this knows nothing of the engine: it gets the voucher store, the summary repository
and the database (its unit of work), the settings, the SUNAT client factory, the certificates and the issuer's name.
docs/sunat.md («Anular y resúmenes»).
"""

from __future__ import annotations

import builtins
import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from lxml import etree

from app.core.errors import ErrorCode, ErrorDetail, YupanaError, conflict, invalid, not_found
from app.core.invoicing import cdr as cdr_module
from app.core.invoicing import summaries, sunat_errors
from app.core.invoicing.cdr import safe_parser
from app.core.invoicing.certificates import CertificateStore
from app.core.invoicing.namespaces import CAC, CBC
from app.core.invoicing.signing import check_certificate, no_default_certificate
from app.core.invoicing.soap import TICKET_DONE, TICKET_PENDING, SoapFault, TransportFailure, zip_document
from app.core.invoicing.statuses import (
    ACCEPTED,
    ACEPTADO,
    ANULADO,
    FIRMADO,
    SUBMISSION_DONE,
    SUBMISSION_FAILED,
    SUBMISSION_PENDING,
)
from app.core.invoicing.voucher_keys import now_text
from app.core.invoicing.voucher_store import VoucherStore
from app.core.invoicing.xmldsig import sign_xml
from app.core.platform import clock
from app.core.platform.settings import Settings
from app.core.storage.ports.database import Database
from app.core.storage.ports.summaries import SummaryEntry, SummaryRepository

log = logging.getLogger(__name__)

# sendSummary of a name SUNAT already has: 2403 while its ticket is pending, then 2324 (RA) / 2223 (RC).
ALREADY_RECEIVED = ("2403", "2324", "2223")
# getStatus of a ticket SUNAT does not know (0127) or that is another RUC's (0126): asking again will not help.
TICKET_LOST = ("0126", "0127")
DEADLINE_DAYS = 7  # SUNAT takes a RA, and a RC, up to 7 days after the vouchers' issue date
# Affectation schemes of a voucher's TaxSubtotal → the RC's kind of operations (summaries.PAYMENT_KINDS).
_SCHEME_KINDS = {"1000": "gravadas", "1016": "gravadas", "9997": "exoneradas", "9998": "inafectas",
                 "9995": "exportacion", "9996": "gratuitas"}


@dataclass(frozen=True)
class VoucherOutcome:
    voucher_id: int
    serie_numero: str
    status: str


@dataclass(frozen=True)
class SummaryOutcome:
    """Where a RA/RC stands: pendiente (ticket waiting), terminado (accepted) or fallido (rejected or refused)."""

    summary_id: int
    emisor_ruc: str
    ident: str
    kind: str
    ticket: str | None
    state: str
    codigo: str | None
    descripcion: str | None
    xml_firmado: str
    vouchers: list[VoucherOutcome] = field(default_factory=list)
    cdr_zip: bytes | None = None

    @property
    def accepted(self) -> bool:
        return self.state == SUBMISSION_DONE


def kind_for(tipo: str, serie: str) -> str:
    """RA for facturas and their notes (series F…), RC for boletas and their notes (series B…)."""
    if tipo == "01" or (tipo in ("07", "08") and serie.upper().startswith("F")):
        return "RA"
    if tipo == "03" or (tipo in ("07", "08") and serie.upper().startswith("B")):
        return "RC"
    raise invalid("voucher_id", f"El comprobante {serie} (tipo {tipo}) no se anula con una comunicación de baja ni "
                                "con un resumen diario.")


def _money(text: str | None) -> Decimal:
    try:
        return Decimal((text or "0").strip())
    except InvalidOperation:
        return Decimal(0)


def summary_line(row: dict, condition: str = summaries.CONDITION_VOID) -> summaries.SummaryLine:
    """The RC line of a stored boleta or note (status 3 voids it, 1 adds it): its totals read from its signed XML."""
    root = etree.fromstring(row["xml_firmado"].encode("utf-8"), safe_parser())
    cbc, cac = f"{{{CBC}}}", f"{{{CAC}}}"
    total_tax = root.find(f"{cac}TaxTotal")
    montos: dict[str, Decimal] = {}
    taxes: dict[str, Decimal] = {}  # by scheme: the IGV (1000) apart from the bag tax (7152) the total also holds
    for subtotal in (total_tax.findall(f"{cac}TaxSubtotal") if total_tax is not None else []):
        scheme = (subtotal.findtext(f"{cac}TaxCategory/{cac}TaxScheme/{cbc}ID") or "").strip()
        taxes[scheme] = taxes.get(scheme, Decimal(0)) + _money(subtotal.findtext(f"{cbc}TaxAmount"))
        kind = _SCHEME_KINDS.get(scheme)
        if kind:
            montos[kind] = montos.get(kind, Decimal(0)) + _money(subtotal.findtext(f"{cbc}TaxableAmount"))
    referencia = None
    reference = root.find(f"{cac}BillingReference/{cac}InvoiceDocumentReference")
    if reference is not None:
        serie, _, numero = (reference.findtext(f"{cbc}ID") or "").strip().partition("-")
        if numero.isdigit():
            referencia = summaries.Reference((reference.findtext(f"{cbc}DocumentTypeCode") or "03").strip(), serie,
                                             int(numero))
    return summaries.SummaryLine(row["tipo"], row["serie"], int(row["numero"]), condition,
                                 _money(row["total"]), taxes.get(summaries.IGV.code, Decimal(0)),
                                 row.get("receptor_tipo_documento") or "0", row.get("receptor_numero_documento") or "-",
                                 row["moneda"], montos, referencia, taxes.get(summaries.ICBPER.code, Decimal(0)))


class Voids:
    """RA and RC over the voucher store: numbered, signed, stored, sent, and followed to SUNAT's answer."""

    def __init__(self, store: VoucherStore, repository: SummaryRepository, database: Database, settings: Settings,
                 clients: Callable[[str, str], Any], certificates: CertificateStore,
                 issuer_name: Callable[[str], str | None], today: Callable[[], dt.date] = clock.today,
                 on_change: Callable[[dict[str, Any]], None] = lambda summary: None) -> None:
        self.store = store
        self.repository = repository  # the summaries and consulted CDRs
        self.storage = database  # the unit of work
        self.settings = settings
        self.clients = clients  # SunatClients: (environment, ruc) → soap.SunatClient
        self.certificates = certificates
        self.issuer_name = issuer_name
        self.today = today
        self.on_change = on_change  # told {id, ident, state, ticket} whenever a summary changes (the engine's event)
        self.max_summary_lines = summaries.MAX_SUMMARY_LINES
        self._stop = threading.Event()  # close(): a wait between polls ends at once
        self._worker: threading.Thread | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------ anular

    def check_voidable(self, row: dict, motivo: str) -> str:
        """The kind of document that voids this voucher, or the Spanish reason it cannot be voided now."""
        name = f"{row['serie']}-{row['numero']}"
        if not motivo.strip():
            raise invalid("motivo", "El campo «motivo» es obligatorio: SUNAT pide el motivo de la baja.")
        if len(motivo.strip()) > summaries.MAX_REASON:
            raise invalid("motivo", f"El campo «motivo» tiene {len(motivo.strip())} caracteres: SUNAT acepta hasta "
                                    f"{summaries.MAX_REASON}.")
        kind = kind_for(row["tipo"], row["serie"])
        if row["status"] == ANULADO:
            raise conflict("voucher_id", f"El comprobante {name} ya está anulado.")
        pending = self.repository.pending_ident_of_voucher(row["id"])
        if pending:
            raise conflict("voucher_id", f"El comprobante {name} ya está en {pending}, que espera la respuesta de "
                                         "SUNAT.")
        if row["status"] not in ACCEPTED:
            document = "una comunicación de baja" if kind == "RA" else "un resumen diario"
            raise conflict("voucher_id", f"El comprobante {name} no fue aceptado por SUNAT (estado «{row['status']}»): "
                                         f"no se puede anular con {document}.")
        issued = dt.date.fromisoformat(row["fecha_emision"][:10])
        age = (self.today() - issued).days
        if age > DEADLINE_DAYS:
            document = "comunicación de baja" if kind == "RA" else "resumen diario"
            raise conflict("voucher_id", f"El comprobante {name} se emitió el {issued:%d/%m/%Y}, hace {age} días: SUNAT "
                                         f"acepta la {document} solo hasta {DEADLINE_DAYS} días después de la "
                                         "emisión. Anúlelo con una nota de crédito.")
        return kind

    def anular(self, voucher_id: int, motivo: str, wait: bool = True, timeout_s: float | None = None,
               progress: Callable[[SummaryOutcome], Any] | None = None) -> SummaryOutcome:
        """Void one voucher: build, sign, store, send; then (with `wait`) poll until SUNAT answers or `timeout_s`."""
        row = self.store.get(voucher_id)
        if row is None:
            raise not_found("voucher_id", f"No existe el comprobante con id {voucher_id}.")
        if row["environment"] != self.store.environment():
            raise conflict("voucher_id", f"El comprobante {row['serie']}-{row['numero']} es del entorno "
                                         f"«{row['environment']}»: se anula desde ese entorno.")
        kind = self.check_voidable(row, motivo)
        summary_id = self._prepare(kind, row["emisor_ruc"], dt.date.fromisoformat(row["fecha_emision"][:10]),
                                   [(row, motivo.strip(), summaries.CONDITION_VOID)])
        self._send(summary_id)
        return self._after_send(summary_id, wait, timeout_s, progress)

    def _prepare(self, kind: str, ruc: str, reference_date: dt.date, rows: list[tuple[dict, str, str]]) -> int:
        """Number, build, sign and store the summary (durably, before it is sent); its id."""
        info = self.certificates.default_for(ruc)
        if info is None:
            raise no_default_certificate(ruc)
        check_certificate(info, ruc)
        _, key, certificate = self.certificates.for_signing(info.certificado_id)
        issuer = summaries.Issuer(ruc, self.issuer_name(ruc) or ruc)
        issued = self.today()
        environment = self.store.environment()
        with self.storage.transaction(durable=True):
            # Checked again inside the transaction: two «Anular» at once make one summary.
            taken = self.repository.first_pending_line([r["id"] for r, _, _ in rows])
            if taken is not None:
                raise conflict("voucher_id", f"El comprobante {taken[0]}-{taken[1]} ya está en {taken[2]}, que espera "
                                             "la respuesta de SUNAT.")
            counter = self.repository.last_counter(environment, ruc, kind, issued.isoformat()) + 1
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
        self._changed(summary_id)
        return summary_id

    def _changed(self, summary_id: int) -> None:
        row = self.repository.brief(summary_id)
        if row is not None:
            self.on_change(row)

    def _row(self, summary_id: int) -> dict:
        row = self.repository.get(summary_id)
        if row is None:
            raise not_found("summary_id", f"No existe el resumen o baja con id {summary_id}.")
        return row

    def _finish(self, summary_id: int, state: str, codigo: str | None, descripcion: str,
                answer: cdr_module.Cdr | None = None, notify: bool = True) -> bool:
        """Record SUNAT's answer once: False when another poll (the background one, another window) got there first.
        A CDR is kept as its XML and member name (m004)."""
        with self.storage.transaction(durable=True):
            cdr_xml = None if answer is None else self.store.pack_bytes("cdr-xml:summaries", answer.xml)
            first = self.repository.finish(summary_id, state=state, codigo=codigo, descripcion=descripcion,
                                          cdr_xml=cdr_xml, cdr_member=answer.member if answer else None,
                                          updated_at=now_text())
        if first and notify:
            self._changed(summary_id)
        return first

    def _send(self, summary_id: int) -> None:
        """sendSummary; the ticket is stored durably before anything else happens. A SOAP fault is final (the
        summary is fallido with SUNAT's code and the catalogue's text); SUNAT out of reach leaves it pendiente
        without a ticket, and the next poll sends it again (same name, same signed XML)."""
        row = self._row(summary_id)
        client = self.clients(row["environment"], row["emisor_ruc"])
        name = summaries.file_name(row["emisor_ruc"], row["ident"])
        # The claim: only one process sends what it read (compare and swap).
        if not self.repository.claim_send(summary_id, row["send_attempts"], now_text()):
            return  # another process sent it (or is sending it) since this one read it
        try:
            ticket = client.send_summary(*zip_document(f"{name}.xml", row["xml_firmado"].encode("utf-8")))
        except SoapFault as fault:
            text = sunat_errors.describe(fault.code, self.settings.get("sunat_rules_dir")) if fault.code else \
                fault.faultstring
            if row["send_attempts"] and fault.code in ALREADY_RECEIVED:  # an earlier attempt arrived, its answer lost
                if self._row(summary_id)["ticket"]:  # another poller got the ticket meanwhile
                    return
                text = (f"SUNAT ya había recibido la {_document(row['kind'])} {row['ident']} en un envío anterior cuya "
                        f"respuesta se perdió ({text}): consulte en SUNAT Operaciones en Línea si la baja fue "
                        "aceptada")
            self._finish(summary_id, SUBMISSION_FAILED, fault.code, text)
            return
        except TransportFailure as failure:
            log.warning("sendSummary of %s failed (%s): sent again at the next poll", row["ident"], failure.kind)
            self.repository.note(summary_id, f"SUNAT no respondió al envío ({failure.kind}); se reintentará")
            return
        with self.storage.transaction(durable=True):
            self.repository.store_ticket(summary_id, ticket, now_text())
        log.info("summary %s sent: ticket %s", row["ident"], ticket)
        self._changed(summary_id)

    def _refused(self, outcome: SummaryOutcome) -> YupanaError:
        text = outcome.descripcion or "sin descripción"
        return YupanaError(ErrorCode.UPSTREAM_REJECTED,
                           f"SUNAT no aceptó la {_document(outcome.kind)} {outcome.ident} (código "
                           f"{outcome.codigo or 'sin código'}): {text}.",
                           [ErrorDetail("voucher_id", text, sunat_code=outcome.codigo or None)])

    def _after_send(self, summary_id: int, wait: bool, timeout_s: float | None,
                    progress: Callable[[SummaryOutcome], Any] | None) -> SummaryOutcome:
        """Refused at the front door: an error. Otherwise polled (with `wait`), and followed in the background while
        still pending."""
        outcome = self.outcome(summary_id)
        if outcome.state == SUBMISSION_FAILED and not outcome.ticket:
            raise self._refused(outcome)
        if wait:
            outcome = self.poll(summary_id, timeout_s=timeout_s, progress=progress)
        if outcome.state == SUBMISSION_PENDING:
            self.start()
        return outcome

    # ------------------------------------------------------------ resumen diario

    def resumen(self, fecha: dt.date, wait: bool = True, timeout_s: float | None = None,
                progress: Callable[[SummaryOutcome], Any] | None = None) -> list[SummaryOutcome]:
        """Report to SUNAT (RC, status 1) the day's signed boletas and their notes not sent one by one: one RC per
        issuer (several when there are more than `max_summary_lines`). Refused when there is none, or the day is more than 7 days ago."""
        age = (self.today() - fecha).days
        if age > DEADLINE_DAYS:
            raise conflict("fecha", f"El {fecha:%d/%m/%Y} fue hace {age} días: SUNAT acepta el resumen diario de las "
                                    f"boletas solo hasta {DEADLINE_DAYS} días después de su emisión.")
        if age < 0:
            raise invalid("fecha", f"La fecha {fecha:%d/%m/%Y} (campo «fecha») es futura.")
        # The day's signed boletas and notes (the voucher store), less those in a pending summary (this one's).
        day = self.store.summary_candidates(FIRMADO, fecha.isoformat())
        taken = self.repository.pending_voucher_ids(day) if day else set()
        candidates = [voucher_id for voucher_id in day if voucher_id not in taken]
        if not candidates:
            raise not_found("fecha", f"No hay boletas firmadas del {fecha:%d/%m/%Y} por informar a SUNAT en un "
                                     "resumen diario.")
        by_issuer: dict[str, list[tuple[dict, str, str]]] = {}
        for candidate in candidates:
            row = self.store.get(candidate)
            if row is not None:
                by_issuer.setdefault(row["emisor_ruc"], []).append((row, "", summaries.CONDITION_ADD))
        size = self.max_summary_lines  # SUNAT takes up to 500 lines in one RC: more make several, numbered in turn
        ids = [self._prepare("RC", ruc, fecha, rows[start:start + size])
               for ruc, rows in by_issuer.items() for start in range(0, len(rows), size)]
        outcomes = []
        for summary_id in ids:
            self._send(summary_id)
            outcomes.append(self._after_send(summary_id, wait, timeout_s, progress))
        return outcomes

    # ------------------------------------------------------------ asking SUNAT for a CDR

    def consultar_cdr(self, ruc: str, tipo: str, serie: str, numero: int) -> dict[str, Any]:
        """getStatusCdr for any voucher (issued here or elsewhere), with the company's SOL credentials. The CDR is
        stored when the voucher is one of ours (table sunat_consulted_cdrs)."""
        environment = self.store.environment()
        name = f"{serie}-{int(numero)}"
        try:
            status = self.clients(environment, ruc).get_status_cdr(ruc, tipo, serie, int(numero))
        except SoapFault as fault:  # e.g. wrong clave SOL (0102): SUNAT's code and the catalogue's words
            text = (sunat_errors.describe(fault.code, self.settings.get("sunat_rules_dir")) if fault.code else ""
                    ) or fault.faultstring
            raise YupanaError(ErrorCode.UPSTREAM_REJECTED,
                              f"SUNAT no respondió la consulta del CDR de {name} (código {fault.code or 'sin código'}):"
                              f" {text}.", [ErrorDetail("numero", text, sunat_code=fault.code or None)]) from fault
        except TransportFailure as failure:
            raise YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE,
                              f"No se pudo consultar a SUNAT el CDR de {name} ({failure.kind}): inténtelo más tarde."
                              ) from failure
        answer = cdr_module.read_zip(status.content) if status.content else None
        voucher_id = self.store.id_of(ruc, tipo, serie, int(numero))
        if answer is not None and voucher_id is not None:
            with self.storage.transaction(durable=True):
                self.repository.add_consulted_cdr(  # kept as its XML: the zip is made again when read (m004)
                    voucher_id=voucher_id, environment=environment, codigo=answer.codigo,
                    descripcion=answer.descripcion, cdr_xml=self.store.pack_bytes(f"cdr-xml:{environment}", answer.xml),
                    cdr_member=answer.member)
        return {"status_code": status.status_code, "status_message": status.status_message,
                "codigo": answer.codigo if answer else None, "descripcion": answer.descripcion if answer else None,
                "estado": answer.estado if answer else None, "notas": answer.notas if answer else [],
                "cdr_zip": status.content, "voucher_id": voucher_id, "guardado": answer is not None and
                voucher_id is not None}

    def consulted_cdr(self, voucher_id: int) -> dict | None:
        """The latest CDR asked of SUNAT for one of our vouchers (`consultar_cdr`), or None."""
        row = self.repository.latest_consulted_cdr(voucher_id)
        if row is not None:
            row["cdr_zip"] = self._zip_of(row)
            del row["cdr_xml"], row["cdr_member"]
        return row

    def _zip_of(self, row: dict) -> bytes | None:
        """A stored CDR's zip: made again from its XML (m004), or the zip stored before as it is."""
        if row["cdr_member"] is not None:
            return cdr_module.rebuild_zip(row["cdr_member"], self.store.unpack_bytes(row["cdr_xml"]) or b"")
        return row["cdr_zip"]

    # ------------------------------------------------------------ the ticket

    def check_ticket(self, summary_id: int) -> SummaryOutcome:
        """One getStatus of a pending ticket; the outcome stored when SUNAT has processed it."""
        row = self._row(summary_id)
        if row["state"] == SUBMISSION_PENDING and not row["ticket"] and self._orphaned(row):
            self._send(summary_id)
            row = self._row(summary_id)
        if row["state"] != SUBMISSION_PENDING or not row["ticket"]:
            return self.outcome(summary_id)
        try:
            status = self.clients(row["environment"], row["emisor_ruc"]).get_status(row["ticket"])
        except SoapFault as fault:
            if fault.code not in TICKET_LOST:
                raise  # SUNAT's trouble (0130-0138 and the like): asked again later
            text = sunat_errors.describe(fault.code, self.settings.get("sunat_rules_dir")) or fault.faultstring
            self._finish(summary_id, SUBMISSION_FAILED, fault.code,
                         f"SUNAT no reconoce el ticket {row['ticket']} ({text}): consulte en SUNAT Operaciones en Línea "
                         "si la baja fue aceptada")
            return self.outcome(summary_id)
        self.repository.count_poll(summary_id)
        if status.status_code == TICKET_PENDING:
            return self.outcome(summary_id)
        if status.content is None:  # processed (or refused) without a CDR: SUNAT's message is all there is
            if status.status_code == TICKET_DONE:  # no proof of acceptance: ask again later
                return self.outcome(summary_id)
            self._finish(summary_id, SUBMISSION_FAILED, status.status_code,
                         status.status_message or "SUNAT no envió la constancia (CDR)")
            return self.outcome(summary_id)
        answer = cdr_module.read_zip(status.content)
        accepted = status.status_code == TICKET_DONE and answer.estado in ACCEPTED
        lines = self.repository.lines(summary_id)
        first = self._finish(summary_id, SUBMISSION_DONE if accepted else SUBMISSION_FAILED, answer.codigo,
                             answer.descripcion, answer, notify=False)
        if accepted and first:  # status 3 voids; a boleta added (1) or modified (2) is now informed to SUNAT
            for line in lines:
                voided = line["condition"] == summaries.CONDITION_VOID
                self.store.set_status(line["voucher_id"], ANULADO if voided else ACEPTADO)
        if first:  # told once the vouchers have their new status
            self._changed(summary_id)
        log.info("summary %s: %s (%s)", row["ident"], "accepted" if accepted else "rejected", answer.codigo)
        return self.outcome(summary_id)

    def _orphaned(self, row: dict) -> bool:
        """A summary without a ticket is sent again when an attempt failed, or when it was stored longer ago than a
        send can take (the process sending it died before storing the ticket); not while another one sends it."""
        if row["send_attempts"] > 1 or (row["send_attempts"] == 1 and row["descripcion"]):
            return True
        stored = dt.datetime.fromisoformat(row["updated_at"].rstrip("Z"))
        waited = (dt.datetime.now(dt.UTC).replace(tzinfo=None) - stored).total_seconds()
        return waited > 2 * float(self.settings.get("sunat_timeout_s"))

    def poll(self, summary_id: int, timeout_s: float | None = None,
             progress: Callable[[SummaryOutcome], Any] | None = None) -> SummaryOutcome:
        """getStatus with backoff until SUNAT answers, the engine closes or `timeout_s` passes."""
        base = float(self.settings.get("sunat_retry_base_s"))
        ceiling = float(self.settings.get("sunat_retry_max_s"))
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        delay = min(base, ceiling)
        while True:
            try:
                outcome = self.check_ticket(summary_id)
            except TransportFailure as failure:
                log.warning("getStatus of summary %s failed: %s", summary_id, failure.kind)
                outcome = self.outcome(summary_id)
            except SoapFault as fault:
                log.warning("getStatus of summary %s: fault %s", summary_id, fault.code)
                outcome = self.outcome(summary_id)
            if progress is not None:
                progress(outcome)
            if outcome.state != SUBMISSION_PENDING:
                return outcome
            if deadline is not None and time.monotonic() + delay > deadline:
                return outcome
            if self._stop.wait(delay):
                return outcome
            delay = min(delay * 2, ceiling)

    def outcome(self, summary_id: int) -> SummaryOutcome:
        row = self._row(summary_id)
        lines = self.repository.lines(summary_id)
        status_of = self.store.statuses_of([line["voucher_id"] for line in lines])  # the voucher store's
        vouchers = [VoucherOutcome(line["voucher_id"], f"{line['serie']}-{line['numero']}", status_of[line["voucher_id"]])
                    for line in lines if line["voucher_id"] in status_of]
        return SummaryOutcome(row["id"], row["emisor_ruc"], row["ident"], row["kind"], row["ticket"], row["state"], row["codigo"],
                              row["descripcion"], row["xml_firmado"], vouchers, self._zip_of(row))

    def list(self, limit: int = 200) -> list[dict]:
        """The current environment's RA and RC, newest first (without their texts); `comprobantes` lists the
        vouchers each covers («F001-7, F001-8»)."""
        return self.repository.recent(self.store.environment(), limit)

    def for_voucher(self, voucher_id: int) -> builtins.list[dict]:
        """The RA/RC a voucher was put in, newest first: ident, ticket, state, SUNAT's code and description."""
        return self.repository.for_voucher(voucher_id)

    def pending(self) -> builtins.list[int]:
        """The summaries still waiting for SUNAT (for its ticket, or to be sent again), in every environment."""
        return self.repository.pending()

    # ------------------------------------------------------------ the background poller

    def start_if_pending(self) -> None:
        """Follow in the background every ticket still waiting (after a restart, or `anular(wait=False)`)."""
        if self.pending():
            self.start()

    def start(self) -> None:
        with self._lock:
            if self._worker is None and not self._stop.is_set():
                self._worker = threading.Thread(target=self._run, name="sunat-tickets", daemon=True)
                self._worker.start()

    def _run(self) -> None:
        base = float(self.settings.get("sunat_retry_base_s"))
        ceiling = float(self.settings.get("sunat_retry_max_s"))
        delay = min(base, ceiling)
        try:
            while not self._stop.is_set():
                waiting = False
                for summary_id in self.pending():
                    if self._stop.is_set():
                        return
                    try:
                        waiting |= self.check_ticket(summary_id).state == SUBMISSION_PENDING
                    except (TransportFailure, SoapFault) as exc:
                        log.warning("getStatus of summary %s failed: %s", summary_id, exc)
                        waiting = True
                if not waiting or self._stop.wait(delay):
                    return
                delay = min(delay * 2, ceiling)
        except Exception:  # never let the thread die silently: the next start picks the tickets up again
            log.exception("ticket poller stopped")
        finally:
            with self._lock:
                self._worker = None

    def join(self, timeout: float) -> bool:
        """Wait for the background poller to have nothing left to follow; True when it has stopped."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
            return not worker.is_alive()
        return True

    def close(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.join(timeout)


def _document(kind: str) -> str:
    return "comunicación de baja" if kind == "RA" else "resumen diario"
