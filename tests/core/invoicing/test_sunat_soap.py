"""The SOAP client: the requests it puts on the wire match what zeep builds from SUNAT's WSDLs."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import zeep
from lxml import etree
from zeep.wsse.username import UsernameToken

from app.core.invoicing import soap
from tests.helpers.shared import WSDL_DIR

WSDL = WSDL_DIR
pytestmark = pytest.mark.sunat_files
WSA = "http://www.w3.org/2005/08/addressing"


class Recorder:
    """A loopback HTTP server that keeps each request and answers with a fixed body."""

    def __init__(self, status: int = 200, body: bytes = b"") -> None:
        self.requests: list[tuple[dict, bytes]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                data = self.rfile.read(int(self.headers["Content-Length"]))
                recorder.requests.append((dict(self.headers), data))
                self.send_response(status)
                self.send_header("Content-Type", "text/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/ol-ti-itcpfegem-beta/billService"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def normalized(element: etree._Element) -> tuple:
    """A namespace-aware shape of an element, blind to prefixes and to whitespace between tags."""
    return (element.tag, tuple(sorted(element.attrib.items())), (element.text or "").strip(),
            tuple(normalized(child) for child in element if child.tag is not etree.Comment))


def zeep_message(wsdl: str, operation: str, user: str, password: str, **fields) -> etree._Element:
    client = zeep.Client(str(WSDL / wsdl), wsse=UsernameToken(user, password))
    return client.create_message(client.service, operation, **fields)


def header_security(envelope: etree._Element) -> etree._Element:
    return envelope.find(f"{{{soap.SOAP_ENV}}}Header/{{{soap.WSSE}}}Security")


def body_call(envelope: etree._Element) -> etree._Element:
    return envelope.find(f"{{{soap.SOAP_ENV}}}Body")[0]


SEND_BILL_ANSWER = (b'<soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/"><soap-env:Body>'
                    b'<br:sendBillResponse xmlns:br="http://service.sunat.gob.pe"><applicationResponse>UEsFBgAAAAAAAAAA'
                    b'AAAAAAAAAAAAAA==</applicationResponse></br:sendBillResponse></soap-env:Body></soap-env:Envelope>')


def test_send_bill_matches_zeep_from_the_wsdl():
    xml = b"<Invoice>hola</Invoice>"
    zip_name, zip_bytes = soap.zip_document("20100066603-01-F001-1.xml", xml)
    with Recorder(body=SEND_BILL_ANSWER) as server:
        client = soap.SunatClient(server.url, "20100066603MODDATOS", "moddatos", timeout=5)
        assert client.send_bill(zip_name, zip_bytes).startswith(b"PK")
    headers, sent = server.requests[0]
    ours = etree.fromstring(sent)
    theirs = zeep_message("billService.wsdl", "sendBill", "20100066603MODDATOS", "moddatos",
                          fileName=zip_name, contentFile=zip_bytes)
    assert normalized(body_call(ours)) == normalized(body_call(theirs))
    assert normalized(header_security(ours)) == normalized(header_security(theirs))
    assert headers["SOAPAction"].strip('"') == "urn:sendBill"
    assert headers["Content-Type"].startswith("text/xml")


def test_get_status_cdr_matches_zeep_from_the_wsdl():
    answer = (b'<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body>'
              b'<ns2:getStatusCdrResponse xmlns:ns2="http://service.sunat.gob.pe"><statusCdr>'
              b'<content>UEsFBgAAAAAAAAAAAAAAAAAAAAAAAA==</content><statusCode>0004</statusCode>'
              b'<statusMessage>La constancia existe</statusMessage></statusCdr></ns2:getStatusCdrResponse>'
              b'</S:Body></S:Envelope>')
    with Recorder(body=answer) as server:
        client = soap.SunatClient("https://unused.invalid", "20100066603MODDATOS", "moddatos", timeout=5,
                                  consult_url=server.url)
        status = client.get_status_cdr("20100066603", "01", "F001", 7)
    assert (status.status_code, status.status_message) == ("0004", "La constancia existe")
    assert status.content.startswith(b"PK")
    ours = etree.fromstring(server.requests[0][1])
    theirs = zeep_message("billConsultService.wsdl", "getStatusCdr", "20100066603MODDATOS", "moddatos",
                          rucComprobante="20100066603", tipoComprobante="01", serieComprobante="F001",
                          numeroComprobante=7)
    assert normalized(body_call(ours)) == normalized(body_call(theirs))
    theirs_security = header_security(theirs)
    assert normalized(header_security(ours)) == normalized(theirs_security)
    assert server.requests[0][0]["SOAPAction"].strip('"') == "urn:getStatusCdr"


@pytest.mark.parametrize("operation,fields", [
    ("sendSummary", {"fileName": "20100066603-RC-20240101-1.zip", "contentFile": b"zip"}),
    ("getStatus", {"ticket": "1234567890123"}),
])
def test_summary_operations_match_zeep(operation, fields):
    with Recorder(body=b'<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body>'
                       b'<x:r xmlns:x="http://service.sunat.gob.pe"><ticket>1</ticket><status><statusCode>0'
                       b'</statusCode></status></x:r></e:Body></e:Envelope>') as server:
        client = soap.SunatClient(server.url, "u", "p", timeout=5)
        if operation == "sendSummary":
            assert client.send_summary(fields["fileName"], fields["contentFile"]) == "1"
        else:
            assert client.get_status(fields["ticket"]).status_code == "0"
    ours = etree.fromstring(server.requests[0][1])
    theirs = zeep_message("billService.wsdl", operation, "u", "p", **fields)
    assert normalized(body_call(ours)) == normalized(body_call(theirs))


def test_zip_is_named_like_the_xml_with_one_member():
    import io
    import zipfile

    name, data = soap.zip_document("20100066603-01-F001-1.xml", b"<x/>")
    assert name == "20100066603-01-F001-1.zip"
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.namelist() == ["20100066603-01-F001-1.xml"]
        assert archive.read("20100066603-01-F001-1.xml") == b"<x/>"


FAULT = (b'<soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/"><soap-env:Body>'
         b'<soap-env:Fault><faultcode>soap-env:Client.0102</faultcode><faultstring>Usuario o contrase\xc3\xb1a '
         b'incorrectos</faultstring></soap-env:Fault></soap-env:Body></soap-env:Envelope>')


def test_fault_carries_sunat_code():
    with Recorder(status=500, body=FAULT) as server:
        client = soap.SunatClient(server.url, "u", "p", timeout=5)
        with pytest.raises(soap.SoapFault) as caught:
            client.send_bill("a.zip", b"z")
    assert caught.value.code == "0102"
    assert "incorrectos" in caught.value.faultstring


@pytest.mark.parametrize("faultcode,faultstring,code", [
    ("soap-env:Client.0102", "x", "0102"), ("soap-env:Server", "0100 - error", "0100"),
    ("env:Client.2335", "", "2335"), ("soap-env:Client", "texto", ""), ("soap-env:Client.151", "", "0151")])
def test_fault_code_forms(faultcode, faultstring, code):
    assert soap.fault_code(faultcode, faultstring) == code


def test_http_500_without_fault_is_a_transport_failure():
    with Recorder(status=500, body=b"<html>oops</html>") as server:
        client = soap.SunatClient(server.url, "u", "p", timeout=5)
        with pytest.raises(soap.TransportFailure) as caught:
            client.send_bill("a.zip", b"z")
    assert caught.value.kind == "http" and caught.value.may_have_arrived


def test_connection_refused_never_arrived():
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    server.server_close()
    client = soap.SunatClient(f"http://127.0.0.1:{port}/billService", "u", "p", timeout=2)
    with pytest.raises(soap.TransportFailure) as caught:
        client.send_bill("a.zip", b"z")
    assert caught.value.kind == "connect" and not caught.value.may_have_arrived


@pytest.mark.parametrize("pooled", [False, True])
def test_tls_is_verified(tmp_path, pooled):
    """A server with a certificate no authority signed is refused, never talked to (also through the engine's
    reused clients, which share one SSL context)."""
    import ssl

    from cryptography.hazmat.primitives import serialization

    from app.sandbox.sunat_signer import self_signed

    key, cert = self_signed("127.0.0.1")
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    with Recorder(body=SEND_BILL_ANSWER) as server:
        server.server.socket = context.wrap_socket(server.server.socket, server_side=True)
        pool = soap.HttpPool() if pooled else None
        client = soap.SunatClient(server.url.replace("http://", "https://"), "u", "p", timeout=5, http=pool)
        try:
            with pytest.raises(soap.TransportFailure) as caught:
                client.send_bill("a.zip", b"z")
        finally:
            if pool is not None:
                pool.close()
    assert caught.value.kind == "connect"
    assert server.requests == []


def test_answers_are_parsed_without_entities():
    evil = (b'<?xml version="1.0"?><!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            b'<soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/"><soap-env:Body>'
            b'<br:sendBillResponse xmlns:br="http://service.sunat.gob.pe"><applicationResponse>&x;'
            b'</applicationResponse></br:sendBillResponse></soap-env:Body></soap-env:Envelope>')
    answer = soap.parse_answer(evil)
    assert "root" not in "".join(answer.itertext())
