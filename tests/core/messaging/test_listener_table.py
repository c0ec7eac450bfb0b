"""The rows of issue 30's probe table not covered by test_listener_probes.py, each with its count and expected answer:
real HTTP to the engine's listener on 127.0.0.1 (port 0). Evolution's envelope is that of its webhook controller
(src/api/integrations/event/webhook/webhook.controller.ts, tag 2.3.6); Meta's that of its published webhook reference
(X-Hub-Signature-256 over the raw body, the `hub.*` GET verification); the Standard Webhooks rows are another Yupana's
deliveries («Otro Yupana», `/webhooks/yupana/{instance}`) in the contract's payload, signed by the `standardwebhooks`
library with the `whsec_` secret its operation 5 answered (webhook-id, webhook-timestamp, webhook-signature)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from standardwebhooks import Webhook

from app.core.messaging.ids import webhook_secret
from app.core.platform import clock
from tests.core.messaging.test_listener_probes import body, message

JSON = {"content-type": "application/json"}
META_SECRET = "secreto-de-app"
TEN_MB = 10 * 1024 * 1024
RELAY_SECRET = webhook_secret()  # what the other Yupana's operation 5 answers, kept as the instance's credential


@pytest.fixture
def listening(messaging_engine, gateway):
    messaging_engine.messaging.save_instance(
        "tienda", "meta", "https://graph.facebook.com/v21.0",
        {"token": "EAAG-token", "app_secret": META_SECRET, "verify_token": "verifica"},
        {"phone_number_id": "106540352242922"})
    # «Otro Yupana»: the secret stored as `register_webhook` stores the one the relay answers (nothing is sent to
    # the relay's address in these probes).
    messaging_engine.messaging.save_instance("relevo", "yupana", "http://127.0.0.1:9",
                                             {"token": "token-del-relevo", "webhook_secret": RELAY_SECRET})
    return messaging_engine, gateway.webhook_of("demo")


def good(key: str = "3EB0TABLE0001") -> bytes:
    item = message(int(clock.timestamp()))
    item["key"]["id"] = key
    return json.dumps(body("messages.upsert", item)).encode()


def meta_post(timestamp) -> bytes:
    return json.dumps({"object": "whatsapp_business_account", "entry": [{"id": "1", "changes": [{
        "field": "messages", "value": {
            "messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "51987000000", "phone_number_id": "106540352242922"},
            "contacts": [{"profile": {"name": "Luis"}, "wa_id": "51987000222"}],
            "messages": [{"from": "51987000222", "id": "wamid.T1", "timestamp": timestamp, "type": "text",
                          "text": {"body": "Hola"}}]}}]}]}).encode()


def meta_signed(raw: bytes, secret: str = META_SECRET, upper: bool = False) -> dict[str, str]:
    digest = hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    return {**JSON, "X-Hub-Signature-256": "sha256=" + (digest.upper() if upper else digest)}


def chunks(total: int):
    sent = 0
    while sent < total:
        yield b"x" * 65536
        sent += 65536


def evolution_credentials(url, base):
    bare = url.split("?")[0]
    wrong_key = json.loads(good())
    wrong_key["apikey"] = "otra-clave"
    return [httpx.post(bare, content=good(), headers=JSON),
            httpx.post(url.replace("token=", "token=x"), content=good(), headers=JSON),
            httpx.post(url, content=json.dumps(wrong_key).encode(), headers=JSON),
            httpx.post(url.replace("token=", "token=x"), content=json.dumps(wrong_key).encode(), headers=JSON)]


def unknown_instances(url, base):
    token = url.split("?")[1]
    return [httpx.post(f"{base}/webhooks/evolution/nadie?{token}", content=good(), headers=JSON),
            httpx.post(f"{base}/webhooks/evolution/tienda?{token}", content=good(), headers=JSON)]


def hostile_names(url, base):
    token = url.split("?")[1]
    names = ["..%2F..", "..", "%00", "%2F..", "%2e%2e", ";drop", "x" * 10_000, "ñandú", "%20"]
    answers = [httpx.post(f"{base}/webhooks/evolution/{name}?{token}", content=good(), headers=JSON) for name in names]
    raw_dots = httpx.Request("POST", f"{base}/webhooks/evolution/x?{token}", content=good(), headers=JSON)
    raw_dots.url = raw_dots.url.copy_with(raw_path=f"/webhooks/evolution/../?{token}".encode())
    with httpx.Client() as client:
        answers.append(client.send(raw_dots))
    return answers


def replays(url, base):
    return [httpx.post(url, content=good("3EB0REPLAY"), headers=JSON) for _ in range(5)]


def not_json(url, base):
    return [httpx.post(url, content=b"", headers=JSON), httpx.post(url, content=b"hola, no soy JSON", headers=JSON)]


def other_types(url, base):
    return [httpx.post(url, content=good(), headers={"content-type": "text/plain"}),
            httpx.post(url, content=good(), headers={"content-type": "application/x-www-form-urlencoded"}),
            httpx.post(url, content=good())]


def ten_megabytes(url, base):
    bare = url.split("?")[0]
    return [httpx.post(target, content=b"x" * TEN_MB, headers=JSON, timeout=60) for target in (url, bare)] + \
        [httpx.post(target, content=chunks(TEN_MB), headers=JSON, timeout=60) for target in (url, bare)]


def meta_signatures(url, base):
    raw, meta = meta_post("1763900000"), f"{base}/webhooks/meta"
    return [httpx.post(meta, content=raw, headers=JSON),
            httpx.post(meta, content=raw, headers=meta_signed(raw, "otro-secreto")),
            httpx.post(meta, content=raw, headers=meta_signed(meta_post("1763900001"))),
            httpx.post(meta, content=raw, headers=meta_signed(raw, upper=True))]


def meta_broken(url, base):
    deep = ("[" * 100_000 + "]" * 100_000).encode()
    meta = f"{base}/webhooks/meta"
    return [httpx.post(meta, content=raw, headers=meta_signed(raw))
            for raw in (meta_post("abc"), meta_post(1e30), deep, b"[1]")]


def meta_verification(url, base):
    meta = f"{base}/webhooks/meta"
    handshake = {"hub.mode": "subscribe", "hub.verify_token": "verifica", "hub.challenge": "1158201444"}
    return [httpx.get(meta, params={**handshake, "hub.verify_token": "otro"}),
            httpx.get(meta, params={k: v for k, v in handshake.items() if k != "hub.verify_token"}),
            httpx.get(meta, params=handshake),
            httpx.get(meta, params={**handshake, "hub.challenge": "<script>alert(1)</script>"})]


def delivery(message_id: str = "msg_relevo_0001", timestamp=None, data=None) -> bytes:
    """The contract's delivery payload (../shared/spec/service-contract.md, «Delivery payload») as the relay posts it."""
    if data is None:
        data = {"id": message_id, "from": "+51987000444", "type": "text", "body": "Hola", "name": "Ana"}
    when = int(clock.timestamp()) if timestamp is None else timestamp
    return json.dumps({"event": "message.received", "instance": "demo", "timestamp": when, "data": data}).encode()


