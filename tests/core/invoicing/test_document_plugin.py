"""A document type plugs in (issue 29): a toy type, defined and registered entirely in this file — its request model,
builder, renderer, identity, numbering, a sender posting to a toy HTTP endpoint started here on 127.0.0.1 port 0,
and a printed layout — is numbered, built, signed, stored, sent through the outbox to the toy endpoint (its answer
stored) and printed through the engine's own paths, with no other file edited for it."""

from __future__ import annotations

import base64
import hashlib
import http.server
import re
import threading
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

import httpx
import pytest
from lxml import etree

from app.core.api import Page, Text, YupanaError, statuses
from app.core.contract import ContractModel, Emisor
from app.core.errors import invalid
from app.core.invoicing import ubl, xmldsig
from app.core.invoicing.cdr import Cdr
from app.core.invoicing.documents import registry
from app.core.invoicing.documents.kind import DocumentType, Identity, Numbering
from app.core.invoicing.namespaces import DS, EXT
from app.core.invoicing.soap import SoapFault, TransportFailure
from app.core.invoicing.ubl_identity import document_type
from tests.helpers.base import ISSUER_RUC

TOY = "T1"  # the toy's code: no catalogue has it
TOY_NS = "urn:yupana:pruebas:recibo-1"
SERIE = re.compile(r"^R[0-9]{3}$")


# ---------------------------------------------------------------- the toy type: model, builder, renderer

class ReciboRequest(ContractModel):
    tipo: str
    serie: str
    numero: int
    emisor: Emisor
    cliente_dni: str
    cliente_nombre: str
    concepto: str
    monto: Decimal


@dataclass
class Recibo:
    """The built toy document: what the engine reads of it (kind.Built) and what its XML says."""

    tipo: str
    serie: str
    numero: int
    emisor_ruc: str
    emisor_nombre: str
    receptor: ubl.Party
    concepto: str
    total: Decimal
    fecha: date
    moneda: str = "PEN"


def build_recibo(request: ReciboRequest, company_of, name_of, checks: bool = True) -> Recibo:
    company = company_of(request.emisor.ruc)
    if company is None:
        raise invalid("emisor.ruc", f"No hay una empresa emisora con RUC «{request.emisor.ruc}».")
    if not RECIBO.numbering.accepts(request.serie, request.numero):
        raise invalid("serie", f"La serie-número «{request.serie}-{request.numero}» no es de un recibo de prueba: "
                      "use R y tres dígitos (p. ej. R001).")
    total = request.monto.quantize(Decimal("0.01"))
    return Recibo(TOY, request.serie, request.numero, company.ruc, company.razon_social,
                  ubl.Party("1", request.cliente_dni, request.cliente_nombre), request.concepto, total,
                  date(2026, 11, 25))


def render_recibo(recibo: Recibo) -> str:
    """Canonical XML (the signer's precondition): the declaration, then the document as C14N writes it."""
    return (f'{ubl.XML_DECLARATION}<Recibo xmlns="{TOY_NS}" xmlns:ds="{DS}" xmlns:ext="{EXT}">'
            f"<ext:UBLExtensions><ext:UBLExtension>{ubl.EMPTY_EXTENSION_CONTENT}</ext:UBLExtension>"
            f"</ext:UBLExtensions><ID>{recibo.serie}-{recibo.numero}</ID><Emisor>{recibo.emisor_ruc}</Emisor>"
            f"<Cliente>{ubl.esc(recibo.receptor.nombre)}</Cliente><Concepto>{ubl.esc(recibo.concepto)}</Concepto>"
            f"<Monto>{recibo.total}</Monto></Recibo>")


# ---------------------------------------------------------------- its sender: a toy endpoint over HTTP

class ToyChannel:
    """Posts the signed XML as it is; the endpoint's answer is read as the document's CDR."""

    zipped = False
    send_operation = "POST"
    status_operation = "GET"

    def __init__(self, url: str) -> None:
        self.url = url

    def send_document(self, name: str, content: bytes) -> Cdr:
        try:
            response = httpx.post(self.url, content=content, headers={"X-Archivo": name}, timeout=5)
        except httpx.TransportError as exc:
            raise TransportFailure("connect", type(exc).__name__, False) from None
        if response.status_code >= 500:
            raise TransportFailure("http", f"HTTP {response.status_code}", True)
        answer = etree.fromstring(response.content)
        code = answer.findtext("Codigo") or ""
        if code != "0":
            raise SoapFault("Client", answer.findtext("Descripcion") or "", code)
        return Cdr(codigo=code, descripcion=answer.findtext("Descripcion") or "", xml=response.content,
                   member=f"R-{name}", hash_cdr=base64.b64encode(hashlib.sha1(response.content).digest()).decode())

    def document_cdr(self, ruc: str, tipo: str, serie: str, numero: int) -> Cdr | None:
        return None  # the toy endpoint keeps nothing to ask for: send again


