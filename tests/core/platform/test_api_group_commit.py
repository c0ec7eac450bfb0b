"""Operation 1 over the local HTTP API shares commits (issue 33, item 3): requests that arrive together are stored in
one transaction with one durable commit, each answered only after the commit that holds it, each failing alone.

Real parts: the API on 127.0.0.1 (port 0), real HTTP clients in threads, the engine's SQLite file. The syncs are
counted by the storage (`Storage.syncs`: one per durable commit) and what is on disk is read back through a
connection of its own. To make the requests arrive together whatever the machine's speed, the test holds the
database's writer lock (a transaction of its own) while they are sent: the group commit's writer waits behind it and
the requests pile up in its queue, as they do behind a slow disk.
"""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from app.api.local import LocalApi
from app.core.platform import events
from app.core.storage.sqlite.database import Storage
from tests.helpers.messaging_support import wait_for
from tests.helpers.voucher_matrix import factura, item

N = 8


@pytest.fixture
def api(engine, company):
    server = LocalApi(engine, port=0)
    server.start()
    yield server
    server.stop()


def encoded(body: dict) -> bytes:
    return json.dumps(body, default=str).encode()  # amounts are Decimals: sent as the strings the contract takes


def post_all(api, bodies: list[dict]) -> tuple[list[threading.Thread], list[httpx.Response | None]]:
    """Each body posted as operation 1 by a client of its own, in a thread; the answers fill in as they come."""
    answers: list[httpx.Response | None] = [None] * len(bodies)

    def post(index: int) -> None:
        with httpx.Client(base_url=api.base_url, headers={"Authorization": f"Bearer {api.token}"},
                          timeout=60) as http:
            answers[index] = http.post("/api/v1/facturacion/xml", content=encoded(bodies[index]),
                                       headers={"Content-Type": "application/json"})

    threads = [threading.Thread(target=post, args=(index,)) for index in range(len(bodies))]
    for thread in threads:
        thread.start()
    return threads, answers


def stored_numbers(engine, serie: str) -> set[int]:
    """The numbers of `serie` committed to the database file, read by a connection of its own."""
    reader = Storage(engine.admin.database_file())  # connections of its own (dropped with it): only what is committed
    return {row["numero"] for row in reader.query("SELECT numero FROM vouchers WHERE serie = ?", (serie,))}


def requests_piled_up_behind(engine, api, bodies: list[dict]):
    """Post `bodies` while this thread holds the writer lock; returns (threads, answers, release) once every request
    is in the group commit's queue or in the batch its writer took."""
    storage = engine._storage
    held = storage.transaction()
    held.__enter__()
    received = api.commits.received
    threads, answers = post_all(api, bodies)
    try:
        wait_for(lambda: api.commits.received == received + len(bodies), timeout=30)
    except BaseException:
        held.__exit__(None, None, None)
        raise
    return threads, answers, lambda: held.__exit__(None, None, None)


def test_concurrent_operation_1_requests_share_durable_commits_and_answer_after_them(engine, api):
    bodies = [factura("F700", n, [item("Servicio", "1", "10")]) for n in range(1, N + 1)]
    syncs, batches = engine._storage.syncs, api.commits.batches
    threads, answers, release = requests_piled_up_behind(engine, api, bodies)
    # Every request arrived and none is committed: none may be answered yet.
    assert answers == [None] * N and engine._storage.syncs == syncs
    assert stored_numbers(engine, "F700") == set()
    release()
    for thread in threads:
        thread.join(60)
    assert [answer.status_code for answer in answers] == [200] * N
    commits = engine._storage.syncs - syncs
    assert 1 <= commits < N  # the first request may be taken alone before the lock; the other seven share one
    assert api.commits.batches - batches == commits
    assert stored_numbers(engine, "F700") == set(range(1, N + 1))  # on disk when answered


def test_a_request_that_fails_in_a_group_fails_alone(engine, api, monkeypatch):
    """Fault injection: the voucher store raises right after writing F701-3, inside the shared transaction. Its
    savepoint is rolled back (the number stays free) and it answers 500; the other seven are stored and answered."""
    store = engine._vouchers
    add = store.add

    def failing_after_the_write(doc, *args, **kwargs):
        voucher_id = add(doc, *args, **kwargs)
        if doc.serie == "F701" and doc.numero == 3:
            raise RuntimeError("the disk refused the voucher's texts")
        return voucher_id

    monkeypatch.setattr(store, "add", failing_after_the_write)
    bodies = [factura("F701", n, [item("Servicio", "1", "10")]) for n in range(1, N + 1)]
    threads, answers, release = requests_piled_up_behind(engine, api, bodies)
    release()
    for thread in threads:
        thread.join(60)
    statuses = [answer.status_code for answer in answers]
    assert statuses == [200, 200, 500, 200, 200, 200, 200, 200]
    assert answers[2].json()["error"]["code"] == "INTERNAL"
    assert stored_numbers(engine, "F701") == {1, 2, 4, 5, 6, 7, 8}
    monkeypatch.undo()
    with httpx.Client(base_url=api.base_url, headers={"Authorization": f"Bearer {api.token}"}, timeout=60) as http:
        again = http.post("/api/v1/facturacion/xml", content=encoded(bodies[2]),
                          headers={"Content-Type": "application/json"})
    assert again.status_code == 200  # the failed request left nothing behind: its number is free
    assert stored_numbers(engine, "F701") == set(range(1, N + 1))


def test_a_voucher_is_announced_only_once_its_commit_is_on_disk(engine, api):
    """The engine's events of a grouped request wait for its commit: a window told «voucher changed» finds it."""
    seen: list[tuple[int, set[int]]] = []

    def listener(name: str, payload: events.Event) -> None:
        if name == events.VOUCHER_CHANGED:
            seen.append((payload.id, stored_numbers(engine, "F702")))

    handle = engine.admin.subscribe(listener)
    try:
        bodies = [factura("F702", n, [item("Servicio", "1", "10")]) for n in range(1, 4)]
        threads, answers, release = requests_piled_up_behind(engine, api, bodies)
        assert seen == []  # nothing committed, nothing told
        release()
        for thread in threads:
            thread.join(60)
    finally:
        handle.cancel()
    assert [answer.status_code for answer in answers] == [200] * 3
    assert len(seen) == 3
    assert all(numbers for _id, numbers in seen)  # each told after at least its own commit was readable
    assert seen[-1][1] == {1, 2, 3}
