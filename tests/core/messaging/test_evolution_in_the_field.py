"""Evolution as it really posts (issue 30, item 1): LID senders, `date_time` in the server's zone, posts without
`apikey`. Real HTTP to the engine's listener on 127.0.0.1 (port 0), real subscriber, the gateway sandbox for sends.

The payloads are copied in shape from Evolution API's own source, tag 2.3.6 (github.com/EvolutionAPI/evolution-api,
Baileys 7.0.0-rc.6):

- the webhook envelope: src/api/integrations/event/webhook/webhook.controller.ts (`event`, `instance`, `data`,
  `destination`, `date_time`, `sender`, `server_url`, `apikey`);
- `date_time` and `apikey`: src/api/services/channel.service.ts, `sendDataWebhook`: `date_time` is
  `new Date(Date.now() - getTimezoneOffset()).toISOString()`, the server's local time with a `Z` (its Dockerfile sets
  `TZ=America/Sao_Paulo`); `apikey` is the instance's token only when `AUTHENTICATION_EXPOSE_IN_FETCH_INSTANCES` is
  on, `null` otherwise;
- `messages.upsert`: src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts, `prepareMessage` (the key
  "exactly as it comes from Baileys": `remoteJid`, `remoteJidAlt`, `participant`, `participantAlt`,
  `addressingMode`; its `ExtendedIMessageKey`), and its `saveOnWhatsappCache` call, which takes the phone from
  `remoteJidAlt` when `addressingMode === 'lid'`; Baileys 6.7's `senderPn` as third-party Evolution clients read it;
- `messages.update`: the same file, the `messages.update` handler (`keyId`, `remoteJid`, `fromMe`, `participant`,
  `status`, `instanceId`, `messageId`: no timestamp);
- `connection.update`: the same file, `connectionUpdate` (`instance`, `wuid`, `profileName`, `profilePictureUrl`,
  `state`, `statusReason`).
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from app.core.messaging.gateways.evolution import parse_webhook
from app.core.platform import clock
from tests.helpers.messaging_support import wait_for

ALL_EVENTS = ["message.received", "message.delivered", "message.read", "instance.connected", "instance.disconnected"]
LID = "201456789012345@lid"  # a LID's digits: as many as a phone number's, but no phone
PHONE = "51987000111"


def evolution_date_time(offset_hours: float) -> str:
    """`date_time` as Evolution writes it on a server whose TZ is UTC+offset: local time, then a `Z`."""
    local = datetime.now(UTC) + timedelta(hours=offset_hours)
    return local.strftime("%Y-%m-%dT%H:%M:%S.") + f"{local.microsecond // 1000:03d}Z"


def envelope(gateway, event: str, data, *, apikey: str | None, offset_hours: float = -3) -> dict:
    """webhook.controller.ts's `webhookData` for instance `demo` (default zone: America/Sao_Paulo, UTC-3)."""
    return {"event": event, "instance": "demo", "data": data, "destination": gateway.webhook_of("demo"),
            "date_time": evolution_date_time(offset_hours), "sender": "51900000001@s.whatsapp.net",
            "server_url": gateway.base_url, "apikey": apikey}


def upsert(key: dict, *, text: str = "Hola, ¿mi factura?", name: str = "Rosa Quispe") -> dict:
    """`prepareMessage`'s messageRaw for a text message received now."""
    return {"key": {"fromMe": False, "id": "3EB0" + secrets.token_hex(8).upper(), **key}, "pushName": name,
            "status": "DELIVERY_ACK", "message": {"conversation": text}, "contextInfo": None,
            "messageType": "conversation", "messageTimestamp": int(clock.timestamp()),
            "instanceId": "6e3b4a3c-1b1f-4d3e-9a55-2f1c0e7b9a10", "source": "android"}


@pytest.fixture
def listening(messaging_engine, gateway, subscriber):
    messaging_engine.messaging.subscribe({"instance": "demo", "url": subscriber.url, "events": ALL_EVENTS})
    return messaging_engine


def post(gateway, body: dict) -> httpx.Response:
    return httpx.post(gateway.webhook_of("demo"), json=body, timeout=10)


# ---------------------------------------------------------------- LID senders

