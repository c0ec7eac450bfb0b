"""WhatsApp gateways: each is one class (base.Gateway) that describes itself (name, Spanish label, credentials,
options, listener path), sends (turning a send into its gateway's HTTP call and its answers or failures into one
`SendReceipt` or a Spanish `YupanaError`), and verifies and parses the webhooks its gateway posts. Each is registered
once (registry); the service, the listener's routes and the Mensajes form are generated from the registry. They know
nothing of storage.

The built-in gateways register themselves on import, below; a new one is a module here imported below
(docs/architecture.md, «Add a gateway»).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.messaging.gateways import evolution, meta, yupana  # noqa: F401  (each registers its gateway)
from app.core.messaging.gateways.base import (
    Gateway,
    GatewayConfig,
    GatewayDescription,
    GatewayField,
    Media,
    SendReceipt,
    WebhookPost,
    WebhookRejected,
)
from app.core.messaging.gateways.registry import gateway_class
from app.core.platform.lazy import lazy_module

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")


def adapter_for(config: GatewayConfig, client: httpx.Client) -> Gateway:
    """The registered gateway's sender for one instance."""
    return gateway_class(config.gateway)(config, client)


__all__ = ["Gateway", "GatewayConfig", "GatewayDescription", "GatewayField", "Media", "SendReceipt", "WebhookPost",
           "WebhookRejected", "adapter_for"]
