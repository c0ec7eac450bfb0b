"""Who issued a UBL voucher and which one it is, read from its XML: RUC, type, series and number.

Both sides of a submission need it: Yupana names the zip after it, and the SUNAT sandbox checks
the names it receives against it, as SUNAT does (file name slices: RUC-TT-SERIE-NUMERO).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from app.core.invoicing.documents import registry
from app.core.invoicing.namespaces import CAC, CBC

NS = {"cac": CAC, "cbc": CBC}
# The file names SUNAT takes by sendBill (RUC-TT-SERIE-NUMERO): the SUNAT sandbox checks what it receives against it.
FILE_NAME = re.compile(r"^(?P<ruc>\d{11})-(?P<tipo>" + "|".join(kind.code for kind in registry.BUILT_IN)
                       + r")-(?P<serie>[A-Z0-9]{4})-(?P<numero>\d{1,8})$")
# The roots of those vouchers (a root alone may name the type: the registry says which).
SUNAT_ROOTS = frozenset(kind.identity.root for kind in registry.BUILT_IN)


# What names a voucher and what it is worth: read from the parsed tree, so each must be what the signature covers.
# Canonical XML drops comments and a signature survives them: `F001-2<!--x-->0` is signed as F001-20 and read
# as F001-2 by `.text`. These must therefore hold only text (issue 12).
IDENTITY_FIELDS = (
    ("cbc:ID", "cbc:ID"),
    ("cbc:IssueDate", "cbc:IssueDate"),
    ("cbc:IssueTime", "cbc:IssueTime"),
    ("cbc:InvoiceTypeCode", "cbc:InvoiceTypeCode"),
    ("cbc:DocumentCurrencyCode", "cbc:DocumentCurrencyCode"),
    ("cac:AccountingSupplierParty/cac:Party/cac:PartyIdentification/cbc:ID", "RUC del emisor"),
    ("cac:AccountingSupplierParty/cbc:CustomerAssignedAccountID", "RUC del emisor"),
    ("cac:AccountingCustomerParty/cac:Party/cac:PartyIdentification/cbc:ID", "documento del cliente"),
    ("cac:TaxTotal/cbc:TaxAmount", "cbc:TaxAmount"),
    ("cac:LegalMonetaryTotal/*", None),
    ("cac:RequestedMonetaryTotal/*", None),
)


class IdentityNotPlain(ValueError):
    """An identity field holds a comment, a processing instruction, an entity or an element."""

    def __init__(self, label: str) -> None:
        super().__init__(label)
        self.label = label


def check_plain_identity(root: etree._Element) -> None:
    """Raise IdentityNotPlain naming the first identity field that is not plain text."""
    for path, label in IDENTITY_FIELDS:
        for found in root.iterfind(path, NS):
            if len(found):  # lxml counts comments, PIs and entity references as children too
                raise IdentityNotPlain(label or f"cbc:{etree.QName(found).localname}")


@dataclass(frozen=True)
class DocumentId:
    ruc: str
    tipo: str
    serie: str
    numero: str  # as written after the hyphen in cbc:ID: the file name must repeat it exactly

    @property
    def stem(self) -> str:
        return f"{self.ruc}-{self.tipo}-{self.serie}-{self.numero}"


def _text(root: etree._Element, path: str) -> str:
    found = root.find(path, NS)
    return (found.text or "").strip() if found is not None else ""


def issuer_ruc(root: etree._Element) -> str:
    """The issuer's RUC: UBL 2.1's AccountingSupplierParty/Party/PartyIdentification/ID, or UBL 2.0's
    AccountingSupplierParty/CustomerAssignedAccountID; "" when neither is there. The one reading of it: the
    signer (whose certificate must be this RUC's), the sender (the zip's name) and the sandbox use it."""
    return (_text(root, "cac:AccountingSupplierParty/cac:Party/cac:PartyIdentification/cbc:ID")
            or _text(root, "cac:AccountingSupplierParty/cbc:CustomerAssignedAccountID")
            or _text(root, "cac:DespatchSupplierParty/cac:Party/cac:PartyIdentification/cbc:ID"))


def document_type(root: etree._Element) -> str:
    """The type (catalogue 01) of a voucher: the one its root names (a CreditNote is a 07), else what the element
    naming the type says (an Invoice's cbc:InvoiceTypeCode is 01 or 03, a DespatchAdvice's type code 09 or 31)."""
    local = etree.QName(root).localname
    found = registry.code_of_root(local)
    if found:
        return found
    for element in {kind.identity.type_code for kind in registry.with_root(local) if kind.identity.type_code}:
        found = _text(root, element)
        if found:
            return found
    return _text(root, "cbc:InvoiceTypeCode")


def identify(root: etree._Element) -> DocumentId | None:
    """The voucher's identity, or None when the XML lacks a part of it."""
    serie, _, numero = _text(root, "cbc:ID").partition("-")
    ruc, tipo = issuer_ruc(root), document_type(root)
    if not (ruc and tipo and serie and numero):
        return None
    return DocumentId(ruc, tipo, serie, numero)
