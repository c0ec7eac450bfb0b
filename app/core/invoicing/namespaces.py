"""XML namespaces of UBL, SUNAT's extensions and XML-DSig: one home, imported wherever XML is built or read."""

from __future__ import annotations

CAC = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
CBC = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
EXT = "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2"
DS = "http://www.w3.org/2000/09/xmldsig#"
SAC = "urn:sunat:names:specification:ubl:peru:schema:xsd:SunatAggregateComponents-1"
VOIDED_DOCUMENTS = "urn:sunat:names:specification:ubl:peru:schema:xsd:VoidedDocuments-1"
SUMMARY_DOCUMENTS = "urn:sunat:names:specification:ubl:peru:schema:xsd:SummaryDocuments-1"

# Prefix → namespace, for XPath and for building documents with the prefixes SUNAT's peers use.
UBL = {"cac": CAC, "cbc": CBC, "ext": EXT, "ds": DS, "sac": SAC}
