"""Notas de débito (08): UBL 2.1 DebitNote modifying a factura or a boleta, for a reason of catalogue 10 (its
monetary total is a RequestedMonetaryTotal); judged by SUNAT's ValidaExprRegND sheet; sent by sendBill."""

from __future__ import annotations

from app.core.invoicing import ubl
from app.core.invoicing.documents import note, sale
from app.core.invoicing.documents.kind import Identity
from app.core.invoicing.namespaces import DEBIT_NOTE, VOUCHER_ROOTS
from app.core.invoicing.sunat_catalogues import DEBIT_NOTE_REASONS, NOTA_DEBITO

LAYOUT = ubl.UblLayout(VOUCHER_ROOTS[DEBIT_NOTE], "DebitNoteLine", "DebitedQuantity", "RequestedMonetaryTotal")


class DebitNoteRules(note.NoteRules):
    code = NOTA_DEBITO
    layout = LAYOUT
    reasons = DEBIT_NOTE_REASONS
    catalogue = "10"
    reference_type_error, reference_number_error = "2204", "2205"


NOTA_DEBITO_TYPE = sale.document_type(DebitNoteRules(), Identity(LAYOUT.root, DEBIT_NOTE), note.numbering("FD01"),
                                      "ValidaExprRegND-2.0.1.xsl")
