"""The embedded webhook listener: gateways post here, each accepted event is stored once before the 2xx.

Its routes are generated from the gateway registry (app.core.messaging.gateways.registry) when the app is built: one
`POST` route per registered gateway at its `listener_path` (`/webhooks/evolution/{name}`, `/webhooks/meta`,
`/webhooks/yupana/{name}`, docs/messaging.md), plus a `GET` on that path for a gateway with a handshake (Meta's
verification). Every route reads the body (413 past MAX_WEBHOOK_BYTES), asks the gateway to verify the post (once more
with credentials re-read if it refuses with 401 or 404), asks it to parse the post, stores the events and answers.

The events of posts that arrive together are stored in one transaction by the storage's group commit
(app.core.storage.group_commit): each post in a savepoint of its own, so one that fails fails alone, answered once the
commit holding it returned and the WAL holding it was synced to disk (one sync per group), and announced (windows,
forwarder) only then; the writer hands a batch's answers to the event loop in one call. Forged posts answer 401,
oversized ones 413 and bodies that do not arrive within BODY_TIMEOUT_S 408, storing nothing. The app is served by
`app.core.platform.http.asgi_server.AsgiServerThread` through `fast_dispatch` (the routes without FastAPI's
middleware), with MAX_CONNECTIONS of which RESERVED_FOR_GATEWAYS are kept for posts whose URL carries their instance's
token (`vouching`); `Listener` starts and stops it and says its state.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl

import starlette.routing
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from standardwebhooks import Webhook, WebhookVerificationError
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Receive, Scope, Send

from app.core.errors import ErrorCode, YupanaError
from app.core.messaging import events as ev
from app.core.messaging.gateways import Gateway, GatewayConfig, WebhookPost, WebhookRejected, registry
from app.core.messaging.gateways.base import same_secret
from app.core.messaging.service import MessagingService
from app.core.platform.http.asgi_server import DEFAULT_BODY_TIMEOUT_S, AsgiServerThread
from app.core.storage.group_commit import GroupCommit

log = logging.getLogger(__name__)
Route = Callable[[Request], Awaitable[Response]]
BODY_TIMEOUT_S = DEFAULT_BODY_TIMEOUT_S
MAX_WEBHOOK_BYTES = 1024 * 1024  # gateways post JSON without media (base64 is off when we register)
# Connections at once, and how many of them are kept for posts whose URL already carries the instance's token (a
# gateway's): strangers holding connections open — trickling a body, say — cannot keep a gateway's posts out.
MAX_CONNECTIONS = 256
RESERVED_FOR_GATEWAYS = 64


def _error(status: int, message: str) -> JSONResponse:
    code = {401: ErrorCode.UNAUTHORIZED, 404: ErrorCode.NOT_FOUND, 405: ErrorCode.METHOD_NOT_ALLOWED,
            408: ErrorCode.REQUEST_TIMEOUT,
            413: ErrorCode.PAYLOAD_TOO_LARGE, 415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
            500: ErrorCode.INTERNAL}.get(status, ErrorCode.INVALID_INPUT)
    # A post refused before its body was all read leaves the rest of it on the connection: it cannot carry another.
    headers = {"connection": "close"} if status in (408, 413, 415) else None
    return JSONResponse(YupanaError(code, message).to_envelope(), status_code=status, headers=headers)


def _rejection(exc: WebhookRejected) -> JSONResponse:
    log.info("webhook rejected (%s): %s", exc.status, exc.message)
    return _error(exc.status, exc.message)


def _too_large() -> WebhookRejected:
    return WebhookRejected(413, f"El webhook supera el tamaño máximo de {MAX_WEBHOOK_BYTES // 1024} KiB.")


async def _raw_body(request: Request) -> bytes:
    """The body, refused past MAX_WEBHOOK_BYTES before it is all read, and with a 408 unless all of it arrived within
    BODY_TIMEOUT_S (a client trickling a byte now and then cannot hold a connection for ever). Read from the server's
    messages themselves (not `request.stream()`, whose bookkeeping cost a tenth of a post)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_WEBHOOK_BYTES:
        raise _too_large()
    chunks, size = [], 0
    try:
        async with asyncio.timeout(BODY_TIMEOUT_S):  # one timer for the whole body
            while True:
                message = await request.receive()
                if message["type"] == "http.disconnect":
                    raise ClientDisconnect
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > MAX_WEBHOOK_BYTES:
                    raise _too_large()
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except TimeoutError:
        raise WebhookRejected(408, f"El cuerpo del webhook no llegó completo en {BODY_TIMEOUT_S:g} s.") from None


