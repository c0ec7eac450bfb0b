"""The SUNAT sandbox takes comunicaciones de baja (RA) and resúmenes diarios (RC) as SUNAT does: front-door
faults, a ticket pending for as long as a test wants, then a signed CDR accepting or rejecting the summary
with SUNAT's code, and the vouchers changed by an accepted one. Over real SOAP, with Yupana's own client.

Every RA/RC these tests send is also judged by ../shared/tools/sunat_check.py --strict (the `oracle`
fixture): the correct ones pass, the broken ones get the code the sandbox gave."""

from __future__ import annotations

import base64
import datetime as dt
import io
import json
import time
import zipfile
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
import zeep
from lxml import etree

from app.core.invoicing import cdr, soap
from app.core.invoicing import summaries as s
from app.core.platform import clock
from app.sandbox.sunat import SunatSandbox
from app.sandbox.sunat_signer import signature_is_valid
from tests.helpers import shared
from tests.helpers.oracles import run_sunat_check
from tests.helpers.shared import RULES_DIR, SHARED
from tests.helpers.sunat_support import SAMPLE_RUC, sign, signed_sample, stem

USER = f"{SAMPLE_RUC}MODDATOS"
ISSUER = s.Issuer(SAMPLE_RUC, "EMPRESA DE PRUEBA S.A.C.")
TODAY = clock.today()
YESTERDAY = TODAY - dt.timedelta(days=1)
WAIT = 10  # seconds: the most a test waits for a condition


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def _rules_sandbox():
    """A sandbox with SUNAT's sheets (the session's shared one has none), on loopback port 0."""
    shared.require()
    server = SunatSandbox(rules_dir=str(RULES_DIR), hold_limit_s=20, ticket_delay_s=0)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def sandbox(_rules_sandbox):
    _rules_sandbox.reset()
    _rules_sandbox.summaries.configure(delay_s=0, pending_polls=0, hold=False)
    yield _rules_sandbox
    _rules_sandbox.summaries.release()
    _rules_sandbox.release()


@dataclass
class Oracle:
    """The summaries a test sent, to be judged by sunat_check.py --strict when the test ends."""

    folder: Path
    expected: list[tuple[Path, str | None, str | None]] = field(default_factory=list)

    def expect(self, xml: bytes, name: str, rejection: str | None = None, sent_as: str | None = None) -> None:
        path = self.folder / f"oracle-{len(self.expected)}-{name}.xml"
        path.write_bytes(xml)
        self.expected.append((path, rejection, sent_as))

    def verify(self) -> None:
        for path, rejection, sent_as in self.expected:
            done = run_sunat_check(path, "--strict", "--json", *(["--name", sent_as] if sent_as else []))
            report = json.loads(done.stdout)
            if rejection is None:
                assert done.returncode == 0, report
                assert report["xsd"]["ok"] and report["signature"]["ok"] and not report["sunat"]["observations"]
            else:
                assert report["sunat"]["rejection"] == rejection, report


@pytest.fixture
def oracle(tmp_path):
    judge = Oracle(tmp_path)
    yield judge
    judge.verify()


# ---------------------------------------------------------------- helpers

def client(server, user: str = USER) -> soap.SunatClient:
    return soap.SunatClient(server.bill_url, user, "moddatos", timeout=5, consult_url=server.consult_url)


def fault_of(call) -> soap.SoapFault:
    with pytest.raises(soap.SoapFault) as caught:
        call()
    return caught.value


def ra(counter: int, *lines: tuple[str, str, int], issued: dt.date = TODAY) -> tuple[str, bytes]:
    """A signed comunicación de baja of today (vouchers of yesterday) and its file stem."""
    ident = s.summary_id("RA", issued, counter)
    xml = s.build_voided(ISSUER, ident, YESTERDAY, issued,
                         [s.VoidLine(tipo, serie, numero, "ERROR EN EL DOCUMENTO DEL CLIENTE") for tipo, serie, numero
                          in lines])
    return s.file_name(ISSUER.ruc, ident), sign(xml)


