"""Evolution API v2: `POST /message/sendText|sendMedia/{instance}`, `POST /webhook/set/{instance}`,
`GET /instance/connectionState/{instance}`, each with the `apikey` header. It posts to
`/webhooks/evolution/{instance}?token=…`: the token of the URL we registered authenticates a post; the instance's
`apikey`, which Evolution puts in the body only when its server exposes it (`AUTHENTICATION_EXPOSE_IN_FETCH_INSTANCES`;
otherwise `null`), must match when it is there.

Posts are read as Evolution 2.3.x (Baileys 7) writes them: a sender addressed by its LID (`<digits>@lid`,
`addressingMode: "lid"`) has its phone in an alternate field of the key (`remoteJidAlt`, `participantAlt`, or
Baileys 6's `senderPn`/`participantPn`); without one the event's `from` is `""` and `from_id` carries the LID.
`date_time` is the server's local time written with a `Z` (its image sets `TZ=America/Sao_Paulo`), so it is never
read as a time: statuses and connection changes are stamped when Yupana receives them unless they carry an epoch.

An instance whose option `events_via` is `stream` (or `stream-global`) receives the same events over Evolution's
Socket.IO stream instead (app.core.messaging.evolution_stream): `set_webhook` then turns the instance's stream on
(`POST /websocket/set/{instance}`) instead of registering a URL nobody outside this PC may reach; `find_messages`
(`POST /chat/findMessages/{instance}`) reads what was missed while the stream was down."""

from __future__ import annotations

import hashlib
import json
import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.core.errors import ErrorCode, ErrorDetail, YupanaError
from app.core.messaging import events as ev
from app.core.messaging.gateways.base import (
    Gateway,
    GatewayConfig,
    GatewayField,
    Media,
    SendReceipt,
    WebhookPost,
    WebhookRejected,
    json_or_empty,
    same_secret,
)
from app.core.messaging.gateways.registry import register
from app.core.messaging.ids import message_id
from app.core.messaging.phone import from_jid
from app.core.platform import clock
from app.core.platform.lazy import lazy_module

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")

# What we ask Evolution to post to our listener (its names for webhook/set) or to stream (websocket/set).
WEBHOOK_EVENTS = ["MESSAGES_UPSERT", "MESSAGES_UPDATE", "CONNECTION_UPDATE"]

# How an instance's events reach Yupana (its option `events_via`): posted to the listener, or streamed over Socket.IO
# on the instance's namespace (`/<instance>`, turned on per instance) or on the server's global one (`/`, when the
# server sets WEBSOCKET_GLOBAL_EVENTS=true: every instance's events, the ones of others skipped).
VIA_WEBHOOK, VIA_STREAM, VIA_STREAM_GLOBAL = "webhook", "stream", "stream-global"
EVENTS_VIA = (VIA_WEBHOOK, VIA_STREAM, VIA_STREAM_GLOBAL)
FIND_PAGE = 50  # findMessages' page size (its `offset`; Evolution's default too)
STREAM_OFF = ("La pasarela {base} no tiene activado el envío de eventos por Socket.IO: en el servidor de Evolution "
              "ponga WEBSOCKET_ENABLED=true y reinícielo, o elija «Webhook» en «Recepción de eventos» de la instancia.")


def events_via(config: GatewayConfig) -> str:
    """How the instance's events arrive: `webhook` (the default, also for a value this version does not know),
    `stream` or `stream-global`."""
    value = str(config.options.get("events_via") or "").strip().lower()
    return value if value in EVENTS_VIA else VIA_WEBHOOK


