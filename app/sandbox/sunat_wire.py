"""What the SUNAT sandbox puts on the wire, shared by its bill service (sunat.py) and its summary desk
(sunat_summaries.py): SOAP answers and faults, the CDR, SUNAT's key of a voucher, the injected failure patterns."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from lxml import etree

from app.core.sandbox_kit import APPLICATION_RESPONSE as AR
from app.core.sandbox_kit import CAC, CBC, DS, EXT, SERVICE_NS, SOAP_ENV, clock, sunat_errors

SUNAT_RUC = "20131312955"
REJECT_MODE = re.compile(r"^reject:(?P<code>[234]\d{3})$")  # answer a CDR with this code, as SUNAT would
FAULT_MODE = re.compile(r"^fault:(?P<code>\d{4})$")  # not for sendBill: answer this SOAP fault


class Fault(Exception):
    """Answer with a SOAP fault `soap-env:Client.<code>` carrying the catalogue's text."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(code)
        self.code = code
        self.detail = detail


@dataclass
class Outcome:
    """What the sandbox decided about one voucher: SUNAT's code, text and observations."""

    code: str
    description: str
    notes: list[str]


def voucher_key(ruc: str, tipo: str, serie: str, numero: int | str) -> str:
    """SUNAT knows a voucher by RUC, type, series and the number's value (F001-00000007 is F001-7)."""
    return f"{ruc}-{tipo}-{serie}-{int(numero)}"


def fault_envelope(code: str, detail: str = "", rules_dir: str = "") -> bytes:
    """A SOAP 1.1 fault as SUNAT writes it: faultcode soap-env:Client.NNNN, the catalogue's text."""
    soap = f"{{{SOAP_ENV}}}"
    envelope = etree.Element(soap + "Envelope", nsmap={"soap-env": SOAP_ENV})
    etree.SubElement(envelope, soap + "Header")
    fault = etree.SubElement(etree.SubElement(envelope, soap + "Body"), soap + "Fault")
    etree.SubElement(fault, "faultcode").text = f"soap-env:Client.{code}"
    text = sunat_errors.describe(code, rules_dir)
    etree.SubElement(fault, "faultstring").text = f"{text} - Detalle: {detail}" if detail else text
    return etree.tostring(envelope, xml_declaration=True, encoding="UTF-8")


def answer_envelope(element: str, fields: list[tuple[str, str]],
                    wrapper: tuple[str, list[tuple[str, str]]] | None = None) -> bytes:
    soap = f"{{{SOAP_ENV}}}"
    envelope = etree.Element(soap + "Envelope", nsmap={"soap-env": SOAP_ENV})
    etree.SubElement(envelope, soap + "Header")
    answer = etree.SubElement(etree.SubElement(envelope, soap + "Body"), f"{{{SERVICE_NS}}}{element}",
                              nsmap={"br": SERVICE_NS})
    for name, value in fields:
        etree.SubElement(answer, name).text = value
    if wrapper is not None:
        inner = etree.SubElement(answer, wrapper[0])
        for name, value in wrapper[1]:
            etree.SubElement(inner, name).text = value
    return etree.tostring(envelope, xml_declaration=True, encoding="UTF-8")


def application_response(stem: str, outcome: Outcome, reference: str | None = None, link: str | None = None) -> bytes:
    """The CDR in the shape of SUNAT's (UBL 2.0 ApplicationResponse), unsigned. `reference` is what it answers
    for (ReferenceID): the voucher's serie-número by default, a summary's ID (RA-20261121-1) for a summary. `link`:
    a guía's, the address its QR encodes (cbc:DocumentDescription, as SUNAT's GRE CDRs carry it)."""
    ruc, tipo, serie, numero = (stem.split("-") + ["", "", "", ""])[:4]
    now = clock.now().astimezone(clock.PERU)
    cbc, cac, ext = f"{{{CBC}}}", f"{{{CAC}}}", f"{{{EXT}}}"
    root = etree.Element(f"{{{AR}}}ApplicationResponse",
                         nsmap={None: AR, "cac": CAC, "cbc": CBC, "ext": EXT, "ds": DS})
    etree.SubElement(etree.SubElement(etree.SubElement(root, ext + "UBLExtensions"), ext + "UBLExtension"),
                     ext + "ExtensionContent")
    for name, value in [("UBLVersionID", "2.0"), ("CustomizationID", "1.0"),
                        ("ID", str(random.randrange(10 ** 14, 10 ** 15))),
                        ("IssueDate", now.date().isoformat()), ("IssueTime", now.strftime("%H:%M:%S")),
                        ("ResponseDate", now.date().isoformat()), ("ResponseTime", now.strftime("%H:%M:%S"))]:
        etree.SubElement(root, cbc + name).text = value
    for note in outcome.notes:
        etree.SubElement(root, cbc + "Note").text = note
    signature = etree.SubElement(root, cac + "Signature")
    etree.SubElement(signature, cbc + "ID").text = "SignSUNAT"
    party = etree.SubElement(signature, cac + "SignatoryParty")
    etree.SubElement(etree.SubElement(party, cac + "PartyIdentification"), cbc + "ID").text = SUNAT_RUC
    etree.SubElement(etree.SubElement(party, cac + "PartyName"), cbc + "Name").text = "SUNAT"
    attachment = etree.SubElement(etree.SubElement(signature, cac + "DigitalSignatureAttachment"),
                                  cac + "ExternalReference")
    etree.SubElement(attachment, cbc + "URI").text = "#SignSUNAT"
    etree.SubElement(etree.SubElement(etree.SubElement(root, cac + "SenderParty"), cac + "PartyIdentification"),
                     cbc + "ID").text = SUNAT_RUC
    etree.SubElement(etree.SubElement(etree.SubElement(root, cac + "ReceiverParty"), cac + "PartyIdentification"),
                     cbc + "ID").text = ruc
    document = etree.SubElement(root, cac + "DocumentResponse")
    response = etree.SubElement(document, cac + "Response")
    reference = reference or (f"{serie}-{numero}" if numero else f"{tipo}-{serie}")
    etree.SubElement(response, cbc + "ReferenceID").text = reference
    etree.SubElement(response, cbc + "ResponseCode").text = outcome.code
    etree.SubElement(response, cbc + "Description").text = outcome.description
    document_reference = etree.SubElement(document, cac + "DocumentReference")
    etree.SubElement(document_reference, cbc + "ID").text = reference
    if link:
        etree.SubElement(document_reference, cbc + "DocumentDescription").text = link
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")
