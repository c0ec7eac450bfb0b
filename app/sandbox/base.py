"""A loopback HTTP server in a background thread: the common part of every sandbox."""

from __future__ import annotations

import socket
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, ClassVar

from app.core.sandbox_kit import ServerThread

if TYPE_CHECKING:
    from app.core.api import Engine


class QuietHandler(BaseHTTPRequestHandler):
    """Request handler that does not write to stderr, speaks HTTP/1.1 and knows its sandbox."""

    protocol_version = "HTTP/1.1"
    sandbox: Sandbox

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass

    def setup(self) -> None:
        super().setup()
        # An answer is written as headers, then body: with Nagle's algorithm on, the body waits for the client's
        # delayed ACK of the headers on a kept-alive connection (40 ms a request). Real servers do not stall so.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def handle(self) -> None:
        try:
            super().handle()
        except (ConnectionResetError, BrokenPipeError):
            pass  # the client went away mid-request (a test kills it): nothing to answer, nothing to report

    def read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def reply(self, status: int, body: bytes, content_type: str = "application/json; charset=utf-8",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)


class Sandbox:
    """Start with `start()` (port 0 picks a free port), read `base_url`, stop with `stop()`."""

    name: ClassVar[str] = "sandbox"
    handler: ClassVar[type[QuietHandler]] = QuietHandler

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self._server = ServerThread(f"sandbox-{self.name}")

    @property
    def base_url(self) -> str:
        return self._server.base_url

    def start(self) -> str:
        handler = type(f"{type(self).__name__}Handler", (self.handler,), {"sandbox": self})
        return self._server.start(self.host, self.port, handler)

    def stop(self) -> None:
        self._server.stop()

    def endpoints(self) -> dict[str, str]:
        """What this running sandbox stands in for: setting key (a `sandboxed` setting) or secret name → value."""
        return {}

    def configure(self, engine: Engine) -> None:
        """Make this running sandbox what `engine`'s sandbox environment uses (SandboxMode, `yupana sandbox
        --configure`). Only the sandbox environment reads these addresses: the settings are never touched, so
        beta and production keep theirs (app.core.platform.environments)."""
        engine.admin.register_sandbox(self.endpoints())

    def unconfigure(self, engine: Engine) -> None:
        """Forget this sandbox's addresses (before it stops): the sandbox environment has none until one runs."""
        engine.admin.unregister_sandbox(list(self.endpoints()))

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
