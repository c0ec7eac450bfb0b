"""sendSummary and getStatus of the SUNAT sandbox: comunicaciones de baja (RA) and resúmenes diarios (RC).

SUNAT takes a summary in two steps, and so does the sandbox:

- sendSummary checks at its front door what SUNAT answers at once as a SOAP fault: the zip's name
  (`RUC-RA-YYYYMMDD-N.zip`, `RUC-RC-…`; 0151), the user's RUC (0154), the zip (0155-0161), the XML (0306),
  its root for the name's type (0301), the signature (2335) and a name already sent (2403 while its
  ticket is pending, then 2324 for a RA and 2223 for a RC). It then judges the document as SUNAT's
  sheets do (the RA through ValidaExprRegSummaryVoided, the RC through ValidaExprRegSummary-1.1.0, by
  the sandbox's rules bridge; without a rules folder only the name against the content: 2220, 2221/1034)
  and answers a ticket.
- getStatus answers statusCode 98 (no CDR) while the ticket is pending: for `ticket_delay_s` after it
  was issued, for its first `pending_polls` polls, and for as long as it is held (`hold()` until
  `release()`). SUNAT processes a summary whether its ticket is asked for or not: a ticket nobody polls (its
  answer was lost) is processed once its delay passed and it is not held, when SUNAT's voucher status query
  looks (`settle_due`) or the same name is sent again (then 2324/2223 name its ticket). Then the summary is processed against what the sandbox holds, once: a voucher voided by
  a RA must be one it received (2105), not rejected (2398) nor already voided (2323); a boleta of a RC
  is added (status 1; 2282 if it was informed already, 2987 if voided or rejected; a note's boleta must
  be known, 2989, and not voided, 2990), modified (2) or voided (3; 2105 if unknown). The answer is
  statusCode 0 with an accepted CDR («La Comunicación de baja RA-…, ha sido aceptada», «El Resumen diario
  RC-…, ha sido aceptado», observations as notes) and the vouchers take their new state, or statusCode
  99 with a CDR carrying the rejection's code, and nothing changes. A rejection below 2000 (an
  exception) leaves the name free to be sent again.

docs/sunat.md («Resúmenes y bajas en el sandbox») has the codes, the injection and the controls.
"""

from __future__ import annotations

import base64
import collections
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from lxml import etree

from app.core.sandbox_kit import (
    ACEPTADO,
    ANULADO,
    CAC,
    CBC,
    RECHAZADO,
    SAC,
    SUMMARY_DOCUMENTS,
    TICKET_DONE,
    TICKET_PENDING,
    TICKET_REJECTED,
    VOIDED_DOCUMENTS,
    safe_parser,
    sunat_codes,
    sunat_errors,
)
from app.sandbox import sunat_signer, sunat_wire

SUMMARY_NAME = re.compile(r"^(?P<ruc>\d{11})-(?P<ident>(?P<kind>RA|RC)-(?P<day>\d{8})-(?P<counter>\d{1,5}))$")
ROOTS = {"RA": (VOIDED_DOCUMENTS, "VoidedDocuments"), "RC": (SUMMARY_DOCUMENTS, "SummaryDocuments")}
ACCEPTED = {"RA": "La Comunicación de baja {ident}, ha sido aceptada",
            "RC": "El Resumen diario {ident}, ha sido aceptado"}
# SUNAT's codes (CatalogoErrores.xml) for what the sandbox decides itself.
ALREADY_SENT_PENDING = "2403"  # «ya ha sido enviado anteriormente» (while the first is «en estado 98»)
ALREADY_SENT = {"RA": "2324", "RC": "2223"}  # «ya fue presentado anteriormente»
ID_NOT_NAME = "2220"
RUC_NOT_NAME = {"RA": "2221", "RC": "1034"}
NOT_REGISTERED = "2105"  # «Comprobante a dar de baja no se encuentra registrado en SUNAT»
VOIDED_BEFORE = "2323"  # «Existe documento ya informado anteriormente en una comunicacion de baja»
VOID_OF_REJECTED = "2398"  # «El documento a dar de baja se encuentra rechazado»
INFORMED_BEFORE = "2282"  # «Existe documento ya informado anteriormente»
VOIDED_OR_REJECTED = "2987"  # «El comprobante ya fue informado y se encuentra anulado o rechazado»
REFERENCE_UNKNOWN = "2989"  # the boleta a note refers to «no se encuentra informado»
REFERENCE_VOIDED = "2990"  # … «se encuentra anulado o rechazada»
TICKET_UNKNOWN = "0127"
TICKET_NOT_YOURS = "0126"
VOIDED = ANULADO


class Host(Protocol):
    """All the desk sees of the SUNAT sandbox that hosts it (app.sandbox.sunat.SunatSandbox): the lock that guards
    the sandbox's vouchers and the desk's tickets alike, the failures injected, the hold of a request, the zip and the
    CDR as sendBill reads and writes them, and the vouchers the sandbox holds."""

    @property
    def lock(self) -> threading.Lock: ...

    @property
    def rules_dir(self) -> str:
        """SUNAT's rule sheets' folder, or "" (no sheets)."""

    @property
    def registered(self) -> dict[str, tuple[bytes, str]]:
        """Voucher key -> (CDR zip, response code); read and written under `lock`."""

    @property
    def voided(self) -> set[str]:
        """The voucher keys voided by an accepted RA or RC; read and written under `lock`."""

    def next_failure(self, operation: str) -> str | None:
        """The next failure injected for `operation` ("sendSummary", "getStatus"), taken off its queue, or None."""

    def hold_request(self) -> None:
        """Hold the request in hand until the sandbox releases it (a "hang")."""

    def unzip(self, stem: str, content: str) -> bytes:
        """The one XML of a base64 zip named `stem`, or a `sunat_wire.Fault` as SUNAT's front door answers."""

    def cdr_zip(self, stem: str, outcome: sunat_wire.Outcome, reference: str | None = None) -> bytes:
        """A signed ApplicationResponse for `outcome`, zipped as SUNAT does."""


class Caller(Protocol):
    """The HTTP request a SOAP call came in (app.sandbox.sunat.SunatHandler)."""

    def reply(self, status: int, body: bytes, content_type: str = ...) -> None: ...

    def drop(self) -> None:
        """Close the connection without answering."""


@dataclass(frozen=True)
class Line:
    """One voucher of a summary: `estado` is the RC's ConditionCode ("3" for every RA line)."""

    tipo: str
    serie: str
    numero: int
    estado: str
    referencia: tuple[str, str, int] | None = None


@dataclass
class Ticket:
    number: str
    ruc: str
    stem: str
    kind: str
    ident: str
    lines: list[Line]
    verdict: tuple[str, str, list[str]] | None  # a rejection (code, text, []) or observations ("0", "", notes)
    created: float
    held: bool
    polls: int = 0
    status: str = TICKET_PENDING
    cdr_zip: bytes | None = None
    code: str = ""


@dataclass
class Settings:
    delay_s: float
    pending_polls: int
    hold: bool = False


@dataclass
class _Staged:
    """What a summary would change, applied only when every line passes."""

    added: set[str] = field(default_factory=set)  # voucher keys
    voided: set[str] = field(default_factory=set)