@register
class EvolutionGateway(Gateway):
    kind = "evolution"
    label = "Evolution API"
    address_hint = "https://evolution.mi-empresa.pe"
    credentials = (GatewayField("apikey", "apikey", secret=True, required=True),)
    options = (GatewayField("remote_name", "Nombre en la pasarela", hint="vacío: el mismo nombre"),
               GatewayField("events_via", "Recepción de eventos", choices=(
                   (VIA_WEBHOOK, "Webhook: la pasarela envía los eventos a este receptor"),
                   (VIA_STREAM, "Stream: Yupana se conecta a la pasarela (Socket.IO, sin túnel)"),
                   (VIA_STREAM_GLOBAL, "Stream global del servidor (WEBSOCKET_GLOBAL_EVENTS)"))))
    listener_path = "/webhooks/evolution/{name}"

    @classmethod
    def webhook_path(cls, config: GatewayConfig) -> str:
        return super().webhook_path(config) + "?token=" + config.credentials["webhook_token"]

    @classmethod
    def verify(cls, post: WebhookPost) -> Any:
        body = post.json()
        config = post.config()
        if not same_secret(post.query.get("token"), config.credentials.get("webhook_token")):
            raise WebhookRejected(401, "El token de la dirección del webhook no es el de esta instancia.")
        if not isinstance(body, dict):
            raise WebhookRejected(400, "El webhook de Evolution debe ser un objeto JSON.")
        # The URL's token is the proof; Evolution sends `apikey: null` unless its server exposes the key.
        if body.get("apikey") is not None and not same_secret(body.get("apikey"), config.credentials.get("apikey")):
            raise WebhookRejected(401, "La apikey del webhook no es la de la instancia.")
        return body

    @classmethod
    def parse(cls, post: WebhookPost, verified: Any) -> list[ev.InboundEvent]:
        assert post.instance is not None
        return parse_webhook(post.instance, verified)

    @property
    def _headers(self) -> dict[str, str]:
        return {"apikey": self.config.credentials.get("apikey", "")}

    @property
    def remote_name(self) -> str:
        """The instance's name at Evolution (its option `remote_name`, else ours)."""
        return str(self.config.options.get("remote_name") or self.config.name)

    @property
    def apikey(self) -> str:
        return self.config.credentials.get("apikey", "")

    def _instance_path(self, action: str) -> str:
        return f"/{action}/{self.remote_name}"

    def send(self, to: str, text: str, media: Media | None = None) -> SendReceipt:
        number = to.lstrip("+")
        if media is None:
            body: dict[str, Any] = {"number": number, "text": text}
            path = self._instance_path("message/sendText")
        else:
            body = {"number": number, "mediatype": media.kind, "mimetype": media.mimetype, "caption": text,
                    "fileName": media.file_name, "media": media.url or media.read_base64()}
            path = self._instance_path("message/sendMedia")
        response = self.request("POST", path, json=body, headers=self._headers)
        if response.status_code not in (200, 201):
            raise self._failure(response, to)
        answer = json_or_empty(response)
        key = answer.get("key") or {}
        stamp = answer.get("messageTimestamp")
        return SendReceipt(key.get("id"), int(stamp) if str(stamp or "").isdigit() else int(clock.timestamp()))

    def connection_state(self) -> str:
        response = self.request("GET", self._instance_path("instance/connectionState"), headers=self._headers)
        if response.status_code != 200:
            raise self._failure(response)
        answer = json_or_empty(response)
        return str((answer.get("instance") or {}).get("state") or answer.get("state") or "unknown")

    def set_webhook(self, url: str) -> str | None:
        """Register our listener's URL; for an instance that streams, turn its stream on instead (a PC behind NAT:
        the URL would not be reachable, and Evolution would retry every post in vain)."""
        via = events_via(self.config)
        if via == VIA_STREAM:
            self.set_stream()
            return None
        if via == VIA_STREAM_GLOBAL:
            return None  # the server's global namespace carries every instance: nothing to turn on per instance
        body = {"webhook": {"enabled": True, "url": url, "byEvents": False, "base64": False,
                            "events": WEBHOOK_EVENTS}}
        response = self.request("POST", self._instance_path("webhook/set"), json=body, headers=self._headers)
        if response.status_code not in (200, 201):
            raise self._failure(response)
        return None

    def set_stream(self) -> None:
        """`POST /websocket/set/{instance}` with `{websocket: {enabled: true, events}}` (Evolution's eventSchema).
        A server without WEBSOCKET_ENABLED answers 201 with an empty body (its controller returns nothing): that is
        said as such; a 400 repeats Evolution's reasons."""
        body = {"websocket": {"enabled": True, "events": WEBHOOK_EVENTS}}
        response = self.request("POST", self._instance_path("websocket/set"), json=body, headers=self._headers)
        if response.status_code in (200, 201):
            if not json_or_empty(response):
                raise self.instance_error(ErrorCode.NOT_CONFIGURED, STREAM_OFF.format(base=self.config.base_url))
            return
        if response.status_code == 400:
            reasons = "; ".join(str(m) for m in _messages(response)) or f"HTTP {response.status_code}"
            raise self.instance_error(ErrorCode.UPSTREAM_REJECTED,
                                      f"Evolution rechazó activar el stream de eventos de la instancia "
                                      f"«{self.config.name}»: {reasons}")
        raise self._failure(response)

    def find_messages(self, since: int, until: int, page: int) -> tuple[list[dict[str, Any]], int]:
        """One page (newest first) of the messages Evolution stored with `since <= messageTimestamp <= until`
        (epochs): `POST /chat/findMessages/{instance}` with `where.messageTimestamp: {gte, lte}` (dates; Evolution
        applies the filter only when both are there), `page` and `offset` (the page size). Returns (records, pages)."""
        body = {"where": {"messageTimestamp": {"gte": _iso(since), "lte": _iso(until)}}, "page": page,
                "offset": FIND_PAGE}
        response = self.request("POST", self._instance_path("chat/findMessages"), json=body, headers=self._headers)
        if response.status_code != 200:
            raise self._failure(response)
        found = json_or_empty(response)
        messages = found.get("messages") if isinstance(found, dict) else None
        if not isinstance(messages, dict):
            return [], 0
        records = [r for r in messages.get("records") or [] if isinstance(r, dict)]
        pages = messages.get("pages")
        return records, int(pages) if isinstance(pages, int) and not isinstance(pages, bool) else 0

    def _failure(self, response: httpx.Response, to: str | None = None) -> YupanaError:
        name = self.config.name
        messages = _messages(response)
        if response.status_code == 404:
            return self.instance_error(ErrorCode.NOT_FOUND, f"La pasarela no tiene la instancia «{name}»: "
                                                            "créela en Evolution o revise el nombre.")
        if response.status_code == 400 and to and any(isinstance(m, dict) and m.get("exists") is False
                                                      for m in messages):
            message = f"El número {to} no tiene WhatsApp."
            return YupanaError(ErrorCode.INVALID_INPUT, message, [ErrorDetail("to", message)])
        if response.status_code in (400, 409) and any("closed" in str(m).lower() or "not connected" in str(m).lower()
                                                      for m in messages):
            return self.instance_error(ErrorCode.UPSTREAM_UNAVAILABLE,
                                       f"La instancia «{name}» no está conectada a WhatsApp: vincule el teléfono "
                                       "(código QR) en la pasarela.")
        return self.common_failure(response, to)


