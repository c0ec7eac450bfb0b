"""An ASGI application served by uvicorn in a background thread of this process.

One home for how Yupana runs an HTTP server of its own: the local API (`/api/v1/...`) and the
embedded webhook listener both use it, in the app (a daemon thread beside the windows) and alone
(`yupana serve`). The socket is bound here, before the thread starts, so a busy port is an
`OSError` for the caller and port 0 is resolved at once; `start()` returns only once uvicorn
accepts connections, and `stop()` only once the thread has ended.

uvicorn's own loggers are routed into the app's log file (never to stderr): a client that goes
away mid-answer is the client's business, not a traceback on the shop's console.

uvicorn's HTTP protocol is extended (`_Protocol`) for a server that runs all day at a point of sale:
- a bounded number of connections: past `limit_concurrency` a new connection is answered at once
  with a JSON 503 and closed (uvicorn itself accepts every connection and answers text);
- a request time-out: a connection that does not complete its request line and headers within
  `timeout_request` seconds (idle after connecting, or sending them slowly) is closed; uvicorn
  only times out idle keep-alive connections after a first answer;
- a write time-out: a client that stops reading its answers (the send buffers stay full for
  `timeout_request` seconds) is disconnected, instead of holding its connection for ever;
- malformed requests (a Content-Length of `abc`, `1e3` or `-1`, broken headers) get a JSON 400
  in the error envelope instead of uvicorn's text;
- slots kept for requests that prove themselves (`reserved`, with a `vouch` check of a request's scope — its path,
  query and headers — given by the app): connections whose request has not (yet) shown valid credentials hold at
  most `limit_concurrency - reserved` slots. Past that a new connection is let in on probation: its request's
  headers must vouch for it, or it is answered a JSON 503 and closed; when every slot is taken, the oldest probation
  connection still without headers makes room for the newcomer. Strangers trickling bodies or headers cannot keep
  out a client with credentials (the webhook listener's gateways, which may come through a tunnel from 127.0.0.1
  like anyone else). Without `vouch` (the local API) every connection counts the same.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.core.errors import ErrorCode, YupanaError

log = logging.getLogger(__name__)

DEFAULT_LIMIT_CONCURRENCY = 256  # connections + tasks at once; past it uvicorn answers 503 at once
DEFAULT_KEEP_ALIVE_S = 5  # an idle keep-alive connection is closed after this
DEFAULT_BACKLOG = 512
DEFAULT_REQUEST_TIMEOUT_S = 10  # from connecting (or the previous answer) to a complete request line and headers
DEFAULT_BODY_TIMEOUT_S = 30.0  # for a whole request body, once its headers arrived (read by the app)
STOP_TIMEOUT_S = 5.0
_UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")


class _ToAppLog(logging.Handler):
    """Hands uvicorn's records to the `app.http` logger, so they reach the app's file handler only."""

    def emit(self, record: logging.LogRecord) -> None:
        target = logging.getLogger("app.http")
        if target.isEnabledFor(record.levelno):
            target.handle(record)


def route_uvicorn_logs() -> None:
    """Idempotent: uvicorn's loggers stop propagating to the root logger (stderr) and feed the app's log."""
    for name in _UVICORN_LOGGERS:
        logger = logging.getLogger(name)
        logger.propagate = False
        if not any(isinstance(h, _ToAppLog) for h in logger.handlers):
            logger.handlers = [_ToAppLog()]


class _Server(uvicorn.Server):
    """uvicorn's server that tells a waiting thread when it accepts connections (or failed to start)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets=sockets)
        finally:
            self.ready.set()


def raw_json_response(status: int, reason: str, envelope: dict[str, Any]) -> bytes:
    """A complete HTTP/1.1 answer that closes the connection, written by the protocol itself (no app involved)."""
    body = json.dumps(envelope, ensure_ascii=False).encode("utf-8")
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n")
    return head.encode("ascii") + body