class ToySender:
    def __init__(self) -> None:
        self.url = ""
        self.channels = 0

    def channel(self, sunat, environment: str, ruc: str) -> ToyChannel:
        self.channels += 1
        return ToyChannel(self.url)


class ToyEndpoint(http.server.ThreadingHTTPServer):
    """Keeps what it receives and answers «0, Recibido»; `fail_next` answers one 503 first."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ToyHandler)
        self.received: list[tuple[str, bytes]] = []
        self.fail_next = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/recibos"


class _ToyHandler(http.server.BaseHTTPRequestHandler):
    server: ToyEndpoint

    def do_POST(self) -> None:  # noqa: N802 - the base class's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.server.fail_next:
            self.server.fail_next = False
            self.send_response(503)
            self.end_headers()
            return
        self.server.received.append((self.headers["X-Archivo"], body))
        answer = (f"<Respuesta><Codigo>0</Codigo><Descripcion>Recibido {len(self.server.received)}</Descripcion>"
                  "</Respuesta>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args) -> None:
        pass


# ---------------------------------------------------------------- its printed layout

def print_recibo(xml_firmado, formato: str, issuer) -> tuple[list, str]:
    root = etree.fromstring(xml_firmado.encode() if isinstance(xml_firmado, str) else xml_firmado)
    found = {etree.QName(node).localname: node.text for node in root}
    digest = root.findtext(f".//{{{DS}}}DigestValue")
    page = Page(80.0 if formato == "ticket" else 210.0, 60.0, [
        Text(4, 10, f"RECIBO DE PRUEBA {found['ID']}", 10, True),
        Text(4, 20, f"Cliente: {found['Cliente']}", 9),
        Text(4, 30, f"{found['Concepto']}: S/ {found['Monto']}", 9),
        Text(4, 40, f"Código hash: {digest}", 7)])
    return [page], f"RECIBO DE PRUEBA {found['ID']}"


SENDER = ToySender()
RECIBO = DocumentType(
    code=TOY, name="Recibo de prueba", identity=Identity("Recibo", TOY_NS),
    numbering=Numbering(SERIE, "R001"), build=build_recibo, render=render_recibo, sender=SENDER,
    request=ReciboRequest, printed=print_recibo)


# ---------------------------------------------------------------- the engine with the toy registered

@pytest.fixture
def endpoint():
    server = ToyEndpoint()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    SENDER.url, SENDER.channels = server.url, 0
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def recibos(engine, company, endpoint):
    engine.invoicing.create_test_certificate(company.ruc)
    with registry.registered(RECIBO):
        yield engine


def recibo(numero: int, serie: str = "R001", monto: str = "25.5") -> dict:
    return {"tipo": TOY, "serie": serie, "numero": numero, "emisor": {"ruc": ISSUER_RUC}, "cliente_dni": "45678912",
            "cliente_nombre": "ROSA QUISPE & HIJOS", "concepto": "Clase de cerámica", "monto": monto}


def test_the_registry_resolves_the_toy_by_code_root_and_file_name(recibos):
    assert registry.get(TOY) is RECIBO and TOY in registry.codes()
    assert registry.with_root("Recibo") == (RECIBO,) and registry.code_of_root("Recibo") == TOY
    assert registry.by_file_name(RECIBO.file_name(ISSUER_RUC, "R001", 7)) is RECIBO
    assert registry.sender_for(TOY) is SENDER
    assert document_type(etree.fromstring(render_recibo(build_recibo(
        ReciboRequest.model_validate(recibo(1)), recibos._companies.get, lambda ruc: None)).encode())) == TOY
    with pytest.raises(ValueError):
        registry.register(RECIBO)  # a code is registered once


def test_the_toy_is_numbered_built_signed_stored_sent_and_printed(recibos, endpoint):
    engine = recibos
    assert engine.invoicing.next_number(ISSUER_RUC, TOY, "R001") == 1
    emission = engine.invoicing.issue(recibo(1))
    # numbered and stored, under its own type's file name
    assert engine.invoicing.next_number(ISSUER_RUC, TOY, "R001") == 2
    assert emission.nombre_archivo == f"{ISSUER_RUC}-{TOY}-R001-1.xml"
    stored = engine.invoicing.voucher(emission.voucher_id)
    assert (stored.tipo, stored.serie, stored.numero, stored.receptor_nombre) == (TOY, "R001", 1, "ROSA QUISPE & HIJOS")
    assert stored.xml == render_recibo(build_recibo(ReciboRequest.model_validate(recibo(1)), engine._companies.get,
                                                    lambda ruc: None))
    assert [voucher.id for voucher in engine.invoicing.vouchers(tipo=TOY)] == [emission.voucher_id]
    # signed: the stored signed text verifies, with the digest the emission reported
    assert xmldsig.verify_xml(stored.xml_firmado).digest_value == emission.digest_value
    # sent through the outbox to the toy endpoint, by the toy's sender (one channel), and its answer stored
    assert endpoint.received == [(emission.nombre_archivo, stored.xml_firmado.encode())]
    assert SENDER.channels == 1
    assert emission.refusal is None and emission.sent is not None
    assert (emission.sent.codigo_respuesta, emission.sent.estado) == ("0", statuses.ACEPTADO)
    assert stored.status == statuses.ACEPTADO
    answer = engine.invoicing.voucher_cdr(emission.voucher_id)
    assert (answer.codigo, answer.descripcion, answer.estado) == ("0", "Recibido 1", statuses.ACEPTADO)
    # printed with the toy's own layout, on screen and as a PDF
    printed = engine.invoicing.printed_pages(emission.voucher_id, "ticket")
    texts = [mark.text for page in printed.pages for mark in page.marks]
    assert texts[:3] == ["RECIBO DE PRUEBA R001-1", "Cliente: ROSA QUISPE & HIJOS", "Clase de cerámica: S/ 25.50"]
    assert texts[3] == f"Código hash: {emission.digest_value}"
    pdf = engine.invoicing.pdf(emission.voucher_id)
    assert pdf.content.startswith(b"%PDF") and pdf.name == f"{ISSUER_RUC}-{TOY}-R001-1.pdf"


def test_the_outbox_sends_a_waiting_toy_by_the_toy_s_own_sender(recibos, endpoint):
    engine = recibos
    engine.admin.config_set("sunat_retry_base_s", "600")  # the worker leaves the waiting row alone: we attempt it
    engine.admin.config_set("sunat_retry_max_s", "600")
    endpoint.fail_next = True  # the first post gets a 503: the submission waits in the outbox
    emission = engine.invoicing.issue(recibo(2))
    assert emission.sent is None and emission.refusal is not None and endpoint.received == []
    [row] = engine._storage.query("SELECT id, state FROM sunat_submissions")
    assert row["state"] == statuses.SUBMISSION_PENDING
    assert engine.invoicing.voucher(emission.voucher_id).status == statuses.PENDIENTE
    channels = SENDER.channels
    assert engine._outbox.attempt(row["id"]).kind == "cdr"  # no channel given: the outbox asks the registry
    assert SENDER.channels == channels + 1
    assert [name for name, _ in endpoint.received] == [emission.nombre_archivo]
    assert engine.invoicing.voucher(emission.voucher_id).status == statuses.ACEPTADO
    assert engine.invoicing.voucher_cdr(emission.voucher_id).descripcion == "Recibido 1"


def test_the_toy_keeps_its_own_numbering_rule(recibos, endpoint):
    with pytest.raises(YupanaError) as refused:
        recibos.invoicing.issue(recibo(3, serie="F001"))
    assert refused.value.details[0].field == "serie"
    assert "no es de un recibo de prueba" in refused.value.message
    assert recibos.invoicing.vouchers(tipo=TOY) == [] and endpoint.received == []


def test_unregistered_the_toy_is_an_unknown_type_again(engine, company):
    assert registry.get(TOY) is None
    with pytest.raises(YupanaError) as refused:
        engine.invoicing.generate_xml(recibo(1))
    assert refused.value.code.value == "INVALID_INPUT"
