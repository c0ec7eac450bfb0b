"""The SUNAT catalogue codes the catalogue's records carry.

Units (catalogue 03), identity documents (catalogue 06) and IGV affectations (catalogue 07) are the ones the
voucher builder accepts, defined once in `app.core.invoicing.prevalidation` and imported from there. Catalogue 54
(goods and services subject to detracción) lives with the voucher builder's SUNAT codes.
"""

from __future__ import annotations

from app.core.invoicing import sunat_codes
from app.core.invoicing.prevalidation import AFFECTATIONS, DOCUMENT_TYPES, UNITS

__all__ = ["AFFECTATIONS", "DETRACCIONES", "DOCUMENT_TYPES", "DOCUMENT_NAMES", "UNITS", "NO_DOCUMENT"]

NO_DOCUMENT = "0"  # catalogue 06: «sin documento»

# Catalogue 06 codes by the names people write in a spreadsheet (folded: lower case, no accents).
DOCUMENT_NAMES = {"ruc": "6", "dni": "1", "ce": "4", "carnet de extranjeria": "4", "pasaporte": "7",
                  "cedula diplomatica": "A", "sin documento": "0", "-": "0"}

# Catalogue 54: code → what it covers (its home, with the default rates, is app.core.invoicing.sunat_codes).
DETRACCIONES = {code: name for code, (name, _) in sunat_codes.DETRACCIONES.items()}

assert set(DOCUMENT_NAMES.values()) <= set(DOCUMENT_TYPES)
