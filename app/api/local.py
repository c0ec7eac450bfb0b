"""The optional local HTTP API: the contract's operations on /api/v1/... for a point of sale on this PC.

FastAPI on uvicorn (`app.core.platform.http.asgi_server`), in a background thread of whichever process starts it:
the app, or `yupana serve` alone. It only binds loopback addresses and every operation needs
`Authorization: Bearer <token>` (`app.core.platform.api_token`).

A thin layer. The routes come from the engine's `OPERATIONS` table and the contract's models, so
`/openapi.json` is generated from the same definitions the engine validates with. Each route is a
small ASGI function (no FastAPI body parsing or validation: `Engine.call` is the one place that
turns a request into an envelope) that checks the token, the method's content type and the body
size, then runs `Engine.call` in a bounded pool of threads so the event loop never waits on the
engine. Everything a client can send, including requests for nothing, gets the error envelope.

For speed (bench/api.py, docs/architecture.md «La API HTTP local»): a lookup the registry cache
answered is kept encoded in memory (`LookupMemory`) and sent again from the event loop once a look
at the database, shared by the requests waiting for it, shows nothing changed; operations 1 and 2,
which compute and write locally, share group commits (`GroupCommit`, issue 33): the requests that
arrive together run one after another on the group's writer thread, each in a savepoint of one
transaction, and are answered once that transaction's one commit (durable: one sync for the whole
group) is on disk; a request that fails is rolled back alone. Envelopes are encoded off the event
loop, by pydantic's encoder.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import typing
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import pydantic_core
from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.routing import APIRoute
from pydantic import BaseModel, create_model
from pydantic.json_schema import models_json_schema
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from app import __version__
from app.core.api import (
    HTTP_STATUS,
    MAX_BODY_BYTES,
    OPERATIONS,
    AsgiServerThread,
    CeRecord,
    ChatSendRequest,
    ChatSendResult,
    ChatWebhookRequest,
    ChatWebhookResult,
    ContractModel,
    Engine,
    EnviarRequest,
    EnviarResult,
    ErrorCode,
    FirmarRequest,
    FirmarResult,
    GenerarXmlRequest,
    GenerarXmlResult,
    GroupCommitHandle,
    Invoicing,
    Lookups,
    Messaging,
    Operation,
    PlacaRecord,
    RucRecord,
    Undo,
    ValidarRequest,
    ValidarResult,
    YupanaError,
    checked_setting,
    events,
    hash_matches,
    registry_now,
    token_hash,
)

log = logging.getLogger(__name__)

PREFIX = "/api/v1"
DEFAULT_WORKERS = 8  # engine calls at once; a slow SUNAT submission holds one, lookups keep the others
# Operations that only compute and write locally run on the group commit's one writer thread: their work holds the
# interpreter's lock, so more threads add no speed, only hand-offs of it (on the quiet 2-core machine one thread
# answered operation 1 ~20 % faster than two or eight; docs/architecture.md), and the requests that arrive together
# share one commit and its sync. A burst of them neither fights the lookups and submissions for the interpreter nor
# holds the threads the lookups' looks (LookupMemory) need.
LOCAL_OPERATIONS = frozenset({"xml", "firmar"})
GROUP_MAX = 64  # requests in one group commit: the writer lock is held while the group's work runs
DEFAULT_MAX_CONNECTIONS = 256
BODY_TIMEOUT_S = 30.0  # for a whole request body, once its headers arrived
JSON_TYPES = ("application/json",)
TAGS = {"xml": "invoicing", "firmar": "invoicing", "enviar": "invoicing", "guia-enviar": "invoicing",
        "validar": "invoicing",
        "chat-send": "messaging", "chat-webhook": "messaging", "ruc": "lookup", "ce": "lookup", "placa": "lookup"}
# Each operation's summary in /openapi.json (the words it has always had there).
SUMMARIES = {"xml": "generar xml", "firmar": "firmar", "enviar": "enviar", "guia-enviar": "enviar guía de remisión",
             "validar": "consultar la validez de un comprobante en SUNAT",
             "chat-send": "chat send", "chat-webhook": "chat webhook", "ruc": "ruc", "ce": "ce", "placa": "placa"}
SECURITY_SCHEME = "bearerAuth"
MEMORY_ENTRIES = 4096  # lookup answers kept in memory (LookupMemory), the oldest dropped first
# They forget every remembered answer.
MEMORY_EVENTS = (events.SETTINGS_CHANGED, events.API_TOKEN_CHANGED, events.PADRON_IMPORTED)

# ------------------------------------------------------------------ answers

def _encode(envelope: dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON. pydantic's encoder writes the same bytes as `json.dumps(ensure_ascii=False)` about three
    times as fast, which counts for operation 1's answer (the whole XML, escaped). A string UTF-8 cannot carry (a
    lone surrogate), should one ever reach an answer, is written escaped instead of failing."""
    try:
        return pydantic_core.to_json(envelope, fallback=str)
    except pydantic_core.PydanticSerializationError:
        return json.dumps(envelope, ensure_ascii=True, separators=(",", ":"), default=str).encode("ascii")