def signed(raw: bytes, webhook_id: str, shift: timedelta = timedelta(0), secret: str = RELAY_SECRET
           ) -> dict[str, str]:
    """Standard Webhooks headers for `raw`, signed now (+ `shift`) by the library."""
    when = datetime.now(UTC) + shift
    signature = Webhook(secret).sign(webhook_id, when, raw.decode())
    return {**JSON, "webhook-id": webhook_id, "webhook-timestamp": str(int(when.timestamp())),
            "webhook-signature": signature}


def standard_webhooks(url, base):
    relay = f"{base}/webhooks/yupana/relevo"
    first, other, replayed = (delivery(f"msg_relevo_000{n}") for n in (1, 2, 3))
    again = signed(replayed, "evt_replayed")
    return [httpx.post(relay, content=first, headers=signed(first, "evt_valid")),
            httpx.post(relay, content=first, headers=signed(first, "evt_old", -timedelta(minutes=10))),
            httpx.post(relay, content=first, headers=signed(first, "evt_future", timedelta(minutes=10))),
            # the valid post's id on another message, signed afresh: the id is the delivery's identity, stored once
            httpx.post(relay, content=other, headers=signed(other, "evt_valid", timedelta(seconds=1))),
            *(httpx.post(relay, content=replayed, headers=again) for _ in range(3)),
            httpx.post(relay, content=first, headers=JSON),
            httpx.post(relay, content=first, headers=signed(first, "evt_forged", secret=webhook_secret())),
            httpx.post(f"{base}/webhooks/yupana/nadie", content=first, headers=signed(first, "evt_nobody"))]


def standard_webhooks_broken(url, base):
    relay = f"{base}/webhooks/yupana/relevo"
    deep = ("[" * 100_000 + "]" * 100_000).encode()
    bodies = [deep, delivery(timestamp="abc"), delivery(timestamp=10**30),
              delivery(data=[{"id": "msg_relevo_list", "from": "+51987000444"}])]
    return [httpx.post(relay, content=raw, headers=signed(raw, f"evt_broken_{index}"))
            for index, raw in enumerate(bodies)]


def elsewhere(url, base):
    with httpx.Client() as client:
        passwd = httpx.Request("GET", f"{base}/x")
        passwd.url = passwd.url.copy_with(raw_path=b"/webhooks/../../etc/passwd")
        return [httpx.get(url), client.send(passwd), httpx.get(f"{base}/webhooks/ping/adivinado")]


