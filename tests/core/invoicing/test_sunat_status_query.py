"""SUNAT's voucher status query (billConsultService getStatus): the request Yupana's SOAP client puts on the wire is
the one zeep builds from SUNAT's WSDL, and the SUNAT sandbox answers it as SUNAT does — 0001 accepted, 0002 rejected,
0003 voided, 0011 unknown, 0009/0010 for what the query does not cover — in the shape the WSDL describes. A summary
whose ticket nobody asked for is processed before the query answers (SUNAT processes it either way)."""

from __future__ import annotations

import httpx
import pytest
import zeep
from lxml import etree
from zeep.wsse.username import UsernameToken

from app.core.invoicing import soap
from app.core.invoicing import summaries as s
from app.core.platform import clock
from app.sandbox.sunat import SunatSandbox
from tests.helpers import shared
from tests.helpers.shared import WSDL_DIR
from tests.helpers.sunat_support import SAMPLE_RUC, sign, signed_sample, stem

pytestmark = pytest.mark.sunat_files
USER = f"{SAMPLE_RUC}MODDATOS"
WAIT = 10


@pytest.fixture(scope="module")
def _query_sandbox():
    shared.require()
    server = SunatSandbox(hold_limit_s=20, ticket_delay_s=0)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def sandbox(_query_sandbox):
    _query_sandbox.reset()
    _query_sandbox.summaries.configure(delay_s=0, pending_polls=0, hold=False)
    yield _query_sandbox
    _query_sandbox.summaries.release()
    _query_sandbox.release()


def client(server) -> soap.SunatClient:
    return soap.SunatClient(server.bill_url, USER, "moddatos", timeout=5, consult_url=server.consult_url)


def status(server, tipo: str, serie: str, numero: int) -> soap.StatusResponse:
    return client(server).get_voucher_status(SAMPLE_RUC, tipo, serie, numero)


def send_factura(server, numero: str) -> None:
    client(server).send_bill(*soap.zip_document(f"{stem(numero)}.xml", signed_sample(numero)))


def void_by_ra(server, numero: int) -> str:
    """A RA voiding F002-<numero>, sent with its answer lost: SUNAT holds it, its ticket never seen."""
    today = clock.today()
    ident = s.summary_id("RA", today, 1)
    xml = sign(s.build_voided(s.Issuer(SAMPLE_RUC, "EMPRESA DE PRUEBA S.A.C."), ident, today, today,
                              [s.VoidLine("01", "F002", numero, "ERROR EN EL DOCUMENTO")]))
    server.fail_next("drop_after_receive", operation="sendSummary")
    with pytest.raises(soap.TransportFailure):
        client(server).send_summary(*soap.zip_document(f"{s.file_name(SAMPLE_RUC, ident)}.xml", xml))
    [ticket] = server.summaries.tickets()
    return ticket


def test_the_request_is_the_one_zeep_builds_from_sunats_wsdl():
    fields = [("rucComprobante", SAMPLE_RUC), ("tipoComprobante", "01"), ("serieComprobante", "F002"),
              ("numeroComprobante", "31")]
    ours = etree.fromstring(soap.build_envelope("getStatus", fields, USER, "moddatos"))
    zeep_client = zeep.Client(str(WSDL_DIR / "billConsultService.wsdl"), wsse=UsernameToken(USER, "moddatos"))
    theirs = zeep_client.create_message(zeep_client.service, "getStatus", rucComprobante=SAMPLE_RUC,
                                        tipoComprobante="01", serieComprobante="F002", numeroComprobante=31)
    body = f"{{{soap.SOAP_ENV}}}Body"

    def shape(element: etree._Element) -> tuple:
        return (element.tag, (element.text or "").strip(), tuple(shape(child) for child in element))

    assert shape(ours.find(body)[0]) == shape(theirs.find(body)[0])


def test_the_sandbox_answers_each_state_as_sunat_does(sandbox):
    send_factura(sandbox, "00000031")
    accepted = status(sandbox, "01", "F002", 31)
    assert (accepted.status_code, accepted.status_message) == ("0001", "El comprobante existe y está aceptado")
    assert status(sandbox, "01", "F002", 99).status_code == "0011"
    assert status(sandbox, "03", "B001", 1).status_code == "0009"  # a boleta: not a type the query covers
    assert status(sandbox, "07", "BC01", 1).status_code == "0010"  # a boleta's note: not an F series
    sandbox.fail_next("reject:2800")
    client(sandbox).send_bill(*soap.zip_document(f"{stem('00000032')}.xml", signed_sample("00000032")))
    assert status(sandbox, "01", "F002", 32).status_code == "0002"
    assert sandbox.stats()["status_queries"][f"{SAMPLE_RUC}-01-F002-31"] == 1


def test_a_ra_whose_ticket_nobody_asked_for_is_processed_before_the_query_answers(sandbox):
    send_factura(sandbox, "00000033")
    sandbox.summaries.hold()
    ticket = void_by_ra(sandbox, 33)
    assert status(sandbox, "01", "F002", 33).status_code == "0001"  # held: SUNAT has not processed it
    assert sandbox.summaries.ticket(ticket).status == soap.TICKET_PENDING
    sandbox.summaries.release()
    assert status(sandbox, "01", "F002", 33).status_code == "0003"  # processed without a poll: de baja
    assert sandbox.summaries.ticket(ticket).status == soap.TICKET_DONE and sandbox.summaries.ticket(ticket).polls == 0


def test_the_answer_parses_with_zeep_and_failures_are_injected(sandbox):
    send_factura(sandbox, "00000034")
    service = zeep.Client(str(WSDL_DIR / "billConsultService.wsdl")).service._binding
    envelope = soap.build_envelope("getStatus", [("rucComprobante", SAMPLE_RUC), ("tipoComprobante", "01"),
                                                 ("serieComprobante", "F002"), ("numeroComprobante", "34")],
                                   USER, "moddatos")
    raw = httpx.post(sandbox.consult_url, content=envelope, headers={"Content-Type": "text/xml"}).content
    answer = service.get("getStatus").process_reply(etree.fromstring(raw))
    assert (answer.statusCode, answer.content) == ("0001", None)
    sandbox.fail_next("fault:0130", operation="consultStatus")
    with pytest.raises(soap.SoapFault) as caught:
        status(sandbox, "01", "F002", 34)
    assert caught.value.code == "0130"
    sandbox.fail_next("500", operation="consultStatus")
    with pytest.raises(soap.TransportFailure):
        status(sandbox, "01", "F002", 34)
    assert sandbox.wait_for_status_queries(f"{SAMPLE_RUC}-01-F002-34", 3, WAIT)
    assert status(sandbox, "01", "F002", 34).status_code == "0001"
    with pytest.raises(ValueError):
        sandbox.fail_next("reject:2800", operation="consultStatus")