async def _send(send: Send, status: int, envelope: dict[str, Any],
                extra_headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    await _send_encoded(send, status, _encode(envelope), extra_headers)


async def _send_encoded(send: Send, status: int, body: bytes,
                        extra_headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               *extra_headers]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _send_error(send: Send, error: YupanaError, *, close: bool = False,
                      extra_headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    headers = [*extra_headers, (b"connection", b"close")] if close else list(extra_headers)
    await _send(send, error.http_status, error.to_envelope(), headers)


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return value
    return None


def _unauthorized() -> YupanaError:
    return YupanaError(ErrorCode.UNAUTHORIZED,
                       "Falta el token de la API local o no es válido (cabecera Authorization: Bearer …). "
                       "Se ve en Ajustes → API local o con «yupana serve --show-token».")


def _too_large() -> YupanaError:
    return YupanaError(ErrorCode.PAYLOAD_TOO_LARGE,
                       f"La solicitud supera el tamaño máximo de {MAX_BODY_BYTES // (1024 * 1024)} MiB.")


# ------------------------------------------------------------------ the server

class LocalApi:
    """The API server in a background thread; `start()` returns its base URL (without /api/v1)."""

    def __init__(self, engine: Engine, host: str | None = None, port: int | None = None, *,
                 workers: int = DEFAULT_WORKERS, max_connections: int = DEFAULT_MAX_CONNECTIONS,
                 **server_options: Any) -> None:
        self.engine = engine
        # The settings' own checks (app.core.platform.settings): what `config set` refuses is refused here too.
        self.host = checked_setting("api_host", host or engine.admin.config_get("api_host"))
        self.port = int(checked_setting("api_port", engine.admin.config_get("api_port") if port is None else str(port)))
        self._token_hash = token_hash(engine.admin.api_token())  # creates it on first use
        self._subscription = engine.admin.subscribe(self._on_event)
        self._workers = workers
        self._executor: ThreadPoolExecutor | None = None
        self.commits: GroupCommitHandle = engine.admin.group_commit("local-api-writer", max_batch=GROUP_MAX)
        self.memory = LookupMemory(self)
        self.app = build_app(self)
        self._server = AsgiServerThread("local-api", fast_dispatch(self.app, self.engine), limit_concurrency=max_connections,
                                        **server_options)

    @property
    def token(self) -> str:
        return self.engine.admin.api_token()

    @property
    def base_url(self) -> str:
        return self._server.base_url

    @property
    def running(self) -> bool:
        return self._server.running

    def start(self) -> str:
        if self._server.running:
            return self.base_url
        self._executor = ThreadPoolExecutor(self._workers, thread_name_prefix="local-api-worker")
        try:
            self._server.start(self.host, self.port)
        except OSError as exc:
            self._executor.shutdown(wait=False)
            reason = exc.strerror or str(exc)
            raise YupanaError(ErrorCode.CONFLICT,
                              f"No se pudo abrir la API local en {self.host}:{self.port}: {reason}.") from None
        self.engine.admin.on_close(self.stop)
        log.info("local API listening on %s", self.base_url)
        return self.base_url

    def stop(self) -> None:
        self._server.stop()
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
        self.commits.close()
        self._subscription.cancel()

    # -------------------------------------------------------------- used by the routes

    def _on_event(self, name: str, _payload: events.Event) -> None:
        if name == events.API_TOKEN_CHANGED:
            self._token_hash = self.engine.admin.token_state().token_hash or b""
        if name in MEMORY_EVENTS:
            self.memory.forget()

    def submit(self, function: Callable[..., Any], *args: Any) -> asyncio.Future:
        """Blocking engine work, in the pool: the event loop keeps serving other connections meanwhile."""
        if self._executor is None:
            raise RuntimeError("the local API is not running")
        return asyncio.get_running_loop().run_in_executor(self._executor, function, *args)

    async def run(self, function: Callable[..., Any], *args: Any) -> Any:
        return await self.submit(function, *args)

    async def grouped(self, token: str, operation: str, body: bytes | None) -> tuple[int, bytes, Remembered | None]:
        """`call` in the writer's next group commit: answered once the commit that holds it is done (on disk:
        operation 1 asks for a durable one). Its events are told after that commit; a failed request leaves nothing
        behind (its savepoint is rolled back) and answers its error."""
        answered = await self.commits.run(lambda: self._call_in_group(token, operation, body), _release_events)
        return answered[0]

    def _call_in_group(self, token: str, operation: str, body: bytes | None) -> tuple[tuple[int, bytes, None], Any]:
        """On the writer, inside the request's savepoint: `call` with the engine's events held for the commit."""
        with self.engine.admin.held_events() as held:
            status, encoded, _kept = self.call(token, operation, body, None)
        if status != 200:
            raise Undo(((status, encoded, None), None))  # whatever it wrote is rolled back; its events dropped
        return (status, encoded, None), held

    async def authorized(self, scope: Scope) -> str:
        """The presented token when it is the API's; else a 401 YupanaError.

        Checked twice: here against the hash kept in memory (wrong tokens are turned away before their body is
        read), and again in the pool against the database (`call`), where a rotation by another process (the
        settings window, `yupana serve --new-token`) shows at once."""
        header = _header(scope, b"authorization") or b""
        scheme, _, raw = header.partition(b" ")
        token = raw.strip().decode("latin-1")
        if scheme.lower() != b"bearer" or not token:
            raise _unauthorized()
        if not hash_matches(token, self._token_hash):
            if not await self.run(self.engine.admin.api_token_matches, token):
                raise _unauthorized()
            self._token_hash = token_hash(token)  # rotated elsewhere: remember the new one
        return token

    def call(self, token: str, operation: str, body: bytes | None,
             numero: str | None) -> tuple[int, bytes, Remembered | None]:
        """In the pool: the token against the database, then `Engine.call`; the status, the encoded envelope and,
        for a lookup answered from the registry cache, what `LookupMemory` may keep of it. (`Engine.call` runs the
        operation inside steady reads: settings, token, company, other writers checked once.)"""
        if not self.engine.admin.api_token_matches(token):
            error = _unauthorized()
            return error.http_status, _encode(error.to_envelope()), None
        generation = self.memory.generation() if numero is not None else None  # read before the answer is
        status, envelope = self.engine.call(operation, body, numero)
        encoded = _encode(envelope)
        kept = None if generation is None else self.memory.rememberable(operation, status, envelope, encoded,
                                                                        generation)
        return status, encoded, kept


def _release_events(answered: tuple[Any, Any]) -> None:
    """After a group's commit: tell the events a request held (`LocalApi._call_in_group`)."""
    held = answered[1]
    if held is not None:
        held.release()


# ------------------------------------------------------------------ lookups answered from memory

@dataclass(frozen=True, slots=True)
class Remembered:
    body: bytes  # the success envelope, encoded
    fresh_until: float  # registry_now() seconds: when the registry cache entry it came from stops being fresh
    generation: tuple[int, int]  # LookupMemory.generation() before the answer was read from the database


class _Look:
    """One look at the database in the pool, shared by the answers from memory that arrived before it started."""

    __slots__ = ("started", "future")

    def __init__(self) -> None:
        self.started = False
        self.future: asyncio.Future | None = None


class LookupMemory:
    """Lookup answers that came from the registry cache (operations 6-8), kept encoded and sent from the event loop.

    An answer from memory is never older than the database. Each waits for a look at the database that started after
    its request arrived (in the pool, like every database read): has anything been committed since the answer was
    read, and what is the token's hash now (`Administration.token_state`). The first is the database's change counter
    (SQLite's `data_version` on a connection that never writes), so any commit by any connection, of this process or
    another, changes it. Requests that arrive before the next look starts share
    it, so on busy connections one trip to the pool answers many requests instead of one each, and the engine's
    threads do not fight the event loop for the interpreter. An answer is also dropped when its cache entry stops
    being fresh (`registry_now()`), when this process changes settings, the token or the register (MEMORY_EVENTS),
    and the oldest past MEMORY_ENTRIES. Anything else, a miss, a stale generation or a token that does not match,
    goes the whole way: `Engine.call` in the pool."""

    def __init__(self, api: LocalApi) -> None:
        self._api = api
        self._entries: dict[tuple[str, str], Remembered] = {}
        self._look: _Look | None = None
        self._forgotten = 0

    def generation(self) -> tuple[int, int]:
        """In the pool: the same until anything is committed to the database or `forget()` is called."""
        forgotten = self._forgotten
        return forgotten, self._api.engine.admin.change_counter()

    def forget(self) -> None:
        self._forgotten += 1

    def rememberable(self, operation: str, status: int, envelope: dict[str, Any], body: bytes,
                     generation: tuple[int, int]) -> Remembered | None:
        """In the pool, after `Engine.call`: what may be kept of a lookup's answer (only a fresh cache entry's)."""
        data = envelope.get("data") or {}
        if status != 200 or data.get("fuente") != "cache" or data.get("desactualizado"):
            return None
        until = self._api.engine.lookups.fresh_until(operation, data[operation])
        return None if until is None else Remembered(body, until, generation)

    def keep(self, operation: str, numero: str, entry: Remembered) -> None:
        """On the event loop."""
        if len(self._entries) >= MEMORY_ENTRIES:
            self._entries.pop(next(iter(self._entries)), None)
        self._entries[(operation, numero)] = entry

    async def answer(self, operation: str, numero: str, token: str) -> bytes | None:
        """On the event loop: the encoded envelope when memory may answer, else None."""
        key = (operation, numero)
        entry = self._entries.get(key)
        if entry is None:
            return None
        if registry_now() >= entry.fresh_until:
            self._entries.pop(key, None)
            return None
        look = self._look
        if look is None or look.started:  # one that started already may have read the database before we arrived
            look = self._look = _Look()
            look.future = self._api.submit(self._look_at_database, look)
        assert look.future is not None  # set with the look, before anyone awaits it
        generation, stored_hash = await asyncio.shield(look.future)
        if stored_hash is None or not hmac.compare_digest(token_hash(token), stored_hash):
            return None
        if generation != entry.generation:
            if self._entries.get(key) is entry:
                del self._entries[key]
            return None
        return entry.body

    def _look_at_database(self, look: _Look) -> tuple[tuple[int, int], bytes | None]:
        look.started = True  # before reading: whoever joins from now on waits for the next look
        forgotten = self._forgotten  # read before the database, as generation() does
        state = self._api.engine.admin.token_state()
        return (forgotten, state.change_counter), state.token_hash


# ------------------------------------------------------------------ the routes

async def _read_body(receive: Receive, declared: int | None) -> bytes:
    """The whole body within BODY_TIMEOUT_S, refused past MAX_BODY_BYTES (also when it comes chunked, with no
    Content-Length). The time limit is for the whole body: a client trickling a byte now and then cannot hold
    a connection for ever."""
    if declared is not None and declared > MAX_BODY_BYTES:
        raise _too_large()
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(BODY_TIMEOUT_S):  # one timer for the whole body (not a task per chunk)
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise ConnectionResetError
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise _too_large()
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except TimeoutError:
        raise YupanaError(ErrorCode.REQUEST_TIMEOUT,
                          f"El cuerpo de la solicitud no llegó completo en {BODY_TIMEOUT_S:g} s.") from None


def _check_content_type(scope: Scope) -> None:
    """Bodies are JSON (the contract says so); a form or text is refused before it is read."""
    value = _header(scope, b"content-type")
    if value is None:
        return  # many small clients leave it out; the body must still parse as JSON
    media = value.split(b";", 1)[0].strip().lower().decode("latin-1")
    if media not in JSON_TYPES and not media.endswith("+json"):
        raise YupanaError(ErrorCode.UNSUPPORTED_MEDIA_TYPE,
                          f"El tipo de contenido «{media}» no se admite: envíe JSON con la cabecera "
                          "Content-Type: application/json.")


def _declared_length(scope: Scope) -> int | None:
    value = _header(scope, b"content-length")
    return int(value) if value is not None else None  # the HTTP parser already refused anything but digits


def operation_asgi(api: LocalApi, op: Operation) -> ASGIApp:
    """One contract operation as a small ASGI app: token, content type, body size, then `Engine.call` in the pool."""
    has_body = op.request is not None
    local = op.name in LOCAL_OPERATIONS

    async def handle(scope: Scope, receive: Receive, send: Send):
        close = False
        try:
            token = await api.authorized(scope)
            body = numero = None
            if has_body:
                _check_content_type(scope)
                try:
                    body = await _read_body(receive, _declared_length(scope))
                except YupanaError:
                    close = True  # the rest of the body is not read: the connection cannot carry another request
                    raise
            else:
                numero = scope["path_params"]["numero"]
                remembered = await api.memory.answer(op.name, numero, token)
                if remembered is not None:
                    await _send_encoded(send, 200, remembered)
                    return
            if local:
                status, encoded, kept = await api.grouped(token, op.name, body)
            else:
                status, encoded, kept = await api.run(api.call, token, op.name, body, numero)
        except YupanaError as exc:
            await _send_error(send, exc, close=close)
            return
        except ConnectionResetError:
            return  # the client went away before its body arrived
        if kept is not None and numero is not None:
            api.memory.keep(op.name, numero, kept)
        await _send_encoded(send, status, encoded)

    return handle


def health_asgi(api: LocalApi) -> ASGIApp:
    def data() -> dict[str, Any]:
        return {"version": __version__, "environment": api.engine.admin.config_get("environment"),
                "listener": api.engine.messaging.listener_status()}

    async def handle(scope: Scope, receive: Receive, send: Send):
        await _send(send, 200, {"success": True, "data": await api.run(data)})

    return handle


def docs_asgi(api: LocalApi) -> ASGIApp:
    async def handle(scope: Scope, receive: Receive, send: Send):
        if await api.run(api.engine.admin.config_get, "api_docs") != "si":
            await _send_error(send, YupanaError(ErrorCode.NOT_FOUND, "La página de documentación está desactivada "
                                                "(configuración api_docs). La descripción de la API está en "
                                                "/openapi.json."))
            return
        page = get_swagger_ui_html(openapi_url="/openapi.json", title="Yupana: API local")
        await page(scope, receive, send)

    return handle


class _AsgiRoute(APIRoute):
    """An APIRoute that documents its endpoint in the OpenAPI but serves requests with a small ASGI function."""

    def __init__(self, path: str, endpoint: Callable[..., Any], *, asgi: ASGIApp, **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        self.app = asgi


def fast_dispatch(app: FastAPI, engine: Engine) -> ASGIApp:
    """The FastAPI app's own operation routes, found by a dict look-up instead of its router and middleware.

    Same routes (taken from `app.routes`), same handlers: a request for one of them with its method goes
    straight to it; anything else (another method, an unknown path, /openapi.json, /docs) goes through
    FastAPI, which answers it or gives the 404/405 envelope. Saves about a third of the server's work per
    request on cached look-ups (bench/api.py)."""
    exact: dict[str, tuple[set[str], ASGIApp]] = {}
    by_prefix: dict[str, tuple[set[str], str, ASGIApp]] = {}
    for route in app.routes:
        if not isinstance(route, _AsgiRoute):
            continue
        if "{" in route.path:
            prefix, _, rest = route.path.partition("{")
            by_prefix[prefix] = (route.methods or set(), rest.rstrip("}"), route.app)
        else:
            exact[route.path] = (route.methods or set(), route.app)
    lookup_root = PREFIX + "/"

    async def dispatch(scope: Scope, receive: Receive, send: Send):
        if scope["type"] == "http":
            path = scope["path"]
            found = exact.get(path)
            handler = None
            if found is not None:
                handler = found[1] if scope["method"] in found[0] else None
            elif path.startswith(lookup_root):
                head, _, numero = path.rpartition("/")
                match = by_prefix.get(head + "/")
                if match is not None and numero and scope["method"] in match[0]:
                    scope["path_params"] = {match[1]: numero}
                    handler = match[2]
            if handler is not None:
                try:
                    await handler(scope, receive, send)
                except Exception:
                    log.exception("local API: unexpected error on %s %s", scope["method"], path)
                    error = YupanaError(ErrorCode.INTERNAL, "Error interno de Yupana. Los detalles están en el "
                                                            f"registro: {engine.admin.log_file()}")
                    await _send_error(send, error, close=True)
                return
        await app(scope, receive, send)

    return dispatch


# ------------------------------------------------------------------ the documentation models

class ErrorDetailModel(BaseModel):
    field: str | None
    message: str
    sunat_code: str | None = None


class ErrorBody(BaseModel):
    code: ErrorCode
    message: str
    details: list[ErrorDetailModel]


class ErrorEnvelope(BaseModel):
    """Every failure: `{"success": false, "error": {code, message, details}}` (docs/contract.md)."""

    success: Literal[False]
    error: ErrorBody


class Health(BaseModel):
    version: str
    environment: Literal["sandbox", "beta", "produccion"]
    listener: str  # the webhook listener's state, e.g. «detenido», «escuchando en http://127.0.0.1:…»


def success_model(result: type[BaseModel]) -> type[BaseModel]:
    return create_model(f"{result.__name__}Envelope", success=(Literal[True], ...), data=(result, ...))


# The group services that run the operations (Operation.group), and the contract's models their annotations name.
GROUPS: dict[str, type] = {"invoicing": Invoicing, "messaging": Messaging, "lookups": Lookups}
CONTRACT_MODELS: dict[str, type[ContractModel]] = {model.__name__: model for model in (
    GenerarXmlRequest, GenerarXmlResult, FirmarRequest, FirmarResult, EnviarRequest, EnviarResult, ChatSendRequest,
    ChatSendResult, ChatWebhookRequest, ChatWebhookResult, RucRecord, CeRecord, PlacaRecord, ValidarRequest,
    ValidarResult)}


def result_model(op: Operation) -> type[ContractModel]:
    """What an operation answers: its group service's method's return annotation (the Protocol's)."""
    return typing.get_type_hints(getattr(GROUPS[op.group], op.handler), localns=CONTRACT_MODELS)["return"]


def _error_statuses(op: Operation | None) -> list[int]:
    """Every status an operation's errors can have (each code has one: app.core.errors.HTTP_STATUS)."""
    statuses = set(HTTP_STATUS.values())
    if op is not None and op.request is None:
        statuses -= {413, 415, 408}
    return sorted(statuses)


def _responses(op: Operation | None) -> dict[int | str, dict[str, Any]]:
    return {status: {"model": ErrorEnvelope, "description": "Error: sobre de error (docs/contract.md)."}
            for status in _error_statuses(op)}


def _endpoint(op: Operation) -> Callable[..., Any]:
    """A signature for the documentation only (the path parameter); requests never reach it."""
    if op.request is None:
        def lookup(numero: str) -> None:  # noqa: ARG001
            raise AssertionError("served by operation_asgi")
        return lookup

    def operation() -> None:
        raise AssertionError("served by operation_asgi")
    return operation


def build_app(api: LocalApi) -> FastAPI:
    app = FastAPI(title="Yupana: API local", version=__version__, openapi_url="/openapi.json", docs_url=None,
                  redoc_url=None, redirect_slashes=False,
                  description="Las operaciones del contrato del servicio en este equipo. Cada operación necesita "
                              "la cabecera Authorization: Bearer TOKEN (Ajustes → API local).")
    app.router.redirect_slashes = False
    for op in OPERATIONS.values():
        extra: dict[str, Any] = {"security": [{SECURITY_SCHEME: []}]}
        if op.request is not None:
            extra["requestBody"] = {"required": True, "content": {"application/json": {
                "schema": {"$ref": f"#/components/schemas/{op.request.__name__}"}}}}
        app.router.routes.append(_AsgiRoute(
            op.path, _endpoint(op), asgi=operation_asgi(api, op), methods=[op.method], name=op.name,
            operation_id=op.name.replace("-", "_"), tags=[TAGS.get(op.name, "api")],
            response_model=success_model(result_model(op)), responses=_responses(op), openapi_extra=extra,
            summary=SUMMARIES[op.name], response_description="Éxito: sobre {success: true, data}."))
    app.router.routes.append(_AsgiRoute(
        f"{PREFIX}/health", lambda: None, asgi=health_asgi(api), methods=["GET"], name="health",
        operation_id="health", tags=["health"], response_model=success_model(Health),
        summary="Estado del servicio (sin token)", responses={}))
    app.router.routes.append(_AsgiRoute("/docs", lambda: None, asgi=docs_asgi(api), methods=["GET"],
                                        include_in_schema=False))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)  # the class it is registered for below
        return _error_response(request, exc)

    async def unexpected(request: Request, exc: Exception) -> Response:
        log.exception("local API: unexpected error on %s %s", request.method, request.url.path)
        return _response(YupanaError(ErrorCode.INTERNAL, "Error interno de Yupana. Los detalles están en el "
                                                         f"registro: {api.engine.admin.log_file()}"))

    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]  # FastAPI documents replacing it so
    return app


def _response(error: YupanaError, headers: dict[str, str] | None = None) -> Response:
    return Response(_encode(error.to_envelope()), status_code=error.http_status, media_type="application/json",
                    headers=headers)


def _error_response(request: Request, exc: StarletteHTTPException) -> Response:
    path = request.url.path
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        return _response(YupanaError(ErrorCode.METHOD_NOT_ALLOWED,
                                     f"El método {request.method} no está permitido en {path}; use {allowed}."),
                         headers={"Allow": allowed})
    if exc.status_code == 404:
        return _response(YupanaError(ErrorCode.NOT_FOUND, f"No existe la ruta {path}. Las rutas están en "
                                                          "/openapi.json y en docs/contract.md."))
    code = next((c for c, s in HTTP_STATUS.items() if s == exc.status_code), ErrorCode.INVALID_INPUT)
    return _response(YupanaError(code, str(exc.detail)))


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, plus the request models (validation mode: amounts as numbers or strings) and the
    Bearer scheme; without FastAPI's 422, which this API never answers (a bad request is a 400 envelope)."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    from fastapi.openapi.utils import get_openapi

    document = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    requests: list[tuple[type[BaseModel], Literal["validation", "serialization"]]] = [
        (op.request, "validation") for op in OPERATIONS.values() if op.request is not None]
    _, definitions = models_json_schema(requests, ref_template="#/components/schemas/{model}")
    for name, schema in definitions.get("$defs", {}).items():
        schemas.setdefault(name, schema)
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    for path in document["paths"].values():
        for operation in path.values():
            operation.get("responses", {}).pop("422", None)
    components["securitySchemes"] = {SECURITY_SCHEME: {"type": "http", "scheme": "bearer"}}
    app.openapi_schema = document
    return document