# What the slots' check (`vouching`) read of a request, kept in its scope for the route: the query as a dict and the
# configuration of the instance whose token the URL carries.
QUERY_KEY, CONFIG_KEY = "yupana.query", "yupana.vouched_config"


def _query(scope: Scope) -> dict[str, str]:
    return dict(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True))


def _check_json(request: Request) -> None:
    """Gateways post JSON and say so: a form, text or a body without a Content-Type is a 415, refused unread."""
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media != "application/json" and not media.endswith("+json"):
        # A post refused unread leaves its body on the connection: closed after the answer (`_error`).
        raise WebhookRejected(415, f"El tipo de contenido «{media or 'ninguno'}» no se admite: los webhooks llegan "
                                   "como JSON (Content-Type: application/json).")


class ListenerPost(WebhookPost):
    """A post as the listener hands it to its gateway: instances looked up in the service (any environment)."""

    def __init__(self, service: MessagingService, gateway: str, request: Request, raw: bytes) -> None:
        # The query as a plain dict (the last of a repeated name, like Starlette's QueryParams.get): a third of the
        # cost of building QueryParams, which every post paid. Read once: the slots' check (`vouching`) keeps it.
        scope = request.scope
        query = scope.get(QUERY_KEY)
        if query is None:
            query = _query(scope)
        super().__init__(gateway, request.path_params.get("name"), query, request.headers, raw)
        self.service = service
        self._vouched: GatewayConfig | None = scope.get(CONFIG_KEY)

    def forget_vouched(self) -> None:
        """The configuration is read again from the service (which re-reads the data folder after forget_configs)."""
        self._vouched = None

    def config(self) -> GatewayConfig:
        if self._vouched is not None and self._vouched.name == self.instance and self._vouched.gateway == self.gateway:
            return self._vouched  # looked up a moment ago by the slots' check, for this very request
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
            # The library only checks the signature: a header it cannot split or decode (ValueError) is no signature
            # either, and the body is read by `json()`, which refuses too deep a nesting with a 400, not a 500. Its
            # signed content is text: a body that is not UTF-8 is refused here whatever the library's version does
            # with bytes (1.1 fails to decode them, 1.3 signs them).
            self.raw.decode("utf-8")
            Webhook(secret).verify(self.raw, dict(self.headers), json_parse=False)
        except (WebhookVerificationError, ValueError):
            raise WebhookRejected(401, "La firma Standard Webhooks no es válida.") from None
        return self.json()


def build_app(service: MessagingService) -> FastAPI:
    app = FastAPI(title="Yupana webhook listener", docs_url=None, redoc_url=None, openapi_url=None)
    writer = app.state.writer = GroupCommit(service.store.database, "yupana-listener-writer", what="listener writer",
                                            logger=log)

    @app.exception_handler(WebhookRejected)
    async def rejected(_request: Request, exc: WebhookRejected) -> JSONResponse:
        return _rejection(exc)

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

    def verified(post: ListenerPost, check: Callable[[], Any]) -> Any:
        """Run a verification; if it fails, once more with credentials re-read from the data folder, since
        another process (`yupana sandbox --configure`, the window) may have changed them meanwhile."""
        try:
            return check()
        except WebhookRejected as exc:
            if exc.status not in (401, 404):
                raise
            service.forget_configs()
            post.forget_vouched()
            return check()

    async def receive(request: Request) -> Response:
        _check_json(request)
        post = ListenerPost(service, gateway.kind, request, await _raw_body(request))
        proof = verified(post, lambda: gateway.verify(post))
        events = _parsed(gateway, post, proof)
        stored = await _stored(writer, service, events)  # committed before the answer leaves
        return _Received(len(events), stored)

    async def handshake(request: Request) -> Response:
        post = ListenerPost(service, gateway.kind, request, b"")
        return PlainTextResponse(verified(post, lambda: gateway.handshake(post)))

    return receive, handshake if gateway.has_handshake() else None


