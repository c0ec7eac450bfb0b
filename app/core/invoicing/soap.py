"""SOAP 1.1 client for SUNAT's billService and billConsultService (WS-Security UsernameToken).

The requests are the ones SUNAT's WSDLs (../shared/sunat/wsdl/) describe, document/literal: a
`wsse:Security` header with the user (`RUC + usuario SOL`) and a PasswordText, and a body element
in `http://service.sunat.gob.pe` whose children are unqualified. tests/core/invoicing/test_sunat_soap.py builds
the same request with zeep from those WSDLs and compares. TLS is always verified.
"""

from __future__ import annotations

import base64
import io
import socket
import threading
import zipfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lxml import etree

from app.core.invoicing.cdr import Cdr, read_zip, safe_parser
from app.core.platform.lazy import lazy_module

if TYPE_CHECKING:
    import ssl

    import httpx
else:
    httpx = lazy_module("httpx")

SOAP_ENV = "http://schemas.xmlsoap.org/soap/envelope/"
WSSE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
PASSWORD_TEXT = ("http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0"
                 "#PasswordText")
SERVICE_NS = "http://service.sunat.gob.pe"
MAX_RESPONSE_BYTES = 20 * 1024 * 1024


class SoapFault(Exception):
    """SUNAT answered with a SOAP fault (no CDR): `code` is SUNAT's four-digit code when it gave one."""

    def __init__(self, faultcode: str, faultstring: str, code: str) -> None:
        super().__init__(f"{faultcode}: {faultstring}")
        self.faultcode = faultcode
        self.faultstring = faultstring
        self.code = code


class TransportFailure(Exception):
    """No usable answer: network error, time-out, dropped connection or an HTTP error without a fault.

    `may_have_arrived` is False only when the request certainly never reached SUNAT (connection
    refused): otherwise SUNAT may have processed it and the answer was lost.
    """

    def __init__(self, kind: str, detail: str, may_have_arrived: bool) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.may_have_arrived = may_have_arrived


# getStatus of a summary's ticket: statusCode 0 processed (the CDR says accepted), 98 still in process (no CDR
# yet), 99 processed with errors (the CDR carries the rejection's code).
TICKET_DONE, TICKET_PENDING, TICKET_REJECTED = "0", "98", "99"


@dataclass(frozen=True)
class StatusResponse:
    status_code: str
    status_message: str
    content: bytes | None  # a zip (the CDR) when SUNAT has one


# ---------------------------------------------------------------- zip and envelope

def zip_document(xml_name: str, xml: bytes) -> tuple[str, bytes]:
    """The zip SUNAT expects: named like the XML, with that one XML inside."""
    stem = xml_name[:-4] if xml_name.lower().endswith(".xml") else xml_name
    buffer = io.BytesIO()
    # Deflate's level 1: a ten-line factura's signed XML (16 kB) zips to 3.6 kB against 3.2 kB at level 6, in half
    # the time or less, on «Emitir»'s way to the send (issue 33)
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr(f"{stem}.xml", xml)
    return f"{stem}.zip", buffer.getvalue()


def build_envelope(operation: str, fields: list[tuple[str, str]], username: str, password: str) -> bytes:
    soap = f"{{{SOAP_ENV}}}"
    wsse = f"{{{WSSE}}}"
    envelope = etree.Element(soap + "Envelope", nsmap={"soapenv": SOAP_ENV, "ser": SERVICE_NS, "wsse": WSSE})
    header = etree.SubElement(envelope, soap + "Header")
    security = etree.SubElement(header, wsse + "Security")
    token = etree.SubElement(security, wsse + "UsernameToken")
    etree.SubElement(token, wsse + "Username").text = username
    etree.SubElement(token, wsse + "Password", Type=PASSWORD_TEXT).text = password
    body = etree.SubElement(envelope, soap + "Body")
    call = etree.SubElement(body, f"{{{SERVICE_NS}}}{operation}")
    for name, value in fields:
        etree.SubElement(call, name).text = value
    return etree.tostring(envelope, xml_declaration=True, encoding="UTF-8")


def fault_code(faultcode: str, faultstring: str) -> str:
    """'soap-env:Client.0102' -> '0102'; some faults carry the code in faultstring instead."""
    suffix = faultcode.rsplit(".", 1)[-1] if "." in faultcode else ""
    if suffix.isdigit():
        return suffix.zfill(4)
    head = faultstring.strip().split(" ", 1)[0].strip(" -:")
    return head.zfill(4) if head.isdigit() else ""


