"""SUNAT's REST platform for guías de remisión (GRE), pure: its OAuth token and the two calls of its manual
(«Manual de servicio web - plataforma nueva GRE», as Greenter's gre-api describes it: thegreenter/gre-api openapi.yaml).

- Token: SUNAT's OAuth, password grant (app.core.invoicing.sunat_oauth, the one home the consulta de validez
  shares).
- Send: POST {api}/contribuyente/gem/comprobantes/{file name without extension} with
  {"archivo": {"nomArchivo": "RUC-09-T001-1.zip", "arcGreZip": base64 zip, "hashZip": SHA-256 hex of the zip}}
  → {numTicket, fecRecepcion}.
- Ticket: GET {api}/contribuyente/gem/comprobantes/envios/{numTicket} → {codRespuesta: 0 done, 98 in process, 99
  with error; error: {numError, desError}; arcCdr: base64 zip; indCdrGenerado: 1 or 0}.
- Errors: 422 {cod, msg, errors: [{cod, msg}]} (the request refused: SUNAT's code in the errors), 500 {cod, msg};
  401 the token is no longer valid: renewed once and the call repeated once.

Nothing here stores anything: the outbox keeps the ticket durably as soon as `send` returns it.
"""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.invoicing.sunat_oauth import (
    PRODUCTION_SECURITY,
    Credentials,
    SunatOAuth,
    SunatRefused,
    SunatUnavailable,
    json_body,
    refusal,
)

if TYPE_CHECKING:
    import httpx

__all__ = ["PRODUCTION_API", "PRODUCTION_SECURITY", "Credentials", "GreClient", "GreRefused", "GreUnavailable",
           "Package", "SunatOAuth", "Ticket", "TicketStatus", "package"]

PRODUCTION_API = "https://api-cpe.sunat.gob.pe/v1"
TICKET_DONE, TICKET_IN_PROCESS, TICKET_WITH_ERROR = "0", "98", "99"
GreUnavailable = SunatUnavailable  # the guías' names for SUNAT's REST errors (sunat_oauth is their home)
GreRefused = SunatRefused


@dataclass(frozen=True)
class Ticket:
    number: str
    received: str | None


@dataclass(frozen=True)
class TicketStatus:
    code: str  # codRespuesta: TICKET_DONE, TICKET_IN_PROCESS or TICKET_WITH_ERROR
    cdr_generated: bool
    cdr_zip: bytes | None
    error_code: str | None = None
    error_text: str | None = None

    @property
    def pending(self) -> bool:
        return self.code == TICKET_IN_PROCESS


@dataclass(frozen=True)
class Package:
    """A signed guía as SUNAT's GRE platform takes it: zipped under its name, with the zip's SHA-256."""

    name: str  # RUC-09-T001-1.zip
    content: bytes
    sha256: str

    @property
    def stem(self) -> str:
        return self.name.removesuffix(".zip")


def package(xml_name: str, signed_xml: bytes) -> Package:
    """The zip SUNAT wants (one entry, the XML under its file name) and its hash. Fixed entry time, so the same
    guía always gives the same zip and hash: a resend after a lost answer is the very same package."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo(xml_name, date_time=(1980, 1, 1, 0, 0, 0)), signed_xml)
    content = buffer.getvalue()
    return Package(xml_name.removesuffix(".xml") + ".zip", content, hashlib.sha256(content).hexdigest())


class GreClient:
    """SUNAT's GRE REST platform with one company's token: send a guía, ask for its ticket."""

    def __init__(self, api_url: str, oauth: SunatOAuth, http: httpx.Client | None = None) -> None:
        self.api = api_url.rstrip("/")
        self.oauth = oauth
        self.http = http or oauth.http

    def send(self, guia: Package) -> Ticket:
        body = {"archivo": {"nomArchivo": guia.name, "arcGreZip": base64.b64encode(guia.content).decode(),
                            "hashZip": guia.sha256}}
        answer = self._call("POST", f"{self.api}/contribuyente/gem/comprobantes/{guia.stem}", body)
        if not answer.get("numTicket"):
            raise GreUnavailable("SUNAT no devolvió un número de ticket")
        return Ticket(str(answer["numTicket"]), answer.get("fecRecepcion"))

    def status(self, ticket: str) -> TicketStatus:
        answer = self._call("GET", f"{self.api}/contribuyente/gem/comprobantes/envios/{ticket}")
        code = str(answer.get("codRespuesta", ""))
        if code not in (TICKET_DONE, TICKET_IN_PROCESS, TICKET_WITH_ERROR):
            raise GreUnavailable(f"codRespuesta inesperado: {code!r}")
        found = answer.get("error")
        error: dict[str, Any] = found if isinstance(found, dict) else {}
        cdr = answer.get("arcCdr")
        return TicketStatus(code, str(answer.get("indCdrGenerado", "")) == "1",
                            base64.b64decode(cdr) if cdr else None,
                            str(error["numError"]) if error.get("numError") else None, error.get("desError"))

    def _call(self, method: str, url: str, body: dict | None = None) -> dict[str, Any]:
        """One call with the token (a 401 renews it once); an answer other than 200 is SUNAT refusing it."""
        response = self.oauth.call(method, url, body, self.http)
        if response.status_code != 200:
            raise refusal(response)
        return json_body(response)