def _messages(response: httpx.Response) -> list[Any]:
    """Evolution's reasons for a failure: `{status, error, response: {message: [...]}}`."""
    answer = json_or_empty(response)
    found = (answer.get("response") or {}).get("message") if isinstance(answer, dict) else None
    if isinstance(found, list):
        return found
    return [found] if found else []


def _iso(epoch: int) -> str:
    """An epoch as the date text Evolution's findMessages reads (`new Date(text)`): ISO 8601 in UTC."""
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


# ---------------------------------------------------------------- incoming webhooks (Evolution's shapes)

_STATUS_EVENTS = {"DELIVERY_ACK": ev.MESSAGE_DELIVERED, "READ": ev.MESSAGE_READ, "PLAYED": ev.MESSAGE_READ,
                  3: ev.MESSAGE_DELIVERED, 4: ev.MESSAGE_READ, 5: ev.MESSAGE_READ}
_STATES = {"open": (ev.INSTANCE_CONNECTED, "open"), "close": (ev.INSTANCE_DISCONNECTED, "close")}


def _epoch(value: Any, fallback: int) -> int:
    if isinstance(value, (int, float)) or str(value or "").isdigit():
        return int(value)
    if isinstance(value, str) and value:
        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
        except ValueError:
            pass
    return fallback


def _text_of(message: dict[str, Any]) -> tuple[str, str]:
    """(type, text) of a WhatsApp message object: plain, extended text, or a captioned media."""
    if "conversation" in message:
        return "text", str(message["conversation"] or "")
    if "extendedTextMessage" in message:
        return "text", str((message["extendedTextMessage"] or {}).get("text") or "")
    for kind in ("image", "video", "document", "audio", "sticker"):
        inner = message.get(f"{kind}Message")
        if isinstance(inner, dict):
            return kind, str(inner.get("caption") or inner.get("fileName") or "")
    return "unknown", ""


def _received_at(*candidates: Any, now: int) -> int:
    """The first real epoch (seconds, an integer or its digits) among `candidates`, else `now`. Evolution's
    `date_time` text is never one: it is the server's local time with a `Z` appended."""
    for value in candidates:
        if isinstance(value, bool):
            continue
        if isinstance(value, str) and value.isascii() and value.isdigit():
            value = int(value)
        if isinstance(value, float) and math.isfinite(value):
            value = int(value)
        if isinstance(value, int) and 0 < value < 10**11:  # seconds (not ms), before the year 5138
            return value
    return now


