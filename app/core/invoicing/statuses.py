"""The statuses of a voucher and of a submission to SUNAT: one home for their names, Spanish labels and colours.

A voucher moves generado → firmado → enviado → aceptado | observado | rechazado, or waits as pendiente while
the outbox resends it; an accepted one becomes anulado when SUNAT accepts its RA or RC
(app/core/invoicing/voids.py). `no_enviado` is not stored on a voucher: it is the outcome of a submission SUNAT
refused as an exception (codes 0100-1999, app.core.invoicing.sunat_codes), the voucher stays firmado and can be
sent again. A submission (the outbox's row) is pendiente, terminado or fallido.

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
