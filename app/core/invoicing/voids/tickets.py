"""Following a RA/RC's ticket to SUNAT's answer: one getStatus (`check`, in named steps), asked again with backoff
(`poll`, for a caller who waits), and the background poller (app.core.platform.loops) that follows every ticket
still waiting, after a restart too, and ends when none is left. A summary SUNAT holds whose ticket was lost is
followed the same way, through SUNAT's voucher status query (app.core.invoicing.voids.lost)."""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from typing import Any

from app.core.invoicing import cdr as cdr_module
from app.core.invoicing import summaries, sunat_errors
from app.core.invoicing.soap import TICKET_DONE, TICKET_PENDING, SoapFault, StatusResponse, TransportFailure
from app.core.invoicing.statuses import (
    ACCEPTED,
    ACEPTADO,
    SUBMISSION_DONE,
    SUBMISSION_FAILED,
    SUBMISSION_PENDING,
)
from app.core.invoicing.voids.book import SummaryBook
from app.core.invoicing.voids.lost import LostTickets
from app.core.invoicing.voids.rules import (
    INFORMED_BEFORE,
    TICKET_LOST,
    SummaryOutcome,
    received_without_ticket,
    reports_vouchers,
    status_once_accepted,
)
from app.core.platform.loops import IDLE, BackgroundLoop, Due
from app.core.platform.turns import LOOK_AGAIN_S, DeskTurn

log = logging.getLogger(__name__)

# How often a serving process (`yupana serve`, the windows) looks for summaries that other processes stored and left
# pending (`yupana anular --no-esperar`, `yupana resumen --no-esperar`, a CLI closed before SUNAT answered): one query
# of the pending summaries, then their getStatus as usual.
WATCH_S = 15.0