def parse_webhook(instance: str, body: dict[str, Any], now: int | None = None) -> list[ev.InboundEvent]:
    """Evolution's post (`messages.upsert`, `messages.update`, `connection.update`) → contract events.
    Other events and our own messages echoed back (`fromMe`) give nothing (they are acknowledged)."""
    now = int(clock.timestamp()) if now is None else now
    name = str(body.get("event") or "").lower().replace("_", ".")
    data = body.get("data") or {}
    if name == "messages.upsert":
        items = data if isinstance(data, list) else [data]
        return [e for e in (_received(instance, item, now) for item in items) if e]
    if name == "messages.update":
        items = data if isinstance(data, list) else [data]
        return [e for e in (_status(instance, item, body, now) for item in items) if e]
    if name == "connection.update" and str(data.get("state")) in _STATES:
        event, state = _STATES[str(data["state"])]
        key = hashlib.sha256(json.dumps([data, body.get("date_time")], sort_keys=True).encode()).hexdigest()[:32]
        when = _received_at(body.get("date_time"), now=now)
        return [ev.InboundEvent(event, instance, when, f"conn:{key}", {"state": state}, state=state)]
    return []


# Where Baileys puts a LID-addressed party's phone: `remoteJidAlt`/`participantAlt` (Baileys 7, Evolution 2.3.5+),
# `senderPn`/`participantPn` (Baileys 6.7).
_ALTERNATES = {"participant": ("participantAlt", "participantPn"), "remoteJid": ("remoteJidAlt", "senderPn")}
_PHONE_DOMAINS = ("", "s.whatsapp.net", "c.us")


def _phone(jid: Any) -> str:
    """`51987654321@s.whatsapp.net` (or `…:12@…`, a linked device) → `+51987654321`; "" for anything else (a LID,
    a group, a broadcast)."""
    if not isinstance(jid, str):
        return ""
    user, _, domain = jid.partition("@")
    user = user.split(":", 1)[0].removeprefix("+")
    return "+" + user if user.isascii() and user.isdigit() and domain in _PHONE_DOMAINS else ""


def _is_lid(jid: str) -> bool:
    return jid.endswith("@lid")


def _address(key: dict[str, Any], field: str) -> tuple[str, str]:
    """(phone, LID) of the party the key names in `field` (its `participant` in a group, else its `remoteJid`):
    the phone from the JID itself or, for a LID, from its alternate fields; ("", the LID) when none is known."""
    jid = str(key.get(field) or "")
    if not _is_lid(jid):
        return from_jid(jid), ""
    for alternate in _ALTERNATES[field]:
        phone = _phone(key.get(alternate))
        if phone:
            return phone, ""
    user = jid.partition("@")[0].split(":", 1)[0]
    return "", user + "@lid"


def _received(instance: str, item: dict[str, Any], now: int) -> ev.InboundEvent | None:
    key = item.get("key") or {}
    if key.get("fromMe") or not key.get("id"):
        return None
    kind, text = _text_of(item.get("message") or {})
    sender, lid = _address(key, "participant" if key.get("participant") else "remoteJid")
    data = {"id": message_id(), "from": sender, "type": kind, "body": text, "name": str(item.get("pushName") or "")}
    if lid:
        data["from_id"] = lid  # beyond the contract (docs/contract.md): nobody can be answered at a LID
    return ev.InboundEvent(ev.MESSAGE_RECEIVED, instance, _epoch(item.get("messageTimestamp"), now),
                           f"msg:{key['id']}", data, gateway_id=str(key["id"]))


def _status(instance: str, item: dict[str, Any], body: dict[str, Any], now: int) -> ev.InboundEvent | None:
    status = item.get("status")
    if status is None:
        status = (item.get("update") or {}).get("status")
    event = _STATUS_EVENTS.get(status)
    key = item.get("key") or {}
    gateway_id = item.get("keyId") or key.get("id")
    if event is None or not gateway_id:
        return None
    # Evolution 2.3 puts `remoteJid` beside `keyId`; older shapes keep the whole key.
    to, lid = _address({**key, **{name: value for name, value in item.items() if value}}, "remoteJid")
    data = {"id": str(gateway_id), "to": to, "status": ev.STATUS_OF_EVENT[event]}
    if lid:
        data["to_id"] = lid
    when = _received_at(item.get("messageTimestamp"), item.get("timestamp"), body.get("date_time"), now=now)
    return ev.InboundEvent(event, instance, when, f"upd:{gateway_id}:{ev.STATUS_OF_EVENT[event]}", data,
                           gateway_id=str(gateway_id))
