"""A local SUNAT beta: billService and billConsultService on one loopback SOAP server.

It checks what SUNAT's front door checks, in SUNAT's order, and answers as SUNAT shapes it:
WS-Security credentials (fault 0102), zip and file names (0151, 0155-0161), duplicates (1033),
the voucher's signature (2335), its own consistency checks (0301, 1003, 1034-1036) and, when a
folder of SUNAT's rule sheets is given, SUNAT's rules (a rejected CDR with the rule's code, or
an accepted CDR with the observations as notes). A CDR is an ApplicationResponse signed with the
sandbox's own self-signed certificate (made at start, kept in memory), zipped as R-<name>.zip.

Failure injection for tests: `fail_next(mode, count)` or POST /control/fail {"mode", "count"}:
- "timeout": process the voucher, then hold the answer until the client gives up (a lost CDR);
- "hang": hold the request before processing it (until `release()` or `hold_limit_s`);
- "500": answer HTTP 500 with no SOAP fault, processing nothing;
- "drop_after_receive": process the voucher, then close the connection without answering.
getStatusCdr has its own queue (`fail_next(mode, count, operation="getStatusCdr")`): "500", "hang",
"drop_after_receive" (answer nothing) or "fault:NNNN" (a SOAP fault with that code); so do sendSummary
(those, and "reject:NNNN": the ticket's CDR rejects the summary with that code), getStatus (those) and the
voucher status query, billConsultService's getStatus (operation "consultStatus": those).
Summaries and their tickets live in app/sandbox/sunat_summaries.py. docs/sunat.md has the details.

The voucher status query answers as SUNAT's: statusCode 0001 (accepted, observed included), 0002 (rejected), 0003
(voided by an accepted RA or RC), 0011 (not held), 0009 for a type other than 01/07/08, 0010 for a series that
does not start with F (boletas and their notes: SUNAT's query does not answer for them). A summary whose ticket
nobody asked for is processed before it answers, once its delay passed and it is not held (SUNAT processes a
summary whether its ticket is polled or not).
"""

from __future__ import annotations

import base64
import binascii
import collections
import io
import json
import logging
import threading
import zipfile
from typing import TYPE_CHECKING, Any, ClassVar

from lxml import etree

from app.core.sandbox_kit import (
    FILE_NAME,
    SERVICE_NS,
    SOAP_ENV,
    SUNAT_ROOTS,
    WSSE,
    cdr,
    identify,
    safe_parser,
    sunat_catalogues,
    sunat_codes,
    sunat_errors,
)
from app.sandbox import sunat_signer, sunat_summaries, sunat_validez
from app.sandbox.base import QuietHandler, Sandbox
from app.sandbox.sunat_wire import (
    FAULT_MODE,
    REJECT_MODE,
    Fault,
    Outcome,
    answer_envelope,
    application_response,
    fault_envelope,
    voucher_key,
)

if TYPE_CHECKING:
    from app.core.api import Engine

log = logging.getLogger(__name__)

BILL_PATH = "/ol-ti-itcpfegem-beta/billService"
CONSULT_PATH = "/ol-it-wsconscpegem/billConsultService"
UBL_ROOTS = SUNAT_ROOTS  # the roots of the vouchers SUNAT takes by sendBill
FAILURE_MODES = ("timeout", "hang", "500", "drop_after_receive")
CONSULT_FAILURE_MODES = ("hang", "500", "drop_after_receive")
# Per operation: the plain modes it takes and the patterned ones (reject:NNNN, fault:NNNN).
OPERATION_MODES = {"sendBill": (FAILURE_MODES, (REJECT_MODE,)),
                   "getStatusCdr": (CONSULT_FAILURE_MODES, (FAULT_MODE,)),
                   "sendSummary": (CONSULT_FAILURE_MODES, (REJECT_MODE, FAULT_MODE)),
                   "getStatus": (CONSULT_FAILURE_MODES, (FAULT_MODE,)),
                   "consultStatus": (CONSULT_FAILURE_MODES, (FAULT_MODE,)),
                   "validarComprobante": (("500", "drop_after_receive", "401"), ())}