class Tickets:
    """The tickets of one engine's summaries (see the module's doc)."""

    def __init__(self, book: SummaryBook, turn: DeskTurn | None = None) -> None:
        self.book = book
        self.turn = turn  # several desks: whether this desk's round it is (platform.turns; None: always)
        self.lost = LostTickets(book)  # the summaries SUNAT holds whose ticket was lost
        self._poller = BackgroundLoop("sunat-tickets", self._poll_round, what="ticket poller", logger=log)
        self._delay: float | None = None  # the poller's next wait (doubles up to sunat_retry_max_s)
        self._watch_s: float | None = None  # watching: the look-again while nothing waits (else the poller ends)

    # ------------------------------------------------------------ one getStatus

    def check(self, summary_id: int) -> SummaryOutcome:
        """One getStatus of a pending ticket; the outcome stored when SUNAT has processed it. A summary SUNAT holds
        without its ticket: one look through the voucher status query or at the ticket SUNAT names when the summary
        is sent again (LostTickets.resolve), then its getStatus once that named it."""
        row, sent = self._sent(summary_id)
        if received_without_ticket(row["state"], row["ticket"], row["codigo"]):
            self.lost.resolve(row, send_again=not sent)
            row = self.book.row(summary_id)
        if row["state"] != SUBMISSION_PENDING or not row["ticket"]:
            return self.book.outcome(summary_id)
        status = self._status(row)
        if status is not None:
            self.book.repository.count_poll(summary_id)
            if status.status_code != TICKET_PENDING:
                self._answered(row, status)
        return self.book.outcome(summary_id)

    def _sent(self, summary_id: int) -> tuple[dict, bool]:
        """The summary's row, sent again first when it has no ticket and its sending failed or was cut short (not once
        SUNAT said it holds it: app.core.invoicing.voids.lost follows that one); and whether it was sent just now."""
        row = self.book.row(summary_id)
        if row["state"] == SUBMISSION_PENDING and not row["ticket"] and self.orphaned(row) \
                and not received_without_ticket(row["state"], row["ticket"], row["codigo"]):
            self.book.send(summary_id)
            return self.book.row(summary_id), True
        return row, False

    def _status(self, row: dict) -> StatusResponse | None:
        """getStatus of the row's ticket; None when SUNAT does not know it: the summary is then fallido, or — a RC
        reporting boletas, which SUNAT may have — `sin_confirmar` with its boletas held (LostTickets.unknown)."""
        try:
            return self.book.clients(row["environment"], row["emisor_ruc"]).get_status(row["ticket"])
        except SoapFault as fault:
            if fault.code not in TICKET_LOST:
                raise  # SUNAT's trouble (0130-0138 and the like): asked again later
            text = sunat_errors.describe(fault.code, self.book.settings.get("sunat_rules_dir")) or fault.faultstring
            lines = self.book.repository.lines(row["id"])
            if reports_vouchers(lines):  # SUNAT received it: its boletas may be reported, so they are not freed
                self.lost.unknown({**row, "codigo": fault.code}, lines,
                                  f"SUNAT no reconoce su ticket {row['ticket']}: {text}")
                return None
            self.book.finish(row["id"], SUBMISSION_FAILED, fault.code,
                             f"SUNAT no reconoce el ticket {row['ticket']} ({text}): consulte en SUNAT Operaciones en "
                             "Línea si la baja fue aceptada")
            return None

    def _answered(self, row: dict, status: StatusResponse) -> None:
        """SUNAT processed the ticket: its CDR recorded, or (without one) its message when it is a refusal."""
        if status.content is not None:
            self._record_cdr(row, status.status_code, status.content)
        elif status.status_code != TICKET_DONE:  # refused without a CDR: SUNAT's message is all there is
            self.book.finish(row["id"], SUBMISSION_FAILED, status.status_code,
                             status.status_message or "SUNAT no envió la constancia (CDR)")
        # processed without a CDR: no proof of acceptance, asked again later

    def _record_cdr(self, row: dict, status_code: str, content: bytes) -> None:
        """The CDR stored once; on acceptance, the vouchers get their new status before the change is told."""
        answer = cdr_module.read_zip(content)
        accepted = status_code == TICKET_DONE and answer.estado in ACCEPTED
        summary_id = row["id"]
        lines = self.book.repository.lines(summary_id)
        first = self.book.finish(summary_id, SUBMISSION_DONE if accepted else SUBMISSION_FAILED, answer.codigo,
                                 answer.descripcion, answer, notify=False)
        if accepted and first:  # status 3 voids; a boleta added (1) or modified (2) is now informed to SUNAT
            for line in lines:
                self.book.store.set_status(line["voucher_id"], status_once_accepted(line["condition"]))
        elif first and answer.codigo == INFORMED_BEFORE:
            self._informed_before(row, lines)
        if first:  # told once the vouchers have their new status
            self.book.changed(summary_id)
        log.info("summary %s: %s (%s)", row["ident"], "accepted" if accepted else "rejected", answer.codigo)

    def _informed_before(self, row: dict, lines: list[dict]) -> None:
        """A RC refused whole (2282) because SUNAT already has a boleta it adds, without saying which. A RC of one
        line names it: SUNAT has that boleta informed (a voided or rejected one is 2987), so it is accepted there and
        never reported again. Of a RC of several lines, the next resumen diario reports each boleta in a RC of its own
        (Voids.resumen), so the one SUNAT has is named the same way and the others are not refused with it."""
        added = [line for line in lines if line["condition"] != summaries.CONDITION_VOID]
        if len(added) == 1:
            self.book.store.set_status(added[0]["voucher_id"], ACEPTADO)
            log.warning("summary %s: SUNAT already has %s-%s (2282): reconciled as accepted", row["ident"],
                        added[0]["serie"], added[0]["numero"])

    def orphaned(self, row: dict) -> bool:
        """A summary without a ticket is sent again when an attempt failed, or when it was stored longer ago than a
        send can take (the process sending it died before storing the ticket); not while another one sends it."""
        if row["send_attempts"] > 1 or (row["send_attempts"] == 1 and row["descripcion"]):
            return True
        stored = dt.datetime.fromisoformat(row["updated_at"].rstrip("Z"))
        waited = (dt.datetime.now(dt.UTC).replace(tzinfo=None) - stored).total_seconds()
        return waited > 2 * float(self.book.settings.get("sunat_timeout_s"))

    # ------------------------------------------------------------ asked again until answered

    def _first_delay(self) -> float:
        return min(float(self.book.settings.get("sunat_retry_base_s")), self._ceiling())

    def _ceiling(self) -> float:
        return float(self.book.settings.get("sunat_retry_max_s"))

    def _checked(self, summary_id: int) -> SummaryOutcome:
        """`check`, SUNAT out of reach or in trouble read as «still pending» (logged)."""
        try:
            return self.check(summary_id)
        except TransportFailure as failure:
            log.warning("getStatus of summary %s failed: %s", summary_id, failure.kind)
        except SoapFault as fault:
            log.warning("getStatus of summary %s: fault %s", summary_id, fault.code)
        return self.book.outcome(summary_id)

    def poll(self, summary_id: int, timeout_s: float | None = None,
             progress: Callable[[SummaryOutcome], Any] | None = None) -> SummaryOutcome:
        """getStatus with backoff until SUNAT answers, the engine closes or `timeout_s` passes. A summary SUNAT holds
        whose ticket was lost, still unknown after one look, is left to the background poller (its outcome may take
        hours to be learnt): the caller hears it at once."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        delay = self._first_delay()
        while True:
            outcome = self._checked(summary_id)
            if progress is not None:
                progress(outcome)
            if outcome.state != SUBMISSION_PENDING or outcome.received_without_ticket:
                return outcome
            if deadline is not None and time.monotonic() + delay > deadline:
                return outcome
            if self._poller.wait_stopped(delay):  # the engine closes: no more waiting
                return outcome
            delay = min(delay * 2, self._ceiling())

    # ------------------------------------------------------------ the background poller

    def start(self) -> None:
        self._poller.start()

    def watch(self, every_s: float = WATCH_S) -> None:
        """Keep the poller running while nothing waits, looking again every `every_s` seconds: a long-lived process
        then follows the summaries other processes stored and left pending, without a restart (without it the poller
        ends when none is left, and only the next engine opened would see them). `join` never ends while watching."""
        self._watch_s = every_s
        self._poller.wake()

    def join(self, timeout: float) -> bool:
        """Wait for the background poller to have nothing left to follow; True when it has stopped."""
        return self._poller.join(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """For good (the engine closes): the poller ends, and so does every `poll` waiting between two asks."""
        self._poller.stop(timeout)

    def _poll_round(self) -> Due:
        """One round of the poller: every pending summary asked once; IDLE when none is left waiting (the watch's
        look-again while watching), else the backoff's next wait."""
        if self.turn is not None and not self.turn.mine():  # another desk follows the tickets
            return IDLE if self._watch_s is None else LOOK_AGAIN_S
        waiting = False
        for summary_id in self.book.repository.pending():
            if self._poller.stopping:
                return IDLE
            try:
                waiting |= self.check(summary_id).state == SUBMISSION_PENDING
            except (TransportFailure, SoapFault) as exc:
                log.warning("getStatus of summary %s failed: %s", summary_id, exc)
                waiting = True
        if not waiting:
            self._delay = None  # the next start begins the backoff again
            return IDLE if self._watch_s is None else self._watch_s
        delay = self._first_delay() if self._delay is None else min(self._delay * 2, self._ceiling())
        self._delay = delay
        return delay
