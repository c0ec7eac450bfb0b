"""SUNAT's REST platform for guías de remisión (GRE), on loopback: the token endpoint, the send (zip + SHA-256 →
numTicket) and the ticket's status (98 in process, 0 with the CDR, 99 with SUNAT's code and text), with the shapes of
SUNAT's manual («Manual de servicio web - plataforma nueva GRE», as thegreenter/gre-api describes it):

- POST /v1/clientessol/{client_id}/oauth2/token/ (form) → {access_token, token_type, expires_in}; wrong
  credentials: 400 {"error": "invalid_client", …};
- POST /v1/contribuyente/gem/comprobantes/{file name} (Bearer) → {numTicket, fecRecepcion}; a token unknown or
  expired: 401; a zip misnamed, empty, corrupt or whose hash differs: 422 {cod, msg, errors: [{cod, msg}]} with
  SUNAT's codes (0151, 0155, 0156, 0161);
- GET /v1/contribuyente/gem/comprobantes/envios/{numTicket} (Bearer) → {codRespuesta, error, arcCdr,
  indCdrGenerado}.

A guía is judged like the SOAP sandbox judges vouchers: its signature, then SUNAT's GRE sheet when a rule folder is
configured (app.core.invoicing.sunat_rules). Accepted, its CDR (signed) carries the QR link SUNAT's do
(cbc:DocumentDescription). A guía registered before (same RUC, type, serie and number) is registered once: its
ticket answers 99 with 1033 and the first one's CDR. Faults are injected with `fail_next`: «500», «drop» (the guía
is registered and the connection closed without an answer: a lost answer), «401» (the next call's token refused),
«reject:NNNN» (the next guía rejected with that code), «pending:N» (its ticket answers 98 N times first).
"""

from __future__ import annotations

import base64
import collections
import hashlib
import io
import json
import threading
import urllib.parse
import uuid
import zipfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from app.core.sandbox_kit import clock, identify, safe_parser, sunat_errors, sunat_rules, verify_xml
from app.sandbox import sunat_signer
from app.sandbox.base import QuietHandler, Sandbox
from app.sandbox.oauth_tokens import SandboxTokens
from app.sandbox.sunat_wire import Outcome, application_response

if TYPE_CHECKING:
    from app.core.api import Engine

CLIENT_ID, CLIENT_SECRET = "yupana-sandbox", "sandbox-secreto"  # the public test credentials it accepts
TOKEN_PATH = "/v1/clientessol/"
SEND_PATH = "/v1/contribuyente/gem/comprobantes/"
STATUS_PATH = "/v1/contribuyente/gem/comprobantes/envios/"
QR_LINK = "https://e-factura.sunat.gob.pe/v1/contribuyente/gre/comprobantes/descargaqr?hashqr="
REGISTERED_BEFORE = "1033"


@dataclass
class Judged:
    """A ticket's answer, decided when the guía arrives."""

    code: str  # codRespuesta
    cdr: bytes | None = None
    error: tuple[str, str] | None = None
    pending_polls: int = 0


