"""Notas de crédito (07): UBL 2.1 CreditNote modifying a factura or a boleta, for a reason of catalogue 09; judged
by SUNAT's ValidaExprRegNC sheet; sent by sendBill. A note of reason 13 corrects a factura's instalments: its
lines are of value 0 and it carries the corrected cuotas (cac:PaymentTerms)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from app.core.contract import GenerarXmlRequest
from app.core.invoicing import prevalidation as pv
from app.core.invoicing import ubl
from app.core.invoicing.documents import note, sale
from app.core.invoicing.documents.kind import Identity
from app.core.invoicing.namespaces import CREDIT_NOTE, VOUCHER_ROOTS
from app.core.invoicing.sunat_catalogues import CREDIT_NOTE_REASONS, INSTALMENTS_REASON, NOTA_CREDITO

LAYOUT = ubl.UblLayout(VOUCHER_ROOTS[CREDIT_NOTE], "CreditNoteLine", "CreditedQuantity", "LegalMonetaryTotal")


class CreditNoteRules(note.NoteRules):
    code = NOTA_CREDITO
    layout = LAYOUT
    reasons = CREDIT_NOTE_REASONS
    catalogue = "09"
    reference_type_error, reference_number_error = "2116", "2117"

    def valueless_lines_ok(self, request: GenerarXmlRequest) -> bool:
        return request.codigo_motivo == INSTALMENTS_REASON  # its lines only say what the instalments are of

    def check_lines(self, request: GenerarXmlRequest, problems: pv.Problems, lines: list[ubl.Line],
                    total: Decimal) -> None:
        """Reason 11 as any note; reason 13 corrects the instalments only: its lines and total are 0 (3315)."""
        super().check_lines(request, problems, lines, total)
        if request.codigo_motivo == INSTALMENTS_REASON and total:
            for index, item in enumerate(request.items):
                if item.precio_unitario:
                    problems.add(f"items[{index}].precio_unitario", f"El campo «items[{index}].precio_unitario» debe "
                                 "ser 0 en una nota de crédito de motivo 13: corrige las cuotas, no acredita un monto.",
                                 "3315")
                    return

    def payment(self, request: GenerarXmlRequest, problems: pv.Problems, total: Decimal, fecha: date
                ) -> sale.Payment:
        """Reason 13 carries the factura's instalments, corrected (the note itself is of 0: their sum is not bound
        by its total); any other reason has no payment terms."""
        if request.codigo_motivo != INSTALMENTS_REASON:
            return None, []
        forma = request.forma_pago
        if forma is None or forma.tipo != sale.CREDITO or not forma.cuotas:
            problems.add("forma_pago.cuotas", "Una nota de crédito de motivo 13 (ajuste de montos y/o fechas de "
                         "pago) lleva las cuotas corregidas en «forma_pago» (tipo Credito y «forma_pago.cuotas»).",
                         "3257")
            return None, []
        return sale.payment_terms(request, problems, Decimal("Infinity"), fecha, None)


NOTA_CREDITO_TYPE = sale.document_type(CreditNoteRules(), Identity(LAYOUT.root, CREDIT_NOTE), note.numbering("FC01"),
                                       "ValidaExprRegNC-2.0.1.xsl")
