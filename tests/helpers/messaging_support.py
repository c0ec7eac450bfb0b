"""Fixtures of the messaging tests: the gateway sandbox, an engine bound to it with its listener on
port 0, and a subscriber (a real HTTP server on loopback that keeps what it receives)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from app.core.platform.http.httpserver import ServerThread


def wait_for(condition: Callable[[], Any], timeout: float = 10.0, interval: float = 0.01) -> Any:
    """Return the condition's first truthy value, or fail after `timeout` (never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)


class Subscriber:
    """A caller's server: keeps every POST (headers and raw body), answers `status` (200 unless told)."""

    def __init__(self, status: int = 200, port: int = 0) -> None:
        self.status = status
        self.port = port
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.arrived = threading.Condition()
        self.location: str | None = None
        self._server = ServerThread("subscriber")

    def start(self) -> str:
        subscriber = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                subscriber.take({k.lower(): v for k, v in self.headers.items()}, body)
                try:
                    self.send_response(subscriber.status)
                    if subscriber.location:
                        self.send_header("Location", subscriber.location)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:  # the sender was killed while its request waited
                    return

        return self._server.start("127.0.0.1", self.port, Handler)

    def take(self, headers: dict[str, str], body: bytes) -> None:
        """Keep a request, before it is answered (a subclass may hold it here)."""
        with self.arrived:
            self.received.append((headers, body))
            self.arrived.notify_all()

    @property
    def url(self) -> str:
        return self._server.base_url + "/hooks"

    def wait(self, count: int, timeout: float = 10.0) -> list[tuple[dict[str, str], bytes]]:
        with self.arrived:
            if not self.arrived.wait_for(lambda: len(self.received) >= count, timeout):
                raise AssertionError(f"subscriber got {len(self.received)} deliveries, expected {count}")
            return list(self.received)

    def payloads(self) -> list[dict[str, Any]]:
        with self.arrived:
            return [json.loads(body) for _headers, body in self.received]

    def stop(self) -> None:
        self._server.stop()


@pytest.fixture
def gateway():
    from app.sandbox.gateway import GatewaySandbox

    sandbox = GatewaySandbox()
    sandbox.start()
    yield sandbox
    sandbox.stop()


@pytest.fixture
def messaging_engine(engine, gateway):
    """The engine with instance `demo` on the gateway sandbox and its listener running on port 0."""
    engine.admin.config_set("listener_port", "0")
    engine.messaging.start_listener()
    gateway.configure(engine)
    return engine


@pytest.fixture
def subscriber():
    server = Subscriber()
    server.start()
    yield server
    server.stop()
