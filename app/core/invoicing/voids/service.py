"""`Voids`, what the engine wires: «Anular» (one voucher) and the resumen diario (a day's boletas), the summaries'
lists, and the parts it is made of — the book (app.core.invoicing.voids.book), the tickets (…tickets) and the CDR
consultations (…consult) — under one face."""

from __future__ import annotations

import builtins
import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any

from app.core.errors import conflict, not_found
from app.core.invoicing import summaries
from app.core.invoicing.certificates import CertificateStore
from app.core.invoicing.statuses import ANULADO, FIRMADO, SUBMISSION_FAILED, SUBMISSION_PENDING, SUMMARY_UNCONFIRMED
from app.core.invoicing.voids import rules
from app.core.invoicing.voids.book import Lines, SummaryBook
from app.core.invoicing.voids.consult import CdrConsultations
from app.core.invoicing.voids.rules import SummaryOutcome
from app.core.invoicing.voids.tickets import WATCH_S, Tickets
from app.core.invoicing.voucher_store import VoucherStore
from app.core.platform import clock
from app.core.platform.settings import Settings
from app.core.platform.turns import DeskTurn
from app.core.storage.ports.database import Database
from app.core.storage.ports.submissions import SubmissionRepository
from app.core.storage.ports.summaries import SummaryRepository

Progress = Callable[[SummaryOutcome], Any]


