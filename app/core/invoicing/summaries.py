"""Comunicación de baja (RA) and resumen diario (RC): SUNAT's UBL 2.0 summary documents, built pure.

Like the voucher builder, this knows nothing of storage or the engine: it turns plain data into the
unsigned XML that the signer completes (the signature goes into the empty `ext:ExtensionContent`).

- RA (`VoidedDocuments`, CustomizationID 1.0): voids facturas and their notes (types 01, 07, 08; a
  boleta is voided through an RC since 2018, SUNAT code 2308).
- RC (`SummaryDocuments`, CustomizationID 1.1): reports boletas and their notes, each with its status
  (1 add, 2 modify, 3 void), its totals by affectation and its IGV.

Both are sent to SUNAT with sendSummary as `RUC-<cbc:ID>.zip` and answer a ticket. Their ID is
`RA-YYYYMMDD-N` / `RC-YYYYMMDD-N`: the date they are issued and a counter of that day, per issuer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from lxml import etree

from app.core.invoicing.cdr import safe_parser
from app.core.invoicing.namespaces import CAC, CBC, EXT, SAC, SUMMARY_DOCUMENTS, UBL, VOIDED_DOCUMENTS
from app.core.invoicing.sunat_catalogues import BOLETA, FACTURA, NOTES
from app.core.invoicing.ubl import ICBPER, IGV, TaxScheme

SIGNATURE_ID = "SignatureSP"
VOIDABLE_BY_RA = (FACTURA, *NOTES)  # catalogue 01: a factura and the notes of facturas
SUMMARIZED_BY_RC = (BOLETA, *NOTES)  # a boleta and the notes of boletas
CONDITION_ADD, CONDITION_MODIFY, CONDITION_VOID = "1", "2", "3"
# sac:BillingPayment/cbc:InstructionID: which kind of operations an amount totals (catalogue 11).
PAYMENT_KINDS = {"gravadas": "01", "exoneradas": "02", "inafectas": "03", "exportacion": "04", "gratuitas": "05"}
MAX_SUMMARY_LINES = 500  # SUNAT's limit of SummaryDocumentsLine in one RC
MAX_REASON = 100  # SUNAT accepts up to 100 characters of void reason
_ID = re.compile(r"^(RA|RC)-(\d{8})-(\d{1,5})$")
_MONEY = Decimal("0.01")


@dataclass(frozen=True)
class Issuer:
    ruc: str
    razon_social: str


@dataclass(frozen=True)
class VoidLine:
    """One voucher voided by a RA, with the reason told to SUNAT."""

    tipo: str
    serie: str
    numero: int
    motivo: str


@dataclass(frozen=True)
class Reference:
    """The boleta a note of an RC modifies."""

    tipo: str
    serie: str
    numero: int


@dataclass(frozen=True)
class SummaryLine:
    """One boleta (or note of a boleta) of an RC, with its status and totals."""

    tipo: str
    serie: str
    numero: int
    estado: str  # CONDITION_ADD, CONDITION_MODIFY or CONDITION_VOID
    total: Decimal
    igv: Decimal
    cliente_tipo_documento: str = "0"
    cliente_numero_documento: str = "-"
    moneda: str = "PEN"
    # Amounts by kind of operation (PAYMENT_KINDS); only those above zero are written.
    montos: dict[str, Decimal] = field(default_factory=dict)
    referencia: Reference | None = None
    icbper: Decimal = Decimal(0)  # the plastic bag tax (scheme 7152), a TaxTotal of its own when above zero


def summary_id(kind: str, issued: date, counter: int) -> str:
    """`RA-20261121-1`: the kind, the day it is issued, that day's counter for the issuer."""
    if kind not in ("RA", "RC") or counter < 1:
        raise ValueError(f"summary kind {kind!r} counter {counter}")
    return f"{kind}-{issued:%Y%m%d}-{counter}"


def parse_summary_id(value: str) -> tuple[str, date, int]:
    found = _ID.match(value)
    if not found:
        raise ValueError(f"not a summary id: {value!r}")
    day = found.group(2)
    return found.group(1), date(int(day[:4]), int(day[4:6]), int(day[6:])), int(found.group(3))


def file_name(ruc: str, ident: str) -> str:
    """The name SUNAT expects, without extension: `20600000005-RA-20261121-1`."""
    return f"{ruc}-{ident}"


