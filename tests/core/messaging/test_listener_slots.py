"""Strangers holding connections open cannot keep a gateway's posts out of the listener (issue 30, item 4).

Real parts: the engine's listener on 127.0.0.1 (port 0), raw sockets for the strangers (bound to 127.0.0.2 as their
source address: all of 127.0.0.0/8 is loopback on Linux), httpx for the gateway on 127.0.0.1 — a gateway behind a
tunnel arrives from there too, so the address says nothing: the instance's token in the post's URL does. The body
time-out is shortened by monkeypatch (a mock of time) where the test waits for it.
"""

from __future__ import annotations

import json
import resource
import select
import socket
from urllib.parse import urlsplit

import httpx
import pytest

from app.core.messaging import listener as listener_module
from app.core.platform import clock
from tests.core.messaging.test_listener_probes import body, message
from tests.helpers.messaging_support import wait_for

STRANGERS = 300
OPEN_SHARE = listener_module.MAX_CONNECTIONS - listener_module.RESERVED_FOR_GATEWAYS


@pytest.fixture
def enough_files():
    """Two descriptors per stranger (its socket and the server's end) fit under the soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4 * STRANGERS + 512
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def slow_body_from(source: str, host: str, port: int, path: str) -> socket.socket:
    """A connection that sends its headers (no token) and the first byte of a body it never finishes."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.connect((host, port))
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                 "Content-Length: 4096\r\n\r\n{".encode())
    sock.setblocking(False)
    return sock


def answered_or_closed(sock: socket.socket) -> bool:
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)


def post(url: str, key: str) -> httpx.Response:
    item = message(int(clock.timestamp()))
    item["key"]["id"] = key
    return httpx.post(url, content=json.dumps(body("messages.upsert", item)).encode(),
                      headers={"content-type": "application/json"}, timeout=60)


def test_a_gateway_is_answered_while_300_strangers_hold_slow_bodies(messaging_engine, gateway, enough_files):
    url = gateway.webhook_of("demo")
    target = urlsplit(url)
    strangers = []
    try:
        for _ in range(STRANGERS):
            strangers.append(slow_body_from("127.0.0.2", target.hostname, target.port, target.path))
        # Past the strangers' share each is let in on probation and refused (503) at its headers, or at once.
        wait_for(lambda: sum(answered_or_closed(s) for s in strangers) == STRANGERS - OPEN_SHARE, timeout=60)
        held = [s for s in strangers if not answered_or_closed(s)]
        assert len(held) == OPEN_SHARE

        answers = [post(url, f"3EB0GATEWAY{index:02d}") for index in range(5)]
        assert [a.status_code for a in answers] == [200] * 5, [a.text for a in answers]
        assert [a.json()["stored"] for a in answers] == [1] * 5
        assert len(messaging_engine.messaging.messages("demo")) == 5

        tokenless = post(url.split("?")[0], "3EB0NOTOKEN")  # from 127.0.0.1 too, but nothing vouches for it
        assert tokenless.status_code == 503 and tokenless.json()["success"] is False
        assert not any(answered_or_closed(s) for s in held)  # the slow ones are still held meanwhile
    finally:
        for sock in strangers:
            sock.close()


def test_a_body_that_does_not_arrive_in_time_is_a_408_and_the_connection_closes(messaging_engine, gateway,
                                                                                monkeypatch):
    monkeypatch.setattr(listener_module, "BODY_TIMEOUT_S", 0.5)
    target = urlsplit(gateway.webhook_of("demo"))
    sock = slow_body_from("127.0.0.2", target.hostname, target.port, f"{target.path}?{target.query}")
    sock.setblocking(True)
    sock.settimeout(60)
    try:
        received = b""
        while chunk := sock.recv(65536):  # until the listener closes the connection
            received += chunk
    finally:
        sock.close()
    head, _, answer = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), received
    assert json.loads(answer)["error"]["code"] == "REQUEST_TIMEOUT"
    assert messaging_engine.messaging.messages("demo") == []
