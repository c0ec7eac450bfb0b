"""The listener's writer wakes the event loop once per batch, not once per post (issue 33, item 4).

Real HTTP posts to the engine's listener on 127.0.0.1 (port 0). The posts are made to arrive together by holding the
database's writer lock while they are sent (the writer waits behind it, the posts pile up in its queue); once it is
let go, the writer answers each batch's posts with one call into the loop, counted by the group commit.
"""

from __future__ import annotations

import json
import threading

import httpx

from app.core.platform import clock
from tests.core.messaging.test_listener_probes import body, message
from tests.helpers.messaging_support import wait_for

N = 12


def test_the_writer_wakes_the_loop_once_per_batch(messaging_engine, gateway):
    writer = messaging_engine.messaging._listener.app.state.writer
    now = int(clock.timestamp())
    posts = []
    for index in range(N):
        item = message(now)
        item["key"]["id"] = f"3EB0BATCH{index:04d}"
        posts.append(json.dumps(body("messages.upsert", item)).encode())
    answers: list[httpx.Response | None] = [None] * N

    def post(index: int) -> None:
        answers[index] = httpx.post(gateway.webhook_of("demo"), content=posts[index],
                                    headers={"content-type": "application/json"}, timeout=60)

    storage = messaging_engine._storage
    received, batches, wakes = writer.received, writer.batches, writer.loop_wakes
    threads = [threading.Thread(target=post, args=(index,)) for index in range(N)]
    with storage.transaction():  # the writer waits for this thread: the posts pile up behind it
        for thread in threads:
            thread.start()
        wait_for(lambda: writer.received == received + N, timeout=30)
        assert answers == [None] * N  # nothing committed, nothing answered
    for thread in threads:
        thread.join(60)
    assert [answer.status_code for answer in answers] == [200] * N
    assert [answer.json()["stored"] for answer in answers] == [1] * N
    new_batches, new_wakes = writer.batches - batches, writer.loop_wakes - wakes
    assert 1 <= new_batches < N  # the first post may be taken alone before the lock; the others share a commit
    assert new_wakes == new_batches  # one wake of the loop per batch: never one per post
    assert len(messaging_engine.messaging.messages("demo")) == N
