"""Voiding vouchers: comunicaciones de baja (RA) and resúmenes diarios (RC) sent to SUNAT and followed to their CDR.

`Voids.anular(voucher_id, motivo)` chooses the document SUNAT takes for the voucher's type (a RA for facturas and
their notes, a RC with status 3 for boletas and theirs), numbers it `RA-YYYYMMDD-N` / `RC-YYYYMMDD-N` per
environment, issuer and day, signs it with the issuer's default certificate and stores it before sending. The
ticket sendSummary answers is written durably at once; `poll` asks getStatus until SUNAT has processed it, stores
the CDR and, on acceptance, sets each voucher to `anulado` (a rejection leaves them as they were, with SUNAT's code
and reason kept on the summary). `start_if_pending` picks up, after a restart, every ticket still waiting. While a
summary's outcome is unknown its vouchers show «Baja por confirmar» (`Voids.marks`) and no other RA or RC is built
for them; a resumen diario leaves out a boleta sent alone or queued to be, and a boleta a RC reports is not sent
alone — nor reported again — while that RC's outcome is unknown or could not be learnt (one path per boleta, issue
31). A RC SUNAT refused because it already had one of its boletas (2282) has its boletas reported one per RC next
time, so SUNAT names that one, which is then taken as accepted.

Split by job:
- rules.py: which document voids a voucher and when it may (motivo, status, 7 days), the RC line of a voucher,
  SUNAT's codes the workers act on, the outcomes;
- book.py: the stored summaries: numbered, built, signed and stored, sent (the ticket kept), answered, read back;
- tickets.py: one getStatus in named steps, `poll` with backoff, and the background poller (a
  app.core.platform.loops.BackgroundLoop);
- lost.py: a summary SUNAT holds whose ticket was lost (2403/2324/2223 to the same summary sent again): its outcome
  learnt from SUNAT's voucher status query or from the ticket SUNAT names once it processed it; else `sin_confirmar`
  (a void taken as not made, a RC's boletas held «por confirmar»);
- consult.py: getStatusCdr for any voucher (`consultar_cdr`) and the CDRs so kept;
- service.py: `Voids`, the face the engine wires («Anular», the resumen diario, the lists).

Like the other invoicing pieces this knows nothing of the engine: it gets the voucher store, the summary repository
and the database (its unit of work), the settings, the SUNAT client factory, the certificates and the issuer's name.
docs/sunat.md («Anular y resúmenes»).
"""

from app.core.invoicing.voids.rules import (
    DEADLINE_DAYS,
    SummaryOutcome,
    VoucherOutcome,
    kind_for,
    summary_line,
)
from app.core.invoicing.voids.service import Voids

__all__ = ["DEADLINE_DAYS", "SummaryOutcome", "Voids", "VoucherOutcome", "kind_for", "summary_line"]
