"""SUNAT's consulta integrada de validez (REST with OAuth), played by the SUNAT sandbox over the vouchers it holds,
with the shapes of SUNAT's «Manual de consulta integrada de comprobante de pago por servicio web»:

- POST /v1/clientesextranet/{client_id}/oauth2/token/ (form: grant_type=client_credentials, scope, client_id,
  client_secret) → {access_token, token_type, expires_in}; other credentials: 400 {"error": "invalid_client", …};
- POST /v1/contribuyente/contribuyentes/{RUC of who asks}/validarcomprobante (Bearer; JSON numRuc, codComp,
  numeroSerie, numero, fechaEmision DD/MM/AAAA, monto) → {success: true, message, data: {estadoCp, estadoRuc,
  condDomiRuc, observaciones}}; a token unknown or expired: 401 {"message": "Unauthorized"}; a field SUNAT would
  not take: 400 {success: false, message}.

estadoCp from what the sandbox holds: 1 a voucher it accepted (observed included), 2 one voided by an accepted RA
or RC, 0 one it never had, rejected, or whose issue date or total differ from the ones asked (SUNAT matches them
all); a paper voucher (numeric serie) it never had: 3 inside a range authorised by `authorize_printed`, 4 outside.
A boleta informed only by a resumen diario is matched by its number (the summary carries no date per boleta here).
estadoRuc and condDomiRuc are «00» (activo, habido) unless `set_taxpayer` says otherwise. A voucher issued to
another customer than the one who asks (and not by it) carries SUNAT's observation. Faults: `fail_next(mode,
operation="validarComprobante")` with «500», «drop_after_receive» or «401» (every token refused from then on).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
import urllib.parse
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Protocol

from lxml import etree

from app.core.sandbox_kit import CAC, CBC, CLIENT_REALM, VALIDITY_SCOPE, safe_parser, sunat_catalogues, sunat_codes
from app.sandbox.oauth_tokens import SandboxTokens
from app.sandbox.sunat_wire import voucher_key

if TYPE_CHECKING:
    from app.sandbox.base import QuietHandler

CLIENT_ID, CLIENT_SECRET = "yupana-sandbox", "sandbox-secreto"  # the public test credentials it accepts
TOKEN_PREFIX = f"/v1/{CLIENT_REALM}/"
QUERY_PATH = re.compile(r"^/v1/contribuyente/contribuyentes/(?P<ruc>\d{11})/validarcomprobante$")
OTHER_CUSTOMER = "- El comprobante de pago consultado ha sido emitido a otro contribuyente."


class Host(Protocol):
    lock: threading.Lock
    registered: dict[str, tuple[bytes, str]]
    voided: set[str]

    def next_failure(self, operation: str = "sendBill") -> str | None: ...


@dataclass(frozen=True)
class Facts:
    """What the query matches of a voucher the sandbox accepted by sendBill."""

    fecha: dt.date
    total: Decimal
    customer: str


def facts_of(xml: bytes) -> Facts | None:
    """The issue date, payable amount and customer's document of a signed voucher (None when one is missing)."""
    try:
        root = etree.fromstring(xml, safe_parser())
        fecha = dt.date.fromisoformat(root.findtext(f"{{{CBC}}}IssueDate") or "")
        total = Decimal(root.findtext(f".//{{{CAC}}}LegalMonetaryTotal/{{{CBC}}}PayableAmount")
                        or root.findtext(f".//{{{CAC}}}RequestedMonetaryTotal/{{{CBC}}}PayableAmount") or "")
    except (etree.XMLSyntaxError, ValueError, InvalidOperation):
        return None
    customer = root.findtext(f"{{{CAC}}}AccountingCustomerParty/{{{CAC}}}Party/{{{CAC}}}PartyIdentification/"
                             f"{{{CBC}}}ID") or ""
    return Facts(fecha, total, customer.strip())