class GreHandler(QuietHandler):
    sandbox: SunatGreSandbox

    def _json(self, status: int, body: dict) -> None:
        self.reply(status, json.dumps(body, ensure_ascii=False).encode("utf-8"))

    def _refuse(self, status: int, code: str, text: str) -> None:
        self._json(status, {"cod": str(status), "msg": "Unprocessable Entity" if status == 422 else text,
                            "errors": [{"cod": code, "msg": text}]})

    def do_POST(self) -> None:  # noqa: N802 - the base class's name
        body = self.read_body()
        if self.path.startswith(TOKEN_PATH) and self.path.endswith("/oauth2/token/"):
            self._token(self.path[len(TOKEN_PATH):].split("/", 1)[0], body)
        elif self.path.startswith(SEND_PATH) and not self.path.startswith(STATUS_PATH):
            self._send(urllib.parse.unquote(self.path[len(SEND_PATH):]), body)
        else:
            self._json(404, {"cod": "404", "msg": "No encontrado"})

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        if not self.path.startswith(STATUS_PATH):
            self._json(404, {"cod": "404", "msg": "No encontrado"})
        elif self._authorised():
            self._status(self.path[len(STATUS_PATH):])

    def _token(self, client_id: str, body: bytes) -> None:
        form = dict(urllib.parse.parse_qsl(body.decode("utf-8", "replace")))
        token = self.sandbox.issue_token(client_id, form)
        if token is None:
            self._json(400, {"error": "invalid_client", "error_description": "cliente o credenciales no válidos"})
            return
        self._json(200, {"access_token": token, "token_type": "JWT", "expires_in": self.sandbox.token_lifetime_s})

    def _authorised(self) -> bool:
        token = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        if not self.sandbox.token_valid(token):
            self._json(401, {"cod": "401", "msg": "El token no es válido o expiró"})
            return False
        return True

    def _send(self, stem: str, body: bytes) -> None:
        if not self._authorised():
            return
        mode = self.sandbox.next_failure()
        if mode == "500":
            self._json(500, {"cod": "500", "msg": "Error interno del servidor"})
            return
        try:
            archivo = json.loads(body)["archivo"]
            name, content = str(archivo["nomArchivo"]), base64.b64decode(archivo["arcGreZip"])
            digest = str(archivo["hashZip"])
        except (ValueError, KeyError, TypeError):
            self._refuse(422, "0155", sunat_errors.describe("0155"))
            return
        problem = _zip_problem(stem, name, content, digest)
        if problem is not None:
            self._refuse(422, problem, sunat_errors.describe(problem, self.sandbox.rules_dir))
            return
        ticket = self.sandbox.receive(stem, content, mode)
        if mode == "drop":  # registered, and the answer lost on the way back
            self.close_connection = True
            self.connection.close()
            return
        self._json(200, {"numTicket": ticket, "fecRecepcion": clock.now().astimezone(clock.PERU).isoformat()})

    def _status(self, ticket: str) -> None:
        judged = self.sandbox.ticket(ticket)
        if judged is None:
            self._refuse(422, "0127", "El ticket no existe")
            return
        if judged.pending_polls > 0:
            judged.pending_polls -= 1
            self._json(200, {"codRespuesta": "98"})
            return
        answer: dict = {"codRespuesta": judged.code, "indCdrGenerado": "1" if judged.cdr else "0"}
        if judged.cdr:
            answer["arcCdr"] = base64.b64encode(judged.cdr).decode()
        if judged.error:
            answer["error"] = {"numError": judged.error[0], "desError": judged.error[1]}
        self._json(200, answer)


def _zip_problem(stem: str, name: str, content: bytes, digest: str) -> str | None:
    """SUNAT's code for a package it cannot take, or None."""
    if name != f"{stem}.zip":
        return "0151"
    if hashlib.sha256(content).hexdigest() != digest:
        return "0156"  # what arrived is not what was hashed: a damaged package
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            names = archive.namelist()
            if not names:
                return "0155"
            if names != [f"{stem}.xml"]:
                return "0161"
    except zipfile.BadZipFile:
        return "0156"
    return None


