"""A listener that hostile or broken posts cannot knock over (issue 30, item 4, in part): rows of the probe table
whose answer was a 500 — JSON nested 200k deep without credentials; with valid Evolution credentials a
`messageTimestamp` of Infinity, NaN or 1e30, `data` a string or a list of non-objects, `connection.update` with
`data` a list — each answered 400 with nothing stored; and a post that fails while stored fails alone, never the
other posts of its group commit. Real HTTP to the engine's listener on 127.0.0.1 (port 0); the envelope's shape is
Evolution's (src/api/integrations/event/webhook/webhook.controller.ts, tag 2.3.6)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from app.core.messaging import events as ev
from app.core.messaging.gateways.evolution import parse_webhook
from app.core.platform import clock
from app.core.storage.group_commit import GroupCommit


def body(event: str, data) -> dict:
    return {"event": event, "instance": "demo", "data": data, "date_time": "2026-11-25T12:00:00.000Z",
            "apikey": None}


def message(timestamp) -> dict:
    return {"key": {"remoteJid": "51987000111@s.whatsapp.net", "fromMe": False, "id": "3EB0ABCDEF012345"},
            "pushName": "Rosa", "message": {"conversation": "Hola"}, "messageType": "conversation",
            "messageTimestamp": timestamp}


def post_text(gateway, text: str, url: str | None = None) -> httpx.Response:
    return httpx.post(url or gateway.webhook_of("demo"), content=text.encode(),
                      headers={"content-type": "application/json"}, timeout=30)


def stored(engine) -> int:
    return len(engine.messaging.messages("demo"))


def test_json_nested_200k_deep_without_credentials_is_a_4xx(messaging_engine, gateway):
    deep = "[" * 200_000 + "]" * 200_000
    url = gateway.webhook_of("demo").split("?")[0]  # no token: nobody's
    for target in (url, url + "?token=wrong"):
        answer = post_text(gateway, deep, target)
        assert 400 <= answer.status_code < 500, answer.text
        assert answer.json()["success"] is False
    assert stored(messaging_engine) == 0


@pytest.mark.parametrize("name, text", [
    ("Infinity", json.dumps(body("messages.upsert", message(0))).replace('"messageTimestamp": 0',
                                                                         '"messageTimestamp": Infinity')),
    ("NaN", json.dumps(body("messages.upsert", message(0))).replace('"messageTimestamp": 0', '"messageTimestamp": NaN')),
    ("1e30", json.dumps(body("messages.upsert", message(0))).replace('"messageTimestamp": 0',
                                                                     '"messageTimestamp": 1e30')),
    ("data a string", json.dumps(body("messages.upsert", "hola"))),
    ("data a list of non-objects", json.dumps(body("messages.upsert", [1, "x", None]))),
    ("connection.update with data a list", json.dumps(body("connection.update", [{"state": "open"}]))),
])
def test_a_well_credentialed_post_of_a_broken_shape_is_a_400_and_stores_nothing(messaging_engine, gateway, name,
                                                                                text):
    answer = post_text(gateway, text)
    assert answer.status_code == 400, (name, answer.status_code, answer.text)
    assert answer.json()["error"]["code"] == "INVALID_INPUT"
    assert stored(messaging_engine) == 0
    good = post_text(gateway, json.dumps(body("messages.upsert", message(int(clock.timestamp())))))
    assert good.status_code == 200 and stored(messaging_engine) == 1  # the listener still takes the next post


def test_a_post_that_fails_while_stored_fails_alone_not_its_group(messaging_engine, monkeypatch):
    """Fault injection: the store refuses any post holding the poisoned event. Five innocent posts of other clients
    in the same group commit are all stored and answered; only the poisoned one gets the error."""
    service = messaging_engine.messaging._service
    ingest = service.store.ingest

    def refusing(events):
        if any(e.data.get("body") == "poison" for e in events):
            raise OverflowError("Python int too large to convert to SQLite INTEGER")
        return ingest(events)

    monkeypatch.setattr(service.store, "ingest", refusing)
    now = int(clock.timestamp())

    def event(key: str) -> ev.InboundEvent:
        item = message(now)
        item["key"]["id"], item["message"]["conversation"] = f"3EB0{key.upper()}", key
        [parsed] = parse_webhook("demo", body("messages.upsert", item), now=now)
        return parsed

    database = service.store.database
    writer = GroupCommit(database, "test-listener-writer")
    batch_keys = ["a", "b", "poison", "c", "d", "e"]

    async def group() -> list:
        posts = [asyncio.ensure_future(writer.run(lambda key=key: service.store.ingest([event(key)])))
                 for key in batch_keys]
        while writer.received < len(batch_keys):  # every post queued while the writer waits for the held lock
            await asyncio.sleep(0)
        held.__exit__(None, None, None)
        return await asyncio.gather(*posts, return_exceptions=True)

    held = database.transaction()  # the writer waits for this thread's transaction: the posts pile up behind it
    held.__enter__()
    try:
        outcomes = asyncio.run(group())
    finally:
        writer.close()
    assert [isinstance(o, OverflowError) for o in outcomes] == [False, False, True, False, False, False]
    assert [len(o) for o in outcomes if not isinstance(o, Exception)] == [1, 1, 1, 1, 1]
    assert writer.batches <= 2  # the first post (taken before the lock) and the five others together
    assert len(messaging_engine.messaging.messages("demo")) == 5
