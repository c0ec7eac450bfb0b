"""Facturas (01) and boletas de venta (03): UBL 2.1 Invoice, told apart by cbc:InvoiceTypeCode; series F### and
B###; judged by SUNAT's ValidaExprRegFactura / ValidaExprRegBoleta sheets; sent by sendBill.

A factura takes the detracción (and is refused without one when a line is subject to it above S/ 700) and is paid
al contado unless it says otherwise; a boleta's customer may go without a document up to S/ 700.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal

from app.core.contract import GenerarXmlRequest
from app.core.invoicing import prevalidation as pv
from app.core.invoicing import ubl
from app.core.invoicing.documents import sale
from app.core.invoicing.documents.kind import DocumentType, Identity, Numbering
from app.core.invoicing.namespaces import INVOICE, VOUCHER_ROOTS
from app.core.invoicing.sunat_catalogues import BOLETA, FACTURA, SIN_DOCUMENTO

LAYOUT = ubl.UblLayout(VOUCHER_ROOTS[INVOICE], "InvoiceLine", "InvoicedQuantity", "LegalMonetaryTotal", invoice=True)
IDENTITY = Identity(LAYOUT.root, INVOICE, type_code="cbc:InvoiceTypeCode")


def numbering(letter: str) -> Numbering:
    """A sale's series: its letter and three letters or digits (F001, B001, FA01…), or four digits (a contingency
    voucher, 0001)."""
    return Numbering(re.compile(rf"^({letter}[A-Z0-9]{{3}}|[0-9]{{4}})$"), f"{letter}001", letter)


class InvoiceRules(sale.SaleRules):
    layout = LAYOUT


class FacturaRules(InvoiceRules):
    code = FACTURA
    letter = "F"
    takes_detraccion = True

    def payment(self, request: GenerarXmlRequest, problems: pv.Problems, total: Decimal, fecha: date
                ) -> sale.Payment:
        return sale.payment_terms(request, problems, total, fecha, sale.CONTADO)  # al contado unless it says

    def check_detraccion(self, request: GenerarXmlRequest, problems: pv.Problems, total: Decimal, moneda: str,
                         detraccion: ubl.Detraccion | None) -> None:
        if (detraccion is None and (total > sale.SPOT_THRESHOLD or moneda != "PEN")
                and request.detraccion is None):
            sale.spot_missing(request, problems, total, moneda)


class BoletaRules(InvoiceRules):
    code = BOLETA
    letter = "B"

    def boleta_customer(self, request: GenerarXmlRequest) -> bool:
        return True

    def check_customer_total(self, request: GenerarXmlRequest, problems: pv.Problems, receptor: ubl.Party,
                             moneda: str, total: Decimal) -> None:
        if receptor.tipo_documento == SIN_DOCUMENTO and moneda == "PEN" and total > pv.BOLETA_ID_THRESHOLD:
            problems.add("receptor.numero_documento", "Una boleta de más de S/ 700.00 debe identificar al cliente "
                         "(«receptor.tipo_documento» y «receptor.numero_documento»).", "2396")


def _kind(rules: InvoiceRules, sheet: str) -> DocumentType:
    assert rules.letter is not None
    return sale.document_type(rules, IDENTITY, numbering(rules.letter), sheet)


FACTURA_TYPE = _kind(FacturaRules(), "ValidaExprRegFactura-2.0.1.xsl")
BOLETA_TYPE = _kind(BoletaRules(), "ValidaExprRegBoleta-2.0.1.xsl")
