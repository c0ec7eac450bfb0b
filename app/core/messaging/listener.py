"""The embedded webhook listener: gateways post here, each accepted event is stored once before the 2xx.

Its routes are generated from the gateway registry (app.core.messaging.gateways.registry) when the app is built: one
`POST` route per registered gateway at its `listener_path` (`/webhooks/evolution/{name}`, `/webhooks/meta`,
`/webhooks/yupana/{name}`, docs/messaging.md), plus a `GET` on that path for a gateway with a handshake (Meta's
verification). Every route reads the body (413 past MAX_WEBHOOK_BYTES), asks the gateway to verify the post (once more
with credentials re-read if it refuses with 401 or 404), asks it to parse the post, stores the events and answers.

Forged posts answer 401 and oversized ones 413, storing nothing. The app is served by
`app.core.platform.http.asgi_server.AsgiServerThread`; `Listener` starts and stops it and says its state.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from standardwebhooks import Webhook, WebhookVerificationError

from app.core.errors import ErrorCode, YupanaError
from app.core.messaging import events as ev
from app.core.messaging.gateways import Gateway, GatewayConfig, WebhookPost, WebhookRejected, registry
from app.core.messaging.service import MessagingService
from app.core.platform.http.asgi_server import AsgiServerThread
from app.core.platform.loops import IDLE, BackgroundLoop, Due

log = logging.getLogger(__name__)
Route = Callable[[Request], Awaitable[Response]]
MAX_WEBHOOK_BYTES = 1024 * 1024  # gateways post JSON without media (base64 is off when we register)


def _error(status: int, message: str) -> JSONResponse:
    code = {401: ErrorCode.UNAUTHORIZED, 404: ErrorCode.NOT_FOUND, 413: ErrorCode.PAYLOAD_TOO_LARGE}.get(
        status, ErrorCode.INVALID_INPUT)
    return JSONResponse(YupanaError(code, message).to_envelope(), status_code=status)


async def _raw_body(request: Request) -> bytes:
    """The body, refused past MAX_WEBHOOK_BYTES before it is all read."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_WEBHOOK_BYTES:
        raise WebhookRejected(413, f"El webhook supera el tamaño máximo de {MAX_WEBHOOK_BYTES // 1024} KiB.")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_WEBHOOK_BYTES:
            raise WebhookRejected(413, f"El webhook supera el tamaño máximo de {MAX_WEBHOOK_BYTES // 1024} KiB.")
        chunks.append(chunk)
    return b"".join(chunks)


class ListenerPost(WebhookPost):
    """A post as the listener hands it to its gateway: instances looked up in the service (any environment)."""

    def __init__(self, service: MessagingService, gateway: str, request: Request, raw: bytes) -> None:
        super().__init__(gateway, request.path_params.get("name"), request.query_params, request.headers, raw)
        self.service = service

    def config(self) -> GatewayConfig:
        instance = self.instance or ""
        try:
            config = self.service.config(instance, anywhere=True)  # stored in its own environment
        except YupanaError:
            raise WebhookRejected(404, f"La instancia «{instance}» no existe en este Yupana.") from None
        if config.gateway != self.gateway:
            raise WebhookRejected(404, f"La instancia «{instance}» no usa la pasarela {self.gateway}.")
        return config

    def configs(self) -> list[GatewayConfig]:
        return self.service.configs(self.gateway)

    def standard_webhook(self, secret: str) -> Any:
        try:
            return Webhook(secret).verify(self.raw, dict(self.headers))
        except WebhookVerificationError:
            raise WebhookRejected(401, "La firma Standard Webhooks no es válida.") from None


class GroupCommit:
    """Writes the events of concurrent posts in one transaction on a writer loop (group commit).

    A post's answer waits for the commit that holds its events, so every 2xx still means "stored";
    meanwhile the event loop keeps reading and verifying other posts instead of waiting on the disk. The writer is a
    background loop (app.core.platform.loops) started by the first post, ended after IDLE_EXIT_S without one (the
    next post starts it again), and finished when the listener stops: what it holds is written first.
    """

    MAX_BATCH = 256
    IDLE_EXIT_S = 30.0

    def __init__(self, service: MessagingService) -> None:
        self.service = service
        self._pending: list[tuple[list[ev.InboundEvent], asyncio.AbstractEventLoop, asyncio.Future]] = []
        self._lock = threading.Lock()  # guards `_pending`
        self._last_batch = time.monotonic()  # when the writer last wrote one (its idle time counts from there)
        self._writer = BackgroundLoop("yupana-listener-writer", self._write_batch, what="listener writer",
                                      logger=log)

    async def ingest(self, events: list[ev.InboundEvent]) -> int:
        if not events:
            return 0
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._lock:
            self._pending.append((events, loop, future))
        self._writer.wake()  # started if it is not running
        return await future

    def close(self, timeout: float = 10.0) -> None:
        """Let the writer finish what it holds (before the storage closes), then end it."""
        self._writer.finish(timeout)

    def _write_batch(self) -> Due:
        """One round of the writer: up to MAX_BATCH posts stored in one transaction and answered; with none waiting,
        the wait for the next post (IDLE after IDLE_EXIT_S without one: the writer ends)."""
        with self._lock:
            batch, self._pending = self._pending[:self.MAX_BATCH], self._pending[self.MAX_BATCH:]
        if not batch:
            idle = time.monotonic() - self._last_batch
            return IDLE if idle >= self.IDLE_EXIT_S else self.IDLE_EXIT_S - idle
        outcomes = self._store(batch)
        for (_events, loop, future), outcome in zip(batch, outcomes, strict=True):
            try:
                loop.call_soon_threadsafe(_settle, future, outcome)
            except RuntimeError:  # the server stopped meanwhile: the events are stored, nobody waits
                pass
        self._last_batch = time.monotonic()
        return 0.0  # look for more at once

    def _store(self, batch: list[tuple[list[ev.InboundEvent], asyncio.AbstractEventLoop, asyncio.Future]]
               ) -> list[Any]:
        """Each post's count of new events, or the exception that kept it from being stored. The batch is one
        transaction; when it fails, each post is stored again on its own, so a bad post fails alone."""
        try:
            fresh = {id(e) for e in self.service.ingest([e for events, _loop, _f in batch for e in events])}
            return [sum(1 for e in events if id(e) in fresh) for events, _loop, _f in batch]
        except Exception as exc:
            if len(batch) == 1:  # nothing of it is stored: the post answers 500 and its gateway retries
                log.exception("storing a webhook post failed")
                return [exc]
        return [outcome for post in batch for outcome in self._store([post])]


