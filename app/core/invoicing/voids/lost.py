"""A RA/RC whose ticket was lost: SUNAT received it (the first sendSummary's answer never came back, and sending the
same summary again — same ID, same bytes — was answered 2403, 2324 or 2223), so it may be processed, accepted or
not, and no ticket will ever tell. The summary stays pending (never `fallido`), its vouchers «Baja por confirmar»,
and no other RA or RC is built for them; its outcome is learnt from SUNAT's voucher status query
(billConsultService getStatus: 0001 accepted, 0002 rejected, 0003 voided):

- any voided line answered 0003: SUNAT accepted the summary (it takes a RA/RC whole) — terminado, its vouchers
  anulado (and its added boletas aceptado), without a CDR (the ticket's is out of reach);
- the query is not available (beta: SUNAT offers it in production only; the sandbox stands in for it), or answers
  nothing for these vouchers (boletas and their notes: 0009/0010, their void is learnt from the ticket only), or
  still says accepted 48 hours after the summary was first sent: the void is taken as not made — `sin_confirmar`,
  its vouchers as they were, «Anular» offered again with a warning that names this summary;
- otherwise (still accepted, SUNAT out of reach or in trouble): asked again at the poller's next round.

docs/sunat.md («Anular y resúmenes»).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

from app.core.invoicing import summaries
from app.core.invoicing.soap import StatusResponse
from app.core.invoicing.statuses import ACEPTADO, ANULADO, SUBMISSION_DONE, SUMMARY_UNCONFIRMED
from app.core.invoicing.voids import rules
from app.core.invoicing.voids.book import SummaryBook
from app.core.platform import clock

log = logging.getLogger(__name__)

# Why the outcome could not be learnt, in the words the summary keeps.
NO_QUERY = "SUNAT no ofrece la consulta del estado de comprobantes en este entorno (solo en producción)"
NOT_QUERYABLE = ("la consulta del estado de comprobantes de SUNAT no responde por boletas ni por sus notas: su baja "
                 "solo se conoce por el ticket")


class LostTickets:
    """The summaries of one engine SUNAT holds whose ticket was lost (see the module's doc)."""

    def __init__(self, book: SummaryBook, now: Callable[[], dt.datetime] = clock.now) -> None:
        self.book = book
        self.now = now  # the wall clock the 48 hours are counted on (tests move it)

    def resolve(self, row: dict) -> None:
        """One look at a summary received without a ticket: its outcome stored when SUNAT's answers tell it.
        TransportFailure and SoapFault of the query go up: the poller asks again later."""
        lines = self.book.repository.lines(row["id"])
        voided = [line for line in lines if line["condition"] == summaries.CONDITION_VOID]
        queryable = [line for line in voided if rules.status_query_answers(line["tipo"], line["serie"])]
        client = self.book.clients(row["environment"], row["emisor_ruc"])
        if not rules.status_query_available(row["environment"]) or not client.consult_url:
            self._not_made(row, NO_QUERY)
            return
        if not queryable:
            self._not_made(row, NOT_QUERYABLE)
            return
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
        if self.now() - first_sent(row) >= rules.UNCONFIRMED_AFTER:
            hours = int(rules.UNCONFIRMED_AFTER.total_seconds() // 3600)
            self._not_made(row, f"{hours} horas después del primer envío, la consulta del estado de los comprobantes "
                                "de SUNAT aún no los da de baja")
            return
        log.info("summary %s: SUNAT's voucher status query still says %s", row["ident"],
                 ", ".join(status.status_code for _line, status in answers))

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
            voided = line["condition"] == summaries.CONDITION_VOID
            self.book.store.set_status(line["voucher_id"], ANULADO if voided else ACEPTADO)
        self.book.changed(row["id"])
        log.info("summary %s: accepted, learnt from the voucher status query", row["ident"])

    def _not_made(self, row: dict, why: str) -> None:
        """The outcome cannot be learnt: the void is taken as not made (`sin_confirmar`), its vouchers as they were."""
        text = (f"SUNAT recibió la {rules.document_name(row['kind'])} {row['ident']}, pero su respuesta se perdió y "
                f"no se pudo confirmar si la aceptó ({why}): se toma como no hecha. Compruébelo en SUNAT Operaciones en "
                "Línea antes de anular otra vez")
        if self.book.finish(row["id"], SUMMARY_UNCONFIRMED, row["codigo"], text):
            log.warning("summary %s: outcome unknown, taken as not made (%s)", row["ident"], why)


def first_sent(row: dict) -> dt.datetime:
    """When the summary was first sent: it is stored (`created_at`, the database's clock) and sent at once."""
    return dt.datetime.fromisoformat(row["created_at"].rstrip("Z")).replace(tzinfo=dt.UTC)
