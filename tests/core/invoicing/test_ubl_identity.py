"""Who issued a voucher, read from its XML: the one `issuer_ruc` (UBL 2.1, and UBL 2.0's older place)."""

from __future__ import annotations

from lxml import etree

from app.core.invoicing import namespaces
from app.core.invoicing.ubl_identity import document_type, identify, issuer_ruc


def _voucher(supplier: str, root: str = "Invoice", type_code: str = "<cbc:InvoiceTypeCode>01</cbc:InvoiceTypeCode>"
             ) -> etree._Element:
    return etree.fromstring(
        f'<{root} xmlns="{namespaces.document_namespace(root)}" xmlns:cac="{namespaces.CAC}" '
        f'xmlns:cbc="{namespaces.CBC}"><cbc:ID>F001-12</cbc:ID>{type_code}'
        f"<cac:AccountingSupplierParty>{supplier}</cac:AccountingSupplierParty></{root}>")


UBL21 = "<cac:Party><cac:PartyIdentification><cbc:ID> 20100066603 </cbc:ID></cac:PartyIdentification></cac:Party>"
UBL20 = "<cbc:CustomerAssignedAccountID>20600995805</cbc:CustomerAssignedAccountID>"


def test_issuer_ruc_of_ubl_21_trimmed():
    assert issuer_ruc(_voucher(UBL21)) == "20100066603"


def test_issuer_ruc_falls_back_to_ubl_20():
    assert issuer_ruc(_voucher(UBL20)) == "20600995805"
    assert issuer_ruc(_voucher(UBL21 + UBL20)) == "20100066603"  # 2.1's place first


def test_no_issuer_is_empty_and_no_identity():
    root = _voucher("")
    assert issuer_ruc(root) == ""
    assert identify(root) is None


def test_identity_of_a_note_comes_from_its_root():
    root = _voucher(UBL21, "CreditNote", type_code="")
    assert document_type(root) == "07"
    found = identify(root)
    assert found is not None and found.stem == "20100066603-07-F001-12"


def test_document_namespaces_are_ubls():
    assert namespaces.document_namespace("Invoice") == namespaces.INVOICE
    assert namespaces.VOUCHER_ROOTS[namespaces.DEBIT_NOTE] == "DebitNote"