@pytest.mark.parametrize("key, phone", [
    # Baileys 7 (Evolution 2.3.5+): a private chat addressed by LID, the phone beside it.
    ({"remoteJid": LID, "remoteJidAlt": PHONE + "@s.whatsapp.net", "addressingMode": "lid"}, "+" + PHONE),
    # Baileys 7 in a group: the participant is the LID, its phone in participantAlt.
    ({"remoteJid": "120363025246125244@g.us", "participant": LID, "participantAlt": PHONE + "@s.whatsapp.net",
      "addressingMode": "lid"}, "+" + PHONE),
    # Baileys 6.7: senderPn.
    ({"remoteJid": LID, "senderPn": PHONE + "@s.whatsapp.net"}, "+" + PHONE),
    # addressingMode "pn": remoteJid is the phone and remoteJidAlt the LID, which must not win.
    ({"remoteJid": PHONE + "@s.whatsapp.net", "remoteJidAlt": LID, "addressingMode": "pn"}, "+" + PHONE),
])
def test_a_lid_sender_gets_its_phone_from_the_alternate_field(listening, gateway, subscriber, key, phone):
    item = upsert(key)
    response = post(gateway, envelope(gateway, "messages.upsert", item, apikey=gateway.apikey("demo")))
    assert response.status_code == 200 and response.json()["stored"] == 1, response.text
    payload = json.loads(subscriber.wait(1)[0][1])
    assert payload["data"]["from"] == phone
    assert "from_id" not in payload["data"]  # the contract's five fields only
    assert set(payload["data"]) == {"id", "from", "type", "body", "name"}
    inbox = listening.messaging.messages("demo")
    assert [(m.peer, m.body, m.gateway_id) for m in inbox] == [(phone, "Hola, ¿mi factura?", item["key"]["id"])]


def test_a_lid_sender_without_a_phone_has_an_empty_from_and_its_lid_in_from_id(listening, gateway, subscriber):
    item = upsert({"remoteJid": LID, "addressingMode": "lid"})
    assert post(gateway, envelope(gateway, "messages.upsert", item, apikey=gateway.apikey("demo"))).status_code == 200
    payload = json.loads(subscriber.wait(1)[0][1])
    data = payload["data"]
    assert data["from"] == "" and data["from_id"] == LID  # never "+201456789012345", a number that does not exist
    assert (data["body"], data["name"]) == ("Hola, ¿mi factura?", "Rosa Quispe")
    # The inbox keeps the LID's messages in their own conversation (not with every other unknown sender's).
    assert [m.peer for m in listening.messaging.messages("demo")] == [LID]
    # Answering it through operation 4 with that empty `from` is a 400 naming the field; nothing is sent.
    status, answer = listening.call("chat-send", {"instance": "demo", "to": data["from"], "message": "Hola"})
    assert status == 400 and answer["error"]["code"] == "INVALID_INPUT"
    assert answer["error"]["details"][0]["field"] == "to" and "«to»" in answer["error"]["message"]
    status, answer = listening.call("chat-send", {"instance": "demo", "to": "   ", "message": "Hola"})
    assert status == 400 and answer["error"]["details"][0]["field"] == "to"
    assert gateway.sent == []


def test_a_status_to_a_lid_never_names_the_lid_digits_as_a_number():
    body = {"event": "messages.update", "date_time": "2025-10-21T11:40:39.000Z", "apikey": None,
            "data": {"keyId": "3EB0AAAA", "remoteJid": LID, "fromMe": True, "participant": None, "status": "READ",
                     "instanceId": "6e3b", "messageId": "cmh0"}}
    [event] = parse_webhook("demo", body, now=1_764_000_000)
    assert event.data == {"id": "3EB0AAAA", "to": "", "status": "read", "to_id": LID}


# ---------------------------------------------------------------- date_time in the server's zone