# billConsultService getStatus: SUNAT's statusCode for a voucher, and its message.
STATUS_ANSWERS = {"0001": "El comprobante existe y está aceptado", "0002": "El comprobante existe pero está rechazado",
                  "0003": "El comprobante existe pero está de baja",
                  "0009": "El tipo de comprobante debe ser (01, 07 o 08)",
                  "0010": "Solo se puede consultar facturas, notas de crédito y notas de débito electrónicas, cuya "
                          "serie empieza con \"F\"",
                  "0011": "El comprobante de pago electrónico no existe"}
QUERIED_TYPES = (sunat_catalogues.FACTURA, *sunat_catalogues.NOTES)
TYPE_NAMES = sunat_catalogues.CDR_NAMES  # how SUNAT's CDRs name each voucher



def _queried_voucher(ruc: str, fields: dict[str, str]) -> tuple[str, str, int, str]:
    """The voucher a billConsultService query names (tipo, serie, número and its stem «RUC-TIPO-SERIE-NUMERO»): a
    Fault 0010 for a número that is not one, 0012 for another RUC's voucher."""
    try:
        numero = int(fields.get("numeroComprobante", ""))
    except ValueError:
        raise Fault("0010") from None
    tipo, serie = fields.get("tipoComprobante", ""), fields.get("serieComprobante", "")
    if fields.get("rucComprobante") != ruc:
        raise Fault("0012")
    return tipo, serie, numero, f"{ruc}-{tipo}-{serie}-{numero}"

class SunatHandler(QuietHandler):
    sandbox: SunatSandbox

    def setup(self) -> None:
        super().setup()
        self.sandbox.connected()

    def do_POST(self) -> None:  # noqa: N802 - the base class's name
        body = self.read_body()
        if self.path.startswith("/control/"):
            self.reply(*self.sandbox.control(self.path, body))
            return
        if self.sandbox.validity.handles(self.path):
            self.sandbox.validity.post(self, self.path, body)
            return
        if not self.path.endswith(("billService", "billConsultService")):
            self.reply(404, b"not found", "text/plain")
            return
        self.sandbox.handle_soap(self, body)

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/control/stats":
            self.reply(200, json.dumps(self.sandbox.stats()).encode())
        elif self.path.endswith(("billService", "billConsultService")) and self.path.count("?wsdl"):
            self.reply(200, b"<definitions/>", "text/xml")
        else:
            self.reply(404, b"not found", "text/plain")

    def drop(self) -> None:
        """Close the connection without a single byte of answer."""
        self.close_connection = True


