"""The SUNAT catalogue codes the catalogue's records carry.

Units (catalogue 03), identity documents (catalogue 06) and IGV affectations (catalogue 07) are the ones the
voucher builder accepts (`app.core.invoicing.prevalidation`); every catalogue and its labels has one home,
`app.core.invoicing.sunat_catalogues`, with the spellings people write of identity documents («dni», «ce») and
units («UND», «KG»: read here as their code; vouchers accept every code of catalogue 03).
"""

from __future__ import annotations

from app.core.invoicing import sunat_codes
from app.core.invoicing.prevalidation import AFFECTATIONS, DOCUMENT_TYPES, UNITS
from app.core.invoicing.sunat_catalogues import DNI, GRAVADO, IDENTITY_SPELLINGS, RUC, UNIDAD, unit_code
from app.core.invoicing.sunat_catalogues import SIN_DOCUMENTO as NO_DOCUMENT

__all__ = ["AFFECTATIONS", "DETRACCIONES", "DNI", "DOCUMENT_TYPES", "DOCUMENT_NAMES", "GRAVADO", "NO_DOCUMENT", "RUC",
           "UNIDAD", "UNITS", "unit_code"]

# Catalogue 06 codes by the names people write in a spreadsheet (folded: lower case, no accents).
DOCUMENT_NAMES = IDENTITY_SPELLINGS

# Catalogue 54: code → what it covers (its home, with the default rates, is app.core.invoicing.sunat_catalogues).
DETRACCIONES = {code: name for code, (name, _) in sunat_codes.DETRACCIONES.items()}

assert set(DOCUMENT_NAMES.values()) <= set(DOCUMENT_TYPES)
