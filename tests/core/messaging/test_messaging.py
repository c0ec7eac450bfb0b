"""Messaging against the gateway sandbox: operation 4, the listener, inbox, dedup, ordering, forwarding.

Everything is real HTTP on 127.0.0.1: the Evolution-compatible sandbox, the engine's listener
(uvicorn on port 0) and a subscriber server. Time is injected for retries; nothing sleeps to wait.
"""

from __future__ import annotations

import hashlib
import hmac
import json

import httpx
import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from app.core.errors import ErrorCode, YupanaError
from app.core.messaging import clock
from app.core.messaging.phone import normalise
from app.core.records import Reachability
from app.sandbox.gateway import UNREGISTERED
from tests.helpers.messaging_support import Subscriber, wait_for

ALL_EVENTS = ["message.received", "message.delivered", "message.read", "instance.connected", "instance.disconnected"]


# ---------------------------------------------------------------- numbers

@pytest.mark.parametrize("typed, clean", [("+51 987 654 321", "+51987654321"), ("0051987654321", "+51987654321"),
                                          ("+52 55 1234 5678", "+525512345678"), ("+1 (415) 555-0100", "+14155550100"),
                                          ("+4366412345678", "+4366412345678")])
def test_numbers_are_normalised(typed, clean):
    assert normalise(typed) == clean


@pytest.mark.parametrize("typed, words", [("987654321", "código de país"), ("+51 187 654 321", "celular peruano"),
                                          ("+51 98765432", "celular peruano"), ("+52 55 1234", "10 dígitos"),
                                          ("+888 12", "de 8 a 15")])
def test_bad_numbers_get_a_spanish_error_naming_them(typed, words):
    with pytest.raises(YupanaError) as caught:
        normalise(typed)
    assert caught.value.code == ErrorCode.INVALID_INPUT
    assert typed in caught.value.message and words in caught.value.message
    assert caught.value.details[0].field == "to"


# ---------------------------------------------------------------- operation 4

def test_send_text_reaches_the_gateway_and_answers_the_contract(messaging_engine, gateway):
    status, envelope = messaging_engine.call("chat-send", {"instance": "demo", "to": "+51 987 111 222",
                                                           "message": "Su factura F001-1 está lista"})
    assert status == 200 and envelope["success"] is True
    data = envelope["data"]
    assert set(data) == {"id", "status", "to", "timestamp"}
    assert data["id"].startswith("msg_") and len(data["id"]) == 30
    assert data["status"] == "sent" and data["to"] == "+51987111222" and isinstance(data["timestamp"], int)
    sent = gateway.wait_sent(1)[0]
    assert sent["number"] == "+51987111222" and sent["text"] == "Su factura F001-1 está lista"
    stored = messaging_engine._messaging.store.message(data["id"])
    assert stored["gateway_id"] == sent["id"] and stored["direction"] == "out"


def test_send_media_by_url_and_by_local_file(messaging_engine, gateway, tmp_path):
    result = messaging_engine.messaging.send({"instance": "demo", "to": "+51987111222", "message": "Adjunto",
                                              "media_url": "https://example.com/F001-1.pdf"})
    assert result.status == "sent"
    pdf = tmp_path / "20100066603-01-F001-1.pdf"
    pdf.write_bytes(b"%PDF-1.4 factura")
    messaging_engine.messaging.send_message("demo", "+51987111222", "Su factura", media_path=pdf)
    by_url, by_file = gateway.wait_sent(2)
    assert by_url["media"] and by_url["mediatype"] == "document" and by_url["fileName"] == "F001-1.pdf"
    assert by_file["fileName"] == pdf.name and by_file["media_size"] == len("JVBERi0xLjQgZmFjdHVyYQ==")
    assert by_file["text"] == "Su factura"


