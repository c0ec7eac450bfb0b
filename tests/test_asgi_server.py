"""The shared uvicorn server thread: binds at once, answers, stops, and keeps uvicorn off stderr."""

from __future__ import annotations

import socket
import threading

import httpx
import pytest

from app.core.asgi_server import AsgiServerThread


async def _hello(scope, receive, send):
    if scope["type"] != "http":
        return
    if scope["path"] == "/boom":
        raise RuntimeError("boom")
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"hola"})


def test_serves_on_port_zero_and_stops_its_thread():
    server = AsgiServerThread("test-asgi", _hello)
    url = server.start("127.0.0.1", 0)
    try:
        assert server.address[1] != 0
        with httpx.Client() as client:
            assert [client.get(url).text for _ in range(3)] == ["hola"] * 3
    finally:
        server.stop()
    assert not server.running
    assert all(t.name != "test-asgi" for t in threading.enumerate())
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, timeout=2)


def test_a_busy_port_is_an_oserror_for_the_caller():
    first = AsgiServerThread("test-asgi-1", _hello)
    url = first.start("127.0.0.1", 0)
    try:
        with pytest.raises(OSError):
            AsgiServerThread("test-asgi-2", _hello).start("127.0.0.1", first.address[1])
        assert httpx.get(url).text == "hola"
    finally:
        first.stop()


def test_accepted_sockets_are_tcp_so_asyncio_turns_nagle_off():
    """asyncio sets TCP_NODELAY only when the socket's proto is TCP; without it keep-alive answers wait ~40 ms."""
    server = AsgiServerThread("test-asgi", _hello)
    server.start("127.0.0.1", 0)
    try:
        assert server._socket.proto == socket.IPPROTO_TCP
    finally:
        server.stop()


def test_an_application_error_goes_to_the_log_not_stderr(capfd):
    server = AsgiServerThread("test-asgi", _hello)
    url = server.start("127.0.0.1", 0)
    try:
        assert httpx.get(url + "/boom").status_code == 500
    finally:
        server.stop()
    assert "Traceback" not in capfd.readouterr().err
