"""The shared uvicorn server thread: binds at once, answers, stops, and keeps uvicorn off stderr."""

from __future__ import annotations

import socket
import threading

import httpx
import pytest

from app.core.platform.http.asgi_server import AsgiServerThread


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


def _raw(url: str, data: bytes) -> bytes:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_a_malformed_request_gets_a_json_400_and_the_connection_closes():
    server = AsgiServerThread("test-asgi", _hello)
    url = server.start("127.0.0.1", 0)
    try:
        answer = _raw(url, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n")
    finally:
        server.stop()
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert b'"code": "INVALID_INPUT"' in answer and b"content-type: application/json" in answer


def test_past_the_connection_bound_a_new_connection_gets_a_json_503_at_once():
    server = AsgiServerThread("test-asgi", _hello, limit_concurrency=2)
    url = server.start("127.0.0.1", 0)
    host, port = url.removeprefix("http://").rsplit(":", 1)
    held = [socket.create_connection((host, int(port)), timeout=5) for _ in range(2)]
    try:
        for sock in held:  # each is accepted and served
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        answer = _raw(url, b"")
    finally:
        for sock in held:
            sock.close()
        server.stop()
    assert answer.startswith(b"HTTP/1.1 503 ") and b'"code": "BUSY"' in answer


def test_a_connection_that_sends_no_request_is_closed_after_the_request_timeout():
    server = AsgiServerThread("test-asgi", _hello, timeout_request=0.3)
    url = server.start("127.0.0.1", 0)
    try:
        assert _raw(url, b"GET / HTTP/1.1\r\nHost: x\r\n") == b""  # headers never finished: closed, no answer
    finally:
        server.stop()
