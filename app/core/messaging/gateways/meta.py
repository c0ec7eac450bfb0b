"""WhatsApp Cloud API (Meta): `POST {base}/{phone-number-id}/messages` with a Bearer token; local files
are uploaded first (`POST {base}/{phone-number-id}/media`). Webhooks are set in Meta's App Dashboard,
not by API (docs/messaging.md), at our shared `/webhooks/meta`: Meta checks it with a GET (`hub.verify_token`) and
signs every post with `X-Hub-Signature-256` (HMAC-SHA256 of the raw bytes with the app secret); incoming posts carry
`entry[].changes[].value.messages[]|statuses[]`, the instance named by its `phone_number_id`."""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Any

from app.core.errors import ErrorCode, ErrorDetail, YupanaError
from app.core.messaging import events as ev
from app.core.messaging.gateways.base import (
    Gateway,
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
from app.core.platform import clock
from app.core.platform.lazy import lazy_module

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")

DEFAULT_BASE_URL = "https://graph.facebook.com/v21.0"
OUTSIDE_WINDOW = {131047}  # "Re-engagement message": more than 24 h since the customer last wrote
NOT_ON_WHATSAPP = {131026, 131030}  # undeliverable / not in the test number's allowed list
RATE = {130429, 131048, 131056, 80007}
_STATUS_EVENTS = {"delivered": ev.MESSAGE_DELIVERED, "read": ev.MESSAGE_READ}


@register
class MetaGateway(Gateway):
    kind = "meta"
    label = "WhatsApp Cloud API (Meta)"
    address_hint = DEFAULT_BASE_URL
    credentials = (GatewayField("token", "Token de acceso", secret=True, required=True),
                   GatewayField("app_secret", "App secret (Meta)", secret=True, required=True),
                   GatewayField("verify_token", "Token de verificación (Meta)", required=True))
    options = (GatewayField("phone_number_id", "phone_number_id (Meta)", required=True),)
    listener_path = "/webhooks/meta"

    @classmethod
    def handshake(cls, post: WebhookPost) -> str:
        """Meta's GET when the callback URL is set: `hub.challenge` back if `hub.verify_token` is some instance's."""
        token = post.query.get("hub.verify_token")
        if post.query.get("hub.mode") != "subscribe" or not any(
                same_secret(token, c.credentials.get("verify_token")) for c in post.configs()):
            raise WebhookRejected(401, "El token de verificación de Meta no corresponde a ninguna instancia.")
        return post.query.get("hub.challenge", "")

    @classmethod
    def verify(cls, post: WebhookPost) -> dict[str | None, str]:
        """The instance whose app secret signed the raw bytes; returns every instance by its phone_number_id."""
        signature = post.headers.get("x-hub-signature-256", "")
        configs = post.configs()
        for config in configs:
            secret = config.credentials.get("app_secret")
            expected = "sha256=" + hmac.new(secret.encode(), post.raw, hashlib.sha256).hexdigest() if secret else None
            if same_secret(signature, expected):
                return {c.options.get("phone_number_id"): c.name for c in configs}
        raise WebhookRejected(401, "La firma X-Hub-Signature-256 no corresponde al secreto de ninguna instancia Meta.")

    @classmethod
    def parse(cls, post: WebhookPost, verified: Any) -> list[ev.InboundEvent]:
        return parse_webhook(post.json(), verified)

    @property
    def _number_path(self) -> str:
        number_id = self.config.options.get("phone_number_id")
        if not number_id:
            raise self.instance_error(ErrorCode.NOT_CONFIGURED, f"La instancia «{self.config.name}» no tiene el "
                                                                "identificador del número (phone_number_id).")
        return f"/{number_id}"

    @property
    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.config.credentials.get('token', '')}"}

    def send(self, to: str, text: str, media: Media | None = None) -> SendReceipt:
        body: dict[str, Any] = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": to.lstrip("+")}
        if media is None:
            body.update(type="text", text={"preview_url": False, "body": text})
        else:
            reference = {"link": media.url} if media.url else {"id": self._upload(media)}
            if text:
                reference["caption"] = text
            if media.kind == "document":
                reference["filename"] = media.file_name
            body.update(type=media.kind, **{media.kind: reference})
        response = self.request("POST", self._number_path + "/messages", json=body, headers=self._headers)
        if response.status_code != 200:
            raise self._failure(response, to)
        messages = json_or_empty(response).get("messages") or [{}]
        return SendReceipt(messages[0].get("id"), int(clock.timestamp()))

    def _upload(self, media: Media) -> str:
        assert media.path is not None
        files = {"file": (media.file_name, media.path.read_bytes(), media.mimetype)}
        response = self.request("POST", self._number_path + "/media", data={"messaging_product": "whatsapp",
                                                                           "type": media.mimetype},
                                files=files, headers=self._headers)
        if response.status_code != 200:
            raise self._failure(response)
        return str(json_or_empty(response).get("id"))

    def connection_state(self) -> str:
        response = self.request("GET", self._number_path, headers=self._headers)
        if response.status_code != 200:
            raise self._failure(response)
        return "open"

    def set_webhook(self, url: str) -> str | None:
        return None  # Meta's webhook is set once per app in its dashboard (docs/messaging.md)

    def _failure(self, response: httpx.Response, to: str | None = None) -> YupanaError:
        error = json_or_empty(response).get("error") or {}
        code = error.get("code")
        if code in OUTSIDE_WINDOW:
            return YupanaError(ErrorCode.CONFLICT, f"Han pasado más de 24 horas desde el último mensaje de {to}: "
                                                   "WhatsApp solo permite enviarle una plantilla aprobada.",
                               [ErrorDetail("to", "Fuera de la ventana de 24 horas.")])
        if code in NOT_ON_WHATSAPP and to:
            message = f"El número {to} no tiene WhatsApp o no puede recibir mensajes de este número."
            return YupanaError(ErrorCode.INVALID_INPUT, message, [ErrorDetail("to", message)])
        if code in RATE:
            return YupanaError(ErrorCode.RATE_LIMITED, "Meta limita los envíos de este número: espere un momento y "
                                                       "vuelva a intentar.")
        if code == 190:
            return self.instance_error(ErrorCode.UPSTREAM_REJECTED,
                                       f"El token de acceso de Meta de la instancia «{self.config.name}» venció o no "
                                       "es válido.")
        return self.common_failure(response, to)


