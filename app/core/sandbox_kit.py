"""The wire formats the sandboxes share with the engine: SUNAT's namespaces, SOAP constants, codes, catalogues and rule
sheets, the vouchers SUNAT takes (their roots and file names), the XML signer, the CDR reader, the messaging events
and phone numbers, the clock and a plain HTTP server.

A sandbox (app/sandbox) stands in for an outside service, so it must speak exactly what the engine speaks; it
imports this module and app/core/api.py and nothing else of app.core (tests/core/test_package_layout.py).
"""

from __future__ import annotations

from app.core.invoicing import cdr, sunat_catalogues, sunat_codes, sunat_errors, sunat_rules
from app.core.invoicing.cdr import read_zip, safe_parser
from app.core.invoicing.namespaces import (
    APPLICATION_RESPONSE,
    CAC,
    CBC,
    DS,
    EXT,
    SAC,
    SUMMARY_DOCUMENTS,
    VOIDED_DOCUMENTS,
)
from app.core.invoicing.soap import SERVICE_NS, SOAP_ENV, TICKET_DONE, TICKET_PENDING, TICKET_REJECTED, WSSE
from app.core.invoicing.statuses import ACEPTADO, ANULADO, RECHAZADO
from app.core.invoicing.sunat_oauth import CLIENT_REALM, VALIDITY_SCOPE
from app.core.invoicing.ubl_identity import FILE_NAME, SUNAT_ROOTS, identify
from app.core.invoicing.xmldsig import sign_xml, verify_xml
from app.core.lookup.providers import token_secret_name
from app.core.messaging import events as messaging_events
from app.core.messaging.phone import to_jid
from app.core.platform import clock
from app.core.platform.http.httpserver import ServerThread
from app.core.platform.identifiers import ruc_check_digit
from app.core.platform.ubigeo import table as ubigeo_table

__all__ = [
    "cdr", "sunat_catalogues", "sunat_codes", "sunat_errors", "sunat_rules", "read_zip", "safe_parser",
    "APPLICATION_RESPONSE", "CAC", "CBC", "DS", "EXT", "SAC", "SUMMARY_DOCUMENTS", "VOIDED_DOCUMENTS",
    "SERVICE_NS", "SOAP_ENV", "TICKET_DONE", "TICKET_PENDING", "TICKET_REJECTED", "WSSE",
    "ACEPTADO", "ANULADO", "RECHAZADO", "FILE_NAME", "SUNAT_ROOTS", "identify", "sign_xml", "verify_xml", "token_secret_name",
    "messaging_events", "to_jid", "clock", "ServerThread", "ruc_check_digit", "ubigeo_table",
    "CLIENT_REALM", "VALIDITY_SCOPE",
]