class ValidityDesk:
    def __init__(self, host: Host, token_lifetime_s: int = 3600) -> None:
        self.host = host
        self.token_lifetime_s = token_lifetime_s
        self.tokens = SandboxTokens(token_lifetime_s, host.lock)
        self.facts: dict[str, Facts] = {}  # voucher key -> what the query matches; under host.lock
        self.taxpayers: dict[str, tuple[str, str]] = {}  # RUC -> (estadoRuc, condDomiRuc)
        self.printed: list[tuple[str, str, str, int, int]] = []  # (ruc, tipo, serie, from, to) authorised
        self.queries = 0

    # ------------------------------------------------------------ test controls

    def set_taxpayer(self, ruc: str, estado: str, condicion: str) -> None:
        with self.host.lock:
            self.taxpayers[ruc] = (estado, condicion)

    def authorize_printed(self, ruc: str, tipo: str, serie: str, desde: int, hasta: int) -> None:
        with self.host.lock:
            self.printed.append((ruc, tipo, serie.upper(), desde, hasta))

    def expire_tokens(self) -> None:
        with self.host.lock:
            self.tokens.refuse_all()

    @property
    def tokens_issued(self) -> int:
        return self.tokens.issued

    def remember(self, key: str, xml: bytes) -> None:
        facts = facts_of(xml)
        if facts is not None:
            with self.host.lock:
                self.facts[key] = facts

    # ------------------------------------------------------------ HTTP

    def handles(self, path: str) -> bool:
        return path.startswith(TOKEN_PREFIX) or QUERY_PATH.match(path) is not None

    def post(self, request: QuietHandler, path: str, body: bytes) -> None:
        if path.startswith(TOKEN_PREFIX):
            client_id = path[len(TOKEN_PREFIX):].split("/", 1)[0]
            token = self._issue(client_id, dict(urllib.parse.parse_qsl(body.decode("utf-8", "replace"))))
            if token is None:
                _json(request, 400, {"error": "invalid_client", "error_description": "cliente o credenciales no válidos"})
            else:
                _json(request, 200, {"access_token": token, "token_type": "JWT", "expires_in": self.token_lifetime_s})
            return
        failure = self.host.next_failure("validarComprobante")
        if failure == "401":
            self.expire_tokens()
        token = (request.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        if not self.tokens.valid(token):
            _json(request, 401, {"message": "Unauthorized"})
            return
        if failure == "500":
            _json(request, 500, {"success": False, "message": "Error interno del servidor"})
            return
        if failure == "drop_after_receive":
            request.close_connection = True
            return
        match = QUERY_PATH.match(path)
        assert match is not None  # handles() said so
        with self.host.lock:
            self.queries += 1
        try:
            fields = json.loads(body or b"{}")
            if not isinstance(fields, dict):
                raise ValueError
        except ValueError:
            _json(request, 400, {"success": False, "message": "El cuerpo de la consulta no es un JSON válido"})
            return
        problem = _field_problem(fields)
        if problem:
            _json(request, 400, {"success": False, "message": problem})
            return
        _json(request, 200, {"success": True, "message": "Operation Success! ",
                             "data": self._answer(match["ruc"], fields)})

    # ------------------------------------------------------------ the answer

    def _issue(self, client_id: str, form: dict[str, str]) -> str | None:
        expected = {"grant_type": "client_credentials", "scope": VALIDITY_SCOPE, "client_id": CLIENT_ID,
                    "client_secret": CLIENT_SECRET}
        if client_id != CLIENT_ID or any(form.get(key) != value for key, value in expected.items()):
            return None
        return self.tokens.issue()

    def _answer(self, consultante: str, fields: dict) -> dict:
        ruc, tipo, serie = str(fields["numRuc"]), str(fields["codComp"]), str(fields["numeroSerie"]).upper()
        numero = int(fields["numero"])
        fecha = dt.datetime.strptime(str(fields["fechaEmision"]), "%d/%m/%Y").date()
        monto = Decimal(str(fields["monto"])) if fields.get("monto") not in (None, "") else None
        key = voucher_key(ruc, tipo, serie, numero)
        notes: list[str] = []
        with self.host.lock:
            known = self.host.registered.get(key)
            voided = key in self.host.voided
            facts = self.facts.get(key)
            estado_ruc, condicion = self.taxpayers.get(ruc, (sunat_catalogues.RUC_ACTIVO, sunat_catalogues.HABIDO))
            printed = any(r == ruc and t == tipo and s == serie and desde <= numero <= hasta
                          for r, t, s, desde, hasta in self.printed)
        if voided:
            estado = sunat_catalogues.CP_ANULADO
        elif known is not None and not sunat_codes.is_rejection(known[1]) and _matches(facts, fecha, monto):
            estado = sunat_catalogues.CP_ACEPTADO
            if facts is not None and consultante not in (ruc, facts.customer):
                notes.append(OTHER_CUSTOMER)
        elif known is None and serie.isdigit():
            estado = sunat_catalogues.CP_AUTORIZADO if printed else sunat_catalogues.CP_NO_AUTORIZADO
        else:
            estado = sunat_catalogues.CP_NO_EXISTE
        return {"estadoCp": estado, "estadoRuc": estado_ruc, "condDomiRuc": condicion, "observaciones": notes}


def _matches(facts: Facts | None, fecha: dt.date, monto: Decimal | None) -> bool:
    if facts is None:
        return True
    return facts.fecha == fecha and (monto is None or facts.total == monto)


def _field_problem(fields: dict) -> str:
    """SUNAT's refusal of a query it cannot take, or ""."""
    if not re.fullmatch(r"\d{11}", str(fields.get("numRuc", ""))):
        return "El número de RUC del emisor no es válido"
    if str(fields.get("codComp", "")) not in sunat_catalogues.VALIDITY_DOCUMENT_TYPES:
        return f"El tipo de comprobante es incorrecto: {fields.get('codComp', '')}"
    if not re.fullmatch(r"[A-Za-z0-9]{4}", str(fields.get("numeroSerie", ""))):
        return "El número de serie no es válido"
    if not re.fullmatch(r"\d{1,8}", str(fields.get("numero", ""))) or int(fields["numero"]) == 0:
        return "El número del comprobante no es válido"
    try:
        dt.datetime.strptime(str(fields.get("fechaEmision", "")), "%d/%m/%Y")
    except ValueError:
        return "La fecha de emisión debe tener el formato dd/mm/yyyy"
    monto = fields.get("monto")
    if monto not in (None, "") and not re.fullmatch(r"\d+(\.\d{1,2})?", str(monto)):
        return "El monto no es válido"
    return ""


def _json(request: QuietHandler, status: int, body: dict) -> None:
    request.reply(status, json.dumps(body, ensure_ascii=False).encode("utf-8"))
