"""A RA/RC whose ticket was lost: SUNAT received it (the first sendSummary's answer never came back, and sending the
same summary again — same ID, same bytes — was answered 2403, 2324 or 2223), so it may be processed, accepted or
not. The summary stays pending (never `fallido`), its voids «Baja por confirmar», the boletas it reports held, and no
other RA or RC is built for them (nor are those boletas sent alone); its outcome is learnt

- for the voids of facturas and their notes, from SUNAT's voucher status query (billConsultService getStatus: 0001
  accepted, 0002 rejected, 0003 voided): any voided line answered 0003 — SUNAT accepted the summary (it takes a RA/RC
  whole): terminado, its vouchers anulado, without a CDR (the ticket's is out of reach); still accepted 48 hours
  after the summary was first sent, or an answer that tells nothing (0011…): the void is taken as not made;
- for a RC (the query does not answer for boletas and their notes: 0009/0010) or where the query is not available
  (beta: SUNAT offers it in production only; the sandbox stands in for it), from its ticket: the same summary is sent
  again at each round of the poller; SUNAT answers 2403 while it processes it, then 2223/2324 naming its ticket
  («… - Detalle: ticket: …»), which is kept and followed with getStatus like any other (app.core.invoicing.voids.book).
  Processed without naming its ticket, or still 2403 48 hours after the first send: the outcome cannot be learnt;
- otherwise (still unknown, SUNAT out of reach or in trouble): asked again at the poller's next round.

An outcome that cannot be learnt makes the summary `sin_confirmar`. A void is then taken as not made: its vouchers as
they were, «Anular» offered again with a warning that names this summary. A RC reporting boletas keeps them held
«por confirmar» instead (listed with the summary; never in another RC nor sent alone): SUNAT may have them, and one
reported twice gets the whole RC refused (2282) — they are never reissued on a guess.

docs/sunat.md («Anular y resúmenes»).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

from app.core.invoicing import summaries
from app.core.invoicing.soap import StatusResponse
from app.core.invoicing.statuses import SUBMISSION_DONE, SUMMARY_UNCONFIRMED
from app.core.invoicing.voids import rules
from app.core.invoicing.voids.book import SummaryBook
from app.core.platform import clock

log = logging.getLogger(__name__)


class LostTickets:
    """The summaries of one engine SUNAT holds whose ticket was lost (see the module's doc)."""

    def __init__(self, book: SummaryBook, now: Callable[[], dt.datetime] = clock.now) -> None:
        self.book = book
        self.now = now  # the wall clock the 48 hours are counted on (tests move it)

    def resolve(self, row: dict, send_again: bool = True) -> None:
        """One look at a summary received without a ticket: its outcome stored when SUNAT's answers tell it, or its
        ticket kept when SUNAT names it (the caller then asks getStatus). `send_again` False: the caller has just sent
        it, and SUNAT's answer is in `row`. TransportFailure and SoapFault of the query go up: the poller asks again
        later."""
        lines = self.book.repository.lines(row["id"])
        queryable = [line for line in lines if line["condition"] == summaries.CONDITION_VOID
                     and rules.status_query_answers(line["tipo"], line["serie"])]
        client = self.book.clients(row["environment"], row["emisor_ruc"])
        if queryable and not rules.reports_vouchers(lines) and rules.status_query_available(row["environment"]) \
                and client.consult_url:
            self._by_status_query(row, lines, queryable, client)
        else:
            self._by_ticket(row, lines, send_again)

    def _by_status_query(self, row: dict, lines: list[dict], queryable: list[dict], client: Any) -> None:
        """The voids of facturas and their notes: SUNAT's voucher status query tells whether they were voided."""
        answers = [(line, client.get_voucher_status(row["emisor_ruc"], line["tipo"], line["serie"],
                                                    int(line["numero"]))) for line in queryable]
        if any(status.status_code == rules.QUERY_VOIDED for _line, status in answers):
            self._voided(row, lines, answers)
            return
        unknown = [(line, status) for line, status in answers
                   if status.status_code not in (rules.QUERY_ACCEPTED, rules.QUERY_REJECTED)]
        if unknown:  # SUNAT does not know the voucher, or refuses the question: it will not tell
            line, status = unknown[0]
            self._not_made(row, f"la consulta del estado de {line['serie']}-{line['numero']} respondió "
                                f"{status.status_code or 'sin código'} ({status.status_message or 'sin mensaje'})")
            return
        if self._too_late(row):
            self._not_made(row, f"{self._hours()} horas después del primer envío, la consulta del estado de los "
                                "comprobantes de SUNAT aún no los da de baja")
            return
        log.info("summary %s: SUNAT's voucher status query still says %s", row["ident"],
                 ", ".join(status.status_code for _line, status in answers))

    def _by_ticket(self, row: dict, lines: list[dict], send_again: bool) -> None:
        """Where the status query cannot tell (boletas and their notes: 0009/0010; no query in the environment): the
        same summary sent again (same ID, same bytes) until SUNAT, having processed it, names its ticket (2223/2324);
        `SummaryBook.send` keeps it. Still 2403 (being processed) 48 hours after the first send, or processed without
        naming its ticket: its outcome cannot be learnt (`unknown`)."""
        if send_again:
            self.book.send(row["id"])
        again = self.book.row(row["id"])
        if again["ticket"] or not rules.received_without_ticket(again["state"], again["ticket"], again["codigo"]):
            return  # its ticket named (followed by it), or answered otherwise meanwhile
        if again["codigo"] != rules.STILL_PROCESSING:
            self.unknown(again, lines, f"SUNAT respondió {again['codigo']} sin indicar su ticket")
        elif self._too_late(row):
            self.unknown(again, lines, f"{self._hours()} horas después del primer envío, SUNAT aún responde que lo "
                                       "está procesando")
        else:
            log.info("summary %s: SUNAT still processes it (%s)", row["ident"], again["codigo"])

    def _too_late(self, row: dict) -> bool:
        return self.now() - first_sent(row) >= rules.UNCONFIRMED_AFTER

    @staticmethod
    def _hours() -> int:
        return int(rules.UNCONFIRMED_AFTER.total_seconds() // 3600)

    def unknown(self, row: dict, lines: list[dict], why: str) -> None:
        """The outcome cannot be learnt: a void is taken as not made; a RC reporting boletas keeps them held."""
        if rules.reports_vouchers(lines):
            self._held(row, lines, why)
        else:
            self._not_made(row, why)

    def _voided(self, row: dict, lines: list[dict], answers: list[tuple[dict, StatusResponse]]) -> None:
        """SUNAT voided a voucher of the summary: it accepted the summary. The vouchers get their new status before the
        change is told."""
        names = ", ".join(f"{line['serie']}-{line['numero']}" for line, status in answers
                          if status.status_code == rules.QUERY_VOIDED)
        text = (f"SUNAT aceptó la {rules.document_name(row['kind'])} {row['ident']}: la consulta del estado de "
                f"{names} responde {rules.QUERY_VOIDED} (de baja). Su ticket se perdió, así que no hay constancia "
                "(CDR) de SUNAT")
        if not self.book.finish(row["id"], SUBMISSION_DONE, rules.QUERY_VOIDED, text, notify=False):
            return  # another poll got there first
        for line in lines:
            self.book.store.set_status(line["voucher_id"], rules.status_once_accepted(line["condition"]))
        self.book.changed(row["id"])
        log.info("summary %s: accepted, learnt from the voucher status query", row["ident"])

    def _not_made(self, row: dict, why: str) -> None:
        """The outcome cannot be learnt: the void is taken as not made (`sin_confirmar`), its vouchers as they were."""
        text = (f"SUNAT recibió la {rules.document_name(row['kind'])} {row['ident']}, pero su respuesta se perdió y "
                f"no se pudo confirmar si la aceptó ({why}): se toma como no hecha. Compruébelo en SUNAT Operaciones en "
                "Línea antes de anular otra vez")
        if self.book.finish(row["id"], SUMMARY_UNCONFIRMED, row["codigo"], text):
            log.warning("summary %s: outcome unknown, taken as not made (%s)", row["ident"], why)

    def _held(self, row: dict, lines: list[dict], why: str) -> None:
        """The outcome of a RC reporting boletas cannot be learnt: `sin_confirmar`, and its boletas stay held «por
        confirmar» (the summary repository keeps them out of another RC and of single sends): SUNAT may have them
        already, and a boleta reported twice makes SUNAT refuse the whole RC (2282)."""
        names = ", ".join(f"{line['serie']}-{line['numero']}" for line in lines
                          if line["condition"] != summaries.CONDITION_VOID)
        text = (f"SUNAT recibió el {rules.document_name(row['kind'])} {row['ident']}, pero su respuesta se perdió y no "
                f"se pudo saber si lo aceptó ({why}). Sus comprobantes {names} quedan por confirmar: no se informan en "
                "otro resumen ni se envían solos, porque SUNAT puede tenerlos ya. Compruébelo en SUNAT Operaciones en "
                "Línea")
        if self.book.finish(row["id"], SUMMARY_UNCONFIRMED, row["codigo"], text):
            log.warning("summary %s: outcome unknown, its vouchers held por confirmar (%s)", row["ident"], why)


def first_sent(row: dict) -> dt.datetime:
    """When the summary was first sent: it is stored (`created_at`, the database's clock) and sent at once."""
    return dt.datetime.fromisoformat(row["created_at"].rstrip("Z")).replace(tzinfo=dt.UTC)