def test_gateway_errors_become_spanish_envelopes_with_the_right_status(messaging_engine, gateway):
    engine = messaging_engine
    status, envelope = engine.call("chat-send", {"instance": "nadie", "to": "+51987111222", "message": "x"})
    assert status == 404 and "nadie" in envelope["error"]["message"]
    status, envelope = engine.call("chat-send", {"instance": "demo", "to": next(iter(UNREGISTERED)), "message": "x"})
    assert status == 400 and "no tiene WhatsApp" in envelope["error"]["message"]
    assert envelope["error"]["details"][0]["field"] == "to"
    gateway.fail_next("429")
    status, envelope = engine.call("chat-send", {"instance": "demo", "to": "+51987111222", "message": "x"})
    assert (status, envelope["error"]["code"]) == (429, "RATE_LIMITED")
    gateway.instances["demo"]["state"] = "close"
    status, envelope = engine.call("chat-send", {"instance": "demo", "to": "+51987111222", "message": "x"})
    assert status == 503 and "no está conectada" in envelope["error"]["message"]
    engine.messaging.save_instance("fantasma", "evolution", gateway.base_url,
                                   {"apikey": "sandbox-evolution-global-key"})
    status, envelope = engine.call("chat-send", {"instance": "fantasma", "to": "+51987111222", "message": "x"})
    assert status == 404 and "no tiene la instancia «fantasma»" in envelope["error"]["message"]
    assert gateway.sent == []


def test_an_unreachable_gateway_is_a_503_that_names_it(engine):
    engine.messaging.save_instance("lejos", "evolution", "http://127.0.0.1:9", {"apikey": "k"})
    status, envelope = engine.call("chat-send", {"instance": "lejos", "to": "+51987111222", "message": "x"})
    assert status == 503 and "127.0.0.1:9" in envelope["error"]["message"]


def test_credentials_live_in_the_secret_store_not_in_the_database_file(messaging_engine, gateway, home):
    apikey = gateway.apikey("demo")
    assert messaging_engine.messaging.instances()[0].credentials == {"apikey": True}
    messaging_engine._storage.checkpoint("TRUNCATE")
    raw = b"".join(p.read_bytes() for p in home.glob("*.db*") if p.is_file())
    assert apikey.encode() not in raw


# ---------------------------------------------------------------- the listener

def test_an_incoming_message_reaches_the_inbox_and_a_subscriber_in_the_contract_shape(
        messaging_engine, gateway, subscriber):
    told = []
    messaging_engine.admin.subscribe(lambda name, payload: told.append((name, payload)))
    result = messaging_engine.messaging.subscribe({"instance": "demo", "url": subscriber.url,
                                                   "events": ["message.received"]})
    assert result.id.startswith("sub_") and result.secret.startswith("whsec_")
    assert gateway.emit("message.received", "demo", sender="+51987000111", body="¿Me manda la factura?",
                        name="Rosa Quispe") == [200]
    inbox = messaging_engine.messaging.messages("demo", "+51987000111")
    assert [(m.direction, m.body, m.name, m.status) for m in inbox] == [
        ("in", "¿Me manda la factura?", "Rosa Quispe", "received")]
    headers, body = subscriber.wait(1)[0]
    payload = json.loads(body)
    assert set(payload) == {"event", "instance", "timestamp", "data"}
    assert payload["event"] == "message.received" and payload["instance"] == "demo"
    assert isinstance(payload["timestamp"], int)
    assert payload["data"] == {"id": inbox[0].id, "from": "+51987000111", "type": "text",
                               "body": "¿Me manda la factura?", "name": "Rosa Quispe"}
    assert Webhook(result.secret).verify(body, headers) == payload
    assert ("message.received", payload) in [(name, event.contract()) for name, event in told
                                             if name == "message.received"]


