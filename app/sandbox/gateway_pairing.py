"""The gateway sandbox's pairing side: Evolution API v2 creating and connecting an instance by QR code, and Meta's
Graph API answering for a phone number, so «Conectar WhatsApp» can be tried without a server or a phone.

Evolution, as its source writes it (tag 2.3.6: src/api/controllers/instance.controller.ts, routes/instance.router.ts,
guards/auth.guard.ts and guards/instance.guard.ts, types/wa.types.ts):

- `POST /instance/create` `{instanceName, integration: "WHATSAPP-BAILEYS", qrcode: true[, number]}` with the global key
  → 201 `{instance: {instanceName, instanceId, integration, webhookWaBusiness, accessTokenWaBusiness, status},
  hash: "<token>", webhook, websocket, rabbitmq, nats, sqs, settings, qrcode: {pairingCode, code, base64, count}}`.
  (Without `qrcode: true` the older route of app/sandbox/gateway.py answers: an instance connected at once.)
- `GET /instance/connect/{instance}[?number=]` with the global key or the instance's token → the current
  `{pairingCode, code, base64, count}` while it waits for the phone (a closed instance starts waiting again), or
  `{instance: {instanceName, state: "open"}}` once paired.
- Guards in Evolution's order: unknown instance 404, a name in use on create 403, a wrong key 401; the error body
  `{status, error, response: {message}}`.
- `GET /instance/connectionState/{instance}` stays the older route's (`connecting` until the phone «scans»), but an
  unknown instance is a 404 here before any key is looked at, as in Evolution.

The phone, on command: `scan(instance)` (or `POST /_control/scan {instance}`) pairs it — the state turns `open` and,
when a webhook is registered, Evolution's `connection.update` is posted; `renew_qr(instance)` (`POST
/_control/renew_qr`) shows a new QR as Baileys does about every 20 s.

Meta (the Cloud API's phone number node; errors in the shape of Meta's «Graph API → Error handling» guide):
`GET /v{N}/{phone_number_id}[?fields=…]` with `Authorization: Bearer <token>` (or `access_token=`) → 200
`{display_phone_number, verified_name, quality_rating, id}`; a token it does not know → 401 code 190
(OAuthException); a number the token cannot read → 400 code 100, subcode 33 (GraphMethodException); no token → 400
code 104. The sandbox knows one number, META_PHONE_NUMBER_ID with META_TOKEN (`add_meta_number` adds others).
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import threading
import uuid
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from app.core.sandbox_kit import messaging_events as ev

from .base import QuietHandler

META_PHONE_NUMBER_ID = "106540352242922"
META_TOKEN = "sandbox-meta-token"
META_DISPLAY_NUMBER = "+51 987 654 321"
META_VERIFIED_NAME = "Bodega Yupana (sandbox)"
BAILEYS = "WHATSAPP-BAILEYS"
_GRAPH_VERSION = re.compile(r"^v\d+\.\d+$")
_SETTINGS = {"rejectCall": False, "msgCall": "", "groupsIgnore": False, "alwaysOnline": False, "readMessages": False,
             "readStatus": False, "syncFullHistory": False, "wavoipToken": ""}


class GatewayInstances(Protocol):
    """What this module uses of the gateway sandbox (app/sandbox/gateway.py, which mounts it: typed here by shape, so
    neither module imports the other's)."""

    instances: dict[str, dict[str, Any]]

    def authorised(self, key: str, instance: str) -> bool: ...
    def create_instance(self, name: str, apikey: str | None = None, state: str = "open") -> dict[str, Any]: ...
    def emit(self, event: str, instance: str) -> list[int]: ...


@dataclass
class _Qr:
    code: str
    image: str
    pairing_code: str | None
    count: int

    def wire(self) -> dict[str, Any]:
        """Evolution's `wa.QrCode`."""
        return {"pairingCode": self.pairing_code, "code": self.code, "base64": self.image, "count": self.count}


def _qr_text() -> str:
    """A QR text shaped like Baileys' (`ref,noise key,identity key,adv secret`): what a phone would scan."""
    keys = [base64.b64encode(secrets.token_bytes(n)).decode() for n in (32, 32, 32)]
    return "2@" + secrets.token_urlsafe(60) + "," + ",".join(keys)


def _png_data_uri(text: str) -> str:
    """Evolution's `base64`: the QR as a PNG data URI (qrcode.toDataURL with margin 3, scale 4, level H)."""
    import segno  # here: the sandbox starts without it until a QR is asked for

    return str(segno.make(text, error="h", micro=False).png_data_uri(scale=4, border=3))


class PairingPlay:
    """The pairing endpoints of one GatewaySandbox (its instances are the sandbox's)."""

    def __init__(self, sandbox: GatewayInstances) -> None:
        self.sandbox = sandbox
        self._lock = threading.Lock()
        self._qrs: dict[str, _Qr] = {}
        self._numbers: dict[str, str] = {}  # instance → the number its pairing code is for
        self.meta_numbers: dict[str, dict[str, str]] = {}
        self.add_meta_number(META_PHONE_NUMBER_ID, META_TOKEN, META_DISPLAY_NUMBER, META_VERIFIED_NAME)

    # ------------------------------------------------------------ the phone, on command

    def current_qr(self, instance: str) -> dict[str, Any] | None:
        """The QR the instance shows now (Evolution's shape), None once paired: what a test compares."""
        with self._lock:
            qr = self._qrs.get(instance)
            return qr.wire() if qr else None

    def renew_qr(self, instance: str) -> dict[str, Any]:
        """Baileys shows a new QR (about every 20 s while nobody scans)."""
        self._record(instance)
        with self._lock:
            count = self._qrs[instance].count if instance in self._qrs else 0
        return self._show_qr(instance, count + 1)

    def scan(self, instance: str) -> str:
        """The phone scans the QR: the instance is open, and Evolution posts `connection.update` if it has a
        webhook. Returns the new state."""
        record = self._record(instance)
        with self._lock:
            self._qrs.pop(instance, None)
        if record.get("webhook"):
            self.sandbox.emit(ev.INSTANCE_CONNECTED, instance)  # sets the state and posts, as Evolution does
        record["state"] = "open"
        return "open"

    def add_meta_number(self, phone_number_id: str, token: str, display: str, name: str) -> None:
        self.meta_numbers[phone_number_id] = {"token": token, "display_phone_number": display, "verified_name": name}

    def _record(self, instance: str) -> dict[str, Any]:
        record = self.sandbox.instances.get(instance)
        if record is None:
            raise KeyError(f"la instancia {instance!r} no existe en la pasarela de prueba")
        return record

    def _show_qr(self, instance: str, count: int) -> dict[str, Any]:
        text = _qr_text()
        number = self._numbers.get(instance)
        pairing = "".join(secrets.choice("ABCDEFGHJKLMNPQRSTVWXYZ23456789") for _ in range(8)) if number else None
        qr = _Qr(text, _png_data_uri(text), pairing, count)
        with self._lock:
            self._qrs[instance] = qr
        self.sandbox.instances[instance]["state"] = "connecting"
        return qr.wire()

    # ------------------------------------------------------------ routing (called first by GatewayHandler._route)

    def handle(self, handler: QuietHandler, method: str, parts: list[str], body: dict[str, Any]) -> bool:
        """Answer the request if it is one of this module's; False leaves it to the gateway's other routes."""
        query = {key: values[-1] for key, values in parse_qs(urlsplit(handler.path).query).items()}
        body = body if isinstance(body, dict) else {}
        if method == "POST" and parts == ["instance", "create"] and body.get("qrcode") is True:
            self._create(handler, body)
        elif method == "GET" and len(parts) == 3 and parts[:2] == ["instance", "connect"]:
            self._connect(handler, parts[2], query.get("number", ""))
        elif method == "GET" and len(parts) == 3 and parts[:2] == ["instance", "connectionState"] \
                and parts[2] not in self.sandbox.instances:  # instanceExistsGuard: 404 before the key is looked at
            _evolution_error(handler, 404, [f'The "{parts[2]}" instance does not exist'])
        elif method == "GET" and len(parts) == 2 and _GRAPH_VERSION.match(parts[0]):
            self._meta_number(handler, parts[1], query)
        elif method == "POST" and parts in (["_control", "scan"], ["_control", "renew_qr"]):
            self._control(handler, parts[1], str(body.get("instance") or ""))
        else:
            return False
        return True

    def _create(self, handler: QuietHandler, body: dict[str, Any]) -> None:
        name = str(body.get("instanceName") or "")
        if not name:
            _evolution_error(handler, 400, ['requires property "instanceName"'])
        elif name in self.sandbox.instances:  # instanceLoggedGuard runs before the key is looked at
            _evolution_error(handler, 403, [f'This name "{name}" is already in use.'])
        elif not self.sandbox.authorised(handler.headers.get("apikey", ""), ""):
            _evolution_error(handler, 401, "Unauthorized")
        elif str(body.get("integration") or BAILEYS) != BAILEYS:
            _evolution_error(handler, 400, ["Invalid integration"])
        else:
            token = str(uuid.uuid4()).upper()
            created = self.sandbox.create_instance(name, apikey=token, state="close")
            if body.get("number"):
                self._numbers[name] = str(body["number"])
            qr = self._show_qr(name, 1)
            handler.reply(201, _dumps({
                "instance": {"instanceName": name, "instanceId": created["instance"]["instanceId"],
                             "integration": BAILEYS, "webhookWaBusiness": None, "accessTokenWaBusiness": "",
                             "status": "connecting"},
                "hash": token, "webhook": {}, "websocket": {}, "rabbitmq": {}, "nats": {}, "sqs": {},
                "settings": _SETTINGS, "qrcode": qr}))

    def _connect(self, handler: QuietHandler, name: str, number: str) -> None:
        record = self.sandbox.instances.get(name)
        if record is None:  # instanceExistsGuard runs first
            _evolution_error(handler, 404, [f'The "{name}" instance does not exist'])
        elif not self.sandbox.authorised(handler.headers.get("apikey", ""), name):
            _evolution_error(handler, 401, "Unauthorized")
        elif record["state"] == "open":
            handler.reply(200, _dumps({"instance": {"instanceName": name, "state": "open"}}))
        else:
            if number:
                self._numbers[name] = number
            qr = self.current_qr(name) if record["state"] == "connecting" else None
            handler.reply(200, _dumps(qr or self._show_qr(name, 1)))

    def _meta_number(self, handler: QuietHandler, number_id: str, query: dict[str, str]) -> None:
        authorization = handler.headers.get("Authorization", "")
        token = authorization[7:] if authorization.lower().startswith("bearer ") else query.get("access_token", "")
        known = self.meta_numbers.get(number_id)
        if not token:
            _meta_error(handler, 400, "An access token is required to request this resource.", "OAuthException", 104)
        elif not any(secrets.compare_digest(token.encode(), n["token"].encode()) for n in self.meta_numbers.values()):
            _meta_error(handler, 401, "Invalid OAuth access token - Cannot parse access token", "OAuthException", 190)
        elif known is None or not secrets.compare_digest(token.encode(), known["token"].encode()):
            _meta_error(handler, 400, f"Unsupported get request. Object with ID '{number_id}' does not exist, cannot "
                                      "be loaded due to missing permissions, or does not support this operation. "
                                      "Please read the Graph API documentation at "
                                      "https://developers.facebook.com/docs/graph-api",
                        "GraphMethodException", 100, subcode=33)
        else:
            node = {"verified_name": known["verified_name"], "display_phone_number": known["display_phone_number"],
                    "quality_rating": "GREEN", "code_verification_status": "VERIFIED", "platform_type": "CLOUD_API"}
            wanted = [f for f in query.get("fields", "").split(",") if f]
            shown = {key: value for key, value in node.items() if not wanted or key in wanted}
            handler.reply(200, _dumps({**shown, "id": number_id}))

    def _control(self, handler: QuietHandler, action: str, instance: str) -> None:
        try:
            answer: Any = {"state": self.scan(instance)} if action == "scan" else self.renew_qr(instance)
        except KeyError as exc:
            _evolution_error(handler, 404, [str(exc)])
            return
        handler.reply(200, _dumps(answer))


def _dumps(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode()


def _evolution_error(handler: QuietHandler, status: int, message: Any) -> None:
    """Evolution's error body (src/main.ts's error handler): `{status, error, response: {message}}`."""
    names = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found"}
    handler.reply(status, _dumps({"status": status, "error": names[status], "response": {"message": message}}))


def _meta_error(handler: QuietHandler, status: int, message: str, kind: str, code: int,
                subcode: int | None = None) -> None:
    """The Graph API's error body: `{error: {message, type, code[, error_subcode], fbtrace_id}}`."""
    error: dict[str, Any] = {"message": message, "type": kind, "code": code}
    if subcode is not None:
        error["error_subcode"] = subcode
    error["fbtrace_id"] = "A" + secrets.token_urlsafe(16)
    handler.reply(status, _dumps({"error": error}))