# (row, count, probes, expected statuses, messages stored afterwards)
ROWS = [
    ("Evolution without/with wrong URL token or apikey", 4, evolution_credentials, [401] * 4, 0),
    ("unknown instance; another gateway's instance on the Evolution path", 2, unknown_instances, [404] * 2, 0),
    ("hostile {instance}", 10, hostile_names, [404] * 10, 0),
    ("the same Evolution message id x 5", 5, replays, [200] * 5, 1),
    ("0-byte body; non-JSON", 2, not_json, [400] * 2, 0),
    ("valid body as text/plain, form, no Content-Type", 3, other_types, [415] * 3, 0),
    ("10 MB with Content-Length; 10 MB chunked", 4, ten_megabytes, [413] * 4, 0),
    ("Meta: no signature, wrong secret, signature of another body, upper-case hex", 4, meta_signatures, [401] * 4, 0),
    ("Meta correctly signed: timestamp 'abc', 1e30, 100k-deep JSON, body [1]", 4, meta_broken, [400] * 4, 0),
    ("Meta GET verify: wrong token, no token, right token, <script> challenge", 4, meta_verification,
     [401, 401, 200, 200], 0),
    ("Standard Webhooks: valid; -10 min; +10 min; reused id, fresh signature; exact replay x 3; no headers; "
     "bad signature; unknown instance", 10, standard_webhooks, [200, 401, 401, 200, 200, 200, 200, 401, 401, 404], 2),
    ("Standard Webhooks correctly signed: 100k-deep JSON; timestamp 'abc'; 10**30; data a list", 4,
     standard_webhooks_broken, [400] * 4, 0),
    ("GET on the Evolution path; /webhooks/../../etc/passwd; unknown ping nonce", 3, elsewhere, [405, 404, 404], 0),
]


@pytest.mark.parametrize("row, count, probes, statuses, stored", ROWS, ids=[row[0] for row in ROWS])
def test_each_probe_of_the_table_gets_its_expected_answer(listening, row, count, probes, statuses, stored):
    engine, url = listening
    base = engine.messaging.listener_state().url
    answers = probes(url, base)
    assert len(answers) == count
    assert [a.status_code for a in answers] == statuses, [(a.status_code, a.text[:120]) for a in answers]
    for answer in answers:
        if answer.status_code >= 400:  # every refusal in the error envelope, never FastAPI's own body
            assert answer.json()["success"] is False and answer.json()["error"]["message"], answer.text[:200]
    if probes is meta_verification:
        assert answers[3].headers["content-type"].startswith("text/plain")
        assert answers[3].text == "<script>alert(1)</script>"
    if probes is standard_webhooks:  # valid: stored; the reused id: stored 0; the exact replays: stored once
        assert [a.json()["stored"] for a in answers if a.status_code == 200] == [1, 0, 1, 0, 0]
    assert len(engine.messaging.messages()) == stored


def test_malformed_standard_webhooks_headers_are_refused_as_unsigned(listening):
    """Beyond the table: headers no signer writes (a signature without its version, not base64, a timestamp that is
    no number) and a body that is not UTF-8 (which Standard Webhooks cannot verify: its signed content is text) are
    401s of their own post, never a 500; nothing stored."""
    engine, _url = listening
    relay = engine.messaging.listener_state().url + "/webhooks/yupana/relevo"
    raw = delivery("msg_relevo_malformed")
    good_headers = signed(raw, "evt_malformed")
    latin1 = delivery("msg_relevo_latin1").replace(b"Hola", "Año".encode("latin-1"))
    # signed by hand: the library signs text only (HMAC-SHA256 of "id.timestamp.body" with the secret's bytes)
    stamp = str(int(clock.timestamp()))
    key = base64.b64decode(RELAY_SECRET.removeprefix("whsec_"))
    by_hand = base64.b64encode(hmac.new(key, b"evt_latin1." + stamp.encode() + b"." + latin1, hashlib.sha256)
                               .digest()).decode()
    latin1_headers = {**JSON, "webhook-id": "evt_latin1", "webhook-timestamp": stamp,
                      "webhook-signature": "v1," + by_hand}
    answers = [httpx.post(relay, content=raw, headers={**good_headers, "webhook-signature": "v1"}),
               httpx.post(relay, content=raw, headers={**good_headers, "webhook-signature": "v1,no-es-base64!"}),
               httpx.post(relay, content=raw, headers={**good_headers, "webhook-timestamp": "abc"}),
               httpx.post(relay, content=latin1, headers=latin1_headers)]
    assert [a.status_code for a in answers] == [401] * 4, [(a.status_code, a.text[:120]) for a in answers]
    assert all(a.json()["success"] is False and a.json()["error"]["message"] for a in answers)
    assert engine.messaging.messages() == []