def test_every_delivery_verifies_and_a_tampered_one_does_not(messaging_engine, gateway, subscriber):
    result = messaging_engine.messaging.subscribe({"instance": "demo", "url": subscriber.url, "events": ALL_EVENTS})
    messaging_engine.messaging.send({"instance": "demo", "to": "+51987111222", "message": "Hola"})
    for event in ("message.received", "message.delivered", "message.read", "instance.disconnected",
                  "instance.connected"):
        gateway.emit(event, "demo")
    deliveries = subscriber.wait(5)
    verifier = Webhook(result.secret)
    assert sorted(verifier.verify(body, headers)["event"] for headers, body in deliveries) == sorted(ALL_EVENTS)
    assert len({headers["webhook-id"] for headers, _ in deliveries}) == 5
    headers, body = deliveries[0]
    for forged_body, forged_headers in [(body.replace(b'"demo"', b'"otra"'), headers),
                                        (body, {**headers, "webhook-id": "evt_otro"}),
                                        (body, {**headers, "webhook-signature": "v1,AAAA"})]:
        with pytest.raises(WebhookVerificationError):
            verifier.verify(forged_body, forged_headers)
    with pytest.raises(WebhookVerificationError):
        Webhook("whsec_" + "A" * 32).verify(body, headers)


def test_duplicates_are_stored_and_forwarded_once(messaging_engine, gateway, subscriber):
    messaging_engine.messaging.subscribe({"instance": "demo", "url": subscriber.url, "events": ["message.received"]})
    assert gateway.emit("message.received", "demo", message_id="3EB0DUPLICADO", times=3) == [200, 200, 200]
    assert messaging_engine._messaging.store.event_count("demo") == 1
    assert len(messaging_engine.messaging.messages("demo")) == 1
    subscriber.wait(1)
    gateway.emit("message.received", "demo", body="otro")  # a later, different event does arrive
    subscriber.wait(2)
    assert [p["data"]["body"] for p in subscriber.payloads()] == ["Hola", "otro"]


def test_read_before_delivered_ends_as_read(messaging_engine, gateway):
    sent = messaging_engine.messaging.send({"instance": "demo", "to": "+51987111222", "message": "Hola"})
    gateway.emit("message.read", "demo")
    gateway.emit("message.delivered", "demo")
    gateway.emit("message.delivered", "demo")
    assert messaging_engine._messaging.store.message(sent.id)["status"] == "read"


def test_a_status_that_arrives_before_the_send_is_stored_still_counts(messaging_engine, gateway):
    """Evolution may post DELIVERY_ACK before our send's answer is stored: the message starts delivered."""
    from app.core.messaging import events as ev
    from app.core.messaging.store import InboundEvent

    store = messaging_engine._messaging.store
    store.ingest([InboundEvent(ev.MESSAGE_DELIVERED, "demo", 1, "upd:EARLY:delivered", {"id": "EARLY"},
                               gateway_id="EARLY")])
    assert store.add_outgoing("msg_X", "demo", "EARLY", "+51987111222", "Hola", None, 1) == "delivered"


def test_forged_or_oversized_posts_are_rejected_and_nothing_is_stored(messaging_engine, gateway):
    engine = messaging_engine
    good = gateway.webhook_body("message.received", "demo")
    url = gateway.webhook_of("demo")
    wrong_key = {**good, "apikey": "otra-clave"}  # (without apikey the URL's token is enough: test_evolution_in_the_field)
    assert httpx.post(url, json=wrong_key).status_code == 401
    assert httpx.post(url.replace("token=", "token=x"), json=good).status_code == 401
    assert httpx.post(url.split("?")[0], json=good).status_code == 401
    assert httpx.post(url.replace("/demo?", "/otra?"), json=good).status_code == 404
    big = {**good, "data": {**good["data"], "message": {"conversation": "x" * (1024 * 1024 + 1)}}}
    response = httpx.post(url, json=big)
    assert response.status_code == 413 and response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert engine._messaging.store.event_count() == 0 and engine.messaging.messages() == []
    assert httpx.post(url, json=good).status_code == 200
    assert engine._messaging.store.event_count() == 1


