"""Evolution API v2: `POST /message/sendText|sendMedia/{instance}`, `POST /webhook/set/{instance}`,
`GET /instance/connectionState/{instance}`, each with the `apikey` header."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

import httpx

from app.core.errors import ErrorCode, ErrorDetail, YupanaError
from app.core.messaging import events as ev
from app.core.messaging.gateways.base import Gateway, Media, SendReceipt, json_or_empty
from app.core.messaging.ids import message_id
from app.core.messaging.phone import from_jid
from app.core.platform import clock

# What we ask Evolution to post to our listener (its names for webhook/set).
WEBHOOK_EVENTS = ["MESSAGES_UPSERT", "MESSAGES_UPDATE", "CONNECTION_UPDATE"]


class EvolutionGateway(Gateway):
    kind = "evolution"

    @property
    def _headers(self) -> dict[str, str]:
        return {"apikey": self.config.credentials.get("apikey", "")}

    def _instance_path(self, action: str) -> str:
        return f"/{action}/{self.config.options.get('remote_name') or self.config.name}"

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
        body = {"webhook": {"enabled": True, "url": url, "byEvents": False, "base64": False,
                            "events": WEBHOOK_EVENTS}}
        response = self.request("POST", self._instance_path("webhook/set"), json=body, headers=self._headers)
        if response.status_code not in (200, 201):
            raise self._failure(response)
        return None

    def _failure(self, response: httpx.Response, to: str | None = None) -> YupanaError:
        name = self.config.name
        messages = ((json_or_empty(response).get("response") or {}).get("message")) or []
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


def parse_webhook(instance: str, body: dict[str, Any], now: int | None = None) -> list[ev.InboundEvent]:
    """Evolution's post (`messages.upsert`, `messages.update`, `connection.update`) → contract events.
    Other events and our own messages echoed back (`fromMe`) give nothing (they are acknowledged)."""
    now = int(clock.timestamp()) if now is None else now
    name = str(body.get("event") or "").lower().replace("_", ".")
    data = body.get("data") or {}
    when = _epoch(body.get("date_time"), now)
    if name == "messages.upsert":
        items = data if isinstance(data, list) else [data]
        return [e for e in (_received(instance, item, now) for item in items) if e]
    if name == "messages.update":
        items = data if isinstance(data, list) else [data]
        return [e for e in (_status(instance, item, when) for item in items) if e]
    if name == "connection.update" and str(data.get("state")) in _STATES:
        event, state = _STATES[str(data["state"])]
        key = hashlib.sha256(json.dumps([data, body.get("date_time")], sort_keys=True).encode()).hexdigest()[:32]
        return [ev.InboundEvent(event, instance, when, f"conn:{key}", {"state": state}, state=state)]
    return []


def _received(instance: str, item: dict[str, Any], now: int) -> ev.InboundEvent | None:
    key = item.get("key") or {}
    if key.get("fromMe") or not key.get("id"):
        return None
    kind, text = _text_of(item.get("message") or {})
    sender = from_jid(key.get("participant") or key.get("remoteJid") or "")
    data = {"id": message_id(), "from": sender, "type": kind, "body": text, "name": str(item.get("pushName") or "")}
    return ev.InboundEvent(ev.MESSAGE_RECEIVED, instance, _epoch(item.get("messageTimestamp"), now),
                           f"msg:{key['id']}", data, gateway_id=str(key["id"]))


def _status(instance: str, item: dict[str, Any], when: int) -> ev.InboundEvent | None:
    status = item.get("status")
    if status is None:
        status = (item.get("update") or {}).get("status")
    event = _STATUS_EVENTS.get(status)
    gateway_id = item.get("keyId") or (item.get("key") or {}).get("id")
    if event is None or not gateway_id:
        return None
    data = {"id": str(gateway_id), "to": from_jid(item.get("remoteJid") or (item.get("key") or {}).get("remoteJid")
                                                  or ""), "status": ev.STATUS_OF_EVENT[event]}
    return ev.InboundEvent(event, instance, when, f"upd:{gateway_id}:{ev.STATUS_OF_EVENT[event]}", data,
                           gateway_id=str(gateway_id))
