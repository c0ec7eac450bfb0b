"""A gateway plugs in (issue 29, item 3): a toy gateway defined and registered in this file only — its description,
credentials, webhook verification, parsing and sending — sends through operation 4 to a toy server started here, and a
webhook posted to the listener route generated for it is verified (a forged one refused) and stored as an event.

Nothing outside this file knows the toy gateway; it is registered by a fixture and unregistered after each test.
Real HTTP on 127.0.0.1 (port 0) for the toy server and the engine's listener; nothing sleeps.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx
import pytest

from app.core.errors import ErrorCode, YupanaError
from app.core.messaging import events as ev
from app.core.messaging.gateways import (
    Gateway,
    GatewayDescription,
    GatewayField,
    Media,
    SendReceipt,
    WebhookPost,
    WebhookRejected,
    registry,
)
from app.core.messaging.gateways.base import same_secret
from app.core.messaging.ids import message_id
from app.core.platform.http.httpserver import ServerThread

KEY = "clave-del-juguete"


class ToyGateway(Gateway):
    """Sends `POST {base}/enviar {a, texto, canal}` with the header `x-clave`; posts to our listener
    `{de, texto, id, cuando, nombre}` signed with `x-firma`: the HMAC-SHA256 of the raw body with the clave."""

    kind = "juguete"
    label = "Pasarela de juguete"
    address_hint = "http://juguete.local:8080"
    credentials = (GatewayField("clave", "Clave del juguete", secret=True, required=True),)
    options = (GatewayField("canal", "Canal", hint="vacío: general"),)
    listener_path = "/webhooks/juguete/{name}"

    def send(self, to: str, text: str, media: Media | None = None) -> SendReceipt:
        body = {"a": to, "texto": text, "canal": self.config.options.get("canal", "general")}
        response = self.request("POST", "/enviar", json=body, headers={"x-clave": self.config.credentials["clave"]})
        if response.status_code != 200:
            raise self.common_failure(response, to)
        return SendReceipt(response.json()["id"], 1_763_900_000)

    def connection_state(self) -> str:
        return "open"

    def set_webhook(self, url: str) -> str | None:
        return None

    @classmethod
    def verify(cls, post: WebhookPost) -> Any:
        config = post.config()
        expected = hmac.new(config.credentials["clave"].encode(), post.raw, hashlib.sha256).hexdigest()
        if not same_secret(post.headers.get("x-firma"), expected):
            raise WebhookRejected(401, "La firma del juguete no es válida.")
        return post.json()

    @classmethod
    def parse(cls, post: WebhookPost, verified: Any) -> list[ev.InboundEvent]:
        assert post.instance is not None
        data = {"id": message_id(), "from": verified["de"], "type": "text", "body": verified["texto"],
                "name": verified.get("nombre", "")}
        return [ev.InboundEvent(ev.MESSAGE_RECEIVED, post.instance, int(verified["cuando"]), f"msg:{verified['id']}",
                                data, gateway_id=str(verified["id"]))]


class ToyServer:
    """The toy gateway's far end: keeps every send, answers 401 to a wrong clave."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self.lock = threading.Lock()
        self.server = ServerThread("toy-gateway")

    def start(self) -> str:
        toy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if self.headers.get("x-clave") != KEY:
                    answer, status = b'{"error": "clave"}', 401
                else:
                    with toy.lock:
                        toy.sent.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                        answer, status = json.dumps({"id": f"toy-{len(toy.sent)}"}).encode(), 200
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        return self.server.start("127.0.0.1", 0, Handler)

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture
def toy_gateway():
    with registry.registered(ToyGateway):
        yield ToyGateway
    assert registry.find("juguete") is None


@pytest.fixture
def toy_server():
    server = ToyServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def toy_engine(toy_gateway, engine, toy_server):
    """The engine with the toy gateway's instance «tienda» and its listener (built after the registration)."""
    engine.admin.config_set("listener_port", "0")
    engine.messaging.start_listener()
    engine.messaging.save_instance("tienda", "juguete", toy_server.server.base_url, {"clave": KEY},
                                   {"canal": "ventas"})
    return engine


def signed(body: dict[str, Any], key: str = KEY) -> tuple[bytes, dict[str, str]]:
    raw = json.dumps(body).encode()
    return raw, {"x-firma": hmac.new(key.encode(), raw, hashlib.sha256).hexdigest(),
                 "content-type": "application/json"}


def test_the_toy_gateway_is_described_to_the_windows_and_its_instance_takes_its_credentials(toy_engine):
    described = {g.name: g for g in toy_engine.messaging.gateways()}
    assert list(described)[:3] == ["evolution", "meta", "yupana"]
    assert described["juguete"] == GatewayDescription(
        "juguete", "Pasarela de juguete", "http://juguete.local:8080",
        (GatewayField("clave", "Clave del juguete", secret=True, required=True),),
        (GatewayField("canal", "Canal", hint="vacío: general"),), "/webhooks/juguete/{name}")
    [instance] = toy_engine.messaging.instances()
    assert (instance.gateway, instance.credentials, instance.options) == ("juguete", {"clave": True},
                                                                          {"canal": "ventas"})
    with pytest.raises(YupanaError) as caught:
        toy_engine.messaging.save_instance("tienda", "juguete", "http://127.0.0.1:9", {"apikey": "x"})
    assert caught.value.code == ErrorCode.INVALID_INPUT and "no usa la credencial «apikey»" in caught.value.message