def boleta(numero: int, estado: str, referencia: s.Reference | None = None) -> s.SummaryLine:
    tipo, serie = ("07", "BC01") if referencia else ("03", "B001")
    return s.SummaryLine(tipo, serie, numero, estado, Decimal("118"), Decimal("18"), "1", "45781236",
                         montos={"gravadas": Decimal("100")}, referencia=referencia)


def rc(counter: int, *lines: s.SummaryLine) -> tuple[str, bytes]:
    ident = s.summary_id("RC", TODAY, counter)
    return s.file_name(ISSUER.ruc, ident), sign(s.build_summary(ISSUER, ident, YESTERDAY, TODAY, list(lines)))


def send_summary(server, name: str, xml: bytes, oracle: Oracle | None = None, **expect) -> str:
    if oracle is not None:
        oracle.expect(xml, name, **expect)
    return client(server).send_summary(*soap.zip_document(f"{name}.xml", xml))


def settle(server, ticket: str) -> soap.StatusResponse:
    """getStatus of a ticket the sandbox does not hold back (delay 0): processed at the first poll."""
    status = client(server).get_status(ticket)
    assert status.status_code in (soap.TICKET_DONE, soap.TICKET_REJECTED), status
    return status


def send_factura(server, numero: str = "00000031") -> bytes:
    """sendBill of SUNAT's sample factura (F002-<numero>), accepted by the sheets: its CDR zip."""
    zip_name, data = soap.zip_document(f"{stem(numero)}.xml", signed_sample(numero))
    answer = client(server).send_bill(zip_name, data)
    assert cdr.read_zip(answer).estado == "aceptado"
    return answer


def raw(server, operation: str, fields: list[tuple[str, str]], user: str = USER) -> bytes:
    envelope = soap.build_envelope(operation, fields, user, "moddatos")
    return httpx.post(server.bill_url, content=envelope, headers={"Content-Type": "text/xml"}).content


# ---------------------------------------------------------------- RA

def test_ra_accepted_voids_the_factura_and_its_cdr_is_still_there(sandbox, oracle):
    factura_cdr = send_factura(sandbox)
    assert sandbox.voucher_status(SAMPLE_RUC, "01", "F002", 31) == "aceptado"
    name, xml = ra(1, ("01", "F002", 31))
    ticket = send_summary(sandbox, name, xml, oracle)
    assert ticket.isdigit() and len(ticket) == 15
    status = settle(sandbox, ticket)
    assert status.status_code == "0"
    answer = cdr.read_zip(status.content)
    ident = name.split("-", 1)[1]
    assert (answer.codigo, answer.estado, answer.referencia) == ("0", "aceptado", ident)
    assert answer.descripcion == f"La Comunicación de baja {ident}, ha sido aceptada"
    assert signature_is_valid(answer.xml)
    with zipfile.ZipFile(io.BytesIO(status.content)) as archive:
        assert f"R-{name}.xml" in archive.namelist()
    assert sandbox.voucher_status(SAMPLE_RUC, "01", "F002", 31) == "anulado"
    # getStatusCdr still answers the voucher's own CDR; sending it again is 1032 (informed and voided).
    kept = client(sandbox).get_status_cdr(SAMPLE_RUC, "01", "F002", 31)
    assert (kept.status_code, kept.content) == ("0004", factura_cdr)
    zip_name, data = soap.zip_document(f"{stem()}.xml", signed_sample())
    assert fault_of(lambda: client(sandbox).send_bill(zip_name, data)).code == "1032"
    # Asking again gives the same answer: the summary was processed once.
    assert client(sandbox).get_status(ticket).content == status.content


