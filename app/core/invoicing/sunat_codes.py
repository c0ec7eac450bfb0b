"""What SUNAT's response and fault codes mean: one home for their classification (docs/sunat.md).

- 0: accepted; with notes in the CDR (cbc:Note) it is accepted with observations;
- 0100-1999: an exception of the submission (credentials, file name, zip…): nothing was registered, the
  number is not spent; fix and send the same voucher again;
- 2000-3999: the voucher is rejected (its number is spent: a corrected voucher needs a new one);
- 4000 and up: observations (the voucher is accepted).
- 1032 ("rechazado previamente") and 1033 ("registrado previamente"): SUNAT already holds the voucher.
  They are exceptions in the range above but mean "ask for its CDR" (getStatusCdr), never "rejected",
  never "send again blindly".
"""

from __future__ import annotations

from app.core.invoicing import sunat_catalogues
from app.core.invoicing.statuses import ACEPTADO, NO_ENVIADO, OBSERVADO, RECHAZADO, CdrStatus

ACCEPTED_CODE = "0"
REJECTION_RANGE = range(2000, 4000)
OBSERVATION_FROM = 4000
REGISTERED_BEFORE = "1033"
REJECTED_BEFORE = "1032"
HELD_BY_SUNAT = frozenset({REJECTED_BEFORE, REGISTERED_BEFORE})  # reconcile with getStatusCdr


def number(code: str | int | None) -> int | None:
    """The code's value ("0102" → 102), or None when it is not a number (an empty or textual code)."""
    text = str(code if code is not None else "").strip()
    return int(text) if text.isdigit() else None


def is_accepted(code: str | int | None) -> bool:
    return number(code) == 0


def is_exception(code: str | int | None) -> bool:
    """0100-1999 (and any code below 2000 but 0): the submission failed, nothing was registered."""
    value = number(code)
    return value is not None and 0 < value < REJECTION_RANGE.start


def is_rejection(code: str | int | None) -> bool:
    """2000-3999: the voucher itself is rejected."""
    value = number(code)
    return value is not None and value in REJECTION_RANGE


def is_observation(code: str | int | None) -> bool:
    """4000 and up: an observation; the voucher is accepted."""
    value = number(code)
    return value is not None and value >= OBSERVATION_FROM


def is_held_by_sunat(code: str | int | None) -> bool:
    """1032/1033: SUNAT has this voucher already; fetch its CDR and retry later if it is not there yet."""
    value = number(code)
    return value is not None and f"{value:04d}" in HELD_BY_SUNAT


def cdr_status(code: str | int | None, has_notes: bool = False) -> CdrStatus | None:
    """A CDR's status: aceptado, observado or rechazado; None for an exception (fix and send again)."""
    if is_accepted(code):
        return OBSERVADO if has_notes else ACEPTADO
    if is_observation(code):
        return OBSERVADO
    if is_rejection(code):
        return RECHAZADO
    return None


def refusal_status(code: str | int | None) -> str:
    """The outcome of a submission SUNAT refused with `code`: rechazado (number spent) or no_enviado."""
    return RECHAZADO if is_rejection(code) else NO_ENVIADO


def duplicate_fault(registered_code: str | int) -> str:
    """The fault SUNAT answers to a voucher it registered before: 1032 when that one was rejected, else 1033."""
    return REJECTED_BEFORE if is_rejection(registered_code) else REGISTERED_BEFORE


# ---------------------------------------------------------------- detracción (SPOT) and operation types

# Catalogues 51, 52, 54 and 59 live with the others in app.core.invoicing.sunat_catalogues; these names stay for the
# builder, the windows and the tests that speak of the detracción.
DETRACCIONES = sunat_catalogues.DETRACCIONES  # catalogue 54: code → (what it covers, default rate in percent)
MEDIOS_DE_PAGO = frozenset(sunat_catalogues.MEANS_OF_PAYMENT)  # catalogue 59 (001 «Depósito en cuenta» by default)
DETRACCION_OPERATION = sunat_catalogues.DETRACCION_OPERATION  # catalogue 51: «Operación sujeta a detracción»
DETRACCION_LEGEND = (sunat_catalogues.DETRACCION_NOTICE,
                     sunat_catalogues.LEGENDS[sunat_catalogues.DETRACCION_NOTICE])  # catalogue 52
DETRACCION_THRESHOLD = "700"  # soles: the SPOT applies to operations above this amount
OPERATION_TYPES = sunat_catalogues.OPERATION_TYPES  # catalogue 51: the operation types Yupana issues
DOMESTIC_SALE = sunat_catalogues.DOMESTIC_SALE
EXPORT_OF_GOODS = sunat_catalogues.EXPORT_OF_GOODS
EXPORTS_TO_NON_RESIDENTS = sunat_catalogues.EXPORTS_TO_NON_RESIDENTS
