"""XML namespaces of UBL, SUNAT's extensions and XML-DSig: one home, imported wherever XML is built or read.

(The SOAP envelope's own namespaces, WS-Security's and SUNAT's service namespace live with the SOAP client,
app.core.invoicing.soap, their one home.)
"""

from __future__ import annotations

UBL_SCHEMA = "urn:oasis:names:specification:ubl:schema:xsd:"  # + "<root>-2": a UBL document's own namespace
CAC = UBL_SCHEMA + "CommonAggregateComponents-2"
CBC = UBL_SCHEMA + "CommonBasicComponents-2"
EXT = UBL_SCHEMA + "CommonExtensionComponents-2"
INVOICE = UBL_SCHEMA + "Invoice-2"
CREDIT_NOTE = UBL_SCHEMA + "CreditNote-2"
DEBIT_NOTE = UBL_SCHEMA + "DebitNote-2"
APPLICATION_RESPONSE = UBL_SCHEMA + "ApplicationResponse-2"  # SUNAT's CDR
DESPATCH_ADVICE = UBL_SCHEMA + "DespatchAdvice-2"  # guías de remisión (GRE 2.0)
DS = "http://www.w3.org/2000/09/xmldsig#"
SAC = "urn:sunat:names:specification:ubl:peru:schema:xsd:SunatAggregateComponents-1"
VOIDED_DOCUMENTS = "urn:sunat:names:specification:ubl:peru:schema:xsd:VoidedDocuments-1"
SUMMARY_DOCUMENTS = "urn:sunat:names:specification:ubl:peru:schema:xsd:SummaryDocuments-1"

# Prefix → namespace, for XPath and for building documents with the prefixes SUNAT's peers use.
UBL = {"cac": CAC, "cbc": CBC, "ext": EXT, "ds": DS, "sac": SAC}
# The root element of SUNAT's vouchers by their namespace (which type each is: app/core/invoicing/documents/).
VOUCHER_ROOTS = {INVOICE: "Invoice", CREDIT_NOTE: "CreditNote", DEBIT_NOTE: "DebitNote"}


def document_namespace(root: str) -> str:
    """The namespace of a UBL document whose root element is `root` ("Invoice" → …:Invoice-2)."""
    return f"{UBL_SCHEMA}{root}-2"
