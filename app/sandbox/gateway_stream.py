"""The gateway sandbox's event stream, as Evolution API v2 serves it (src/api/integrations/event/websocket/
websocket.controller.ts, event.controller.ts, chat findMessages in channel.service.ts), on the sandbox's own address:

- Socket.IO at `/socket.io/` (python-socketio, threading mode, bridged from the sandbox's HTTP handler); a connection
  needs the `apikey` header (the global key or an instance's); namespace `/<instance>` gets that instance's events
  when its stream is on with them, `/` every instance's when `global_events` is set (WEBSOCKET_GLOBAL_EVENTS). It
  emits without buffering: what is emitted while nobody is connected is gone, as with Evolution.
- `enabled = False` plays a server without WEBSOCKET_ENABLED: no `/socket.io/` (404) and `POST /websocket/set`
  answers 201 with an empty body.
- `POST /websocket/set/{instance}` `{websocket: {enabled, events}}`: events outside `known_events` are refused with
  Evolution's 400 (its JSON-schema message), an empty list means all of them.
- `POST /chat/findMessages/{instance}` `{where: {messageTimestamp: {gte, lte}}, page, offset}`: the messages the
  sandbox emitted or sent, newest first, in Evolution's `{messages: {total, pages, currentPage, records}}`.
"""

from __future__ import annotations

import logging
import math
import threading
from datetime import datetime
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Protocol

import engineio.async_drivers.threading  # type: ignore[import-untyped]  # noqa: F401  # engineio loads its driver by name: named here for the Windows bundle
import socketio  # type: ignore[import-untyped]  # python-socketio ships no type information

if TYPE_CHECKING:
    from .base import QuietHandler

log = logging.getLogger(__name__)

# Evolution's EventController.events: the names websocket/set accepts.
EVOLUTION_EVENTS = (
    "APPLICATION_STARTUP", "QRCODE_UPDATED", "MESSAGES_SET", "MESSAGES_UPSERT", "MESSAGES_EDITED", "MESSAGES_UPDATE",
    "MESSAGES_DELETE", "SEND_MESSAGE", "CONTACTS_SET", "CONTACTS_UPSERT", "CONTACTS_UPDATE", "PRESENCE_UPDATE",
    "CHATS_SET", "CHATS_UPSERT", "CHATS_UPDATE", "CHATS_DELETE", "GROUPS_UPSERT", "GROUP_UPDATE",
    "GROUP_PARTICIPANTS_UPDATE", "CONNECTION_UPDATE", "LABELS_EDIT", "LABELS_ASSOCIATION", "CALL", "TYPEBOT_START",
    "TYPEBOT_CHANGE_STATUS", "REMOVE_INSTANCE", "LOGOUT_INSTANCE", "INSTANCE_CREATE", "INSTANCE_DELETE",
    "STATUS_INSTANCE",
)
ACTIONS = ("websocket/set", "websocket/find", "chat/findMessages")  # the REST calls answered here
SOCKETIO_PATH = "/socket.io/"


class _Keys(Protocol):
    """What the stream asks of its gateway sandbox (app.sandbox.gateway, which mounts it)."""

    instances: dict[str, dict[str, Any]]

    def authorised(self, key: str, instance: str) -> bool: ...


