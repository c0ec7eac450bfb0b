"""A 2xx from the listener only after the WAL holding the event's row was synced to disk (issue 30, item 4).

Real parts: the engine's listener (its own ASGI app and server thread) on 127.0.0.1 (port 0), real HTTP posts in
threads, the engine's SQLite file. Two hooks record one ordered log: around the storage's sync of the WAL
(`os.fsync` of the `-wal` file: once it returned, the messages then committed are read back through a connection of
its own — the writer still holds the writer lock, so nothing else was committed in between), and around the
transport write of each answer (the ASGI `send` of `http.response.start`, before it reaches uvicorn). For each 2xx,
a sync whose snapshot holds that post's message must come earlier in the log.
"""

from __future__ import annotations

import json
import os
import threading
from urllib.parse import urlsplit

import httpx

from app.core.platform import clock
from app.core.storage.sqlite import database as sqlite_database
from tests.core.messaging.test_listener_probes import body, message

N = 16


def synced_messages(reader: sqlite_database.Storage) -> set[str]:
    """What the file holds, read through a Storage of its own (its own connections: the writer's uncommitted rows
    stay unseen; no checkpointer, no migration)."""
    return {row["gateway_id"] for row in reader.query("SELECT gateway_id FROM messages")}


def recording(app, journal: list):
    """The listener's ASGI app, its answers journaled as ("answer", status, the post's message id) when their
    status line is handed to the transport."""

    async def recorded(scope, receive, send):
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        chunks: list[bytes] = []

        async def receive_recorded():
            message_ = await receive()
            chunks.append(message_.get("body", b""))
            return message_

        async def send_recorded(message_):
            if message_["type"] == "http.response.start":
                post = json.loads(b"".join(chunks) or b"{}")
                journal.append(("answer", message_["status"], post.get("data", {}).get("key", {}).get("id")))
            await send(message_)

        await app(scope, receive_recorded, send_recorded)

    return recorded


def test_each_2xx_leaves_after_a_sync_of_the_wal_holding_its_row(messaging_engine, gateway, monkeypatch):
    journal: list[tuple] = []
    reader = sqlite_database.Storage(messaging_engine.admin.database_file())
    real_fsync = os.fsync

    def journaled_fsync(fd: int) -> None:
        real_fsync(fd)
        if os.readlink(f"/proc/self/fd/{fd}").endswith("-wal"):
            journal.append(("sync", synced_messages(reader)))

    monkeypatch.setattr(sqlite_database.os, "fsync", journaled_fsync)
    server = messaging_engine.messaging._listener.server
    server.stop()
    server.app = recording(server.app, journal)
    base = server.start("127.0.0.1", 0)
    target = urlsplit(gateway.webhook_of("demo"))
    url = f"{base}{target.path}?{target.query}"

    now = int(clock.timestamp())
    ids = [f"3EB0SYNC{index:04d}" for index in range(N)]
    answers: list[httpx.Response | None] = [None] * N

    def post(index: int) -> None:
        item = message(now)
        item["key"]["id"] = ids[index]
        answers[index] = httpx.post(url, content=json.dumps(body("messages.upsert", item)).encode(),
                                    headers={"content-type": "application/json"}, timeout=60)

    threads = [threading.Thread(target=post, args=(index,)) for index in range(N)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert [answer.status_code for answer in answers] == [200] * N

    answered = [entry for entry in journal if entry[0] == "answer"]
    assert sorted(entry[2] for entry in answered) == sorted(ids)
    for position, entry in enumerate(journal):
        if entry[0] != "answer" or not 200 <= entry[1] < 300:
            continue
        synced_before = set().union(*(e[1] for e in journal[:position] if e[0] == "sync"))
        assert entry[2] in synced_before, f"{entry[2]} answered {entry[1]} before a sync of the WAL holding it"