def test_meta_posts_need_their_hmac_and_the_handshake_its_token(engine):
    engine.admin.config_set("listener_port", "0")
    base = engine.messaging.start_listener()
    engine.messaging.save_instance("tienda", "meta", "https://graph.facebook.com/v21.0",
                                   {"token": "EAAG-token", "app_secret": "secreto-de-app", "verify_token": "verifica"},
                                   {"phone_number_id": "106540352242922"})
    handshake = {"hub.mode": "subscribe", "hub.verify_token": "verifica", "hub.challenge": "1158201444"}
    answer = httpx.get(base + "/webhooks/meta", params=handshake)
    assert (answer.status_code, answer.text) == (200, "1158201444")
    assert httpx.get(base + "/webhooks/meta", params={**handshake, "hub.verify_token": "otro"}).status_code == 401
    post = {"object": "whatsapp_business_account", "entry": [{"id": "1", "changes": [{"field": "messages", "value": {
        "messaging_product": "whatsapp", "metadata": {"display_phone_number": "51987000000",
                                                      "phone_number_id": "106540352242922"},
        "contacts": [{"profile": {"name": "Luis Mamani"}, "wa_id": "51987000222"}],
        "messages": [{"from": "51987000222", "id": "wamid.HBgLNTE5ODcwMDAyMjIVAgASGBQzQTg", "timestamp": "1763900000",
                      "type": "text", "text": {"body": "Buenas tardes"}}]}}]}]}
    raw = json.dumps(post).encode()
    forged = "sha256=" + hmac.new(b"otro-secreto", raw, hashlib.sha256).hexdigest()
    as_json = {"Content-Type": "application/json"}  # as Meta posts (a post of another type is a 415)
    assert httpx.post(base + "/webhooks/meta", content=raw,
                      headers={"X-Hub-Signature-256": forged, **as_json}).status_code == 401
    assert httpx.post(base + "/webhooks/meta", content=raw, headers=as_json).status_code == 401
    assert engine._messaging.store.event_count() == 0
    signed = "sha256=" + hmac.new(b"secreto-de-app", raw, hashlib.sha256).hexdigest()
    for _ in range(2):
        assert httpx.post(base + "/webhooks/meta", content=raw,
                          headers={"X-Hub-Signature-256": signed, **as_json}).status_code == 200
    [message] = engine.messaging.messages("tienda")
    assert (message.peer, message.name, message.body) == ("+51987000222", "Luis Mamani", "Buenas tardes")
    assert engine._messaging.store.event_count() == 1


def test_connection_events_update_the_instance_state(messaging_engine, gateway):
    gateway.emit("instance.disconnected", "demo")
    assert messaging_engine.messaging.instances()[0].state == "close"
    gateway.emit("instance.connected", "demo")
    assert messaging_engine.messaging.instances()[0].state == "open"
    assert messaging_engine.messaging.test_connection("demo") == "open"


# ---------------------------------------------------------------- forwarding: retries, 410, redirects

def _clock(monkeypatch, start: float) -> list[float]:
    now = [start]
    monkeypatch.setattr(clock, "now", lambda: now[0])
    return now


def test_a_subscriber_that_is_down_gets_the_delivery_later(messaging_engine, gateway, monkeypatch):
    now = _clock(monkeypatch, 1_000_000.0)
    down = Subscriber(status=503)
    down.start()
    try:
        messaging_engine.messaging.subscribe({"instance": "demo", "url": down.url, "events": ["message.received"]})
        gateway.emit("message.received", "demo", body="¿Hay stock?")
        down.wait(1)
        store = messaging_engine._messaging.store
        [delivery] = wait_for(lambda: [d for d in store.deliveries() if d["attempts"] == 1] or None)
        assert delivery["state"] == "pending" and delivery["next_attempt_at"] == pytest.approx(now[0] + 5)
        down.status = 200
        now[0] += 6
        messaging_engine._forwarder.wake()
        received = down.wait(2)
        assert received[0][0]["webhook-id"] == received[1][0]["webhook-id"]  # the same delivery, retried
        wait_for(lambda: store.deliveries()[0]["state"] == "delivered")
        assert json.loads(received[1][1])["data"]["body"] == "¿Hay stock?"
    finally:
        down.stop()