class GatewayStream:
    """The stream and its REST calls for one gateway sandbox."""

    def __init__(self, sandbox: _Keys) -> None:
        self.enabled = True  # WEBSOCKET_ENABLED
        self.global_events = False  # WEBSOCKET_GLOBAL_EVENTS
        self.known_events = list(EVOLUTION_EVENTS)
        self.finds = 0  # findMessages calls answered (tests)
        self._sandbox = sandbox
        self._lock = threading.Lock()
        self._settings: dict[str, dict[str, Any]] = {}  # instance → {enabled, events}
        self._stored: dict[str, list[dict[str, Any]]] = {}  # instance → its messages, as findMessages lists them
        self._connected: dict[str, set[str]] = {}  # namespace → sids (tests wait on them)
        self._changed = threading.Condition(self._lock)
        self.server = socketio.Server(async_mode="threading", namespaces="*", cors_allowed_origins="*",
                                      logger=False, engineio_logger=False)
        self.server.on("connect", self._on_connect, namespace="*")
        self.server.on("disconnect", self._on_disconnect, namespace="*")
        self.app = socketio.WSGIApp(self.server)

    # ------------------------------------------------------------ connections

    def _on_connect(self, namespace: str, sid: str, environ: dict[str, Any], _auth: Any = None) -> bool:
        query = dict(part.partition("=")[::2] for part in str(environ.get("QUERY_STRING") or "").split("&"))
        key = str(environ.get("HTTP_APIKEY") or query.get("apikey") or "")
        if not self._key_known(key):
            return False
        with self._changed:
            self._connected.setdefault(namespace, set()).add(sid)
            self._changed.notify_all()
        return True

    def _on_disconnect(self, namespace: str, sid: str, *_reason: Any) -> None:
        with self._changed:
            self._connected.get(namespace, set()).discard(sid)
            self._changed.notify_all()

    def _key_known(self, key: str) -> bool:
        """Evolution's allowRequest: the global key or any instance's token opens any namespace."""
        sandbox = self._sandbox
        return sandbox.authorised(key, "") or any(sandbox.authorised(key, name) for name in list(sandbox.instances))

    def clients(self, namespace: str) -> int:
        with self._lock:
            return len(self._connected.get(namespace, ()))

    def wait_clients(self, namespace: str, count: int, timeout: float = 10.0) -> bool:
        """Block until `count` clients are connected to `namespace` (tests wait on this, never on a sleep)."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self._connected.get(namespace, ())) == count, timeout)

    def serve(self, handler: QuietHandler) -> bool:
        """Answer a Socket.IO request (True), or leave the request to the REST routes (False). A websocket keeps the
        handler's thread until it closes."""
        if not handler.path.startswith(SOCKETIO_PATH):
            return False
        path, _, query = handler.path.partition("?")
        if not self.enabled:  # no Socket.IO attached: Express's own 404 for an unknown path
            handler.reply(HTTPStatus.NOT_FOUND, f"Cannot {handler.command} {path}".encode(), "text/html; charset=utf-8")
            return True
        host, port = handler.connection.getsockname()[:2]
        environ: dict[str, Any] = {
            "REQUEST_METHOD": handler.command, "PATH_INFO": path, "QUERY_STRING": query, "SCRIPT_NAME": "",
            "SERVER_NAME": str(host), "SERVER_PORT": str(port),
            "SERVER_PROTOCOL": handler.request_version, "REMOTE_ADDR": handler.client_address[0],
            "CONTENT_TYPE": handler.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": handler.headers.get("Content-Length", ""),
            "wsgi.input": handler.rfile, "wsgi.url_scheme": "http", "wsgi.errors": _NoErrors(),
            "werkzeug.socket": handler.connection,  # where simple-websocket finds the socket to upgrade
        }
        for name, value in handler.headers.items():
            environ["HTTP_" + name.upper().replace("-", "_")] = value
        answer: list[Any] = []
        try:
            body = self.app(environ, lambda status, headers, _exc=None: answer.extend((status, headers)))
        except ConnectionError:  # the websocket ended (simple-websocket's way of saying so in this mode)
            handler.close_connection = True
            return True
        status, headers = answer
        content = b"".join(body)
        handler.send_response(int(status.split()[0]))
        for name, value in headers:
            if name.lower() != "content-length":
                handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(content)))  # engineio leaves it out; HTTP/1.1 keeps alive
        handler.end_headers()
        handler.wfile.write(content)
        return True

    # ------------------------------------------------------------ REST

    def answer(self, action: str, instance: str, body: dict[str, Any]) -> tuple[int, Any]:
        """(status, JSON body) of websocket/set, websocket/find or chat/findMessages."""
        if action == "websocket/set":
            return self.set(instance, body)
        if action == "websocket/find":
            with self._lock:
                return HTTPStatus.OK, self._settings.get(instance) if self.enabled else None
        return HTTPStatus.OK, self.find_messages(instance, body)

    def set(self, instance: str, body: dict[str, Any]) -> tuple[int, Any]:
        if not self.enabled:
            return HTTPStatus.CREATED, None  # Evolution's controller returns nothing: an empty 201
        websocket = body.get("websocket")
        if not isinstance(websocket, dict) or not isinstance(websocket.get("enabled"), bool):
            return _bad_request(['websocket requires property "enabled"'])
        events = websocket.get("events") or []
        unknown = [i for i, name in enumerate(events) if name not in self.known_events]
        if unknown:
            allowed = ",".join(self.known_events)
            return _bad_request([f"websocket.events[{i}] is not one of enum values: {allowed}" for i in unknown])
        events = list(events) if websocket["enabled"] else []
        if websocket["enabled"] and not events:
            events = list(self.known_events)
        record = {"id": f"ws-{instance}", "enabled": websocket["enabled"], "events": events, "instanceId": instance}
        with self._lock:
            self._settings[instance] = record
        return HTTPStatus.CREATED, record

    def find_messages(self, instance: str, body: dict[str, Any]) -> dict[str, Any]:
        where = body.get("where")
        stamp = where.get("messageTimestamp") if isinstance(where, dict) else None
        low, high = (_epoch(stamp.get("gte")), _epoch(stamp.get("lte"))) if isinstance(stamp, dict) else (None, None)
        size = int(body.get("offset") or 50)
        page = int(body.get("page") or 1)
        with self._lock:
            self.finds += 1
            records = list(self._stored.get(instance, []))
        if low is not None and high is not None:  # Evolution filters only with both
            records = [r for r in records if low <= r["messageTimestamp"] <= high]
        records.sort(key=lambda r: r["messageTimestamp"], reverse=True)
        pages = math.ceil(len(records) / size)
        return {"messages": {"total": len(records), "pages": pages, "currentPage": page,
                             "records": records[size * (page - 1):size * page]}}

    # ------------------------------------------------------------ what the sandbox emits

    def keep(self, instance: str, data: dict[str, Any]) -> None:
        """Store a message as Evolution's database does (what findMessages answers)."""
        record: dict[str, Any] = {"id": f"msg-{data['key']['id']}", **{k: data.get(k) for k in (
            "key", "pushName", "messageType", "message", "messageTimestamp", "instanceId", "source")},
            "contextInfo": None, "MessageUpdate": []}
        with self._lock:
            self._stored.setdefault(instance, []).append(record)

    def emit(self, instance: str, webhook_body: dict[str, Any]) -> bool:
        """Stream one event (the webhook's body without its `destination`) where Evolution would; whether the
        instance's stream (or the global one) is on. Nobody connected: the event is dropped."""
        if not self.enabled:
            return False
        event = str(webhook_body["event"])
        message = {k: v for k, v in webhook_body.items() if k != "destination"}
        with self._lock:
            settings = self._settings.get(instance) or {}
        streamed = False
        if self.global_events:
            self.server.emit(event, message, namespace="/")
            streamed = True
        if settings.get("enabled") and event.replace(".", "_").upper() in settings.get("events", ()):
            self.server.emit(event, message, namespace="/" + instance)
            streamed = True
        return streamed

    def streaming(self, instance: str) -> bool:
        with self._lock:
            return bool(self.enabled and (self.global_events or (self._settings.get(instance) or {}).get("enabled")))

    def stop(self) -> None:
        """Drop every connection (a stopped Evolution)."""
        for socket in list(self.server.eio.sockets.values()):
            try:  # not waiting for the writer: engineio's own disconnect() may wait for ever on a closing socket
                socket.close(wait=False)
            except Exception:  # a socket already closed by its client
                log.debug("closing a sandbox stream connection failed", exc_info=True)


def _bad_request(messages: list[str]) -> tuple[int, Any]:
    return HTTPStatus.BAD_REQUEST, {"status": 400, "error": "Bad Request", "response": {"message": messages}}


def _epoch(value: Any) -> int | None:
    """A findMessages bound as `new Date(value)` reads it: ISO text or milliseconds; None if absent or unreadable."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value // 1000)
    if isinstance(value, str) and value:
        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
        except ValueError:
            return None
    return None


class _NoErrors:
    def write(self, _text: str) -> None:
        pass

    def flush(self) -> None:
        pass
