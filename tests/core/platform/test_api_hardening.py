"""The local API survives what a day at a point of sale (and a careless client) throws at it, over raw sockets.

Each test reproduces a reported finding against `ThreadingHTTPServer`: invalid Content-Length closed with a
traceback or hung, idle connections were never closed and held a thread each, a 401's unread body was parsed
as the next request, clients that went away left BrokenPipe tracebacks, every client connection leaked a
database connection.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from app.api.local import LocalApi
from tests.helpers.base import ROOT


@pytest.fixture
def api(engine):
    server = LocalApi(engine, port=0, timeout_request=1, timeout_keep_alive=1, max_connections=8)
    server.start()
    yield server
    server.stop()


def address(api) -> tuple[str, int]:
    host, port = api.base_url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def connect(api) -> socket.socket:
    sock = socket.create_connection(address(api), timeout=10)
    return sock


def read_answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 answer with a Content-Length body: (status, headers, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed after {data!r}")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return int(lines[0].split()[1]), headers, rest[:length]


def closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def request(path: str, token: str, method: str = "GET", body: bytes = b"", extra: str = "") -> bytes:
    head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n{extra}"
            + (f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n" if method == "POST" else "")
            + "\r\n")
    return head.encode() + body


@pytest.mark.parametrize("length", ["abc", "1e3", "-1", "1 2", "99999999999999999999999"])
def test_invalid_content_length_is_a_json_400_and_the_server_lives_on(api, length):
    with connect(api) as sock:
        sock.sendall(f"POST /api/v1/facturacion/xml HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n{{}}"
                     .encode())
        status, headers, body = read_answer(sock)
        assert status == 400 and headers["content-type"] == "application/json"
        assert json.loads(body)["error"]["code"] == "INVALID_INPUT"
        assert closed_by_server(sock, 5)
    assert httpx.get(api.base_url + "/api/v1/health", timeout=5).status_code == 200


def test_an_unread_body_after_a_401_is_not_taken_for_the_next_request(api):
    smuggled = b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
    with connect(api) as sock:
        sock.sendall(request("/api/v1/facturacion/xml", "mal", "POST", smuggled))
        status, _, body = read_answer(sock)
        assert status == 401
        sock.sendall(request("/api/v1/ruc/123", api.token))
        status, _, body = read_answer(sock)
        assert status == 400 and json.loads(body)["error"]["details"][0]["field"] == "numero"


def test_a_connection_that_never_sends_a_request_is_closed(api):
    with connect(api) as sock:
        started = time.monotonic()
        assert closed_by_server(sock, 5)
        assert time.monotonic() - started < 4


def test_a_request_sent_too_slowly_is_cut_off(api):
    with connect(api) as sock:
        sock.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n")  # headers never finished
        assert closed_by_server(sock, 5)


def test_an_idle_keep_alive_connection_is_closed(api):
    with connect(api) as sock:
        sock.sendall(request("/api/v1/health", api.token))
        assert read_answer(sock)[0] == 200
        sock.sendall(request("/api/v1/health", api.token))
        assert read_answer(sock)[0] == 200  # kept alive between requests
        assert closed_by_server(sock, 5)  # and closed once idle


def test_connections_are_bounded_and_the_one_past_the_limit_gets_a_json_503(api):
    held = [connect(api) for _ in range(8)]
    try:
        for sock in held:  # each is really open: it answers
            sock.sendall(request("/api/v1/health", api.token, extra="Connection: keep-alive\r\n"))
            assert read_answer(sock)[0] == 200
        with connect(api) as extra:
            status, headers, body = read_answer(extra)
        assert status == 503 and json.loads(body)["error"]["code"] == "BUSY"
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the server notices the closes on its own loop
        if httpx.get(api.base_url + "/api/v1/health", timeout=5).status_code == 200:
            break
    else:
        pytest.fail("the server did not take connections again")


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc (Linux)")
def test_five_thousand_client_connections_leave_the_open_file_count_flat(engine):
    """Reported: one SQLite connection leaked per client connection (9,984 descriptors after 20k)."""
    api = LocalApi(engine, port=0)
    api.start()
    try:
        target = address(api)
        payload = request("/api/v1/ruc/20100066603", api.token, extra="Connection: close\r\n")

        def one() -> int:
            with socket.create_connection(target, timeout=10) as sock:
                sock.sendall(payload)
                return read_answer(sock)[0]

        for _ in range(50):  # warm up: the pool's threads and their connections exist
            one()
        before = open_files()
        statuses = {one() for _ in range(5000)}
        after = open_files()
    finally:
        api.stop()
    assert statuses <= {503}  # NOT_CONFIGURED (no provider, no register): an answer from the engine each time
    assert abs(after - before) <= 10, (before, after)


def test_clients_that_go_away_leave_no_traceback_on_stderr(home):
    """Reported: 397 BrokenPipe tracebacks on stderr in one run of `yupana serve`."""
    env = dict(os.environ, YUPANA_HOME=str(home))
    proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", "0", "--no-listener"], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = json.loads(proc.stdout.readline())["base_url"].removesuffix("/api/v1")
        host, port = base.removeprefix("http://").rsplit(":", 1)
        token = subprocess.run([sys.executable, "-m", "app", "serve", "--show-token"], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=60).stdout.strip()
        big = b"[" + b"1," * 1_000_000 + b"1]"
        for n in range(60):
            sock = socket.create_connection((host, int(port)), timeout=10)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST
            if n % 3 == 0:  # half a body, then gone
                sock.sendall(request("/api/v1/facturacion/xml", token, "POST", big)[:100_000])
            elif n % 3 == 1:  # a request, gone before the answer
                sock.sendall(request("/api/v1/ruc/20100066603", token))
            else:  # garbage, gone
                sock.sendall(b"\x00\xff GARBAGE\r\n\r\n")
            sock.close()
        assert httpx.get(base + "/api/v1/health", timeout=10).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert err == ""


def test_a_body_trickling_in_is_cut_off_with_a_408(api, monkeypatch):
    from app.api import local as api_module

    monkeypatch.setattr(api_module, "BODY_TIMEOUT_S", 0.5)
    with connect(api) as sock:
        sock.sendall(request("/api/v1/facturacion/xml", api.token, "POST", b'{"tipo": "01"}')[:-5])
        started = time.monotonic()
        status, headers, body = read_answer(sock)
        assert status == 408 and json.loads(body)["error"]["code"] == "REQUEST_TIMEOUT"
        assert time.monotonic() - started < 4
        assert closed_by_server(sock, 5)


def test_a_client_that_stops_reading_is_disconnected(api):
    """Pipelined requests for the OpenAPI document, not read: the answers fill the buffers and the server waits
    for the client to read. Past the time-out (1 s here) it must hang up instead of holding the connection."""
    single = len(httpx.get(api.base_url + "/openapi.json", timeout=5).content)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
    sock.settimeout(10)
    sock.connect(address(api))
    with sock:
        sock.sendall(b"GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n" * 300)
        time.sleep(3)  # the behaviour under test: a client that reads nothing for longer than the time-out
        received = 0
        try:
            while chunk := sock.recv(1 << 20):
                received += len(chunk)
        except ConnectionResetError:
            pass
    assert received < 300 * single / 2  # cut off, not served in full