def test_ra_of_a_voucher_the_sandbox_never_received_is_rejected_2105(sandbox, oracle):
    send_factura(sandbox)
    name, xml = ra(1, ("01", "F002", 31), ("01", "F002", 99))
    status = settle(sandbox, send_summary(sandbox, name, xml, oracle))
    assert status.status_code == "99"
    answer = cdr.read_zip(status.content)
    assert (answer.codigo, answer.estado) == ("2105", "rechazado")
    assert answer.descripcion == "Comprobante a dar de baja no se encuentra registrado en SUNAT"
    assert signature_is_valid(answer.xml)
    assert sandbox.voucher_status(SAMPLE_RUC, "01", "F002", 31) == "aceptado"  # nothing of it applied


def test_voiding_twice_is_2323_and_a_rejected_voucher_2398(sandbox, oracle):
    send_factura(sandbox)
    assert settle(sandbox, send_summary(sandbox, *ra(1, ("01", "F002", 31)), oracle)).status_code == "0"
    again = settle(sandbox, send_summary(sandbox, *ra(2, ("01", "F002", 31)), oracle))
    assert (again.status_code, cdr.read_zip(again.content).codigo) == ("99", "2323")
    sandbox.fail_next("reject:3280")  # a factura SUNAT rejected (sendBill)
    zip_name, data = soap.zip_document(f"{stem('00000032')}.xml", signed_sample("00000032"))
    assert cdr.read_zip(client(sandbox).send_bill(zip_name, data)).codigo == "3280"
    rejected = settle(sandbox, send_summary(sandbox, *ra(3, ("01", "F002", 32)), oracle))
    assert cdr.read_zip(rejected.content).codigo == "2398"
    assert sandbox.voucher_status(SAMPLE_RUC, "01", "F002", 32) == "rechazado"


def test_sheets_reject_through_the_ticket_with_sunats_code(sandbox, oracle):
    """A boleta in a RA is 2308 (SUNAT voids boletas by RC), judged by SUNAT's own sheet."""
    name, xml = ra(1, ("03", "B001", 9))
    ticket = send_summary(sandbox, name, xml, oracle, rejection="2308")
    status = settle(sandbox, ticket)
    assert (status.status_code, cdr.read_zip(status.content).codigo) == ("99", "2308")


def test_an_id_unlike_the_file_name_is_2220(sandbox, oracle):
    name, xml = ra(1, ("01", "F002", 31))
    other = name.rsplit("-", 1)[0] + "-7"
    ticket = send_summary(sandbox, other, xml, oracle, rejection="2220", sent_as=f"{other}.xml")
    status = settle(sandbox, ticket)
    assert (status.status_code, cdr.read_zip(status.content).codigo) == ("99", "2220")


# ---------------------------------------------------------------- RC

def test_rc_adds_boletas_and_a_note_then_voids_a_boleta(sandbox, oracle):
    name, xml = rc(1, boleta(215, s.CONDITION_ADD), boleta(12, s.CONDITION_ADD, s.Reference("03", "B001", 215)))
    status = settle(sandbox, send_summary(sandbox, name, xml, oracle))
    answer = cdr.read_zip(status.content)
    ident = name.split("-", 1)[1]
    assert (status.status_code, answer.codigo, answer.referencia) == ("0", "0", ident)
    assert answer.descripcion == f"El Resumen diario {ident}, ha sido aceptado"
    assert sandbox.voucher_status(SAMPLE_RUC, "03", "B001", 215) == "aceptado"
    assert sandbox.voucher_status(SAMPLE_RUC, "07", "BC01", 12) == "aceptado"
    # The sandbox now answers getStatusCdr for the boleta: the CDR of the summary that reported it.
    found = client(sandbox).get_status_cdr(SAMPLE_RUC, "03", "B001", 215)
    assert (found.status_code, found.content) == ("0004", status.content)

    voided = settle(sandbox, send_summary(sandbox, *rc(2, boleta(215, s.CONDITION_VOID)), oracle))
    assert (voided.status_code, cdr.read_zip(voided.content).codigo) == ("0", "0")
    assert sandbox.voucher_status(SAMPLE_RUC, "03", "B001", 215) == "anulado"
    assert client(sandbox).get_status_cdr(SAMPLE_RUC, "03", "B001", 215).content == status.content