class Voids:
    """RA and RC over the voucher store: numbered, signed, stored, sent, and followed to SUNAT's answer."""

    def __init__(self, store: VoucherStore, repository: SummaryRepository, database: Database, settings: Settings,
                 clients: Callable[[str, str], Any], certificates: CertificateStore,
                 issuer_name: Callable[[str], str | None], today: Callable[[], dt.date] = clock.today,
                 on_change: Callable[[dict[str, Any]], None] = lambda summary: None,
                 submissions: SubmissionRepository | None = None, turn: DeskTurn | None = None) -> None:
        self.store = store
        self.repository = repository  # the summaries and consulted CDRs
        self.settings = settings
        self.today = today  # the day summaries are issued and deadlines counted (tests move it)
        self.max_summary_lines = summaries.MAX_SUMMARY_LINES
        # `submissions`: the outbox's rows, read when a resumen diario is numbered (one path per boleta)
        self.book = SummaryBook(store, repository, database, settings, clients, certificates, issuer_name,
                                lambda: self.today(), on_change, submissions)
        self.tickets = Tickets(self.book, turn)  # `turn`: several desks, one follows the tickets at a time
        self.consultations = CdrConsultations(store, repository, database, settings, clients)

    # ------------------------------------------------------------ anular

    def check_voidable(self, row: dict, motivo: str) -> str:
        """The kind of document that voids this voucher, or the Spanish reason it cannot be voided now."""
        return rules.check_voidable(row, motivo, self.repository.pending_ident_of_voucher(row["id"]), self.today())

    def anular(self, voucher_id: int, motivo: str, wait: bool = True, timeout_s: float | None = None,
               progress: Progress | None = None) -> SummaryOutcome:
        """Void one voucher: build, sign, store, send; then (with `wait`) poll until SUNAT answers or `timeout_s`."""
        row = self.store.get(voucher_id)
        if row is None:
            raise not_found("voucher_id", f"No existe el comprobante con id {voucher_id}.")
        if row["environment"] != self.store.environment():
            raise conflict("voucher_id", f"El comprobante {row['serie']}-{row['numero']} es del entorno "
                                         f"«{row['environment']}»: se anula desde ese entorno.")
        kind = self.check_voidable(row, motivo)
        aviso = self.marks([voucher_id]).get(voucher_id, (None, None))[1]  # an earlier baja never confirmed
        summary_id = self.book.prepare(kind, row["emisor_ruc"], dt.date.fromisoformat(row["fecha_emision"][:10]),
                                       [(row, motivo.strip(), summaries.CONDITION_VOID)])
        assert summary_id is not None  # a void line is never left out
        self.book.send(summary_id)
        outcome = self._after_send(summary_id, wait, timeout_s, progress)
        return dataclasses.replace(outcome, aviso=aviso) if aviso else outcome

    def _after_send(self, summary_id: int, wait: bool, timeout_s: float | None,
                    progress: Progress | None) -> SummaryOutcome:
        """Refused at the front door: an error. Otherwise polled (with `wait`), and followed in the background while
        still pending."""
        outcome = self.book.outcome(summary_id)
        if outcome.state == SUBMISSION_FAILED and not outcome.ticket:
            raise rules.refused(outcome)
        if wait:
            outcome = self.tickets.poll(summary_id, timeout_s=timeout_s, progress=progress)
        if outcome.state == SUBMISSION_PENDING:
            self.tickets.start()
        return outcome

    # ------------------------------------------------------------ resumen diario

    def resumen(self, fecha: dt.date, wait: bool = True, timeout_s: float | None = None,
                progress: Progress | None = None) -> builtins.list[SummaryOutcome]:
        """Report to SUNAT (RC, status 1) the day's signed boletas and their notes not sent one by one: one RC per
        issuer (several when there are more than `max_summary_lines`). Refused when there is none, or the day is more
        than 7 days ago."""
        rules.check_summary_day(fecha, self.today())
        by_issuer = self._unreported(fecha)
        prepared = [self.book.prepare("RC", ruc, fecha, batch)
                    for ruc, rows in by_issuer.items() for batch in self._batches(rows)]
        ids = [summary_id for summary_id in prepared if summary_id is not None]  # None: every boleta sent alone
        if not ids:
            raise rules.nothing_to_report(fecha)
        outcomes = []
        for summary_id in ids:
            self.book.send(summary_id)
            outcomes.append(self._after_send(summary_id, wait, timeout_s, progress))
        return outcomes

    def _batches(self, rows: Lines) -> builtins.list[Lines]:
        """An issuer's lines in RCs: a boleta of a RC SUNAT refused because it already had one of its boletas (2282,
        not saying which) in a RC of its own, so SUNAT names that one by refusing it alone
        (Tickets._informed_before) and the others are not refused with it; the rest up to `max_summary_lines` a RC
        (SUNAT takes up to 500 lines in one: more make several, numbered in turn)."""
        suspects = self.repository.refused_with([row["id"] for row, _, _ in rows], rules.INFORMED_BEFORE)
        rest = [line for line in rows if line[0]["id"] not in suspects]
        size = self.max_summary_lines
        return [[line] for line in rows if line[0]["id"] in suspects] + \
            [rest[start:start + size] for start in range(0, len(rest), size)]

    def _unreported(self, fecha: dt.date) -> dict[str, Lines]:
        """The day's signed boletas and notes (the voucher store), less those a summary holds (pending, or reporting
        them with its outcome never learnt), by issuer."""
        day = self.store.summary_candidates(FIRMADO, fecha.isoformat())
        taken = self.repository.held_voucher_ids(day) if day else set()
        candidates = [voucher_id for voucher_id in day if voucher_id not in taken]
        if not candidates:
            raise rules.nothing_to_report(fecha)
        by_issuer: dict[str, Lines] = {}
        for candidate in candidates:
            row = self.store.get(candidate)
            if row is not None:
                by_issuer.setdefault(row["emisor_ruc"], []).append((row, "", summaries.CONDITION_ADD))
        return by_issuer

    # ------------------------------------------------------------ what the windows show of a voucher's voids

    def marks(self, voucher_ids: builtins.list[int]) -> dict[int, tuple[str | None, str | None]]:
        """voucher id → (the ident of the RA/RC voiding it whose outcome is not known yet — the voucher shows
        «Baja por confirmar» —, the warning «Anular» gives when an earlier baja of it was taken as not made), for
        the vouchers that have either."""
        lines = self.repository.void_lines(voucher_ids) if voucher_ids else []
        if not lines:
            return {}
        status_of = self.store.statuses_of(list({line["voucher_id"] for line in lines}))
        pending: dict[int, str] = {}
        unconfirmed: dict[int, dict] = {}
        for line in lines:  # oldest summary first: the first one never confirmed is the one the warning names
            if line["state"] == SUBMISSION_PENDING:
                pending.setdefault(line["voucher_id"], line["ident"])
            elif line["state"] == SUMMARY_UNCONFIRMED and status_of.get(line["voucher_id"]) != ANULADO:
                unconfirmed.setdefault(line["voucher_id"], line)
        marks: dict[int, tuple[str | None, str | None]] = {voucher_id: (ident, None)
                                                            for voucher_id, ident in pending.items()}
        for voucher_id, line in unconfirmed.items():
            if voucher_id not in pending:
                marks[voucher_id] = None, rules.unconfirmed_warning(f"{line['serie']}-{line['numero']}", line["kind"],
                                                                    line["ident"])
        return marks

    def marked(self, rows: builtins.list[dict]) -> builtins.list[dict]:
        """Voucher rows with `void_pending` and `void_warning` (see `marks`) added."""
        marks = self.marks([row["id"] for row in rows])
        return [{**row, "void_pending": marks.get(row["id"], (None, None))[0],
                 "void_warning": marks.get(row["id"], (None, None))[1]} for row in rows]

    # ------------------------------------------------------------ asking SUNAT for a CDR (consult)

    def consultar_cdr(self, ruc: str, tipo: str, serie: str, numero: int) -> dict[str, Any]:
        return self.consultations.consultar_cdr(ruc, tipo, serie, numero)

    def consulted_cdr(self, voucher_id: int) -> dict | None:
        return self.consultations.consulted_cdr(voucher_id)

    # ------------------------------------------------------------ the tickets

    def check_ticket(self, summary_id: int) -> SummaryOutcome:
        """One getStatus of a pending ticket; the outcome stored when SUNAT has processed it."""
        return self.tickets.check(summary_id)

    def poll(self, summary_id: int, timeout_s: float | None = None,
             progress: Progress | None = None) -> SummaryOutcome:
        """getStatus with backoff until SUNAT answers, the engine closes or `timeout_s` passes."""
        return self.tickets.poll(summary_id, timeout_s, progress)

    def start_if_pending(self) -> None:
        """Follow in the background every ticket still waiting (after a restart, or `anular(wait=False)`)."""
        if self.pending():
            self.tickets.start()

    def watch(self, every_s: float = WATCH_S) -> None:
        """Follow also the summaries other processes store and leave pending (Tickets.watch): for `yupana serve` and
        the windows."""
        self.tickets.watch(every_s)

    def join(self, timeout: float) -> bool:
        """Wait for the background poller to have nothing left to follow; True when it has stopped."""
        return self.tickets.join(timeout)

    def close(self, timeout: float = 5.0) -> None:
        self.tickets.close(timeout)

    # ------------------------------------------------------------ the summaries

    def outcome(self, summary_id: int) -> SummaryOutcome:
        return self.book.outcome(summary_id)

    def list(self, limit: int = 200) -> builtins.list[dict]:
        """The current environment's RA and RC, newest first (without their texts); `comprobantes` lists the
        vouchers each covers («F001-7, F001-8»)."""
        return self.repository.recent(self.store.environment(), limit)

    def for_voucher(self, voucher_id: int) -> builtins.list[dict]:
        """The RA/RC a voucher was put in, newest first: ident, ticket, state, SUNAT's code and description."""
        return self.repository.for_voucher(voucher_id)

    def pending(self) -> builtins.list[int]:
        """The summaries still waiting for SUNAT (for its ticket, or to be sent again), in every environment."""
        return self.repository.pending()