@pytest.mark.parametrize("offset_hours", [-3, +9])  # America/Sao_Paulo (the official image), Asia/Tokyo
def test_statuses_and_connection_changes_are_stamped_when_received_not_from_date_time(
        listening, gateway, subscriber, offset_hours):
    sent = listening.messaging.send({"instance": "demo", "to": "+51987111222", "message": "Su factura"})
    gateway_id = gateway.wait_sent(1)[0]["id"]
    update = {"keyId": gateway_id, "remoteJid": "51987111222@s.whatsapp.net", "fromMe": True, "participant": None,
              "status": "DELIVERY_ACK", "instanceId": "6e3b4a3c", "messageId": "cmh0x1"}
    connection = {"instance": "demo", "wuid": "51900000001@s.whatsapp.net", "profileName": "Bodega Rosa",
                  "profilePictureUrl": None, "state": "close", "statusReason": 401}
    before = int(clock.timestamp())
    for event, data in (("messages.update", update), ("connection.update", connection)):
        body = envelope(gateway, event, data, apikey=None, offset_hours=offset_hours)
        response = post(gateway, body)
        assert response.status_code == 200 and response.json()["stored"] == 1, response.text
    after = int(clock.timestamp()) + 1
    # A subscription's lane sends up to PER_SUBSCRIPTION at once: the two may arrive in either order.
    delivered, closed = sorted(wait_for(lambda: len(subscriber.payloads()) >= 2 and subscriber.payloads()),
                               key=lambda p: p["event"] != "message.delivered")
    assert (delivered["event"], closed["event"]) == ("message.delivered", "instance.disconnected")
    misread = int(datetime.fromisoformat(body["date_time"].replace("Z", "+00:00")).timestamp())
    assert abs(misread - before) >= 3 * 3600 - 5  # what reading date_time as UTC would have stamped
    for payload in (delivered, closed):
        assert before <= payload["timestamp"] <= after, (payload, before, after)
    assert delivered["data"] == {"id": sent.id, "to": "+51987111222", "status": "delivered"}


def test_a_real_epoch_in_a_status_is_kept_and_date_time_text_never_is():
    body = {"event": "messages.update", "date_time": "2025-10-21T11:40:39.000Z",
            "data": {"keyId": "3EB0BBBB", "remoteJid": PHONE + "@s.whatsapp.net", "status": "DELIVERY_ACK",
                     "timestamp": 1_761_057_639}}
    assert [e.timestamp for e in parse_webhook("demo", body, now=1_764_000_000)] == [1_761_057_639]
    del body["data"]["timestamp"]
    assert [e.timestamp for e in parse_webhook("demo", body, now=1_764_000_000)] == [1_764_000_000]
    body["date_time"] = 1_761_057_000  # an epoch, not Evolution's local-time text
    assert [e.timestamp for e in parse_webhook("demo", body, now=1_764_000_000)] == [1_761_057_000]
    connection = {"event": "connection.update", "date_time": "2025-10-21T11:40:39.000Z",
                  "data": {"instance": "demo", "state": "open", "statusReason": 200}}
    assert [e.timestamp for e in parse_webhook("demo", connection, now=1_764_000_000)] == [1_764_000_000]


# ---------------------------------------------------------------- posts without apikey

def test_the_url_token_alone_authenticates_and_a_present_apikey_must_match(listening, gateway):
    store = listening._messaging.store
    url = gateway.webhook_of("demo")
    # AUTHENTICATION_EXPOSE_IN_FETCH_INSTANCES off (its default in Evolution's code): `apikey: null`.
    hidden = envelope(gateway, "messages.upsert", upsert({"remoteJid": PHONE + "@s.whatsapp.net"}), apikey=None)
    response = httpx.post(url, json=hidden)
    assert response.status_code == 200 and response.json()["stored"] == 1, response.text
    # No `apikey` member at all.
    absent = envelope(gateway, "messages.upsert", upsert({"remoteJid": PHONE + "@s.whatsapp.net"}), apikey=None)
    del absent["apikey"]
    assert httpx.post(url, json=absent).status_code == 200
    assert store.event_count() == 2
    # A present apikey that is not the instance's: refused, even with the right token.
    wrong = envelope(gateway, "messages.upsert", upsert({"remoteJid": PHONE + "@s.whatsapp.net"}), apikey="otra")
    response = httpx.post(url, json=wrong)
    assert response.status_code == 401 and response.json()["error"]["code"] == "UNAUTHORIZED"
    # The right apikey without the URL's token, or with another token: refused.
    keyed = envelope(gateway, "messages.upsert", upsert({"remoteJid": PHONE + "@s.whatsapp.net"}),
                     apikey=gateway.apikey("demo"))
    assert httpx.post(url.split("?")[0], json=keyed).status_code == 401
    assert httpx.post(url.replace("token=", "token=x"), json=keyed).status_code == 401
    assert httpx.post(url.replace("token=", "token=x"), json=hidden).status_code == 401
    assert store.event_count() == 2
    # A right token with a body that is not an object: 400, nothing stored.
    response = httpx.post(url, json=[1])
    assert response.status_code == 400 and response.json()["error"]["code"] == "INVALID_INPUT"
    assert store.event_count() == 2
    assert httpx.post(url, json=keyed).status_code == 200 and store.event_count() == 3
