"""The other two adapters on loopback: Meta's Cloud API (a faithful fake of its Graph endpoints) and a
gateway that speaks this contract (a second Yupana, its local API and listener, relaying to the
Evolution sandbox)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler

import httpx
import pytest

from app.api.local import LocalApi
from app.core.platform.http.httpserver import ServerThread
from tests.helpers.messaging_support import wait_for

PHONE_NUMBER_ID = "106540352242922"
OUTSIDE_WINDOW = "+51987000999"


class MetaFake:
    """POST /{phone-number-id}/messages and /media, GET /{phone-number-id}; Bearer token; Graph's errors."""

    def __init__(self, token: str = "EAAG-test") -> None:
        self.token = token
        self.requests: list[tuple[str, dict, bytes]] = []
        self.lock = threading.Lock()
        self.server = ServerThread("meta-fake")

    def start(self) -> str:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _answer(self, status: int, body: dict) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _authorised(self) -> bool:
                if self.headers.get("Authorization") == f"Bearer {fake.token}":
                    return True
                self._answer(401, {"error": {"message": "Invalid OAuth access token.", "type": "OAuthException",
                                             "code": 190, "fbtrace_id": "A"}})
                return False

            def do_GET(self):  # noqa: N802
                if self._authorised():
                    self._answer(200, {"verified_name": "Yupana Demo", "id": PHONE_NUMBER_ID})

            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with fake.lock:
                    fake.requests.append((self.path, dict(self.headers), body))
                if not self._authorised():
                    return
                if self.path == f"/{PHONE_NUMBER_ID}/media":
                    self._answer(200, {"id": "1037543291543636"})
                    return
                message = json.loads(body)
                if "+" + message["to"] == OUTSIDE_WINDOW:
                    self._answer(400, {"error": {"message": "(#131047) Re-engagement message", "type":
                                                 "OAuthException", "code": 131047, "fbtrace_id": "B"}})
                    return
                self._answer(200, {"messaging_product": "whatsapp", "contacts": [{"input": message["to"], "wa_id":
                                                                                  message["to"]}],
                                   "messages": [{"id": f"wamid.HBgLNTE5ODcxMTEyMjIVAgARGBI5QTNDQTVC{len(fake.requests)}"}]})

        return self.server.start("127.0.0.1", 0, Handler)

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture
def meta():
    fake = MetaFake()
    fake.start()
    yield fake
    fake.stop()


def test_meta_sends_text_and_uploads_a_local_file(engine, meta, tmp_path):
    engine.messaging.save_instance("tienda", "meta", meta.server.base_url,
                                   {"token": "EAAG-test", "app_secret": "s", "verify_token": "v"},
                                   {"phone_number_id": PHONE_NUMBER_ID})
    result = engine.messaging.send({"instance": "tienda", "to": "+51 987 111 222", "message": "Hola"})
    assert result.status == "sent" and result.to == "+51987111222"
    path, headers, body = meta.requests[0]
    assert path == f"/{PHONE_NUMBER_ID}/messages" and headers["Authorization"] == "Bearer EAAG-test"
    assert json.loads(body) == {"messaging_product": "whatsapp", "recipient_type": "individual", "to": "51987111222",
                                "type": "text", "text": {"preview_url": False, "body": "Hola"}}
    assert engine._messaging.store.message(result.id)["gateway_id"].startswith("wamid.")
    pdf = tmp_path / "F001-3.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    engine.messaging.send_message("tienda", "+51987111222", "Su factura", media_path=pdf)
    upload, send = meta.requests[1], meta.requests[2]
    assert upload[0] == f"/{PHONE_NUMBER_ID}/media" and b"%PDF-1.4" in upload[2]
    assert json.loads(send[2])["document"] == {"id": "1037543291543636", "caption": "Su factura",
                                               "filename": "F001-3.pdf"}
    assert engine.messaging.test_connection("tienda") == "open"


def test_meta_errors_become_spanish_envelopes(engine, meta):
    engine.messaging.save_instance("tienda", "meta", meta.server.base_url, {"token": "EAAG-test"},
                                   {"phone_number_id": PHONE_NUMBER_ID})
    status, envelope = engine.call("chat-send", {"instance": "tienda", "to": OUTSIDE_WINDOW, "message": "Hola"})
    assert (status, envelope["error"]["code"]) == (409, "CONFLICT") and "24 horas" in envelope["error"]["message"]
    engine.messaging.save_instance("tienda", "meta", meta.server.base_url, {"token": "vencido"},
                                   {"phone_number_id": PHONE_NUMBER_ID})
    status, envelope = engine.call("chat-send", {"instance": "tienda", "to": "+51987111222", "message": "Hola"})
    assert status == 502 and "venció" in envelope["error"]["message"]


def test_one_yupana_relays_through_another_that_speaks_the_contract(home, tmp_path, gateway):
    from app.core.engine import Engine

    remote = Engine(tmp_path / "remote")
    local = Engine(home)
    try:
        remote.admin.config_set("listener_port", "0")
        remote.messaging.start_listener()
        gateway.configure(remote)
        api = LocalApi(remote, port=0)
        api_url = api.start()
        local.admin.config_set("listener_port", "0")
        local.messaging.start_listener()
        local.messaging.save_instance("relay", "yupana", api_url, {"token": remote.admin.api_token()},
                                      {"remote_name": "demo"})
        local.messaging.register_webhook("relay")  # the remote's operation 5 points at our listener
        assert local._messaging.config("relay").credentials["webhook_secret"].startswith("whsec_")

        sent = local.messaging.send({"instance": "relay", "to": "+51987111222", "message": "Por el relevo"})
        assert sent.id.startswith("msg_") and gateway.wait_sent(1)[0]["text"] == "Por el relevo"

        gateway.emit("message.received", "demo", sender="+51987000444", body="Respuesta al relevo", name="Ana")
        [reply] = wait_for(lambda: [m for m in local.messaging.messages("relay") if m.direction == "in"] or None)
        assert (reply.peer, reply.body, reply.name) == ("+51987000444", "Respuesta al relevo", "Ana")

        forged = httpx.post(local.messaging.listener_state().url + "/webhooks/yupana/relay",
                            json={"event": "message.received", "instance": "demo", "timestamp": 1, "data": {}},
                            headers={"webhook-id": "evt_x", "webhook-timestamp": "1", "webhook-signature": "v1,x"})
        assert forged.status_code == 401
        assert len(local.messaging.messages("relay")) == 2
    finally:
        local.close()
        remote.close()
