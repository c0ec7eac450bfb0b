"""Who issued a UBL voucher and which one it is, read from its XML: RUC, type, series and number.

Both sides of a submission need it: Yupana names the zip after it, and the SUNAT sandbox checks
the names it receives against it, as SUNAT does (file name slices: RUC-TT-SERIE-NUMERO).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

CAC = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
CBC = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
NS = {"cac": CAC, "cbc": CBC}
ROOT_TYPES = {"CreditNote": "07", "DebitNote": "08"}  # an Invoice says 01 or 03 in InvoiceTypeCode
FILE_NAME = re.compile(r"^(?P<ruc>\d{11})-(?P<tipo>01|03|07|08)-(?P<serie>[A-Z0-9]{4})-(?P<numero>\d{1,8})$")


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
    """UBL 2.1 PartyIdentification, or UBL 2.0's CustomerAssignedAccountID."""
    return (_text(root, "cac:AccountingSupplierParty/cac:Party/cac:PartyIdentification/cbc:ID")
            or _text(root, "cac:AccountingSupplierParty/cbc:CustomerAssignedAccountID"))


def document_type(root: etree._Element) -> str:
    localname = etree.QName(root).localname
    return ROOT_TYPES.get(localname) or _text(root, "cbc:InvoiceTypeCode")


def identify(root: etree._Element) -> DocumentId | None:
    """The voucher's identity, or None when the XML lacks a part of it."""
    serie, _, numero = _text(root, "cbc:ID").partition("-")
    ruc, tipo = issuer_ruc(root), document_type(root)
    if not (ruc and tipo and serie and numero):
        return None
    return DocumentId(ruc, tipo, serie, numero)
