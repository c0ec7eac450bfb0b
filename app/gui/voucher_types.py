"""The voucher types the windows issue (catalogue 01) with their first serie, and their names.

A module of its own, light, so that the list of «Comprobantes» shown at start names the types without importing the
form and the detail (they are imported when first opened)."""

from __future__ import annotations

from app.core.api import sunat_catalogues as cat

# The types the form issues and their first serie (notes: F/B follows the reference).
TYPES = {code: (cat.DOCUMENT_TYPES[code], serie) for code, serie in
         ((cat.FACTURA, "F001"), (cat.BOLETA, "B001"), (cat.NOTA_CREDITO, "FC01"), (cat.NOTA_DEBITO, "FD01"))}
TYPE_NAMES = {code: name for code, (name, _) in TYPES.items()}
# What the Comprobantes list names and filters by: the form's types and the guías de remisión (issued from
# `yupana guia` or the local API), each with its own filter.
LISTED_NAMES = {**TYPE_NAMES,
                **{code: cat.DOCUMENT_TYPES[code] for code in (cat.GUIA_REMITENTE, cat.GUIA_TRANSPORTISTA)}}