def parse_answer(data: bytes) -> etree._Element:
    """The body's first element, or SoapFault. Parsed without network or entity expansion."""
    try:
        root = etree.fromstring(data, safe_parser())
    except etree.XMLSyntaxError as exc:
        raise TransportFailure("bad_answer", f"la respuesta no es XML ({exc.msg})", True) from None
    body = root.find(f"{{{SOAP_ENV}}}Body")
    if body is None or len(body) == 0:
        raise TransportFailure("bad_answer", "la respuesta no es un sobre SOAP", True)
    answer = body[0]
    if etree.QName(answer).localname == "Fault":
        faultcode = (answer.findtext("faultcode") or "").strip()
        faultstring = " ".join((answer.findtext("faultstring") or "").split())
        detail = " ".join("".join(answer.find("detail").itertext()).split()) if answer.find("detail") is not None else ""
        raise SoapFault(faultcode, faultstring or detail, fault_code(faultcode, faultstring or detail))
    return answer


def _child_text(parent: etree._Element | None, name: str) -> str:
    if parent is None:
        return ""
    node = next((c for c in parent if etree.QName(c).localname == name), None)
    return (node.text or "").strip() if node is not None else ""


def _child(parent: etree._Element, name: str) -> etree._Element | None:
    return next((c for c in parent if etree.QName(c).localname == name), None)


def _decode(text: str) -> bytes | None:
    return base64.b64decode(text) if text else None


# ---------------------------------------------------------------- the client

