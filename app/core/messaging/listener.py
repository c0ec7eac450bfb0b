"""The embedded webhook listener: gateways post here, each accepted event is stored once before the 2xx.

Paths (docs/messaging.md):
- `POST /webhooks/evolution/{instance}?token=…`: Evolution API; the per-instance token of the URL we
  registered and the instance's `apikey` that Evolution puts in every body must both match;
- `GET|POST /webhooks/meta`: WhatsApp Cloud API; the GET verification handshake (`hub.verify_token`)
  and `X-Hub-Signature-256`, an HMAC-SHA256 of the raw bytes with the app secret, on every POST;
- `POST /webhooks/yupana/{instance}`: another Yupana (this contract), signed per Standard Webhooks.

Forged posts answer 401 and oversized ones 413, storing nothing. The app is served by
`app.core.platform.http.asgi_server.AsgiServerThread`; `Listener` starts and stops it and says its state.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from standardwebhooks import Webhook, WebhookVerificationError

from app.core.errors import ErrorCode, YupanaError
from app.core.messaging import events as ev
from app.core.messaging.gateways import evolution, meta, yupana
from app.core.messaging.service import MessagingService
from app.core.platform.http.asgi_server import AsgiServerThread

log = logging.getLogger(__name__)
MAX_WEBHOOK_BYTES = 1024 * 1024  # gateways post JSON without media (base64 is off when we register)


class Rejected(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _error(status: int, message: str) -> JSONResponse:
    code = {401: ErrorCode.UNAUTHORIZED, 404: ErrorCode.NOT_FOUND, 413: ErrorCode.PAYLOAD_TOO_LARGE}.get(
        status, ErrorCode.INVALID_INPUT)
    return JSONResponse(YupanaError(code, message).to_envelope(), status_code=status)


async def _raw_body(request: Request) -> bytes:
    """The body, refused past MAX_WEBHOOK_BYTES before it is all read."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_WEBHOOK_BYTES:
        raise Rejected(413, f"El webhook supera el tamaño máximo de {MAX_WEBHOOK_BYTES // 1024} KiB.")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_WEBHOOK_BYTES:
            raise Rejected(413, f"El webhook supera el tamaño máximo de {MAX_WEBHOOK_BYTES // 1024} KiB.")
        chunks.append(chunk)
    return b"".join(chunks)


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise Rejected(400, "El webhook no es JSON válido.") from None


def _same(given: str | None, expected: str | None) -> bool:
    return bool(given) and bool(expected) and hmac.compare_digest(str(given).encode(), str(expected).encode())


