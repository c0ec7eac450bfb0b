"""A guía's way to SUNAT's GRE REST platform, as the outbox's Channel (documents.kind.Channel): the outbox keeps
the promises it keeps for sendBill — written before it is sent, one attempt at a time, retried with backoff, never a
second guía — and this channel adds what the REST platform needs:

- send: the signed XML zipped (the same bytes and hash on every attempt: gre_rest.package) and posted; the ticket
  SUNAT answers is written durably at once (ports.gre_tickets), then asked for until SUNAT has decided, for at most
  `sunat_gre_wait_s`: still in process, the outbox asks again later through `document_cdr` — never sends again;
- document_cdr (what the outbox asks before any resend): the stored ticket's answer; no ticket, "send it";
- SUNAT's outcome: codRespuesta 0 with its CDR; 99 with a CDR (a rejection's CDR); 99 without one, SUNAT's code and
  text as a fault (a rejection 2000-3999 ends the guía as rejected with them; 1033, a guía SUNAT registered before,
  is answered by the first one's ticket when it is known, else later: never reported as a rejection);
- no usable answer (network, 5xx): a transport failure that may have arrived (the outbox asks before resending).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from app.core.errors import not_configured
from app.core.invoicing import sunat_codes
from app.core.invoicing.cdr import Cdr, read_zip
from app.core.invoicing.gre_rest import GreClient, GreRefused, GreUnavailable, TicketStatus, package
from app.core.invoicing.soap import SoapFault, TransportFailure
from app.core.storage.ports.gre_tickets import GreTicketRepository

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 0.2  # between two questions about one ticket while an attempt waits for SUNAT


class GreChannel:
    zipped = False  # packaged here: the zip's hash travels with it
    send_operation = "POST comprobantes (GRE)"
    status_operation = "GET envios (GRE)"

    def __init__(self, client: GreClient, tickets: GreTicketRepository, environment: str, wait_s: float,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.tickets = tickets
        self.environment = environment
        self.wait_s = wait_s
        self.sleep = sleep
        self.clock = clock

    def send_document(self, name: str, content: bytes) -> Cdr:
        guia = package(name, content)
        ruc, tipo, serie, numero = guia.stem.split("-", 3)
        try:
            ticket = self.client.send(guia)
        except GreUnavailable as exc:
            raise TransportFailure("gre", str(exc), True) from None
        except GreRefused as refused:
            raise _refusal(refused) from None
        # Before anything else: a kill from here on asks this ticket again instead of sending the guía twice.
        kept = self.tickets.record(self.environment, ruc, tipo, serie, numero, ticket.number, guia.sha256)
        log.info("GRE %s: ticket %s", guia.stem, kept.ticket)
        return self._outcome(kept.ticket, waiting=True)

    def document_cdr(self, ruc: str, tipo: str, serie: str, numero: int) -> Cdr | None:
        kept = self.tickets.find(self.environment, ruc, tipo, serie, str(numero))
        if kept is None:
            return None  # nothing reached SUNAT that it answered: send it
        return self._outcome(kept.ticket, waiting=False)

    def _outcome(self, ticket: str, waiting: bool) -> Cdr:
        """The ticket's answer: a CDR, or SUNAT's code as a fault; still in process, a failure retried later."""
        deadline = self.clock() + (self.wait_s if waiting else 0.0)
        while True:
            status = self._status(ticket)
            if not status.pending:
                return _decided(ticket, status)
            if self.clock() >= deadline:
                raise TransportFailure("gre", f"SUNAT aún procesa el ticket {ticket}", True)
            self.sleep(POLL_INTERVAL_S)

    def _status(self, ticket: str) -> TicketStatus:
        try:
            return self.client.status(ticket)
        except GreUnavailable as exc:
            raise TransportFailure("gre", str(exc), True) from None
        except GreRefused as refused:
            raise _refusal(refused) from None


def _decided(ticket: str, status: TicketStatus) -> Cdr:
    if status.cdr_zip:  # accepted (0), or a rejection SUNAT wrote a CDR for (99)
        return read_zip(status.cdr_zip)
    code = status.error_code or ""
    text = status.error_text or f"SUNAT rechazó la guía (ticket {ticket}) sin CDR"
    raise SoapFault("Client", text, code)


def _refusal(refused: GreRefused) -> Exception:
    """A 4xx: the credentials (401, a token refused after its renewal) wait for the user; SUNAT's code otherwise."""
    if refused.status == 401:
        return not_configured("SUNAT rechazó las credenciales de la API de guías (client_id, client_secret, usuario "
                              "y clave SOL): revíselas en Ajustes.")
    if sunat_codes.is_rejection(refused.code) or sunat_codes.is_held_by_sunat(refused.code):
        return SoapFault("Client", refused.message, refused.code)
    return TransportFailure("gre", f"HTTP {refused.status}: {refused.code} {refused.message}", True)