@pytest.mark.parametrize("lines,code", [
    ([boleta(300, s.CONDITION_VOID)], "2105"),  # voiding a boleta never informed
    ([boleta(215, s.CONDITION_ADD)], "2282"),  # informed already
    ([boleta(216, s.CONDITION_VOID)], "2987"),  # voided already
    ([boleta(13, s.CONDITION_ADD, s.Reference("03", "B001", 400))], "2989"),  # a note of an unknown boleta
    ([boleta(14, s.CONDITION_ADD, s.Reference("03", "B001", 216))], "2990"),  # a note of a voided boleta
], ids=["void-unknown", "added-twice", "voided-twice", "note-unknown-boleta", "note-voided-boleta"])
def test_rc_refused_against_what_the_sandbox_holds(sandbox, oracle, lines, code):
    setup = settle(sandbox, send_summary(sandbox, *rc(1, boleta(215, "1"), boleta(216, "1")), oracle))
    assert setup.status_code == "0"
    assert settle(sandbox, send_summary(sandbox, *rc(2, boleta(216, "3")), oracle)).status_code == "0"
    status = settle(sandbox, send_summary(sandbox, *rc(3, *lines), oracle))
    assert (status.status_code, cdr.read_zip(status.content).codigo) == ("99", code)
    assert sandbox.voucher_status(SAMPLE_RUC, "03", "B001", 215) == "aceptado"
    assert sandbox.voucher_status(SAMPLE_RUC, "03", "B001", 300) is None


def test_rc_nothing_applies_when_one_line_is_refused(sandbox, oracle):
    status = settle(sandbox, send_summary(sandbox, *rc(1, boleta(1, "1"), boleta(2, "3")), oracle))
    assert cdr.read_zip(status.content).codigo == "2105"
    assert sandbox.voucher_status(SAMPLE_RUC, "03", "B001", 1) is None


# ---------------------------------------------------------------- tickets

def test_pending_until_released_then_accepted(sandbox, oracle):
    send_factura(sandbox)
    sandbox.summaries.hold()
    name, xml = ra(1, ("01", "F002", 31))
    ticket = send_summary(sandbox, name, xml, oracle)
    for _ in range(3):
        pending = client(sandbox).get_status(ticket)
        assert (pending.status_code, pending.content) == ("98", None)
    assert sandbox.summaries.wait_for_polls(ticket, 3, WAIT)
    assert sandbox.voucher_status(SAMPLE_RUC, "01", "F002", 31) == "aceptado"  # not processed yet
    httpx.post(sandbox.base_url + "/control/tickets/release", json={"ticket": ticket}).raise_for_status()
    done = client(sandbox).get_status(ticket)
    assert done.status_code == "0" and cdr.read_zip(done.content).codigo == "0"
    assert sandbox.voucher_status(SAMPLE_RUC, "01", "F002", 31) == "anulado"
    assert sandbox.stats()["tickets"][ticket] == {"name": name, "status": "0", "polls": 4, "held": False,
                                                  "code": "0"}


def test_pending_for_a_delay_and_a_number_of_polls(sandbox, oracle):
    now = [1000.0]
    sandbox.summaries.clock = lambda: now[0]
    try:
        answer = httpx.post(sandbox.base_url + "/control/tickets", json={"delay_s": 30, "pending_polls": 1})
        assert answer.json()["ticket_settings"] == {"delay_s": 30.0, "pending_polls": 1, "hold": False}
        ticket = send_summary(sandbox, *rc(1, boleta(215, "1")), oracle)
        assert client(sandbox).get_status(ticket).status_code == "98"  # first poll, and before the delay
        now[0] += 29.9
        assert client(sandbox).get_status(ticket).status_code == "98"  # the delay has not passed
        now[0] += 0.1
        assert client(sandbox).get_status(ticket).status_code == "0"
    finally:
        sandbox.summaries.clock = time.monotonic
    assert httpx.post(sandbox.base_url + "/control/tickets", json={"delay_s": -1}).status_code == 400