def parse_webhook(body: Any, instances_by_number: dict[str | None, str], now: int | None = None
                  ) -> list[ev.InboundEvent]:
    """Meta's post → contract events, for the instances whose phone_number_id it names."""
    now = int(clock.timestamp()) if now is None else now
    out: list[ev.InboundEvent] = []
    for entry in (body or {}).get("entry") or []:
        for change in entry.get("changes") or []:
            value = change.get("value") or {}
            instance = instances_by_number.get((value.get("metadata") or {}).get("phone_number_id"))
            if instance is not None:
                out.extend(_received(instance, value, now))
                out.extend(_statuses(instance, value, now))
    return out


def _received(instance: str, value: dict[str, Any], now: int) -> list[ev.InboundEvent]:
    """`value.messages[]`, with the senders' names from `value.contacts[]`."""
    names = {c.get("wa_id"): (c.get("profile") or {}).get("name", "") for c in value.get("contacts") or []}
    out = []
    for message in value.get("messages") or []:
        kind = str(message.get("type") or "text")
        inner = message.get(kind) or {}
        text = inner.get("body") if kind == "text" else inner.get("caption") or inner.get("filename") or ""
        sender = str(message.get("from") or "")
        data = {"id": message_id(), "from": "+" + sender, "type": kind, "body": str(text or ""),
                "name": names.get(sender, "")}
        stamp = int(message.get("timestamp") or now)
        out.append(ev.InboundEvent(ev.MESSAGE_RECEIVED, instance, stamp, f"msg:{message.get('id')}", data,
                                   gateway_id=str(message.get("id"))))
    return out


def _statuses(instance: str, value: dict[str, Any], now: int) -> list[ev.InboundEvent]:
    """`value.statuses[]`: delivered and read (sent and failed give nothing)."""
    out = []
    for status in value.get("statuses") or []:
        event = _STATUS_EVENTS.get(str(status.get("status")))
        if event is None:
            continue
        gateway_id = str(status.get("id"))
        data = {"id": gateway_id, "to": "+" + str(status.get("recipient_id") or ""),
                "status": ev.STATUS_OF_EVENT[event]}
        out.append(ev.InboundEvent(event, instance, int(status.get("timestamp") or now),
                                   f"upd:{gateway_id}:{ev.STATUS_OF_EVENT[event]}", data, gateway_id=gateway_id))
    return out