def test_retries_follow_the_schedule_then_the_subscription_is_failing(messaging_engine, gateway, monkeypatch):
    now = _clock(monkeypatch, 2_000_000.0)
    down = Subscriber(status=500)
    down.start()
    try:
        sub = messaging_engine.messaging.subscribe({"instance": "demo", "url": down.url,
                                                    "events": ["message.received"]})
        gateway.emit("message.received", "demo")
        store = messaging_engine._messaging.store
        waits = []
        for attempt in range(1, 8):
            [delivery] = wait_for(lambda a=attempt: [d for d in store.deliveries() if d["attempts"] == a] or None)
            if delivery["state"] == "pending":
                waits.append(round(delivery["next_attempt_at"] - now[0]))
                now[0] = delivery["next_attempt_at"]
                messaging_engine._forwarder.wake()
        assert waits == [5, 300, 1800, 7200, 18000, 36000]
        assert delivery["state"] == "failed" and len(down.wait(7)) == 7
        assert store.subscription(sub.id)["state"] == "failing"
        down.status = 200
        assert messaging_engine.messaging.resend(sub.id) == 1
        down.wait(8)
        wait_for(lambda: store.subscription(sub.id)["state"] == "active")
    finally:
        down.stop()


def test_a_410_disables_the_subscription_and_redirects_are_not_followed(messaging_engine, gateway, subscriber):
    gone = Subscriber(status=410)
    moved = Subscriber(status=302)
    gone.start()
    moved.start()
    moved.location = subscriber.url
    try:
        first = messaging_engine.messaging.subscribe({"instance": "demo", "url": gone.url,
                                                      "events": ["message.received"]})
        second = messaging_engine.messaging.subscribe({"instance": "demo", "url": moved.url,
                                                       "events": ["message.received"]})
        gateway.emit("message.received", "demo")
        gone.wait(1)
        moved.wait(1)
        store = messaging_engine._messaging.store
        wait_for(lambda: store.subscription(first.id)["state"] == "disabled")
        wait_for(lambda: store.subscription(second.id)["last_status"] == 302)
        gateway.emit("message.received", "demo", body="segundo")
        moved.wait(2)
        assert len(gone.received) == 1  # disabled: nothing more goes there
        assert subscriber.received == []  # the redirect's target never got anything
    finally:
        gone.stop()
        moved.stop()


def test_subscriptions_only_take_http_urls_and_known_events(messaging_engine):
    for url in ("ftp://example.com/x", "file:///etc/passwd", "example.com/hooks", ""):
        status, envelope = messaging_engine.call("chat-webhook", {"instance": "demo", "url": url,
                                                                  "events": ["message.received"]})
        assert status == 400 and envelope["error"]["details"][0]["field"] == "url"
    status, envelope = messaging_engine.call("chat-webhook", {"instance": "demo", "url": "http://127.0.0.1:1/x",
                                                              "events": ["message.sent"]})
    assert status == 400
    status, envelope = messaging_engine.call("chat-webhook", {"instance": "nadie", "url": "http://127.0.0.1:1/x",
                                                              "events": ["message.read"]})
    assert status == 404
    assert messaging_engine.messaging.subscriptions() == []


def test_a_gateway_id_reused_by_the_gateway_does_not_lose_the_second_message(engine):
    store = engine._messaging.store
    store.add_outgoing("msg_A", "demo", "SAME", "+51987111222", "uno", None, 1)
    store.add_outgoing("msg_B", "demo", "SAME", "+51987111222", "dos", None, 2)
    assert [(m["id"], m["gateway_id"]) for m in store.messages("demo")] == [("msg_A", "SAME"), ("msg_B", None)]