def test_unknown_ticket_is_0127_and_another_rucs_is_0126(sandbox, oracle):
    assert fault_of(lambda: client(sandbox).get_status("202611241234567")).code == "0127"
    ticket = send_summary(sandbox, *rc(1, boleta(215, "1")), oracle)
    other = fault_of(lambda: client(sandbox, user="20100066603MODDATOS").get_status(ticket))
    assert (other.code, other.faultstring) == ("0126", "El ticket no le pertenece al usuario")
    assert settle(sandbox, ticket).status_code == "0"


def test_injected_rejection_and_observation(sandbox, oracle):
    send_factura(sandbox)
    answer = httpx.post(sandbox.base_url + "/control/fail",
                        json={"mode": "reject:2375", "operation": "sendSummary"})
    assert answer.json()["pending_summary_failures"] == ["reject:2375"]
    rejected = settle(sandbox, send_summary(sandbox, *ra(1, ("01", "F002", 31)), oracle))
    reason = cdr.read_zip(rejected.content)
    assert (rejected.status_code, reason.codigo, reason.estado) == ("99", "2375", "rechazado")
    assert reason.descripcion.startswith("Fecha de emision del comprobante no coincide")
    assert sandbox.voucher_status(SAMPLE_RUC, "01", "F002", 31) == "aceptado"

    sandbox.fail_next("reject:4203", operation="sendSummary")
    observed = settle(sandbox, send_summary(sandbox, *ra(2, ("01", "F002", 31)), oracle))
    answer = cdr.read_zip(observed.content)
    assert (observed.status_code, answer.codigo, answer.estado) == ("0", "0", "observado")
    assert answer.notas[0].startswith("4203 - ")
    assert sandbox.voucher_status(SAMPLE_RUC, "01", "F002", 31) == "anulado"
    with pytest.raises(ValueError):
        sandbox.fail_next("reject:2375", operation="getStatus")


def test_get_status_failures_and_a_lost_ticket(sandbox, oracle):
    name, xml = rc(1, boleta(215, "1"))
    sandbox.fail_next("drop_after_receive", operation="sendSummary")
    with pytest.raises(soap.TransportFailure) as caught:
        send_summary(sandbox, name, xml, oracle)
    assert caught.value.may_have_arrived
    [ticket] = sandbox.summaries.tickets()  # SUNAT has it: the same name again is 2403, as SUNAT answers
    sandbox.summaries.configure(pending_polls=1)
    resent = fault_of(lambda: send_summary(sandbox, name, xml))
    assert resent.code == "2403" and "estado 98" in resent.faultstring
    sandbox.fail_next("fault:0130", operation="getStatus")
    assert fault_of(lambda: client(sandbox).get_status(ticket)).code == "0130"
    sandbox.fail_next("500", operation="getStatus")
    with pytest.raises(soap.TransportFailure):
        client(sandbox).get_status(ticket)
    assert client(sandbox).get_status(ticket).status_code == "98"  # the first poll that reached it
    assert client(sandbox).get_status(ticket).status_code == "0"


# ---------------------------------------------------------------- front door