class HttpPool:
    """One reused httpx.Client per SUNAT endpoint (its pool of keep-alive connections), all sharing one SSL
    context: building a client per send reloaded the CA bundle and opened a new TLS connection each time
    (issue 12: 54 ms a send against 8.5 ms). Thread-safe; closed with its owner (the engine)."""

    def __init__(self, max_connections: int = 8) -> None:
        self._clients: dict[str, httpx.Client] = {}
        self._lock = threading.Lock()
        self._ssl: ssl.SSLContext | None = None
        self._max_connections = max_connections  # httpx is loaded at the first client (app.core.platform.lazy)
        self.closed = False

    def _limits(self) -> httpx.Limits:
        return httpx.Limits(max_connections=self._max_connections, max_keepalive_connections=self._max_connections,
                            keepalive_expiry=30)

    def client(self, url: str) -> httpx.Client:
        with self._lock:
            if self.closed:
                raise RuntimeError("the SUNAT HTTP clients are closed")
            found = self._clients.get(url)
            if found is None:
                if self._ssl is None:  # certificates verified, as always; loaded once
                    self._ssl = httpx.create_ssl_context(verify=True)
                # TCP_NODELAY: a request is written as headers, then body; on a kept-alive connection
                # Nagle's algorithm would hold the body until the server ACKs the headers.
                transport = httpx.HTTPTransport(verify=self._ssl, limits=self._limits(),
                                                socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
                found = self._clients[url] = httpx.Client(transport=transport, follow_redirects=False)
            return found

    def close(self) -> None:
        with self._lock:
            self.closed = True
            clients, self._clients = list(self._clients.values()), {}
        for http in clients:
            http.close()


class SunatClient:
    """One SOL identity against one billService (and the billConsultService for CDR look-ups).

    With `http` (an HttpPool) requests go through its reused clients; without, each request opens its own. It is
    also the channel (app.core.invoicing.documents.kind.Channel) of the vouchers SUNAT takes by sendBill: a zip named
    like the XML in, the CDR out."""

    zipped = True  # SUNAT takes a voucher inside a zip named like its XML
    send_operation = "sendBill"
    status_operation = "getStatusCdr"

    def __init__(self, url: str, username: str, password: str, timeout: float, consult_url: str = "",
                 http: HttpPool | None = None) -> None:
        self.url = url
        self.consult_url = consult_url
        self._username = username
        self._password = password
        self.timeout = timeout
        self._http = http

    def _request(self, url: str, payload: bytes, headers: dict[str, str]) -> httpx.Response:
        if self._http is not None:
            return self._http.client(url).post(url, content=payload, headers=headers, timeout=self.timeout)
        with httpx.Client(timeout=self.timeout, verify=True, follow_redirects=False) as http:
            return http.post(url, content=payload, headers=headers)

    def _post(self, url: str, operation: str, fields: list[tuple[str, str]]) -> etree._Element:
        payload = build_envelope(operation, fields, self._username, self._password)
        headers = {"Content-Type": "text/xml; charset=utf-8", "SOAPAction": f'"urn:{operation}"'}
        try:
            response = self._request(url, payload, headers)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            raise TransportFailure("connect", type(exc).__name__, False) from None
        except httpx.TimeoutException as exc:
            raise TransportFailure("timeout", type(exc).__name__, True) from None
        except httpx.TransportError as exc:
            raise TransportFailure("dropped", type(exc).__name__, True) from None
        if len(response.content) > MAX_RESPONSE_BYTES:
            raise TransportFailure("bad_answer", "respuesta demasiado grande", True)
        try:
            return parse_answer(response.content)
        except TransportFailure:
            if response.status_code >= 400:
                raise TransportFailure("http", f"HTTP {response.status_code}", True) from None
            raise

    def send_bill(self, zip_name: str, zip_bytes: bytes) -> bytes:
        """sendBill: the CDR zip (applicationResponse) or SoapFault / TransportFailure."""
        answer = self._post(self.url, "sendBill", [("fileName", zip_name),
                                                   ("contentFile", base64.b64encode(zip_bytes).decode("ascii"))])
        cdr = _decode(_child_text(answer, "applicationResponse"))
        if cdr is None:
            raise TransportFailure("bad_answer", "sendBillResponse sin applicationResponse", True)
        return cdr

    def send_document(self, zip_name: str, zip_bytes: bytes) -> Cdr:
        """The channel's sending: sendBill, its CDR read (SoapFault / TransportFailure, or a 502 for a bad CDR)."""
        return read_zip(self.send_bill(zip_name, zip_bytes))

    def document_cdr(self, ruc: str, tipo: str, serie: str, numero: int) -> Cdr | None:
        """The channel's look-up: the CDR SUNAT keeps for a voucher (getStatusCdr), None when it has none."""
        status = self.get_status_cdr(ruc, tipo, serie, numero)
        return read_zip(status.content) if status.content else None

    def send_summary(self, zip_name: str, zip_bytes: bytes) -> str:
        """sendSummary (resúmenes diarios, comunicaciones de baja): SUNAT's ticket."""
        answer = self._post(self.url, "sendSummary", [("fileName", zip_name),
                                                      ("contentFile", base64.b64encode(zip_bytes).decode("ascii"))])
        return _child_text(answer, "ticket")

    def get_status(self, ticket: str) -> StatusResponse:
        """getStatus of a summary's ticket (billService)."""
        answer = self._post(self.url, "getStatus", [("ticket", ticket)])
        status = _child(answer, "status")
        return StatusResponse(_child_text(status, "statusCode"), _child_text(status, "statusMessage"),
                              _decode(_child_text(status, "content")))

    def get_voucher_status(self, ruc: str, tipo: str, serie: str, numero: int) -> StatusResponse:
        """getStatus (billConsultService, at `consult_url` only): SUNAT's status of a voucher — statusCode 0001
        accepted, 0002 rejected, 0003 voided (F-series facturas and notes only: 0009/0010 for others)."""
        answer = self._post(self.consult_url, "getStatus",
                            [("rucComprobante", ruc), ("tipoComprobante", tipo), ("serieComprobante", serie),
                             ("numeroComprobante", str(int(numero)))])
        status = _child(answer, "status")
        return StatusResponse(_child_text(status, "statusCode"), _child_text(status, "statusMessage"),
                              _decode(_child_text(status, "content")))

    def get_status_cdr(self, ruc: str, tipo: str, serie: str, numero: int) -> StatusResponse:
        """getStatusCdr (billConsultService): the CDR SUNAT keeps for a voucher, if any."""
        answer = self._post(self.consult_url or self.url, "getStatusCdr",
                            [("rucComprobante", ruc), ("tipoComprobante", tipo), ("serieComprobante", serie),
                             ("numeroComprobante", str(int(numero)))])
        status = _child(answer, "statusCdr")
        return StatusResponse(_child_text(status, "statusCode"), _child_text(status, "statusMessage"),
                              _decode(_child_text(status, "content")))