class SunatGreSandbox(Sandbox):
    name: ClassVar[str] = "sunat_gre"
    handler: ClassVar[type[QuietHandler]] = GreHandler

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, usuario: str = "MODDATOS",
                 clave: str = "moddatos", rules_dir: str = "", token_lifetime_s: int = 3600) -> None:
        super().__init__(host, port)
        self.usuario, self.clave, self.rules_dir = usuario, clave, rules_dir
        self.token_lifetime_s = token_lifetime_s
        self.lock = threading.Lock()
        self._sends = threading.Condition(self.lock)  # notified at each guía received whole
        self.tokens = SandboxTokens(token_lifetime_s, self.lock)
        self._failures: collections.deque[str] = collections.deque()
        self._tickets: dict[str, Judged] = {}
        self.registered: dict[str, Judged] = {}  # RUC-TT-SERIE-NUMERO -> the first guía's outcome
        self.received_counts: collections.Counter[str] = collections.Counter()  # sends per guía
        self.signer = sunat_signer.SandboxSigner()

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1"

    def endpoints(self) -> dict[str, str]:
        """The sandbox environment's GRE platform (and beta's: SUNAT has no beta for guías)."""
        return {"sunat_gre_url": self.url, "sunat_gre_auth_url": self.url}

    def configure(self, engine: Engine) -> None:
        super().configure(engine)
        if not self.rules_dir:
            self.rules_dir = engine.admin.config_get("sunat_rules_dir")

    # ------------------------------------------------------------ test controls

    def fail_next(self, mode: str, count: int = 1) -> None:
        """«500», «drop», «401», «reject:NNNN» or «pending:N», for the next `count` sends."""
        with self.lock:
            self._failures.extend([mode] * count)

    def next_failure(self) -> str:
        with self.lock:
            mode = self._failures.popleft() if self._failures else ""
            if mode == "401":  # every token issued so far is refused from now on
                self.tokens.refuse_all()
        return mode

    def sends(self) -> int:
        """Guías received whole so far (every send, a resend included)."""
        with self.lock:
            return sum(self.received_counts.values())

    def wait_for_sends(self, count: int, timeout: float) -> bool:
        """Wait until `count` guías were received; whether they were."""
        with self._sends:
            return self._sends.wait_for(lambda: sum(self.received_counts.values()) >= count, timeout)

    def expire_tokens(self) -> None:
        with self.lock:
            self.tokens.refuse_all()

    @property
    def tokens_issued(self) -> int:
        return self.tokens.issued

    # ------------------------------------------------------------ the platform

    def issue_token(self, client_id: str, form: dict[str, str]) -> str | None:
        expected = {"grant_type": "password", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}
        if client_id != CLIENT_ID or any(form.get(key) != value for key, value in expected.items()):
            return None
        if not form.get("username", "").upper().endswith(self.usuario) or form.get("password") != self.clave:
            return None
        return self.tokens.issue()

    def token_valid(self, token: str) -> bool:
        return self.tokens.valid(token)

    def ticket(self, ticket: str) -> Judged | None:
        with self.lock:
            return self._tickets.get(ticket)

    def receive(self, stem: str, content: bytes, mode: str) -> str:
        """A new ticket for a guía that arrived whole; its outcome decided now (a guía registered before answers
        1033 and the first one's CDR: registered once)."""
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            xml = archive.read(f"{stem}.xml")
        ticket = str(uuid.uuid4())
        with self._sends:
            self.received_counts[stem] += 1
            self._sends.notify_all()
            first = self.registered.get(stem)
        if first is not None:
            judged = Judged("99", first.cdr, (REGISTERED_BEFORE, sunat_errors.describe(REGISTERED_BEFORE,
                                                                                       self.rules_dir)))
        else:
            judged = self._judge(stem, xml, mode)
        with self.lock:
            if first is None and judged.code != "98":
                judged = self.registered.setdefault(stem, judged)  # two at once: the first one registered wins
            self._tickets[ticket] = Judged(judged.code, judged.cdr, judged.error,
                                           int(mode.split(":")[1]) if mode.startswith("pending:") else 0)
        return ticket

    def _judge(self, stem: str, xml: bytes, mode: str) -> Judged:
        rejection = self._rejection(stem, xml, mode)
        if rejection is not None:
            return Judged("99", None, rejection)
        serie_numero = stem.split("-", 2)[2]
        outcome = Outcome("0", f"El Comprobante  numero {serie_numero}, ha sido aceptado", [])
        link = QR_LINK + hashlib.sha256(xml).hexdigest()
        cdr_xml = self.signer.sign(application_response(stem, outcome, link=link))
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(f"R-{stem}.xml", cdr_xml)
        return Judged("0", buffer.getvalue())

    def _rejection(self, stem: str, xml: bytes, mode: str) -> tuple[str, str] | None:
        if mode.startswith("reject:"):
            code = mode.split(":", 1)[1]
            return code, sunat_errors.describe(code, self.rules_dir)
        try:
            found = identify(_parsed(xml))
        except ValueError:
            return "0306", sunat_errors.describe("0306", self.rules_dir)
        if found is None or found.stem != stem:
            return "0151", sunat_errors.describe("0151", self.rules_dir)
        if not verify_xml(xml).valid:
            return "2335", sunat_errors.describe("2335", self.rules_dir)
        if self.rules_dir:
            verdict = sunat_rules.check(self.rules_dir, xml, f"{stem}.xml")
            if verdict.rejection:
                return verdict.rejection, sunat_errors.describe(verdict.rejection, self.rules_dir)
        return None


def _parsed(xml: bytes):  # noqa: ANN202 - lxml's element
    from lxml import etree

    try:
        return etree.fromstring(xml, safe_parser())
    except etree.XMLSyntaxError as exc:
        raise ValueError(str(exc)) from None
