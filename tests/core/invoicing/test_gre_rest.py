"""SUNAT's GRE REST client (issue 36, point 2, the client only): the OAuth token kept until it expires and renewed
once on a 401, the zip posted with its SHA-256 for a ticket, the ticket read (98 in process, 0 with the CDR, 99 with
SUNAT's code and text), the error bodies of SUNAT's manual. Against a loopback server on 127.0.0.1 port 0 speaking the
shapes of SUNAT's manual as Greenter's gre-api (thegreenter/gre-api, openapi.yaml) describes them; time is a fake
clock (mocks only for time)."""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import json
import socket
import threading
import urllib.parse
import zipfile

import pytest

from app.core.invoicing.gre_rest import (
    Credentials,
    GreClient,
    GreRefused,
    GreUnavailable,
    SunatOAuth,
    package,
)
from app.core.invoicing.sunat_oauth import TOKEN_MARGIN_S, VALIDITY_SCOPE, SunatTokens

RUC = "20100066603"
CREDENTIALS = Credentials("client-abc", "secret-xyz", f"{RUC}MODDATOS", "moddatos")


class FakeSunat(http.server.ThreadingHTTPServer):
    """SUNAT's GRE platform as its manual describes it: tokens, tickets and their states."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.valid_tokens: set[str] = set()
        self.token_requests: list[dict] = []
        self.received: list[dict] = []
        self.tickets: dict[str, dict] = {}
        self.lifetime = 3600
        self.polls_pending = 1  # a ticket answers 98 this many times first
        self.refuse_every_token = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: FakeSunat

    def _answer(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        if self.server.refuse_every_token or token not in self.server.valid_tokens:
            self._answer(401, {"cod": "401", "msg": "Token no valido"})
            return False
        return True

    def do_POST(self) -> None:  # noqa: N802 - the base class's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if "/oauth2/token/" in self.path:
            form = dict(urllib.parse.parse_qsl(body.decode()))
            self.server.token_requests.append(form)
            token = f"token-{len(self.server.token_requests)}"
            self.server.valid_tokens.add(token)
            self._answer(200, {"access_token": token, "token_type": "JWT", "expires_in": self.server.lifetime})
            return
        if not self._authorised():
            return
        archivo = json.loads(body)["archivo"]
        content = base64.b64decode(archivo["arcGreZip"])
        if hashlib.sha256(content).hexdigest() != archivo["hashZip"]:
            self._answer(422, {"cod": "422", "msg": "Unprocessable Entity",
                               "errors": [{"cod": "1014", "msg": "El hash del archivo no coincide"}]})
            return
        self.server.received.append(archivo)
        ticket = f"ticket-{len(self.server.received)}"
        self.server.tickets[ticket] = {"polls": 0, "name": archivo["nomArchivo"]}
        self._answer(200, {"numTicket": ticket, "fecRecepcion": "2026-11-25T10:00:00"})

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        if not self._authorised():
            return
        ticket = self.server.tickets.get(self.path.rsplit("/", 1)[1])
        if ticket is None:
            self._answer(422, {"cod": "422", "msg": "Unprocessable Entity",
                               "errors": [{"cod": "0127", "msg": "El ticket no existe"}]})
            return
        ticket["polls"] += 1
        if ticket["polls"] <= self.server.polls_pending:
            self._answer(200, {"codRespuesta": "98"})
        elif "T001-2" in ticket["name"]:
            self._answer(200, {"codRespuesta": "99", "indCdrGenerado": "0",
                               "error": {"numError": "2566", "desError": "Debe consignar la placa del vehiculo"}})
        else:
            cdr = io.BytesIO()
            with zipfile.ZipFile(cdr, "w") as archive:
                archive.writestr(f"R-{ticket['name'].removesuffix('.zip')}.xml", "<ApplicationResponse/>")
            self._answer(200, {"codRespuesta": "0", "indCdrGenerado": "1",
                               "arcCdr": base64.b64encode(cdr.getvalue()).decode()})

    def log_message(self, *args) -> None:
        pass


class Clock:
    def __init__(self) -> None:
        self.seconds = 1000.0

    def __call__(self) -> float:
        return self.seconds


@pytest.fixture
def sunat():
    server = FakeSunat()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def client(sunat, clock):
    return GreClient(sunat.url, SunatOAuth(sunat.url, CREDENTIALS, now=clock))


def guia(numero: int = 1):
    return package(f"{RUC}-09-T001-{numero}.xml", f"<DespatchAdvice>{numero}</DespatchAdvice>".encode())


def test_the_token_is_asked_once_with_the_sol_credentials_and_kept_until_it_expires(client, sunat, clock):
    client.send(guia(1))
    client.send(guia(3))
    assert len(sunat.token_requests) == 1
    assert sunat.token_requests[0] == {"grant_type": "password", "scope": "https://api-cpe.sunat.gob.pe",
                                       "client_id": "client-abc", "client_secret": "secret-xyz",
                                       "username": f"{RUC}MODDATOS", "password": "moddatos"}
    clock.seconds += sunat.lifetime - TOKEN_MARGIN_S  # about to expire: renewed before use
    client.send(guia(4))
    assert len(sunat.token_requests) == 2 and client.oauth.issued == 2


def test_a_401_renews_the_token_once_and_repeats_the_call(client, sunat):
    client.send(guia(1))
    sunat.valid_tokens.clear()  # SUNAT revoked it before its time
    ticket = client.send(guia(3))
    assert ticket.number == "ticket-2" and len(sunat.token_requests) == 2
    sunat.refuse_every_token = True  # a renewed token refused too: one renewal, then SUNAT's answer
    with pytest.raises(GreRefused) as refused:
        client.send(guia(4))
    assert refused.value.status == 401 and len(sunat.token_requests) == 3
    assert len(sunat.received) == 2


def test_a_guia_is_sent_zipped_with_its_hash_and_its_ticket_answers_the_cdr(client, sunat):
    sent = guia(1)
    assert sent == guia(1)  # the same guía gives the same zip and hash: a resend is the very same package
    ticket = client.send(sent)
    [archivo] = sunat.received
    assert archivo["nomArchivo"] == f"{RUC}-09-T001-1.zip" and archivo["hashZip"] == sent.sha256
    with zipfile.ZipFile(io.BytesIO(base64.b64decode(archivo["arcGreZip"]))) as archive:
        assert archive.namelist() == [f"{RUC}-09-T001-1.xml"]
    first = client.status(ticket.number)
    assert first.pending and first.cdr_zip is None
    done = client.status(ticket.number)
    assert (done.code, done.cdr_generated, done.error_code) == ("0", True, None)
    with zipfile.ZipFile(io.BytesIO(done.cdr_zip)) as archive:
        assert archive.namelist() == [f"R-{RUC}-09-T001-1.xml"]


def test_a_rejected_guia_answers_sunat_s_code_and_text(client, sunat):
    sunat.polls_pending = 0
    ticket = client.send(guia(2))
    rejected = client.status(ticket.number)
    assert (rejected.code, rejected.cdr_generated, rejected.cdr_zip) == ("99", False, None)
    assert (rejected.error_code, rejected.error_text) == ("2566", "Debe consignar la placa del vehiculo")


def test_sunat_s_error_bodies_are_read_as_its_manual_describes_them(client, sunat):
    with pytest.raises(GreRefused) as refused:
        client.status("ticket-que-no-existe")
    assert (refused.value.status, refused.value.code, refused.value.message) == (422, "0127", "El ticket no existe")
    broken = guia(1)
    tampered = type(broken)(broken.name, broken.content, "0" * 64)
    with pytest.raises(GreRefused) as refused:
        client.send(tampered)
    assert (refused.value.code, refused.value.message) == ("1014", "El hash del archivo no coincide")
    with socket.socket() as closed:  # a port that was free a moment ago: nobody answers there
        closed.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    unreachable = GreClient(nowhere, SunatOAuth(nowhere, CREDENTIALS))
    with pytest.raises(GreUnavailable):
        unreachable.send(guia(1))


def test_one_token_per_credentials_and_scope_is_kept_on_one_http_client(sunat):
    """SunatTokens, what the guías and the consulta de validez both hold: a token asked once is reused; another
    secret, another scope or another security address is another token; all share the one HTTP client."""
    tokens = SunatTokens(lambda: 5.0)
    try:
        first = tokens.oauth(sunat.url, CREDENTIALS)
        first.token()
        assert tokens.oauth(sunat.url, CREDENTIALS) is first and first.issued == 1
        renewed = Credentials(CREDENTIALS.client_id, "otro-secreto", CREDENTIALS.username, CREDENTIALS.password)
        assert tokens.oauth(sunat.url, renewed) is not first
        other_scope = tokens.oauth(sunat.url, CREDENTIALS, VALIDITY_SCOPE)
        assert other_scope is not tokens.oauth(sunat.url, renewed) and other_scope.scope == VALIDITY_SCOPE
        assert first.http is other_scope.http is tokens.http
    finally:
        tokens.close()
    assert first.http.is_closed