class GroupCommit:
    """Writes the events of concurrent posts in one transaction on a writer thread (group commit).

    A post's answer waits for the commit that holds its events, so every 2xx still means "stored";
    meanwhile the event loop keeps reading and verifying other posts instead of waiting on the disk.
    """

    MAX_BATCH = 256

    def __init__(self, service: MessagingService) -> None:
        self.service = service
        self._pending: list[tuple[list[ev.InboundEvent], asyncio.AbstractEventLoop, asyncio.Future]] = []
        self._ready = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closing = False

    async def ingest(self, events: list[ev.InboundEvent]) -> int:
        if not events:
            return 0
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._ready:
            self._pending.append((events, loop, future))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="yupana-listener-writer", daemon=True)
                self._thread.start()
            self._ready.notify()
        return await future

    def close(self, timeout: float = 10.0) -> None:
        """Let the writer finish what it holds (before the storage closes), then end it."""
        with self._ready:
            self._closing = True
            thread = self._thread
            self._ready.notify_all()
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._ready:
                if not self._ready.wait_for(lambda: self._pending or self._closing, timeout=30) or \
                        not self._pending:
                    self._thread = None  # idle or closing: the next post starts a new writer
                    self._closing = False
                    return
                batch, self._pending = self._pending[:self.MAX_BATCH], self._pending[self.MAX_BATCH:]
            try:
                fresh = {id(e) for e in self.service.ingest([e for events, _loop, _f in batch for e in events])}
                outcomes: list[Any] = [sum(1 for e in events if id(e) in fresh) for events, _loop, _f in batch]
            except Exception as exc:  # nothing of the batch is stored: every post answers 500, gateways retry
                log.exception("storing %d webhook posts failed", len(batch))
                outcomes = [exc] * len(batch)
            for (_events, loop, future), outcome in zip(batch, outcomes, strict=True):
                try:
                    loop.call_soon_threadsafe(_settle, future, outcome)
                except RuntimeError:  # the server stopped meanwhile: the events are stored, nobody waits
                    pass


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

    async def accept(events: list[ev.InboundEvent]) -> JSONResponse:
        stored = await writer.ingest(events)  # committed before the answer leaves
        return JSONResponse({"ok": True, "received": len(events), "stored": stored})

    def known(instance: str, gateway: str) -> Any:
        try:
            config = service.config(instance, anywhere=True)  # stored in its own environment
        except YupanaError:
            raise Rejected(404, f"La instancia «{instance}» no existe en este Yupana.") from None
        if config.gateway != gateway:
            raise Rejected(404, f"La instancia «{instance}» no usa la pasarela {gateway}.")
        return config

    @app.exception_handler(Rejected)
    async def rejected(_request: Request, exc: Rejected) -> JSONResponse:
        log.info("webhook rejected (%s): %s", exc.status, exc.message)
        return _error(exc.status, exc.message)

    async def ping(request: Request) -> Response:
        """The reachability check: only a nonce this Yupana just issued is acknowledged."""
        if service.pinged(request.path_params["nonce"]):
            return JSONResponse({"ok": True})
        raise Rejected(404, "Comprobación desconocida.")

    def verified(check: Callable[[], Any]) -> Any:
        """Run a verification; if it fails, once more with credentials re-read from the data folder, since
        another process (`yupana sandbox --configure`, the window) may have changed them meanwhile."""
        try:
            return check()
        except Rejected as exc:
            if exc.status not in (401, 404):
                raise
            service.forget_configs()
            return check()

    async def evolution_hook(request: Request) -> Response:
        instance = request.path_params["instance"]
        raw = await _raw_body(request)
        body = _json(raw)

        def check() -> None:
            config = known(instance, "evolution")
            if not _same(request.query_params.get("token"), config.credentials.get("webhook_token")):
                raise Rejected(401, "El token de la dirección del webhook no es el de esta instancia.")
            if not isinstance(body, dict) or not _same(body.get("apikey"), config.credentials.get("apikey")):
                raise Rejected(401, "La apikey del webhook no es la de la instancia.")

        verified(check)
        return await accept(evolution.parse_webhook(instance, body))

    async def meta_handshake(request: Request) -> Response:
        params = request.query_params
        token = params.get("hub.verify_token")

        def check() -> None:
            if params.get("hub.mode") != "subscribe" or not any(
                    _same(token, c.credentials.get("verify_token")) for c in service.configs("meta")):
                raise Rejected(401, "El token de verificación de Meta no corresponde a ninguna instancia.")

        verified(check)
        return PlainTextResponse(params.get("hub.challenge", ""))

    async def meta_hook(request: Request) -> Response:
        raw = await _raw_body(request)
        signature = request.headers.get("x-hub-signature-256", "")

        def check() -> dict[str | None, str]:
            configs = service.configs("meta")
            for config in configs:
                secret = config.credentials.get("app_secret")
                expected = "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest() if secret else None
                if _same(signature, expected):
                    return {c.options.get("phone_number_id"): c.name for c in configs}
            raise Rejected(401, "La firma X-Hub-Signature-256 no corresponde al secreto de ninguna instancia Meta.")

        by_number = verified(check)
        return await accept(meta.parse_webhook(_json(raw), by_number))

    async def yupana_hook(request: Request) -> Response:
        instance = request.path_params["instance"]
        raw = await _raw_body(request)

        def check() -> Any:
            config = known(instance, "yupana")
            secret = config.credentials.get("webhook_secret")
            if not secret:
                raise Rejected(401, f"La instancia «{instance}» no tiene secreto de webhook: vuelva a registrarla.")
            try:
                return Webhook(secret).verify(raw, dict(request.headers))
            except WebhookVerificationError:
                raise Rejected(401, "La firma Standard Webhooks no es válida.") from None

        body = verified(check)
        return await accept(yupana.parse_webhook(instance, body, request.headers.get("webhook-id", "")))

    # Plain routes of the FastAPI app: they take the raw request (signatures are over the raw bytes) and
    # skip FastAPI's per-request dependency solving, a sixth of the listener's time under load.
    app.add_route("/webhooks/ping/{nonce}", ping, methods=["GET"])
    app.add_route("/webhooks/evolution/{instance}", evolution_hook, methods=["POST"])
    app.add_route("/webhooks/meta", meta_handshake, methods=["GET"])
    app.add_route("/webhooks/meta", meta_hook, methods=["POST"])
    app.add_route("/webhooks/yupana/{instance}", yupana_hook, methods=["POST"])
    return app


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