class _CoalescingTransport:
    """A transport whose writes made in one turn of the event loop leave in one `send`.

    uvicorn writes an answer's status line and headers, then its body, as two writes: two system calls and, with
    Nagle off, two TCP segments the client wakes up for. Here they are joined and handed to the real transport
    at the end of the turn (`call_soon`), in the order written; `close()` sends what is pending first, `abort()`
    drops it. Everything else is the real transport's."""

    __slots__ = ("_transport", "_loop", "_pending")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] | None = None

    def write(self, data: bytes) -> None:
        if self._pending is None:
            self._pending = [data]
            self._loop.call_soon(self._flush)
        else:
            self._pending.append(data)

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def _flush(self) -> None:
        pending, self._pending = self._pending, None
        if pending and not self._transport.is_closing():
            self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def abort(self) -> None:
        self._pending = None
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _busy() -> YupanaError:
    return YupanaError(ErrorCode.BUSY, "El servidor está atendiendo demasiadas conexiones; "
                                       "vuelva a intentar en unos segundos.")


async def _answer_busy(_scope: Any, _receive: Any, send: Any) -> None:
    """A request of a probation connection that did not vouch for itself: a JSON 503, and the connection closed."""
    error = _busy()
    body = json.dumps(error.to_envelope(), ensure_ascii=False).encode("utf-8")
    await send({"type": "http.response.start", "status": error.http_status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class _Slots:
    """The connections of one server by standing (module doc): those whose current request vouched for itself, and
    those let in on probation past the strangers' share, oldest first."""

    def __init__(self, reserved: int, vouch: Callable[[Any], bool] | None) -> None:
        self.reserved = reserved if vouch is not None else 0
        self.vouch = vouch
        self.vouched: set[_Protocol] = set()
        self.probation: dict[_Protocol, None] = {}  # insertion-ordered: the oldest first

    def clear(self) -> None:
        self.vouched.clear()
        self.probation.clear()


class _Protocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a connection bound, slots kept for requests with credentials, a request
    time-out and JSON 400s (module doc)."""

    def __init__(self, *args: Any, max_connections: int | None, request_timeout: float, slots: _Slots,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._max_connections = max_connections
        self._request_timeout = request_timeout
        self._slots = slots
        self._deadline: asyncio.TimerHandle | None = None
        self._write_deadline: asyncio.TimerHandle | None = None
        self._refused = False
        self._headers_seen = False
        if slots.vouch is not None:
            self._app = self.app
            self.app = self._gated

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # uvicorn's is BaseTransport
        probation = False
        if self._max_connections is not None:
            open_now = len(self.connections)
            if open_now >= self._max_connections and not self._make_room():
                self._refuse(transport, open_now)
                return
            strangers = open_now - len(self._slots.vouched)
            probation = self._slots.reserved > 0 and strangers >= self._max_connections - self._slots.reserved
        super().connection_made(transport)
        if probation:
            self._slots.probation[self] = None
        self.transport = _CoalescingTransport(transport, self.loop)  # type: ignore[assignment]  # a Transport in all but name
        self._arm_deadline()

    def _refuse(self, transport: asyncio.Transport, open_now: int) -> None:
        self._refused = True
        self.transport = transport
        error = _busy()
        transport.write(raw_json_response(error.http_status, "Service Unavailable", error.to_envelope()))
        transport.close()
        self.logger.warning("connection refused: %d connections open", open_now)

    def _make_room(self) -> bool:
        """Every slot is taken: drop the oldest probation connection that has not sent its headers yet (a stranger
        holding a kept slot), so that a newcomer with credentials is not kept out by it. False if there is none."""
        for waiting in self._slots.probation:
            if not waiting._headers_seen:
                del self._slots.probation[waiting]
                waiting.transport.abort()
                return True
        return False

    async def _gated(self, scope: Any, receive: Any, send: Any) -> None:
        """The app behind the slots' check, run first thing for each request, before its body is read."""
        assert self._slots.vouch is not None
        if self._slots.vouch(scope):
            self._slots.vouched.add(self)
            self._slots.probation.pop(self, None)
            try:
                await self._app(scope, receive, send)
            finally:
                self._slots.vouched.discard(self)
            return
        if self in self._slots.probation:
            self.logger.info("a connection let in on probation sent no credentials: answered 503")
            await _answer_busy(scope, receive, send)
            return
        await self._app(scope, receive, send)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        self._resumed()
        self._slots.vouched.discard(self)
        self._slots.probation.pop(self, None)
        if self._refused:
            return
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if not self._refused:
            super().data_received(data)

    def on_headers_complete(self) -> None:
        self._cancel_deadline()
        self._headers_seen = True
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        next_request_queued = bool(self.pipeline)
        super().on_response_complete()
        if not next_request_queued and not self.transport.is_closing():
            self._arm_deadline()

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._write_deadline is None and not self._refused:
            self._write_deadline = self.loop.call_later(self._request_timeout, self._write_timed_out)

    def resume_writing(self) -> None:
        self._resumed()
        super().resume_writing()

    def _resumed(self) -> None:
        if self._write_deadline is not None:
            self._write_deadline.cancel()
            self._write_deadline = None

    def _write_timed_out(self) -> None:
        self._write_deadline = None
        self.logger.info("disconnecting a client that read nothing for %.0f s", self._request_timeout)
        self.transport.abort()  # close() would wait for the buffered answer to be read: it never will

    def send_400_response(self, msg: str) -> None:
        error = YupanaError(ErrorCode.INVALID_INPUT, "La solicitud HTTP no es válida (línea de petición, cabeceras "
                                                     "o Content-Length mal formados).")
        self.transport.write(raw_json_response(400, "Bad Request", error.to_envelope()))
        self.transport.close()

    def _arm_deadline(self) -> None:
        self._cancel_deadline()
        self._deadline = self.loop.call_later(self._request_timeout, self._request_timed_out)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _request_timed_out(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.logger.info("closing a connection that sent no complete request in %.0f s", self._request_timeout)
            self.transport.close()


class AsgiServerThread:
    """`start(host, port)` → base URL; `stop()`. One instance serves one ASGI app at a time."""

    def __init__(self, name: str, app: Any, *, limit_concurrency: int = DEFAULT_LIMIT_CONCURRENCY,
                 timeout_keep_alive: int = DEFAULT_KEEP_ALIVE_S, backlog: int = DEFAULT_BACKLOG,
                 timeout_request: float = DEFAULT_REQUEST_TIMEOUT_S, reserved: int = 0,
                 vouch: Callable[[Any], bool] | None = None, **uvicorn_options: Any) -> None:
        """`reserved` slots of `limit_concurrency` are kept for requests whose scope `vouch` accepts (module doc)."""
        self.name = name
        self.app = app
        # The connection bound is the protocol's (a JSON 503 at connect), so uvicorn's own stays off.
        self._slots = _Slots(reserved, vouch)
        protocol = functools.partial(_Protocol, max_connections=limit_concurrency, request_timeout=timeout_request,
                                     slots=self._slots)
        self._options = {"timeout_keep_alive": timeout_keep_alive, "backlog": backlog, "http": protocol, "ws": "none",
                         **uvicorn_options}
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def address(self) -> tuple[str, int]:
        if self._socket is None:
            raise RuntimeError(f"the {self.name} server is not running")
        host, port = self._socket.getsockname()[:2]
        return host, port

    @property
    def base_url(self) -> str:
        host, port = self.address
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def start(self, host: str, port: int) -> str:
        """Bind (port 0 picks a free one) and serve in a daemon thread; raises OSError if it cannot bind."""
        if self.running:
            return self.base_url
        route_uvicorn_logs()
        self._slots.clear()
        self._socket = _bind(host, port, self._options["backlog"])
        config = uvicorn.Config(self.app, log_config=None, access_log=False, lifespan="off",
                                server_header=False, **self._options)
        self._server = _Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]},
                                        name=self.name, daemon=True)
        self._thread.start()
        if not self._server.ready.wait(STOP_TIMEOUT_S) or not self._server.started:
            self.stop()
            raise OSError(f"the {self.name} server did not start")
        log.info("%s listening on %s", self.name, self.base_url)
        return self.base_url

    def stop(self) -> None:
        """Stop accepting, close open connections and wait for the thread (bounded)."""
        server, thread, sock = self._server, self._thread, self._socket
        self._server = self._thread = None
        if server is not None:
            server.should_exit = True
            server.force_exit = True  # do not wait for idle keep-alive clients to leave
        if thread is not None:
            thread.join(STOP_TIMEOUT_S)
            if thread.is_alive():
                log.warning("%s server thread did not stop within %.0f s", self.name, STOP_TIMEOUT_S)
        if sock is not None:
            sock.close()
        self._socket = None


def _bind(host: str, port: int, backlog: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose proto says TCP,
    # and without it every keep-alive answer waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if os.name != "nt":  # on Windows SO_REUSEADDR lets another process steal the port
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock

