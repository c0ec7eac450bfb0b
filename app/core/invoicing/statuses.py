"""The statuses of a voucher and of a submission to SUNAT: one home for their names, Spanish labels and colours.

A voucher moves generado → firmado → enviado → aceptado | observado | rechazado, or waits as pendiente while
the outbox resends it; an accepted one becomes anulado when SUNAT accepts its RA or RC
(app/core/invoicing/voids/tickets.py). `no_enviado` is not stored on a voucher: it is the outcome of a submission SUNAT
refused as an exception (codes 0100-1999, app.core.invoicing.sunat_codes), the voucher stays firmado and can be
sent again. Nor is `baja_por_confirmar`: the windows show it for a voucher in a RA/RC whose outcome SUNAT has not
told yet (its stored status stays what SUNAT accepted). A submission (the outbox's row) is pendiente, terminado or
fallido; a RA/RC is one of those or `sin_confirmar` (SUNAT received it, its outcome could not be learnt: taken as
not made, app/core/invoicing/voids/lost.py).

The windows take labels and colours from here (colours as hex strings: `app/core` never imports Qt).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

# ---------------------------------------------------------------- a voucher's status (column vouchers.status)

GENERADO = "generado"
FIRMADO = "firmado"
ENVIADO = "enviado"
ACEPTADO: Final = "aceptado"
OBSERVADO: Final = "observado"
RECHAZADO: Final = "rechazado"
PENDIENTE = "pendiente"
ANULADO = "anulado"  # voided by a comunicación de baja (RA) or a resumen diario (RC), as SUNAT accepted it

VOUCHER_STATUSES = (GENERADO, FIRMADO, ENVIADO, ACEPTADO, OBSERVADO, RECHAZADO, PENDIENTE, ANULADO)
# Shown, never stored: the voucher is in a RA/RC (status 3) whose outcome is not known yet; no other is built for it.
BAJA_POR_CONFIRMAR = "baja_por_confirmar"
DISPLAY_STATUSES = (BAJA_POR_CONFIRMAR,)
# What a CDR can say (the contract's `estado` of operation 3).
CDR_STATUSES = (ACEPTADO, OBSERVADO, RECHAZADO)
CdrStatus = Literal["aceptado", "observado", "rechazado"]
# SUNAT accepted it (with or without observations): nothing to send again.
ACCEPTED = (ACEPTADO, OBSERVADO)
# The number is spent and the voucher stands, or will once the outbox gets its CDR: it can be referred to by a
# note, and the form moves on to the next sale.
ISSUED = (ACEPTADO, OBSERVADO, PENDIENTE)

# ---------------------------------------------------------------- the outcome of one submission, for the windows

NO_ENVIADO = "no_enviado"  # SUNAT answered an exception: nothing registered, the voucher can be sent again

# ---------------------------------------------------------------- a submission's state (column sunat_submissions.state)

SUBMISSION_PENDING = PENDIENTE
SUBMISSION_DONE = "terminado"
SUBMISSION_FAILED = "fallido"
SUBMISSION_STATES = (SUBMISSION_PENDING, SUBMISSION_DONE, SUBMISSION_FAILED)
# A RA/RC only (column sunat_summaries.state): SUNAT received it (its ticket lost) and neither the ticket nor SUNAT's
# voucher status query could tell its outcome: a void taken as not made (its vouchers free for another one); the
# boletas a RC reports held «por confirmar» (never reported again: app/core/invoicing/voids/lost.py).
SUMMARY_UNCONFIRMED = "sin_confirmar"
SUMMARY_STATES = (*SUBMISSION_STATES, SUMMARY_UNCONFIRMED)


@dataclass(frozen=True)
class Status:
    name: str
    label: str  # how a shop owner reads it (badges, the list's filter)
    colour: str  # the badge's background, "#rrggbb"


STATUSES: dict[str, Status] = {s.name: s for s in [
    Status(GENERADO, "Generado", "#607d8b"),
    Status(FIRMADO, "Firmado", "#5c6bc0"),
    Status(ENVIADO, "Enviado", "#0277bd"),
    Status(ACEPTADO, "Aceptado", "#2e7d32"),
    Status(OBSERVADO, "Observado", "#f9a825"),
    Status(RECHAZADO, "Rechazado", "#c62828"),
    Status(PENDIENTE, "Pendiente", "#ef6c00"),
    Status(ANULADO, "Anulado", "#424242"),
    Status(BAJA_POR_CONFIRMAR, "Baja por confirmar", "#6d4c41"),
    Status(SUMMARY_UNCONFIRMED, "Sin confirmar", "#8d6e63"),
    Status(NO_ENVIADO, "No enviado", "#ad1457"),
]}
UNKNOWN_COLOUR = "#555555"


def label(name: str | None) -> str:
    """The Spanish label of a status; an unknown one is shown as it is written."""
    known = STATUSES.get(name or "")
    return known.label if known else (name or "")


def colour(name: str | None) -> str:
    known = STATUSES.get(name or "")
    return known.colour if known else UNKNOWN_COLOUR


def shown(status: str | None, void_pending: str | None) -> str:
    """The status the windows show for a voucher: «Baja por confirmar» while it is in a RA/RC whose outcome is not
    known (`void_pending`: that summary's ident), else its stored status."""
    return BAJA_POR_CONFIRMAR if void_pending else (status or "")