class _Received(Response):
    """The 200 of a stored post, its headers written once here rather than worked out by Starlette for each post."""

    media_type = "application/json"

    def __init__(self, received: int, stored: int) -> None:  # no super().__init__: its header work is done below
        self.status_code = 200
        self.background = None
        self.body = b'{"ok":true,"received":%d,"stored":%d}' % (received, stored)
        self.raw_headers = [(b"content-length", b"%d" % len(self.body)), (b"content-type", b"application/json")]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        await send({"type": "http.response.body", "body": self.body})


async def _stored(writer: GroupCommit, service: MessagingService, events: list[ev.InboundEvent]) -> int:
    """A post's events stored in the writer's next group commit, announced once it is committed; how many were new
    (the others had been stored before). The commit is durable: a gateway does not resend what was answered 2xx, so
    the WAL holding the rows is synced before the answers leave (one sync per group, not per post)."""
    if not events:
        return 0
    database = service.store.database

    def durably_stored() -> list[ev.InboundEvent]:
        with database.transaction(durable=True):  # nested in the group: its commit syncs the WAL
            return service.store.ingest(events)

    fresh = await writer.run(durably_stored, service.announce)
    return len(fresh)


def fast_dispatch(app: FastAPI) -> ASGIApp:
    """The listener's own routes (taken from `app.routes`) found by a dict look-up and run without FastAPI's middleware
    stack, which they do not need: they take the raw request, refusals are answered here (`_rejection`) and an
    unexpected error is a 500 envelope; another method on a known path is a 405 and an unknown path a 404, both in the
    error envelope. Half of the listener's event loop went to that stack under load (issue 33)."""
    exact: dict[str, dict[str, Route]] = {}
    by_prefix: dict[str, tuple[str, dict[str, Route]]] = {}
    for route in app.routes:
        if not isinstance(route, starlette.routing.Route) or route.methods is None:
            continue
        handlers = {method: route.endpoint for method in route.methods if method != "HEAD"}
        if "{" in route.path:
            prefix, _, rest = route.path.partition("{")
            by_prefix.setdefault(prefix, (rest.rstrip("}"), {}))[1].update(handlers)
        else:
            exact.setdefault(route.path, {}).update(handlers)

    def handler_of(scope: Scope) -> Route | None:
        path = scope["path"]
        found = exact.get(path)
        if found is not None:
            return found.get(scope["method"])
        head, _, value = path.rpartition("/")
        match = by_prefix.get(head + "/")
        if match is None or not value:
            return None
        handler = match[1].get(scope["method"])
        if handler is not None:
            scope["path_params"] = {match[0]: value}
        return handler

    def known(path: str) -> bool:
        head, _, value = path.rpartition("/")
        return path in exact or (bool(value) and head + "/" in by_prefix)

    async def dispatch(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        handler = handler_of(scope)
        if handler is None:  # answered in the error envelope, never in FastAPI's own body
            refusal = (_error(405, f"El método {scope['method']} no se admite en esta dirección.")
                       if known(scope["path"]) else _error(404, "Esta dirección no existe en el receptor."))
            await refusal(scope, receive, send)
            return
        response: Response
        try:
            response = await handler(Request(scope, receive))
        except ClientDisconnect:
            return  # the gateway went away before its body arrived: nothing to answer
        except WebhookRejected as exc:
            response = _rejection(exc)
        except Exception:
            log.exception("webhook listener: unexpected error on %s %s", scope["method"], scope["path"])
            response = _error(500, "Error interno del receptor de mensajería: el detalle está en el registro.")
        await response(scope, receive, send)

    return dispatch


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


# A port another program holds: in use, or (Windows) reserved for another use, which its bind answers with EACCES.
PORT_TAKEN = (errno.EADDRINUSE, errno.EACCES)


def vouching(service: MessagingService) -> Callable[[Scope], bool]:
    """Whether a post's request line already proves it comes from a gateway, before its body is read: its URL carries
    the token of the instance it names (the URL Yupana registers with Evolution). Such posts may use the slots kept for
    gateways (`RESERVED_FOR_GATEWAYS`); the others — and those whose proof is a signature over the body — share the
    rest. The post itself is still verified in full by its route."""
    named = [(gateway.listener_path.partition("{")[0], gateway.kind) for gateway in registry.gateways()
             if "{" in gateway.listener_path]

    def vouched(scope: Scope) -> bool:
        if scope.get("method") != "POST":
            return False
        head, _, instance = scope["path"].rpartition("/")
        kind = next((kind for prefix, kind in named if prefix == head + "/"), None)
        if kind is None or not instance:
            return False
        query = scope[QUERY_KEY] = _query(scope)
        token = query.get("token")
        if not token:
            return False
        try:
            config = service.config(instance, anywhere=True)
        except YupanaError:
            return False
        if config.gateway == kind and same_secret(token, config.credentials.get("webhook_token")):
            scope[CONFIG_KEY] = config
            return True
        return False

    return vouched


class Listener:
    """The listener's server thread and its state, for the engine (`listener_state()`) and the status bar."""

    def __init__(self, service: MessagingService) -> None:
        self.service = service
        self.app = build_app(service)
        self.server = AsgiServerThread("yupana-listener", fast_dispatch(self.app), limit_concurrency=MAX_CONNECTIONS,
                                       reserved=RESERVED_FOR_GATEWAYS, vouch=vouching(service))
        self.error: str | None = None
        self._lock = threading.Lock()

    def start(self, host: str, port: int, *, or_free: bool = False) -> str:
        """Serve on host:port (`or_free`: on a free port the system picks when that one is taken); its URL."""
        with self._lock:
            try:
                url = self._bound(host, port, or_free)
            except OSError as exc:
                self.error = f"No se pudo abrir {host}:{port}: {exc.strerror or exc}"
                raise YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE,
                                  f"El receptor de mensajería no pudo abrir {host}:{port} ({exc.strerror or exc}). "
                                  "Cambie el puerto en Ajustes → Mensajería.") from None
            self.error = None
            return url

    def _bound(self, host: str, port: int, or_free: bool) -> str:
        """The server started on `port`, or on a free one when `or_free` and another program holds it (a port of a
        previous run taken meanwhile): the caller sees the change in `port` and tells the gateways and the user."""
        try:
            return self.server.start(host, port)
        except OSError as exc:
            if not (or_free and port and exc.errno in PORT_TAKEN):
                raise
            log.warning("listener port %s on %s is taken (%s): a free one is used instead", port, host, exc)
            return self.server.start(host, 0)

    @property
    def port(self) -> int | None:
        """The port it listens on while running."""
        return self.server.address[1] if self.server.running else None

    def stop(self) -> None:
        with self._lock:
            self.server.stop()
            self.app.state.writer.close()

    @property
    def base_url(self) -> str | None:
        return self.server.base_url if self.server.running else None

    def state(self) -> dict[str, Any]:
        if self.server.running:
            host = self.server.address[0]
            exposed = host not in ("127.0.0.1", "::1", "localhost")
            return {"state": "running", "url": self.server.base_url, "exposed": exposed, "error": None}
        return {"state": "error" if self.error else "stopped", "url": None, "exposed": False, "error": self.error}