class SunatSandbox(Sandbox):
    name: ClassVar[str] = "sunat"
    handler: ClassVar[type[QuietHandler]] = SunatHandler

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, usuario: str = "MODDATOS",
                 clave: str = "moddatos", rules_dir: str = "", hold_limit_s: float = 60.0,
                 ticket_delay_s: float = 0.5, ticket_pending_polls: int = 0) -> None:
        super().__init__(host, port)
        self.usuario = usuario
        self.clave = clave
        self.rules_dir = rules_dir
        self.hold_limit_s = hold_limit_s
        self.lock = threading.Lock()
        self._failures: collections.deque[str] = collections.deque()
        self._consult_failures: collections.deque[str] = collections.deque()
        self._queues = {"sendBill": self._failures, "getStatusCdr": self._consult_failures,
                        "sendSummary": collections.deque(), "getStatus": collections.deque(),
                        "consultStatus": collections.deque(), "validarComprobante": collections.deque()}
        self._sends = threading.Condition(self.lock)  # notified at each sendBill received
        self._queries = threading.Condition(self.lock)  # notified at each voucher status query received
        self._release = threading.Event()
        self.received = threading.Event()  # set when a sendBill has been read in full
        self.received_counts: collections.Counter[str] = collections.Counter()  # sendBill calls per zip
        self.processed_counts: collections.Counter[str] = collections.Counter()  # vouchers registered
        self.consult_counts: collections.Counter[str] = collections.Counter()
        self.status_query_counts: collections.Counter[str] = collections.Counter()  # voucher status queries per stem
        self.connections = 0  # TCP connections accepted (a client that reuses its connection opens one)
        # Under `lock`, written by sendBill and by the summary desk's accepted summaries:
        self.registered: dict[str, tuple[bytes, str]] = {}  # voucher_key -> (CDR zip, response code)
        self.voided: set[str] = set()  # voucher_keys voided by an accepted RA or RC
        self.signer = sunat_signer.SandboxSigner()
        # The desk sees this sandbox only as a sunat_summaries.Host (lock, next_failure, hold_request, unzip, cdr_zip,
        # registered, voided, rules_dir).
        self.summaries = sunat_summaries.SummaryDesk(self, ticket_delay_s, ticket_pending_polls)
        # The consulta integrada de validez (REST with OAuth) over what this sandbox holds.
        self.validity = sunat_validez.ValidityDesk(self)

    # ------------------------------------------------------------ test controls

    def fail_next(self, mode: str, count: int = 1, operation: str = "sendBill") -> None:
        if operation not in OPERATION_MODES:
            raise ValueError(f"unknown operation {operation!r}: {', '.join(OPERATION_MODES)}")
        plain, patterns = OPERATION_MODES[operation]
        if mode not in plain and not any(pattern.match(mode) for pattern in patterns):
            shapes = [f"{pattern.pattern[1:pattern.pattern.index(':')]}:NNNN" for pattern in patterns]
            raise ValueError(f"unknown {operation} failure mode {mode!r}; valid: {', '.join([*plain, *shapes])}")
        with self.lock:
            self._queues[operation].extend([mode] * count)

    def sends(self) -> int:
        """sendBill calls received so far, every voucher together."""
        with self.lock:
            return sum(self.received_counts.values())

    def wait_for_sends(self, total: int, timeout: float) -> bool:
        """Block until `total` sendBill calls have been received in all (True) or `timeout` passes (False)."""
        with self._sends:
            return self._sends.wait_for(lambda: sum(self.received_counts.values()) >= total, timeout)

    def wait_for_status_queries(self, stem: str, total: int, timeout: float) -> bool:
        """Block until the voucher status query (billConsultService getStatus) has been asked `total` times about
        `stem` («RUC-TIPO-SERIE-NUMERO») (True) or `timeout` passes (False)."""
        with self._queries:
            return self._queries.wait_for(lambda: self.status_query_counts[stem] >= total, timeout)

    def connected(self) -> None:
        with self.lock:
            self.connections += 1

    def reset_failures(self) -> None:
        """Drop the failures still waiting to be injected."""
        with self.lock:
            for queue in self._queues.values():
                queue.clear()

    def reset(self) -> None:
        """Forget every voucher, summary, ticket, count and pending failure (tests share one running sandbox)."""
        self.reset_failures()
        self.summaries.reset()
        with self.lock:
            self.connections = 0
            self.registered.clear()
            self.voided.clear()
            self.validity.facts.clear()
            for counter in (self.received_counts, self.processed_counts, self.consult_counts,
                            self.status_query_counts):
                counter.clear()
        self.received.clear()
        self._release.clear()

    def release(self) -> None:
        """Let held requests go on (they are also released by `stop()`)."""
        self._release.set()

    def send_count(self, stem: str) -> int:
        return self.received_counts[stem.removesuffix(".zip")]

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {"received": dict(self.received_counts), "processed": dict(self.processed_counts),
                    "consulted": dict(self.consult_counts), "status_queries": dict(self.status_query_counts),
                    "pending_failures": list(self._failures),
                    "pending_status_query_failures": list(self._queues["consultStatus"]),
                    "pending_consult_failures": list(self._consult_failures),
                    "pending_summary_failures": list(self._queues["sendSummary"]),
                    "pending_status_failures": list(self._queues["getStatus"]),
                    "voided": sorted(self.voided), **self.summaries.stats()}

    def voucher_status(self, ruc: str, tipo: str, serie: str, numero: int | str) -> str | None:
        """What the sandbox holds of a voucher: aceptado, observado, rechazado, anulado, or None (never had it)."""
        key = voucher_key(ruc, tipo, serie, numero)
        with self.lock:
            known = self.registered.get(key)
            if key in self.voided:
                return sunat_summaries.VOIDED
        if known is None:
            return None
        return cdr.read_zip(known[0]).estado if known[1] == "0" else sunat_codes.cdr_status(known[1])  # "0": notes or not

    def register_external(self, xml_signed: bytes) -> bytes:
        """Hold a signed voucher as if it had been sent by sendBill from elsewhere (another system of the issuer):
        judged the same way, its CDR kept for getStatusCdr and returned. A `Fault` says why it was refused
        (1033 if the sandbox already has that number)."""
        try:
            root = etree.fromstring(xml_signed, safe_parser())
        except etree.XMLSyntaxError:
            raise Fault("0306") from None
        found = identify(root)
        if found is None:
            raise Fault("1049")
        return self._register(f"{found.ruc}-{found.tipo}-{found.serie}-{found.numero}", xml_signed)

    def control(self, path: str, body: bytes) -> tuple[int, bytes]:
        try:
            if path == "/control/fail":
                request = json.loads(body or b"{}")
                self.fail_next(str(request.get("mode")), int(request.get("count", 1)),
                               str(request.get("operation", "sendBill")))
            elif path == "/control/release":
                self.release()
            elif path == "/control/tickets":
                request = json.loads(body or b"{}")
                self.summaries.configure(
                    delay_s=None if request.get("delay_s") is None else float(request["delay_s"]),
                    pending_polls=None if request.get("pending_polls") is None else int(request["pending_polls"]),
                    hold=None if request.get("hold") is None else bool(request["hold"]))
            elif path == "/control/tickets/release":
                request = json.loads(body or b"{}")
                self.summaries.release(request.get("ticket"))
            else:
                return 404, b'{"error": "not found"}'
        except (ValueError, TypeError) as exc:
            return 400, json.dumps({"error": str(exc)}).encode()
        return 200, json.dumps(self.stats()).encode()

    # ------------------------------------------------------------ what the summary desk uses (sunat_summaries.Host)

    def next_failure(self, operation: str = "sendBill") -> str | None:
        """The next failure injected for `operation` (taken off its queue), or None."""
        queue = self._queues[operation]
        with self.lock:
            return queue.popleft() if queue else None

    def hold_request(self) -> None:
        """Hold the request in hand until `release()` (or `stop()`), at most `hold_limit_s`."""
        self._release.wait(self.hold_limit_s)

    def stop(self) -> None:
        self._release.set()
        super().stop()

    # ------------------------------------------------------------ settings of a data folder

    @property
    def bill_url(self) -> str:
        return self.base_url + BILL_PATH

    @property
    def consult_url(self) -> str:
        return self.base_url + CONSULT_PATH

    def endpoints(self) -> dict[str, str]:
        """The sandbox environment's beta and CDR look-up; production is never stood in for (docs/sunat.md)."""
        return {"sunat_url_beta": self.bill_url, "sunat_url_consulta": self.consult_url,
                "sunat_validez_url": f"{self.base_url}/v1", "sunat_validez_auth_url": f"{self.base_url}/v1"}

    def configure(self, engine: Engine) -> None:
        super().configure(engine)
        if not self.rules_dir:
            self.rules_dir = engine.admin.config_get("sunat_rules_dir")

    # ------------------------------------------------------------ SOAP

    def handle_soap(self, request: SunatHandler, body: bytes) -> None:
        try:
            operation, fields, username, password = self._read_envelope(body)
            ruc = self._authenticate(username, password)
            handler = {"sendBill": self._send_bill, "getStatusCdr": self._get_status_cdr,
                       "sendSummary": self.summaries.send_summary,
                       "getStatus": self.summaries.get_status}.get(operation)
            if operation == "getStatus" and request.path.endswith("billConsultService"):
                handler = self._get_voucher_status  # the same name: a voucher's status, not a ticket's
            if handler is None:
                raise Fault("0200", f"operación {operation} no disponible")
            answer = handler(request, ruc, fields)
        except Fault as fault:
            request.reply(500, fault_envelope(fault.code, fault.detail, self.rules_dir), "text/xml; charset=utf-8")
            return
        if answer is not None:
            request.reply(200, answer, "text/xml; charset=utf-8")

    def _read_envelope(self, body: bytes) -> tuple[str, dict[str, str], str, str]:
        try:
            root = etree.fromstring(body, safe_parser())
        except etree.XMLSyntaxError:
            raise Fault("0306") from None
        security = root.find(f"{{{SOAP_ENV}}}Header/{{{WSSE}}}Security/{{{WSSE}}}UsernameToken")
        call = root.find(f"{{{SOAP_ENV}}}Body/*")
        if call is None or etree.QName(call).namespace != SERVICE_NS:
            raise Fault("0301")
        username = security.findtext(f"{{{WSSE}}}Username") if security is not None else None
        password = security.findtext(f"{{{WSSE}}}Password") if security is not None else None
        fields = {etree.QName(child).localname: (child.text or "").strip() for child in call}
        return etree.QName(call).localname, fields, (username or "").strip(), password or ""

    def _authenticate(self, username: str, password: str) -> str:
        """SUNAT beta: the user is RUC + usuario SOL; answers 0102 to anything else."""
        ruc, usuario = username[:11], username[11:]
        if not (ruc.isdigit() and len(ruc) == 11 and usuario == self.usuario and password == self.clave):
            raise Fault("0102")
        return ruc

    def _send_bill(self, request: SunatHandler, ruc: str, fields: dict[str, str]) -> bytes | None:
        zip_name = fields.get("fileName", "")
        stem = zip_name.removesuffix(".zip")
        match = FILE_NAME.match(stem)
        if not zip_name.endswith(".zip") or match is None:
            raise Fault("0151")
        if match["ruc"] != ruc:
            raise Fault("0154")
        with self.lock:
            self.received_counts[stem] += 1
            self._sends.notify_all()
        self.received.set()
        failure = self.next_failure("sendBill")
        if failure == "hang":
            self.hold_request()
        if failure == "500":
            request.reply(500, b"<html><body>500 Internal Server Error</body></html>", "text/html")
            return None
        xml = self.unzip(stem, fields.get("contentFile", ""))
        forced = REJECT_MODE.match(failure or "")
        cdr_zip = self._register(stem, xml, forced["code"] if forced else None)
        if failure == "timeout":
            self.hold_request()
            request.drop()
            return None
        if failure == "drop_after_receive":
            request.drop()
            return None
        return answer_envelope("sendBillResponse", [("applicationResponse", base64.b64encode(cdr_zip).decode())])

    def unzip(self, stem: str, content: str) -> bytes:
        try:
            data = base64.b64decode(content, validate=True)
            archive = zipfile.ZipFile(io.BytesIO(data))
        except (binascii.Error, ValueError, zipfile.BadZipFile):
            raise Fault("0156") from None
        with archive:
            members = [m for m in archive.infolist() if not m.is_dir()]
            if not members:
                raise Fault("0155")
            if len(members) > 1:
                raise Fault("0158")
            member = members[0]
            if not member.filename.lower().endswith(".xml"):
                raise Fault("0157")
            if member.filename != f"{stem}.xml":
                raise Fault("0161")
            if member.file_size > 10 * 1024 * 1024:
                raise Fault("0156", "archivo demasiado grande")
            xml = archive.read(member)
        if not xml.strip():
            raise Fault("0160")
        return xml

    @staticmethod
    def _key(stem: str) -> str:
        return voucher_key(*stem.split("-"))

    def _register(self, stem: str, xml: bytes, forced_code: str | None = None) -> bytes:
        """Judge one voucher and keep its CDR; a second voucher with the same name is 1033."""
        with self.lock:
            self._refuse_duplicate(stem)
        outcome = self._judge(stem, xml)
        if forced_code is not None:
            described = sunat_errors.describe(forced_code, self.rules_dir)
            notes = [f"{forced_code} - {described}"] if sunat_codes.is_observation(forced_code) else []
            outcome = Outcome(forced_code if not notes else sunat_codes.ACCEPTED_CODE,
                              described if not notes else outcome.description, notes)
        cdr_zip = self.cdr_zip(stem, outcome)
        with self.lock:
            self._refuse_duplicate(stem)
            self.registered[self._key(stem)] = (cdr_zip, outcome.code)
            self.processed_counts[stem] += 1
        self.validity.remember(self._key(stem), xml)
        return cdr_zip

    def _refuse_duplicate(self, stem: str) -> None:
        """1033 when the number was registered; 1032 when it was registered as rejected, or has been voided."""
        key = self._key(stem)
        known = self.registered.get(key)
        if known is not None:
            raise Fault("1032" if key in self.voided else sunat_codes.duplicate_fault(known[1]))

    def _judge(self, stem: str, xml: bytes) -> Outcome:
        try:
            root = etree.fromstring(xml, safe_parser())
        except etree.XMLSyntaxError:
            raise Fault("0306") from None
        if etree.QName(root).localname not in UBL_ROOTS:
            raise Fault("0301")
        if not sunat_signer.signature_is_valid(xml):
            raise Fault("2335")
        self._check_identity(stem, root)
        rejection, observations = self._run_rules(stem, xml)
        ruc, tipo, serie, numero = stem.split("-")
        name = f"La {TYPE_NAMES[tipo]} numero {serie}-{numero}"
        if rejection is not None:
            code, text = rejection
            if sunat_codes.is_exception(code):
                raise Fault(code, text)
            return Outcome(code, text or sunat_errors.describe(code, self.rules_dir), [])
        notes = [f"{code} - {text or sunat_errors.describe(code, self.rules_dir)}" for code, text in observations]
        return Outcome(sunat_codes.ACCEPTED_CODE, f"{name}, ha sido aceptada", notes)

    def _check_identity(self, stem: str, root: etree._Element) -> None:
        ruc, tipo, serie, numero = stem.split("-")
        found = identify(root)
        if found is None:
            raise Fault("1049")
        if found.ruc != ruc:
            raise Fault("1034")
        if found.tipo != tipo:
            raise Fault("1003")
        if found.serie != serie:
            raise Fault("1035")
        if found.numero != numero:
            raise Fault("1036")

    def _run_rules(self, stem: str, xml: bytes) -> tuple[tuple[str, str] | None, list[tuple[str, str]]]:
        """SUNAT's own sheets, when a folder of them was given and Yupana's sheet runner is present."""
        if not self.rules_dir:
            return None, []
        from app.sandbox import sunat_rules_bridge

        return sunat_rules_bridge.run(self.rules_dir, xml, f"{stem}.xml")

    def cdr_zip(self, stem: str, outcome: Outcome, reference: str | None = None) -> bytes:
        xml = self.signer.sign(application_response(stem, outcome, reference))
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("dummy/", b"")  # SUNAT's zips carry this empty entry too
            archive.writestr(f"R-{stem}.xml", xml)
        return buffer.getvalue()

    def _get_voucher_status(self, request: SunatHandler, ruc: str, fields: dict[str, str]) -> bytes | None:
        """billConsultService getStatus: what SUNAT holds of a voucher, as a statusCode (see the module's doc)."""
        tipo, serie, numero, stem = _queried_voucher(ruc, fields)
        with self.lock:
            self.status_query_counts[stem] += 1
            self._queries.notify_all()
        failure = self.next_failure("consultStatus")
        if failure == "hang":
            self.hold_request()
        if failure == "500":
            request.reply(500, b"<html><body>500 Internal Server Error</body></html>", "text/html")
            return None
        if forced := FAULT_MODE.match(failure or ""):
            raise Fault(forced["code"])
        code = self._status_code(ruc, tipo, serie, numero)
        if failure == "drop_after_receive":
            request.drop()
            return None
        return answer_envelope("getStatusResponse", [], wrapper=("status", [
            ("statusCode", code), ("statusMessage", STATUS_ANSWERS[code])]))

    def _status_code(self, ruc: str, tipo: str, serie: str, numero: int) -> str:
        """The statusCode of the voucher status query, after processing the summaries SUNAT would have by now."""
        if tipo not in QUERIED_TYPES:
            return "0009"
        if not serie.upper().startswith("F"):
            return "0010"
        key = voucher_key(ruc, tipo, serie, numero)
        with self.lock:
            self.summaries.settle_due()
            known = self.registered.get(key)
            voided = key in self.voided
        if voided:
            return "0003"
        if known is None:
            return "0011"
        return "0002" if sunat_codes.is_rejection(known[1]) else "0001"

    def _get_status_cdr(self, request: SunatHandler, ruc: str, fields: dict[str, str]) -> bytes | None:
        _tipo, _serie, _numero, stem = _queried_voucher(ruc, fields)
        with self.lock:
            self.consult_counts[stem] += 1
        failure = self.next_failure("getStatusCdr")
        if failure == "hang":
            self.hold_request()
        if failure == "500":
            request.reply(500, b"<html><body>500 Internal Server Error</body></html>", "text/html")
            return None
        if failure == "drop_after_receive":
            request.drop()
            return None
        forced = FAULT_MODE.match(failure or "")
        if forced:
            raise Fault(forced["code"])
        with self.lock:
            known = self.registered.get(self._key(stem))
        if known is None:
            status = [("statusCode", "0011"), ("statusMessage", sunat_errors.describe("0011"))]
        else:
            status = [("content", base64.b64encode(known[0]).decode()), ("statusCode", "0004"),
                      ("statusMessage", "La constancia existe")]
        return answer_envelope("getStatusCdrResponse", [], wrapper=("statusCdr", status))