def _sub(parent: etree._Element, namespace: str, tag: str, text: str | None = None,
         **attributes: str) -> etree._Element:
    element = etree.SubElement(parent, f"{{{namespace}}}{tag}", attributes)
    if text is not None:
        element.text = text
    return element


def _money(parent: etree._Element, namespace: str, tag: str, amount: Decimal, currency: str) -> None:
    _sub(parent, namespace, tag, str(amount.quantize(_MONEY)), currencyID=currency)


def _head(root_tag: str, root_namespace: str, customization: str, ident: str, reference_date: date,
          issue_date: date, issuer: Issuer) -> etree._Element:
    nsmap: dict[str | None, str] = {None: root_namespace}
    nsmap.update(UBL)
    root = etree.Element(f"{{{root_namespace}}}{root_tag}", nsmap=nsmap)
    extension = _sub(_sub(root, EXT, "UBLExtensions"), EXT, "UBLExtension")
    _sub(extension, EXT, "ExtensionContent")  # the signer puts ds:Signature here
    _sub(root, CBC, "UBLVersionID", "2.0")
    _sub(root, CBC, "CustomizationID", customization)
    _sub(root, CBC, "ID", ident)
    _sub(root, CBC, "ReferenceDate", reference_date.isoformat())
    _sub(root, CBC, "IssueDate", issue_date.isoformat())
    signature = _sub(root, CAC, "Signature")
    _sub(signature, CBC, "ID", "IDSignSP")
    party = _sub(signature, CAC, "SignatoryParty")
    _sub(_sub(party, CAC, "PartyIdentification"), CBC, "ID", issuer.ruc)
    _sub(_sub(party, CAC, "PartyName"), CBC, "Name", issuer.razon_social)
    attachment = _sub(_sub(signature, CAC, "DigitalSignatureAttachment"), CAC, "ExternalReference")
    _sub(attachment, CBC, "URI", f"#{SIGNATURE_ID}")
    supplier = _sub(root, CAC, "AccountingSupplierParty")
    _sub(supplier, CBC, "CustomerAssignedAccountID", issuer.ruc)
    _sub(supplier, CBC, "AdditionalAccountID", "6")
    _sub(_sub(_sub(supplier, CAC, "Party"), CAC, "PartyLegalEntity"), CBC, "RegistrationName", issuer.razon_social)
    return root


def _serialize(root: etree._Element) -> bytes:
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _numbered_lines(root: etree._Element, element: str, lines: list) -> Iterator[tuple[etree._Element, Any]]:
    """Each voucher's line element, numbered from 1 (cbc:LineID) with its type (cbc:DocumentTypeCode) written; a
    summary of no voucher is refused (ValueError)."""
    if not lines:
        raise ValueError(f"a summary needs at least one voucher (no {element})")
    for number, line in enumerate(lines, start=1):
        row = _sub(root, SAC, element)
        _sub(row, CBC, "LineID", str(number))
        _sub(row, CBC, "DocumentTypeCode", line.tipo)
        yield row, line


def build_voided(issuer: Issuer, ident: str, reference_date: date, issue_date: date,
                 lines: list[VoidLine]) -> bytes:
    """The unsigned RA: `reference_date` is the day the voided vouchers were issued."""
    root = _head("VoidedDocuments", VOIDED_DOCUMENTS, "1.0", ident, reference_date, issue_date, issuer)
    for row, line in _numbered_lines(root, "VoidedDocumentsLine", lines):
        _sub(row, SAC, "DocumentSerialID", line.serie)
        _sub(row, SAC, "DocumentNumberID", str(line.numero))
        _sub(row, SAC, "VoidReasonDescription", line.motivo[:MAX_REASON])
    return _serialize(root)


