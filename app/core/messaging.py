"""Operations 4 and 5: messages through a gateway and webhook subscriptions.

The gateway adapter comes with the messaging work; until a gateway is configured both operations
check their input and answer a clear "not configured" error.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .contract import ChatSendRequest, ChatSendResult, ChatWebhookRequest, ChatWebhookResult
from .errors import invalid, not_configured

if TYPE_CHECKING:
    from .engine import Engine

PHONE = re.compile(r"^\+[1-9]\d{7,14}$")


def _check_instance(name: str) -> None:
    if not name:
        raise invalid("instance", "El campo «instance» es obligatorio: indique el nombre de la instancia.")


def _check_url(field: str, url: str) -> None:
    if not re.match(r"^https?://[^\s/]+", url or ""):
        raise invalid(field, f"El campo «{field}» debe ser una URL http:// o https:// completa.")


def send(engine: Engine, request: ChatSendRequest) -> ChatSendResult:
    _check_instance(request.instance)
    if not PHONE.match(request.to):
        raise invalid("to", "El campo «to» debe ser un número con código de país y signo +, p. ej. +51987654321.")
    if not request.message and not request.media_url:
        raise invalid("message", "El campo «message» es obligatorio.")
    if request.media_url:
        _check_url("media_url", request.media_url)
    raise not_configured("No hay una pasarela de mensajería configurada (Ajustes → Mensajería).")


def subscribe(engine: Engine, request: ChatWebhookRequest) -> ChatWebhookResult:
    _check_instance(request.instance)
    _check_url("url", request.url)
    if not request.events:
        raise invalid("events", "El campo «events» debe tener al menos un evento.")
    raise not_configured("No hay una pasarela de mensajería configurada (Ajustes → Mensajería).")
