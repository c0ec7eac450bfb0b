"""An Evolution API v2 stand-in on loopback: named instances that accept sends and, on command, post
webhooks to the registered URL in Evolution's exact shapes.

- `POST /instance/create` `{instanceName}` → `{instance, hash}` (the instance's apikey);
- `POST /message/sendText/{instance}` `{number, text}`, `POST /message/sendMedia/{instance}`
  `{number, mediatype, mimetype, media, fileName, caption}` → Evolution's `{key: {remoteJid, fromMe, id}, …}`;
- `POST /webhook/set/{instance}` `{webhook: {url, events, …}}` (v2.1+) or the flat v2.0 form;
- `GET /instance/connectionState/{instance}` → `{instance: {instanceName, state}}`;
- every call wants the `apikey` header: the global key (`GLOBAL_APIKEY`) or the instance's;
- Evolution's failures: 404 unknown instance, 400 `exists: false` for a number without WhatsApp
  (`UNREGISTERED`), 400 "Connection Closed" when the instance is disconnected, 401, and on demand 429/500;
- on command (`emit()` in-process, `POST /_control/emit` out of process, `yupana sandbox emit`): incoming
  messages, delivery and read updates, connection changes, `times` identical posts (duplicates), in
  any order the caller chooses (read before delivered…). Each post carries the instance's `apikey` in
  its body, as Evolution does;
- the event stream (Socket.IO), `POST /websocket/set/{instance}` and `POST /chat/findMessages/{instance}`:
  app.sandbox.gateway_stream (an emitted event is streamed too where Evolution would stream it).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import secrets
import threading
import uuid
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import unquote, urlsplit

import httpx

from app.core.api import process_owner
from app.core.sandbox_kit import clock, to_jid
from app.core.sandbox_kit import messaging_events as ev

from .base import QuietHandler, Sandbox
from .gateway_pairing import PairingPlay
from .gateway_stream import ACTIONS as STREAM_ACTIONS
from .gateway_stream import GatewayStream

if TYPE_CHECKING:
    from app.core.api import Engine

GLOBAL_APIKEY = "sandbox-evolution-global-key"
DEMO_INSTANCE = "demo"
UNREGISTERED = {"+51900000000"}  # numbers "without WhatsApp" in the sandbox
DEFAULT_SENDER = "+51987654321"
FAILURES = ("401", "429", "500")
_UPDATE_STATUS = {ev.MESSAGE_DELIVERED: "DELIVERY_ACK", ev.MESSAGE_READ: "READ"}


class GatewayHandler(QuietHandler):
    sandbox: GatewaySandbox

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self._route("POST")

    def _json(self, status: int, body: Any) -> None:
        self.reply(status, json.dumps(body, ensure_ascii=False).encode())

    def _error(self, status: int, messages: list[Any]) -> None:
        names = {400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
                 500: "Internal Server Error"}
        self._json(status, {"status": status, "error": names.get(status, "Error"), "response": {"message": messages}})

    def _route(self, method: str) -> None:
        if self.sandbox.stream.serve(self):  # Socket.IO (gateway_stream)
            return
        raw = self.read_body()
        path = urlsplit(self.path).path
        parts = [unquote(p) for p in path.strip("/").split("/")]
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            self._error(400, ["invalid JSON"])
            return
        if self.sandbox.pairing.handle(self, method, parts, body):  # create/connect by QR, Meta (gateway_pairing)
            return
        if parts[0] == "_control":
            self._control(parts[1:], body)
            return
        sandbox = self.sandbox
        instance = parts[-1] if len(parts) >= 2 else ""
        if not sandbox.authorised(self.headers.get("apikey", ""), instance):
            self._error(401, ["Unauthorized"])
            return
        failure = sandbox.take_failure()
        if failure:
            self._error(int(failure), [f"sandbox failure {failure}"])
            return
        if method == "POST" and parts == ["instance", "create"]:
            self._json(201, sandbox.create_instance(str(body.get("instanceName") or "")))
            return
        if instance not in sandbox.instances:
            self._error(404, [f'The "{instance}" instance does not exist'])
            return
        action = "/".join(parts[:-1])
        if method == "GET" and action == "instance/connectionState":
            self._json(200, {"instance": {"instanceName": instance, "state": sandbox.instances[instance]["state"]}})
        elif method == "POST" and action == "webhook/set":
            webhook = body.get("webhook")
            hook = webhook if isinstance(webhook, dict) else body
            self._json(201, sandbox.set_webhook(instance, str(hook.get("url") or ""), list(hook.get("events") or [])))
        elif method == "POST" and action in ("message/sendText", "message/sendMedia"):
            self._send(instance, action.endswith("Media"), body)
        elif action in STREAM_ACTIONS:
            status, answer = sandbox.stream.answer(action, instance, body)
            self.reply(status, b"") if answer is None else self._json(status, answer)  # Express's json(undefined)
        else:
            self._error(404, [f"Cannot {method} {path}"])

    def _send(self, instance: str, media: bool, body: dict[str, Any]) -> None:
        sandbox = self.sandbox
        number = "+" + str(body.get("number") or "").lstrip("+")
        if sandbox.instances[instance]["state"] != "open":
            self._error(400, ["Connection Closed"])
            return
        if number in UNREGISTERED:
            self._error(400, [{"jid": to_jid(number), "exists": False, "number": number.lstrip("+")}])
            return
        if media and not body.get("media"):
            self._error(400, ["media is required"])
            return
        self._json(201, sandbox.record_send(instance, number, body, media))

    def _control(self, parts: list[str], body: dict[str, Any]) -> None:
        sandbox = self.sandbox
        try:
            if parts == ["emit"]:
                statuses = sandbox.emit(str(body.get("event")), str(body.get("instance") or sandbox.instance_name),
                                        sender=body.get("from") or DEFAULT_SENDER, body=body.get("body") or "Hola",
                                        name=body.get("name") or "Cliente", message_id=body.get("message_id"),
                                        times=int(body.get("times") or 1))
                self._json(200, {"posted": statuses})
            elif parts == ["instance"]:
                self._json(201, sandbox.create_instance(str(body.get("name") or "")))
            elif parts == ["sent"]:
                self._json(200, {"sent": sandbox.sent_messages(body.get("instance"))})
            elif parts == ["fail"]:
                sandbox.fail_next(str(body.get("mode")), int(body.get("count") or 1))
                self._json(200, {"ok": True})
            else:
                self._error(404, ["unknown control"])
        except (KeyError, ValueError) as exc:
            self._error(400, [str(exc)])


class GatewaySandbox(Sandbox):
    """See the module's docstring. `sent` grows with every accepted send; `sent_event` is set on each."""

    name: ClassVar[str] = "gateway"
    handler = GatewayHandler

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host, port)
        self._lock = threading.Lock()
        self.instances: dict[str, dict[str, Any]] = {}
        self.instance_name = DEMO_INSTANCE  # the engine's sandbox instance, once configured (a desk's own name)
        self.sent: list[dict[str, Any]] = []
        self.sent_event = threading.Condition(self._lock)
        self._failures: list[str] = []
        self._client: httpx.Client | None = None
        self.stream = GatewayStream(self)
        self.pairing = PairingPlay(self)

    # ------------------------------------------------------------ instances and sends

    def create_instance(self, name: str, apikey: str | None = None, state: str = "open") -> dict[str, Any]:
        if not name:
            raise ValueError("instanceName is required")
        with self._lock:
            record = self.instances.setdefault(name, {"apikey": apikey or secrets.token_hex(16), "state": state,
                                                      "webhook": None, "events": [], "id": str(uuid.uuid4())})
        return {"instance": {"instanceName": name, "instanceId": record["id"], "status": "created"},
                "hash": record["apikey"]}

    def apikey(self, instance: str) -> str:
        return self.instances[instance]["apikey"]

    def authorised(self, key: str, instance: str) -> bool:
        if secrets.compare_digest(key.encode(), GLOBAL_APIKEY.encode()):
            return True
        record = self.instances.get(instance)
        if not record:
            return False
        return secrets.compare_digest(key.encode(), record["apikey"].encode())

    def set_webhook(self, instance: str, url: str, events: list[str]) -> dict[str, Any]:
        with self._lock:
            self.instances[instance]["webhook"] = url
            self.instances[instance]["events"] = events
        return {"id": str(uuid.uuid4()), "url": url, "enabled": True, "events": events}

    def webhook_of(self, instance: str) -> str | None:
        return self.instances[instance]["webhook"]

    def record_send(self, instance: str, number: str, body: dict[str, Any], media: bool) -> dict[str, Any]:
        gateway_id = "3EB0" + secrets.token_hex(8).upper()
        stamp = int(clock.timestamp())
        record = {"instance": instance, "id": gateway_id, "number": number, "text": body.get("caption" if media else
                                                                                              "text") or "",
                  "media": bool(media), "mediatype": body.get("mediatype"), "fileName": body.get("fileName"),
                  "media_size": len(str(body.get("media") or "")), "media_sha256": _digest(body.get("media")),
                  "timestamp": stamp}
        with self._lock:
            self.sent.append(record)
            self.sent_event.notify_all()
        kind = "documentMessage" if media else "conversation"
        answer = {"key": {"remoteJid": to_jid(number), "fromMe": True, "id": gateway_id}, "pushName": "",
                  "status": "PENDING", "message": {kind: record["text"]} if not media else {kind: {
                      "caption": record["text"], "fileName": body.get("fileName")}},
                  "messageType": kind, "messageTimestamp": stamp, "instanceId": self.instances[instance]["id"],
                  "source": "unknown"}
        self.stream.keep(instance, answer)  # Evolution keeps what it sends too (findMessages lists it, fromMe)
        return answer

    def sent_messages(self, instance: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(m) for m in self.sent if instance in (None, m["instance"])]

    def wait_sent(self, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Block until at least `count` sends were accepted (tests wait on this, never on a sleep)."""
        with self._lock:
            self.sent_event.wait_for(lambda: len(self.sent) >= count, timeout)
            return [dict(m) for m in self.sent]

    def fail_next(self, mode: str, count: int = 1) -> None:
        if mode not in FAILURES:
            raise ValueError(f"modo desconocido {mode!r}; válidos: {', '.join(FAILURES)}")
        with self._lock:
            self._failures += [mode] * count

    def take_failure(self) -> str | None:
        with self._lock:
            return self._failures.pop(0) if self._failures else None

    # ------------------------------------------------------------ webhooks on command

    def webhook_body(self, event: str, instance: str, *, sender: str = DEFAULT_SENDER, body: str = "Hola",
                     name: str = "Cliente", message_id: str | None = None) -> dict[str, Any]:
        """One Evolution webhook post for a contract event name."""
        record = self.instances[instance]
        now = clock.now()
        envelope = {"instance": instance, "destination": record["webhook"],
                    "date_time": now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z",
                    "sender": to_jid(DEFAULT_SENDER), "server_url": self.base_url, "apikey": record["apikey"]}
        if event == ev.MESSAGE_RECEIVED:
            data = {"key": {"remoteJid": to_jid(sender), "fromMe": False,
                            "id": message_id or "3EB0" + secrets.token_hex(8).upper()},
                    "pushName": name, "status": "DELIVERY_ACK", "message": {"conversation": body},
                    "messageType": "conversation", "messageTimestamp": int(now.timestamp()),
                    "instanceId": record["id"], "source": "android"}
            return {"event": "messages.upsert", **envelope, "data": data}
        if event in _UPDATE_STATUS:
            target = message_id or self._last_sent_id(instance)
            number = next((m["number"] for m in self.sent if m["id"] == target), sender)
            data = {"messageId": secrets.token_hex(12), "keyId": target, "remoteJid": to_jid(number), "fromMe": True,
                    "participant": None, "status": _UPDATE_STATUS[event], "instanceId": record["id"]}
            return {"event": "messages.update", **envelope, "data": data}
        if event in (ev.INSTANCE_CONNECTED, ev.INSTANCE_DISCONNECTED):
            state = "open" if event == ev.INSTANCE_CONNECTED else "close"
            record["state"] = state
            return {"event": "connection.update", **envelope,
                    "data": {"instance": instance, "state": state, "statusReason": 200 if state == "open" else 401}}
        raise ValueError(f"evento desconocido {event!r}; válidos: {', '.join(ev.CONTRACT_EVENTS)}")

    def _last_sent_id(self, instance: str) -> str:
        with self._lock:
            ids = [m["id"] for m in self.sent if m["instance"] == instance]
        if not ids:
            raise ValueError(f"la instancia {instance!r} no envió ningún mensaje todavía: indique --message-id")
        return ids[-1]

    def post(self, instance: str, body: dict[str, Any]) -> int:
        url = self.webhook_of(instance)
        if not url:
            raise ValueError(f"la instancia {instance!r} no tiene webhook registrado (POST /webhook/set)")
        if self._client is None:
            self._client = httpx.Client(timeout=10.0)
        try:
            return self._client.post(url, json=body).status_code
        except httpx.HTTPError:
            return 0  # Evolution logs and moves on when the webhook is down

    def emit(self, event: str, instance: str | None = None, *, sender: str = DEFAULT_SENDER, body: str = "Hola",
             name: str = "Cliente", message_id: str | None = None, times: int = 1) -> list[int]:
        """Post one event `times` times (identical posts: duplicates); returns the listener's statuses. `instance`:
        the configured sandbox instance by default."""
        instance = instance or self.instance_name
        if instance not in self.instances:
            raise KeyError(f"la instancia {instance!r} no existe en la pasarela de prueba")
        post = self.webhook_body(event, instance, sender=sender, body=body, name=name, message_id=message_id)
        if post["event"] == "messages.upsert":
            self.stream.keep(instance, post["data"])  # what findMessages answers later
        statuses = []
        for _ in range(max(1, times)):
            self.stream.emit(instance, post)  # streamed where Evolution would stream it, to whoever is connected
            if self.webhook_of(instance) or not self.stream.streaming(instance):
                statuses.append(self.post(instance, post))  # posted; neither way: «no tiene webhook registrado»
        return statuses

    def stop(self) -> None:
        self.stream.stop()
        super().stop()
        if self._client is not None:
            self._client.close()
            self._client = None

    def configure(self, engine: Engine) -> None:
        """An instance `demo` here and in the engine's sandbox environment while this sandbox runs (its process
        the owner, as for the sandbox addresses), with the gateway told to post to the engine's listener. On a
        database several desks share, the desk's own name (`engine.messaging.sandbox_instance_name()`)."""
        super().configure(engine)
        self.instance_name = name = engine.messaging.sandbox_instance_name()
        self.create_instance(name)
        engine.messaging.save_sandbox_instance(name, "evolution", self.base_url, {"apikey": self.apikey(name)},
                                               process_owner())

    def unconfigure(self, engine: Engine) -> None:
        """The engine forgets `demo` (and its credentials) before this sandbox stops; its messages stay."""
        engine.messaging.remove_sandbox_instance(engine.messaging.sandbox_instance_name(), process_owner())
        super().unconfigure(engine)


def _digest(media: Any) -> str | None:
    """SHA-256 of an attachment sent as base64 (what tests compare with the file); None for a URL or nothing."""
    if not media or str(media).startswith(("http://", "https://")):
        return None
    try:
        return hashlib.sha256(base64.b64decode(str(media), validate=True)).hexdigest()
    except (binascii.Error, ValueError):
        return None