def test_the_listener_reachability_check_proves_the_path_to_this_very_listener(engine, subscriber):
    with pytest.raises(YupanaError) as stopped:
        engine.messaging.check_listener()
    assert "detenido" in stopped.value.message
    engine.admin.config_set("listener_port", "0")
    own = engine.messaging.start_listener()
    assert engine.messaging.check_listener() == Reachability(url=own, reachable=True, local_only=True)
    engine.admin.config_set("listener_public_url", subscriber.url.rsplit("/", 1)[0])  # another server answers there
    with pytest.raises(YupanaError) as elsewhere:
        engine.messaging.check_listener()
    assert "no llega a este receptor" in elsewhere.value.message
    assert httpx.get(own + "/webhooks/ping/adivinado").status_code == 404  # only issued nonces are answered


def test_credentials_changed_by_another_process_are_picked_up_by_a_running_listener(messaging_engine, gateway, home):
    """`yupana sandbox --configure` again (a new apikey) while the app's listener keeps running."""
    from app.core.engine import Engine

    gateway.emit("message.received", "demo")  # the running listener now holds the old credentials
    gateway.instances["demo"]["apikey"] = "clave-nueva"
    with Engine(home) as other:
        other.messaging.save_instance("demo", "evolution", gateway.base_url, {"apikey": "clave-nueva"})
    assert gateway.emit("message.received", "demo") == [200]
    assert messaging_engine._messaging.store.event_count("demo") == 2


def test_gateway_parsers_read_every_status_shape():
    from app.core.messaging.gateways import evolution, meta

    legacy = {"event": "MESSAGES_UPDATE", "instance": "demo",
              "data": [{"key": {"id": "3EB0A", "remoteJid": "51987111222@s.whatsapp.net", "fromMe": True},
                        "update": {"status": 4}}]}
    [read] = evolution.parse_webhook("demo", legacy, now=10)
    assert (read.event, read.gateway_id, read.data["to"]) == ("message.read", "3EB0A", "+51987111222")
    echo = {"event": "messages.upsert", "data": {"key": {"id": "X", "fromMe": True, "remoteJid": "51@s"}}}
    assert evolution.parse_webhook("demo", echo) == []  # our own message echoed back is not «received»
    assert evolution.parse_webhook("demo", {"event": "connection.update", "data": {"state": "connecting"}}) == []
    post = {"entry": [{"changes": [{"value": {"metadata": {"phone_number_id": "1"}, "statuses": [
        {"id": "wamid.A", "status": "delivered", "timestamp": "5", "recipient_id": "51987111222"},
        {"id": "wamid.A", "status": "read", "timestamp": "6", "recipient_id": "51987111222"},
        {"id": "wamid.A", "status": "sent", "timestamp": "4", "recipient_id": "51987111222"}]}}]}]}
    events = meta.parse_webhook(post, {"1": "tienda"})
    assert [(e.event, e.timestamp, e.data["status"]) for e in events] == [("message.delivered", 5, "delivered"),
                                                                          ("message.read", 6, "read")]
    assert meta.parse_webhook(post, {"2": "otra"}) == []  # a number no instance has


def test_gateway_credential_and_server_failures(messaging_engine, gateway):
    gateway.fail_next("401")
    status, envelope = messaging_engine.call("chat-send", {"instance": "demo", "to": "+51987111222", "message": "x"})
    assert (status, envelope["error"]["code"]) == (502, "UPSTREAM_REJECTED") and "credenciales" in \
        envelope["error"]["message"]
    gateway.fail_next("500")
    status, envelope = messaging_engine.call("chat-send", {"instance": "demo", "to": "+51987111222", "message": "x"})
    assert (status, envelope["error"]["code"]) == (503, "UPSTREAM_UNAVAILABLE")
    assert messaging_engine.messaging.messages() == []  # nothing stored as sent when the gateway refused


def test_stopping_the_listener_ends_its_writer_before_the_storage_closes(messaging_engine, gateway):
    import threading

    gateway.emit("message.received", "demo")
    assert any(t.name == "yupana-listener-writer" for t in threading.enumerate())
    messaging_engine.messaging.stop_listener()
    assert not any(t.name == "yupana-listener-writer" for t in threading.enumerate())
    assert messaging_engine.messaging.listener_state().state == "stopped"