def _settle(future: asyncio.Future, outcome: Any) -> None:
    if future.done():
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


def build_app(service: MessagingService) -> FastAPI:
    app = FastAPI(title="Yupana webhook listener", docs_url=None, redoc_url=None, openapi_url=None)
    writer = app.state.writer = GroupCommit(service)

    @app.exception_handler(WebhookRejected)
    async def rejected(_request: Request, exc: WebhookRejected) -> JSONResponse:
        log.info("webhook rejected (%s): %s", exc.status, exc.message)
        return _error(exc.status, exc.message)

    async def ping(request: Request) -> Response:
        """The reachability check: only a nonce this Yupana just issued is acknowledged."""
        if service.pinged(request.path_params["nonce"]):
            return JSONResponse({"ok": True})
        raise WebhookRejected(404, "Comprobación desconocida.")

    # Plain routes of the FastAPI app: they take the raw request (signatures are over the raw bytes) and
    # skip FastAPI's per-request dependency solving, a sixth of the listener's time under load.
    app.add_route("/webhooks/ping/{nonce}", ping, methods=["GET"])
    for gateway in registry.gateways():
        post, handshake = _routes(service, writer, gateway)
        app.add_route(gateway.listener_path, post, methods=["POST"])
        if handshake is not None:
            app.add_route(gateway.listener_path, handshake, methods=["GET"])
    return app


def _routes(service: MessagingService, writer: GroupCommit, gateway: type[Gateway]
            ) -> tuple[Route, Route | None]:
    """A registered gateway's POST route and, if it has a handshake, its GET route."""

    def verified(check: Callable[[], Any]) -> Any:
        """Run a verification; if it fails, once more with credentials re-read from the data folder, since
        another process (`yupana sandbox --configure`, the window) may have changed them meanwhile."""
        try:
            return check()
        except WebhookRejected as exc:
            if exc.status not in (401, 404):
                raise
            service.forget_configs()
            return check()

    async def receive(request: Request) -> Response:
        post = ListenerPost(service, gateway.kind, request, await _raw_body(request))
        proof = verified(lambda: gateway.verify(post))
        events = _parsed(gateway, post, proof)
        stored = await writer.ingest(events)  # committed before the answer leaves
        return JSONResponse({"ok": True, "received": len(events), "stored": stored})

    async def handshake(request: Request) -> Response:
        post = ListenerPost(service, gateway.kind, request, b"")
        return PlainTextResponse(verified(lambda: gateway.handshake(post)))

    return receive, handshake if gateway.has_handshake() else None


# The timestamps an event may carry: whole seconds from 1970 up to the year 5138 (a store's integer column holds
# them; a 1e30 from a hostile or broken sender must be refused alone, not fail the group commit of others' posts).
MAX_EPOCH = 10**11


def _parsed(gateway: type[Gateway], post: WebhookPost, proof: Any) -> list[ev.InboundEvent]:
    """The gateway's events of a verified post; a body that is JSON but not of the gateway's shape (a string where
    an object goes, a timestamp that is no time) is a 400 of its own post and never reaches the writer."""
    try:
        events = gateway.parse(post, proof)
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError, RecursionError):
        log.info("a %s webhook of an unexpected shape was refused", gateway.kind, exc_info=True)
        raise WebhookRejected(400, f"El webhook no tiene la forma que envía {gateway.label}.") from None
    for event in events:
        if not isinstance(event.timestamp, int) or not 0 <= event.timestamp < MAX_EPOCH:
            raise WebhookRejected(400, f"La fecha del evento ({str(event.timestamp)[:40]}) no es una fecha válida.")
    return events


class Listener:
    """The listener's server thread and its state, for the engine (`listener_state()`) and the status bar."""

    def __init__(self, service: MessagingService) -> None:
        self.service = service
        self.server = AsgiServerThread("yupana-listener", build_app(service))
        self.error: str | None = None
        self._lock = threading.Lock()

    def start(self, host: str, port: int) -> str:
        with self._lock:
            try:
                url = self.server.start(host, port)
            except OSError as exc:
                self.error = f"No se pudo abrir {host}:{port}: {exc.strerror or exc}"
                raise YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE,
                                  f"El receptor de mensajería no pudo abrir {host}:{port} ({exc.strerror or exc}). "
                                  "Cambie el puerto en Ajustes → Mensajería.") from None
            self.error = None
            return url

    def stop(self) -> None:
        with self._lock:
            self.server.stop()
            self.server.app.state.writer.close()

    @property
    def base_url(self) -> str | None:
        return self.server.base_url if self.server.running else None

    def state(self) -> dict[str, Any]:
        if self.server.running:
            host = self.server.address[0]
            exposed = host not in ("127.0.0.1", "::1", "localhost")
            return {"state": "running", "url": self.server.base_url, "exposed": exposed, "error": None}
        return {"state": "error" if self.error else "stopped", "url": None, "exposed": False, "error": self.error}