def test_the_toy_gateway_sends_through_operation_4(toy_engine, toy_server):
    status, envelope = toy_engine.call("chat-send", {"instance": "tienda", "to": "+51 987 111 222",
                                                     "message": "Su boleta B001-5 está lista"})
    assert status == 200 and envelope["success"] is True
    assert envelope["data"]["status"] == "sent" and envelope["data"]["to"] == "+51987111222"
    assert envelope["data"]["timestamp"] == 1_763_900_000
    [(path, headers, body)] = toy_server.sent
    assert path == "/enviar" and headers["x-clave"] == KEY
    assert body == {"a": "+51987111222", "texto": "Su boleta B001-5 está lista", "canal": "ventas"}
    stored = toy_engine._messaging.store.message(envelope["data"]["id"])
    assert (stored["gateway_id"], stored["direction"]) == ("toy-1", "out")
    toy_engine.messaging.save_instance("tienda", "juguete", toy_server.server.base_url, {"clave": "otra"})
    status, envelope = toy_engine.call("chat-send", {"instance": "tienda", "to": "+51987111222", "message": "x"})
    assert (status, envelope["error"]["code"]) == (502, "UPSTREAM_REJECTED")  # the shared failure translation


def test_a_webhook_to_the_generated_route_is_verified_and_parsed_into_a_stored_event(toy_engine):
    url = toy_engine._messaging.listener_url("tienda")
    assert url == toy_engine.messaging.listener_state().url + "/webhooks/juguete/tienda"
    post = {"de": "+51987000333", "texto": "¿Llegó mi boleta?", "id": "T-1", "cuando": 1_763_900_100,
            "nombre": "Rosa"}
    raw, headers = signed(post)
    store = toy_engine._messaging.store

    forged_raw, forged_headers = signed(post, key="otra-clave")
    assert httpx.post(url, content=forged_raw, headers=forged_headers).status_code == 401
    answer = httpx.post(url, content=raw, headers={"content-type": "application/json"})
    assert answer.status_code == 401 and answer.json()["error"]["code"] == "UNAUTHORIZED"
    assert httpx.post(url.replace("/tienda", "/nadie"), content=raw, headers=headers).status_code == 404
    big, big_headers = signed({**post, "texto": "x" * (1024 * 1024)})
    assert httpx.post(url, content=big, headers=big_headers).status_code == 413
    assert store.event_count() == 0 and toy_engine.messaging.messages() == []

    answer = httpx.post(url, content=raw, headers=headers)
    assert (answer.status_code, answer.json()) == (200, {"ok": True, "received": 1, "stored": 1})
    assert httpx.post(url, content=raw, headers=headers).json()["stored"] == 0  # stored once
    [message] = toy_engine.messaging.messages("tienda")
    assert (message.direction, message.peer, message.body, message.name, message.timestamp) == (
        "in", "+51987000333", "¿Llegó mi boleta?", "Rosa", 1_763_900_100)
    [event] = store.recent_events()
    assert event["event"] == "message.received" and event["instance"] == "tienda"


def test_an_instance_of_another_gateway_is_not_found_on_the_toy_route(toy_engine):
    toy_engine.messaging.save_instance("otra", "evolution", "http://127.0.0.1:9", {"apikey": "k"})
    raw, headers = signed({"de": "+51987000333", "texto": "x", "id": "T-2", "cuando": 1})
    answer = httpx.post(toy_engine.messaging.listener_state().url + "/webhooks/juguete/otra", content=raw,
                        headers=headers)
    assert answer.status_code == 404 and "no usa la pasarela juguete" in answer.json()["error"]["message"]


def test_registration_refuses_clashes_and_leaves_nothing_behind(toy_gateway):
    with pytest.raises(ValueError, match="already registered"):
        registry.register(ToyGateway)

    class Impostor(ToyGateway):
        kind = "impostor"
        listener_path = "/webhooks/evolution/{instancia}"  # Evolution's route, under another parameter name

    class Pinger(ToyGateway):
        kind = "pinger"
        listener_path = "/webhooks/ping/{name}"  # the listener's reachability check

    for clash in (Impostor, Pinger):
        with pytest.raises(ValueError):
            registry.register(clash)
    assert registry.names() == ("evolution", "meta", "yupana", "juguete")


def test_without_the_registration_the_toy_gateway_is_unknown_everywhere(engine):
    from app.core.messaging.listener import build_app

    assert registry.find("juguete") is None and "juguete" not in [g.name for g in engine.messaging.gateways()]
    paths = {getattr(route, "path", "") for route in build_app(engine._messaging).routes}
    assert {"/webhooks/evolution/{name}", "/webhooks/meta", "/webhooks/yupana/{name}"} <= paths
    assert not any("juguete" in path for path in paths)
    with pytest.raises(YupanaError) as caught:
        engine.messaging.save_instance("tienda", "juguete", "http://127.0.0.1:9", {"clave": KEY})
    assert "Válidas: evolution, meta, yupana" in caught.value.message