class SummaryDesk:
    """The sandbox's summaries: tickets, the names already sent, and what accepted summaries changed."""

    def __init__(self, sandbox: Host, ticket_delay_s: float, pending_polls: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.sandbox = sandbox
        self.settings = Settings(ticket_delay_s, pending_polls)
        self._defaults = Settings(ticket_delay_s, pending_polls)
        self.clock = clock  # tests replace it to pass a delay without sleeping
        self._lock = sandbox.lock
        self._changed = threading.Condition(self._lock)  # notified at each sendSummary, getStatus and ticket issued
        self._tickets: dict[str, Ticket] = {}
        self._names: dict[str, str] = {}  # summary file stem -> ticket
        self.summary_counts: collections.Counter[str] = collections.Counter()  # sendSummary calls per name

    # ------------------------------------------------------------ controls

    def configure(self, *, delay_s: float | None = None, pending_polls: int | None = None,
                  hold: bool | None = None) -> None:
        with self._lock:
            if delay_s is not None:
                if delay_s < 0:
                    raise ValueError("delay_s must be 0 or more")
                self.settings.delay_s = float(delay_s)
            if pending_polls is not None:
                if pending_polls < 0:
                    raise ValueError("pending_polls must be 0 or more")
                self.settings.pending_polls = int(pending_polls)
            if hold is not None:
                self.settings.hold = bool(hold)
            self._changed.notify_all()

    def hold(self) -> None:
        """Tickets issued from now on stay pending (98) until `release()`."""
        self.configure(hold=True)

    def release(self, ticket: str | None = None) -> None:
        """Let held tickets go on (one, or all of them and the ones to come)."""
        with self._lock:
            if ticket is None:
                self.settings.hold = False
            for found in self._tickets.values():
                if ticket is None or found.number == ticket:
                    found.held = False
            self._changed.notify_all()

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Block until `predicate()` (called under the sandbox's lock) holds, or `timeout` passes."""
        with self._changed:
            return self._changed.wait_for(predicate, timeout)

    def wait_for_polls(self, ticket: str, polls: int, timeout: float) -> bool:
        return self.wait_for(lambda: self._tickets.get(ticket) is not None
                             and self._tickets[ticket].polls >= polls, timeout)

    def wait_for_tickets(self, count: int, timeout: float) -> bool:
        """Until `count` tickets have been issued in all (a summary whose answer was lost has one too)."""
        return self.wait_for(lambda: len(self._tickets) >= count, timeout)

    def ticket(self, number: str) -> Ticket | None:
        with self._lock:
            return self._tickets.get(number)

    def tickets(self) -> list[str]:
        with self._lock:
            return list(self._tickets)

    def reset(self) -> None:
        """Forget every ticket and name; the ticket settings go back to the sandbox's own."""
        with self._lock:
            self._tickets.clear()
            self._names.clear()
            self.summary_counts.clear()
            self.settings = Settings(self._defaults.delay_s, self._defaults.pending_polls)
            self._changed.notify_all()

    def stats(self) -> dict[str, Any]:
        """Under the sandbox's lock (its caller holds it)."""
        return {"summaries": dict(self.summary_counts),
                "tickets": {t.number: {"name": t.stem, "status": t.status, "polls": t.polls, "held": t.held,
                                       "code": t.code} for t in self._tickets.values()},
                "ticket_settings": {"delay_s": self.settings.delay_s, "pending_polls": self.settings.pending_polls,
                                    "hold": self.settings.hold}}

    # ------------------------------------------------------------ sendSummary

    def send_summary(self, request: Caller, ruc: str, fields: dict[str, str]) -> bytes | None:
        zip_name = fields.get("fileName", "")
        stem = zip_name.removesuffix(".zip")
        name = SUMMARY_NAME.match(stem)
        if not zip_name.endswith(".zip") or name is None:
            raise sunat_wire.Fault("0151")
        if name["ruc"] != ruc:
            raise sunat_wire.Fault("0154")
        with self._lock:
            self.summary_counts[stem] += 1
            self._changed.notify_all()
        failure = self.sandbox.next_failure("sendSummary")
        if failure == "hang":
            self.sandbox.hold_request()
        if failure == "500":
            request.reply(500, b"<html><body>500 Internal Server Error</body></html>", "text/html")
            return None
        if forced_fault := sunat_wire.FAULT_MODE.match(failure or ""):
            raise sunat_wire.Fault(forced_fault["code"])
        with self._lock:
            self._refuse_duplicate(stem, name["kind"])
        xml = self.sandbox.unzip(stem, fields.get("contentFile", ""))
        root = self._parse(xml, name["kind"])
        if not sunat_signer.signature_is_valid(xml):
            raise sunat_wire.Fault("2335")
        verdict = self._judge(name, root, xml)
        if forced := sunat_wire.REJECT_MODE.match(failure or ""):
            code = forced["code"]
            text = sunat_errors.describe(code, self.sandbox.rules_dir)
            verdict = ("0", "", [f"{code} - {text}"]) if code.startswith("4") else (code, text, [])
        with self._lock:
            self._refuse_duplicate(stem, name["kind"])
            number = self._new_ticket_number()
            self._tickets[number] = Ticket(number, ruc, stem, name["kind"], name["ident"], read_lines(root, name["kind"]),
                                           verdict, self.clock(), self.settings.hold)
            self._names[stem] = number
            self._changed.notify_all()
        if failure == "drop_after_receive":
            request.drop()
            return None
        return sunat_wire.answer_envelope("sendSummaryResponse", [("ticket", number)])

    def _refuse_duplicate(self, stem: str, kind: str) -> None:
        """A name already sent: 2403 while its ticket is pending, then 2324/2223 naming the ticket. SUNAT processes a
        summary whether its ticket is asked for or not, so one whose delay passed is processed first (as `settle_due`
        does), unless it is held or still owes pending answers to its polls."""
        number = self._names.get(stem)
        if number is None:
            return
        ticket = self._tickets[number]
        if ticket.status == TICKET_PENDING and not self._held_back(ticket):
            self._process(ticket)
            self._changed.notify_all()
            if self._names.get(stem) is None:  # processed as an exception: the name is free again
                return
        if ticket.status == TICKET_PENDING:
            raise sunat_wire.Fault(ALREADY_SENT_PENDING, f"El documento: {stem} ya fue enviado y se encuentra en estado 98")
        raise sunat_wire.Fault(ALREADY_SENT[kind], f"ticket: {number}")

    def _new_ticket_number(self) -> str:
        while True:
            number = str(random.randrange(10 ** 14, 10 ** 15))
            if number not in self._tickets:
                return number

    @staticmethod
    def _parse(xml: bytes, kind: str) -> etree._Element:
        try:
            root = etree.fromstring(xml, safe_parser())
        except etree.XMLSyntaxError:
            raise sunat_wire.Fault("0306") from None
        namespace, localname = ROOTS[kind]
        if root.tag != f"{{{namespace}}}{localname}":
            raise sunat_wire.Fault("0301", f"se esperaba {localname} para un archivo {kind}")
        return root

    def _judge(self, name: re.Match[str], root: etree._Element, xml: bytes) -> tuple[str, str, list[str]] | None:
        """A rejection (code, text, []), observations ("0", "", notes) or None: the name against the content,
        then SUNAT's sheets (the same bridge as sendBill's) when the sandbox has a rules folder."""
        describe = self._describe
        if (root.findtext(f"{{{CBC}}}ID") or "").strip() != name["ident"]:
            return ID_NOT_NAME, describe(ID_NOT_NAME), []
        issuer = root.findtext(f"{{{CAC}}}AccountingSupplierParty/{{{CBC}}}CustomerAssignedAccountID") or ""
        if issuer.strip() != name["ruc"]:
            code = RUC_NOT_NAME[name["kind"]]
            return code, describe(code), []
        if not self.sandbox.rules_dir:
            return None
        from app.sandbox import sunat_rules_bridge

        rejection, observations = sunat_rules_bridge.run(self.sandbox.rules_dir, xml, f"{name.group(0)}.xml")
        if rejection is not None:
            return rejection[0], rejection[1], []
        if observations:
            return "0", "", [f"{code} - {text}" for code, text in observations]
        return None

    def _describe(self, code: str) -> str:
        return sunat_errors.describe(code, self.sandbox.rules_dir)

    # ------------------------------------------------------------ getStatus

    def get_status(self, request: Caller, ruc: str, fields: dict[str, str]) -> bytes | None:
        failure = self.sandbox.next_failure("getStatus")
        if failure == "hang":
            self.sandbox.hold_request()
        if failure == "500":
            request.reply(500, b"<html><body>500 Internal Server Error</body></html>", "text/html")
            return None
        if forced := sunat_wire.FAULT_MODE.match(failure or ""):
            raise sunat_wire.Fault(forced["code"])
        with self._lock:
            ticket = self._tickets.get(fields.get("ticket", "").strip())
            if ticket is None:
                raise sunat_wire.Fault(TICKET_UNKNOWN)
            if ticket.ruc != ruc:
                raise sunat_wire.Fault(TICKET_NOT_YOURS)
            ticket.polls += 1
            if ticket.status == TICKET_PENDING and not self._still_pending(ticket):
                self._process(ticket)
            status, cdr_zip = ticket.status, ticket.cdr_zip
            self._changed.notify_all()
        if failure == "drop_after_receive":
            request.drop()
            return None
        answer = [("statusCode", status)]
        if cdr_zip is not None:
            answer.insert(0, ("content", base64.b64encode(cdr_zip).decode()))
        return sunat_wire.answer_envelope("getStatusResponse", [], wrapper=("status", answer))

    def settle_due(self) -> None:
        """Process every pending ticket whose delay passed and that is not held, polled or not (SUNAT processes a
        summary whether anyone asks for its ticket): what the voucher status query sees. Under the sandbox's lock."""
        for ticket in self._tickets.values():
            if ticket.status == TICKET_PENDING and not ticket.held \
                    and self.clock() - ticket.created >= self.settings.delay_s:
                self._process(ticket)
                self._changed.notify_all()

    def _held_back(self, ticket: Ticket) -> bool:
        """A ticket nobody polled that SUNAT has not processed yet: held, within its delay, or owing the first
        `pending_polls` polls their 98."""
        return (ticket.held or ticket.polls < self.settings.pending_polls
                or self.clock() - ticket.created < self.settings.delay_s)

    def _still_pending(self, ticket: Ticket) -> bool:
        return (ticket.held or ticket.polls <= self.settings.pending_polls
                or self.clock() - ticket.created < self.settings.delay_s)

    def _process(self, ticket: Ticket) -> None:
        """SUNAT processes the summary: every line checked against what the sandbox holds, then applied at once.
        Runs under the sandbox's lock, once per ticket."""
        code, text, notes = ticket.verdict or ("0", "", [])
        staged = _Staged()
        accepted = code == "0"  # a rejection's code otherwise (observations come as "0" with notes)
        if accepted and (refused := self._check_lines(ticket, staged)) is not None:
            code, text, notes, accepted = refused, self._describe(refused), [], False
        description = ACCEPTED[ticket.kind].format(ident=ticket.ident) if accepted else text
        outcome = sunat_wire.Outcome(code, description or self._describe(code), notes if accepted else [])
        ticket.cdr_zip = self.sandbox.cdr_zip(ticket.stem, outcome, reference=ticket.ident)
        ticket.code = code
        ticket.status = TICKET_DONE if accepted else TICKET_REJECTED
        if accepted:
            for key in staged.added:
                self.sandbox.registered[key] = (ticket.cdr_zip, "0")
            self.sandbox.voided.update(staged.voided)
        elif int(code) < 2000:  # an exception: fix it and send the same name again
            self._names.pop(ticket.stem, None)

    def _check_lines(self, ticket: Ticket, staged: _Staged) -> str | None:
        """The first line SUNAT would refuse (its code), or None with `staged` holding the changes."""
        for line in ticket.lines:
            key = sunat_wire.voucher_key(ticket.ruc, line.tipo, line.serie, line.numero)
            state = self._state(key, staged)
            if ticket.kind == "RA":
                refused = {None: NOT_REGISTERED, VOIDED: VOIDED_BEFORE, RECHAZADO: VOID_OF_REJECTED}.get(state)
            elif state in (VOIDED, RECHAZADO):
                refused = VOIDED_OR_REJECTED
            elif line.estado == "1" and state is not None:
                refused = INFORMED_BEFORE
            elif line.estado == "3" and state is None:
                refused = NOT_REGISTERED
            else:
                refused = self._check_reference(ticket.ruc, line, staged) if line.estado == "1" else None
            if refused is not None:
                return refused
            if line.estado == "3":
                staged.voided.add(key)
            elif state is None:  # added (1), or modified (2) before the sandbox knew it: it knows it now
                staged.added.add(key)
        return None

    def _check_reference(self, ruc: str, line: Line, staged: _Staged) -> str | None:
        if line.referencia is None:
            return None
        state = self._state(sunat_wire.voucher_key(ruc, *line.referencia), staged)
        if state is None:
            return REFERENCE_UNKNOWN
        return REFERENCE_VOIDED if state in (VOIDED, RECHAZADO) else None

    def _state(self, key: str, staged: _Staged) -> str | None:
        """anulado, aceptado, rechazado, or None when the sandbox has never had the voucher."""
        if key in staged.voided or key in self.sandbox.voided:
            return VOIDED
        if key in staged.added:
            return ACEPTADO
        known = self.sandbox.registered.get(key)
        if known is None:
            return None
        return RECHAZADO if sunat_codes.is_rejection(known[1]) else ACEPTADO


# ---------------------------------------------------------------- reading a summary

def _int(text: str | None) -> int:
    value = (text or "").strip()
    return int(value) if value.isdigit() else -1


def read_lines(root: etree._Element, kind: str) -> list[Line]:
    """The vouchers a RA voids, or the boletas (and notes) a RC reports with their status."""
    cbc, sac, cac = f"{{{CBC}}}", f"{{{SAC}}}", f"{{{CAC}}}"
    lines = []
    if kind == "RA":
        for row in root.iter(f"{sac}VoidedDocumentsLine"):
            lines.append(Line((row.findtext(f"{cbc}DocumentTypeCode") or "").strip(),
                              (row.findtext(f"{sac}DocumentSerialID") or "").strip(),
                              _int(row.findtext(f"{sac}DocumentNumberID")), "3"))
        return lines
    for row in root.iter(f"{sac}SummaryDocumentsLine"):
        serie, _, numero = (row.findtext(f"{cbc}ID") or "").strip().partition("-")
        reference = row.find(f"{cac}BillingReference/{cac}InvoiceDocumentReference")
        referencia = None
        if reference is not None:
            ref_serie, _, ref_numero = (reference.findtext(f"{cbc}ID") or "").strip().partition("-")
            referencia = ((reference.findtext(f"{cbc}DocumentTypeCode") or "").strip(), ref_serie, _int(ref_numero))
        lines.append(Line((row.findtext(f"{cbc}DocumentTypeCode") or "").strip(), serie, _int(numero),
                          (row.findtext(f"{cac}Status/{cbc}ConditionCode") or "").strip(), referencia))
    return lines