def build_summary(issuer: Issuer, ident: str, reference_date: date, issue_date: date,
                  lines: list[SummaryLine]) -> bytes:
    """The unsigned RC: `reference_date` is the day the boletas of its lines were issued."""
    root = _head("SummaryDocuments", SUMMARY_DOCUMENTS, "1.1", ident, reference_date, issue_date, issuer)
    for row, line in _numbered_lines(root, "SummaryDocumentsLine", lines):
        _sub(row, CBC, "ID", f"{line.serie}-{line.numero}")
        customer = _sub(row, CAC, "AccountingCustomerParty")
        _sub(customer, CBC, "CustomerAssignedAccountID", line.cliente_numero_documento or "-")
        _sub(customer, CBC, "AdditionalAccountID", line.cliente_tipo_documento or "0")
        if line.referencia is not None:
            document = _sub(_sub(row, CAC, "BillingReference"), CAC, "InvoiceDocumentReference")
            _sub(document, CBC, "ID", f"{line.referencia.serie}-{line.referencia.numero}")
            _sub(document, CBC, "DocumentTypeCode", line.referencia.tipo)
        _sub(_sub(row, CAC, "Status"), CBC, "ConditionCode", line.estado)
        _money(row, SAC, "TotalAmount", line.total, line.moneda)
        for kind, code in PAYMENT_KINDS.items():
            amount = line.montos.get(kind, Decimal(0))
            if amount > 0:
                payment = _sub(row, SAC, "BillingPayment")
                _money(payment, CBC, "PaidAmount", amount, line.moneda)
                _sub(payment, CBC, "InstructionID", code)
        _tax_total(row, line.igv, line.moneda, IGV)
        if line.icbper > 0:
            _tax_total(row, line.icbper, line.moneda, ICBPER)
    return _serialize(root)


@dataclass(frozen=True)
class ReadLine:
    """One voucher a signed RA/RC names (read back from its file): its identity, the line's condition (a RA's are
    all CONDITION_VOID) and the reason (a RA's; "" in a RC)."""

    tipo: str
    serie: str
    numero: int
    condition: str
    motivo: str = ""


@dataclass(frozen=True)
class ReadSummary:
    """A signed RA/RC read back (`read_summary`): what storing it again needs."""

    kind: str
    ident: str
    emisor_ruc: str
    reference_date: date
    issue_date: date
    lines: list[ReadLine]


def read_summary(xml: bytes) -> ReadSummary:
    """The RA or RC `build_voided` / `build_summary` made (signed or not), read back; ValueError when it is not one."""
    root = etree.fromstring(xml, safe_parser())
    kind = {VOIDED_DOCUMENTS: "RA", SUMMARY_DOCUMENTS: "RC"}.get(etree.QName(root).namespace or "")
    ident = (root.findtext(f"{{{CBC}}}ID") or "").strip()
    if kind is None or not ident.startswith(f"{kind}-"):
        raise ValueError(f"not a RA/RC: {etree.QName(root).localname} {ident!r}")
    parse_summary_id(ident)
    lines = []
    if kind == "RA":
        for row in root.iter(f"{{{SAC}}}VoidedDocumentsLine"):
            lines.append(ReadLine(_text(row, CBC, "DocumentTypeCode"), _text(row, SAC, "DocumentSerialID"),
                                  int(_text(row, SAC, "DocumentNumberID")), CONDITION_VOID,
                                  _text(row, SAC, "VoidReasonDescription")))
    else:
        for row in root.iter(f"{{{SAC}}}SummaryDocumentsLine"):
            serie, _, numero = _text(row, CBC, "ID").partition("-")
            condition = (row.findtext(f"{{{CAC}}}Status/{{{CBC}}}ConditionCode") or "").strip()
            lines.append(ReadLine(_text(row, CBC, "DocumentTypeCode"), serie, int(numero), condition))
    supplier = root.findtext(f"{{{CAC}}}AccountingSupplierParty/{{{CBC}}}CustomerAssignedAccountID") or ""
    return ReadSummary(kind, ident, supplier.strip(), date.fromisoformat(_text(root, CBC, "ReferenceDate")),
                       date.fromisoformat(_text(root, CBC, "IssueDate")), lines)


def _text(parent: etree._Element, namespace: str, tag: str) -> str:
    return (parent.findtext(f"{{{namespace}}}{tag}") or "").strip()


def _tax_total(row: etree._Element, amount: Decimal, currency: str, tax: TaxScheme) -> None:
    """One tax of a RC line: its TaxTotal holds exactly one TaxSubtotal of the same amount (SUNAT's 2344)."""
    taxes = _sub(row, CAC, "TaxTotal")
    _money(taxes, CBC, "TaxAmount", amount, currency)
    subtotal = _sub(taxes, CAC, "TaxSubtotal")
    _money(subtotal, CBC, "TaxAmount", amount, currency)
    scheme = _sub(_sub(subtotal, CAC, "TaxCategory"), CAC, "TaxScheme")
    for tag, text in (("ID", tax.code), ("Name", tax.name), ("TaxTypeCode", tax.type_code)):
        _sub(scheme, CBC, tag, text)