def test_duplicate_name_is_2403_pending_then_2324_for_ra_and_2223_for_rc(sandbox, oracle):
    send_factura(sandbox)
    sandbox.summaries.hold()
    name, xml = ra(1, ("01", "F002", 31))
    ticket = send_summary(sandbox, name, xml, oracle)
    assert fault_of(lambda: send_summary(sandbox, name, xml)).code == "2403"
    sandbox.summaries.release()
    assert settle(sandbox, ticket).status_code == "0"
    duplicate = fault_of(lambda: send_summary(sandbox, name, xml))
    assert (duplicate.code, duplicate.faultstring) == (
        "2324", f"El archivo de comunicacion de baja ya fue presentado anteriormente - Detalle: ticket: {ticket}")
    name, xml = rc(1, boleta(215, "1"))
    settle(sandbox, send_summary(sandbox, name, xml, oracle))
    assert fault_of(lambda: send_summary(sandbox, name, xml)).code == "2223"
    assert sandbox.summaries.summary_counts[name] == 2


def test_an_exception_leaves_the_name_free(sandbox, oracle):
    """A rule's code below 2000 (RC whose RUC is not the file's: 1034) is fixed and sent again under that name."""
    name, xml = rc(1, boleta(215, "1"))
    foreign = s.build_summary(s.Issuer("20100066603", "OTRA S.A.C."), name.split("-", 1)[1], YESTERDAY, TODAY,
                              [boleta(215, "1")])
    status = settle(sandbox, send_summary(sandbox, name, sign(foreign), oracle, rejection="1034",
                                          sent_as=f"{name}.xml"))
    assert (status.status_code, cdr.read_zip(status.content).codigo) == ("99", "1034")
    assert settle(sandbox, send_summary(sandbox, name, xml, oracle)).status_code == "0"


@pytest.mark.parametrize("zip_name,code", [
    ("20605446788-RA-2026112-1.zip", "0151"), ("RA-20261124-1.zip", "0151"), ("20605446788-RR-20261124-1.zip", "0151"),
    ("20605446788-RA-20261124-1.xml", "0151"), ("20605446788-01-F002-31.zip", "0151"),
    ("20100066603-RA-20261124-1.zip", "0154")])
def test_bad_file_names(sandbox, zip_name, code):
    name, xml = ra(1, ("01", "F002", 31))
    data = soap.zip_document(f"{name}.xml", xml)[1]
    assert fault_of(lambda: client(sandbox).send_summary(zip_name, data)).code == code
    assert sandbox.summaries.tickets() == []


def test_zip_and_xml_checked_at_the_door(sandbox):
    name, xml = ra(1, ("01", "F002", 31))
    misnamed = soap.zip_document(f"{name}-x.xml", xml)[1]
    assert fault_of(lambda: client(sandbox).send_summary(f"{name}.zip", misnamed)).code == "0161"
    summary_in_ra_name = soap.zip_document(f"{name}.xml", rc(1, boleta(1, "1"))[1])[1]
    assert fault_of(lambda: client(sandbox).send_summary(f"{name}.zip", summary_in_ra_name)).code == "0301"
    assert fault_of(lambda: client(sandbox).send_summary(f"{name}.zip", b"no zip")).code == "0156"
    assert sandbox.summaries.tickets() == []


def test_bad_signature_is_2335_and_no_ticket(sandbox, oracle):
    name, xml = ra(1, ("01", "F002", 31))
    altered = xml.replace(b"<sac:DocumentNumberID>31<", b"<sac:DocumentNumberID>32<", 1)
    assert altered != xml
    assert fault_of(lambda: send_summary(sandbox, name, altered)).code == "2335"
    unsigned = s.build_voided(ISSUER, name.split("-", 1)[1], YESTERDAY, TODAY, [s.VoidLine("01", "F002", 31, "X")])
    assert fault_of(lambda: send_summary(sandbox, name, unsigned)).code == "2335"
    assert fault_of(lambda: client(sandbox, user=f"{SAMPLE_RUC}OTRO").send_summary(
        *soap.zip_document(f"{name}.xml", xml))).code == "0102"
    assert sandbox.summaries.tickets() == []
    assert settle(sandbox, send_summary(sandbox, name, xml, oracle)).status_code == "99"  # 2105: no F002-31 here


# ---------------------------------------------------------------- vouchers issued elsewhere

