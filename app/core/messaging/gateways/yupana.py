"""A gateway that speaks this very contract: `POST {base}/api/v1/chat/send` and `/chat/webhook`, with a
Bearer token, so one Yupana relays its messages through another. Its events come back to our
listener (`/webhooks/yupana/{instance}`) signed per Standard Webhooks with the secret its operation 5 answered."""

from __future__ import annotations

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
)
from app.core.messaging.gateways.registry import register
from app.core.platform import clock
from app.core.platform.lazy import lazy_module

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")


@register
class YupanaGateway(Gateway):
    kind = "yupana"
    label = "Otro Yupana"
    address_hint = "http://otro-equipo:8787"
    credentials = (GatewayField("token", "Token (Bearer)", secret=True, required=True),
                   GatewayField("webhook_secret", "Secreto de webhook", secret=True, entered=False))
    options = (GatewayField("remote_name", "Nombre en la pasarela", hint="vacío: el mismo nombre"),)
    listener_path = "/webhooks/yupana/{name}"

    @classmethod
    def verify(cls, post: WebhookPost) -> Any:
        config = post.config()
        secret = config.credentials.get("webhook_secret")
        if not secret:
            raise WebhookRejected(401, f"La instancia «{config.name}» no tiene secreto de webhook: vuelva a "
                                       "registrarla.")
        return post.standard_webhook(secret)

    @classmethod
    def parse(cls, post: WebhookPost, verified: Any) -> list[ev.InboundEvent]:
        assert post.instance is not None
        return parse_webhook(post.instance, verified, post.headers.get("webhook-id", ""))

    @property
    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.config.credentials.get('token', '')}"}

    @property
    def _remote(self) -> str:
        return self.config.options.get("remote_name") or self.config.name

    def send(self, to: str, text: str, media: Media | None = None) -> SendReceipt:
        if media is not None and media.url is None:
            message = "Una pasarela Yupana recibe adjuntos solo como URL (media_url), no archivos locales."
            raise YupanaError(ErrorCode.INVALID_INPUT, message, [ErrorDetail("media", message)])
        body: dict[str, Any] = {"instance": self._remote, "to": to, "message": text}
        if media is not None:
            body["media_url"] = media.url
        response = self.request("POST", "/api/v1/chat/send", json=body, headers=self._headers)
        data = self._data(response, to)
        return SendReceipt(data.get("id"), int(data.get("timestamp") or clock.timestamp()))

    def connection_state(self) -> str:
        # The contract has no state operation: a well-formed 400 to an empty send proves the relay answers.
        response = self.request("POST", "/api/v1/chat/send", json={}, headers=self._headers)
        if response.status_code in (401, 403) or response.status_code >= 500:
            raise self.common_failure(response)
        return "open"

    def set_webhook(self, url: str) -> str | None:
        body = {"instance": self._remote, "url": url, "events": list(ev.CONTRACT_EVENTS)}
        response = self.request("POST", "/api/v1/chat/webhook", json=body, headers=self._headers)
        return self._data(response).get("secret")

    def _data(self, response: httpx.Response, to: str | None = None) -> dict[str, Any]:
        envelope = json_or_empty(response)
        if response.status_code == 200 and envelope.get("success") is True:
            return envelope.get("data") or {}
        error = envelope.get("error") if isinstance(envelope, dict) else None
        if isinstance(error, dict) and error.get("code") in ErrorCode.__members__:
            details = [ErrorDetail(d.get("field"), d.get("message", "")) for d in error.get("details") or []]
            raise YupanaError(ErrorCode(error["code"]), f"La pasarela Yupana respondió: {error.get('message')}",
                              details)
        raise self.common_failure(response, to)


def parse_webhook(instance: str, body: Any, webhook_id: str) -> list[ev.InboundEvent]:
    """A contract delivery from the relay → the same event under our instance's name."""
    if not isinstance(body, dict) or body.get("event") not in ev.CONTRACT_EVENTS:
        return []
    event = str(body["event"])
    data = _checked_data(event, body.get("data") or {})
    state = {ev.INSTANCE_CONNECTED: "open", ev.INSTANCE_DISCONNECTED: "close"}.get(event)
    gateway_id = str(data.get("id") or "") or None
    return [ev.InboundEvent(event, instance, int(body.get("timestamp") or clock.timestamp()), f"whk:{webhook_id}", data,
                            gateway_id=gateway_id, state=state)]


# What the store reads of a received message's data: text fields, of which it cannot do without the message's id and
# the sender (`from`, which is "" for a sender known only by a LID: `from_id` then names it).
RECEIVED_TEXT = ("id", "from", "from_id", "name", "type", "body")


def _checked_data(event: str, data: Any) -> dict[str, Any]:
    """The delivery's `data` as the store may take it, or ValueError (the listener's 400 of this post alone): an
    object (`dict()` of a list would quietly make one of its pairs), and for a received message its ids present and
    its text fields text, which would otherwise fail the writer's group commit."""
    if not isinstance(data, dict):
        raise ValueError(f"data is a {type(data).__name__}, not an object")
    if event == ev.MESSAGE_RECEIVED:
        if not data.get("id") or "from" not in data or \
                any(not isinstance(data[key], str) for key in RECEIVED_TEXT if key in data):
            raise ValueError("a received message without its ids, or with fields that are not text")
    return dict(data)