def test_register_external_then_get_status_cdr_and_void(sandbox, oracle):
    xml = signed_sample("00000050")
    cdr_zip = sandbox.register_external(xml)
    assert cdr.read_zip(cdr_zip).descripcion == "La Factura numero F002-00000050, ha sido aceptada"
    found = client(sandbox).get_status_cdr(SAMPLE_RUC, "01", "F002", 50)
    assert (found.status_code, found.content) == ("0004", cdr_zip)
    assert sandbox.stats()["received"] == {}  # not a sendBill
    assert settle(sandbox, send_summary(sandbox, *ra(1, ("01", "F002", 50)), oracle)).status_code == "0"
    assert sandbox.voucher_status(SAMPLE_RUC, "01", "F002", "00000050") == "anulado"
    assert client(sandbox).get_status_cdr(SAMPLE_RUC, "01", "F002", 50).content == cdr_zip
    with pytest.raises(Exception) as refused:
        sandbox.register_external(xml)
    assert getattr(refused.value, "code", None) == "1032"
    with pytest.raises(Exception) as altered:
        sandbox.register_external(xml.replace(b"F002-00000050", b"F002-00000051", 1))
    assert getattr(altered.value, "code", None) == "2335"


def test_without_sheets_the_name_content_and_state_are_still_checked(_running_sandbox, oracle):
    """The session's sandbox has no rules folder (as `yupana sandbox sunat` without one): SUNAT's texts come from
    Yupana's own copy of the catalogue, and its ticket settings are its defaults again after a reset."""
    server = _running_sandbox
    server.summaries.configure(delay_s=0, pending_polls=3)
    server.reset()
    assert server.stats()["ticket_settings"] == {"delay_s": 0.5, "pending_polls": 0, "hold": False}
    server.summaries.configure(delay_s=0)
    try:
        name, xml = ra(1, ("01", "F002", 31))
        unknown = cdr.read_zip(settle(server, send_summary(server, name, xml, oracle)).content)
        assert (unknown.codigo, unknown.descripcion) == (
            "2105", "Comprobante a dar de baja no se encuentra registrado en SUNAT")
        other = name.rsplit("-", 1)[0] + "-7"
        renamed = settle(server, send_summary(server, other, xml, oracle, rejection="2220", sent_as=f"{other}.xml"))
        assert cdr.read_zip(renamed.content).descripcion == "El ID debe coincidir con el nombre del archivo"
    finally:
        server.reset()


# ---------------------------------------------------------------- the answers against SUNAT's WSDL

@pytest.mark.sunat_files
def test_answers_parse_with_zeep_against_sunats_wsdl(sandbox, oracle):
    service = zeep.Client(str(SHARED / "sunat" / "wsdl" / "billService.wsdl")).service._binding
    name, xml = rc(1, boleta(215, "1"))
    oracle.expect(xml, name)
    zip_name, data = soap.zip_document(f"{name}.xml", xml)
    sandbox.summaries.hold()
    sent = service.get("sendSummary").process_reply(etree.fromstring(
        raw(sandbox, "sendSummary", [("fileName", zip_name), ("contentFile", base64.b64encode(data).decode())])))
    assert sent.isdigit()
    pending = service.get("getStatus").process_reply(etree.fromstring(raw(sandbox, "getStatus", [("ticket", sent)])))
    assert (pending.statusCode, pending.content) == ("98", None)
    sandbox.summaries.release()
    done = service.get("getStatus").process_reply(etree.fromstring(raw(sandbox, "getStatus", [("ticket", sent)])))
    assert done.statusCode == "0" and cdr.read_zip(done.content).codigo == "0"
    assert done.content == client(sandbox).get_status(sent).content
    with pytest.raises(zeep.exceptions.Fault) as caught:
        service.process_error(etree.fromstring(raw(sandbox, "getStatus", [("ticket", "1")])), service.get("getStatus"))
    assert caught.value.code == "soap-env:Client.0127"
