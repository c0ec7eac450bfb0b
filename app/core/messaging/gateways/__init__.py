"""WhatsApp gateway adapters: each turns a send into its gateway's HTTP call and its answers or
failures into one `SendReceipt` or a Spanish `YupanaError`. They know nothing of storage."""

from __future__ import annotations

import httpx

from app.core.messaging.gateways.base import Gateway, GatewayConfig, Media, SendReceipt
from app.core.messaging.gateways.evolution import EvolutionGateway
from app.core.messaging.gateways.meta import MetaGateway
from app.core.messaging.gateways.yupana import YupanaGateway

ADAPTERS: dict[str, type[Gateway]] = {"evolution": EvolutionGateway, "meta": MetaGateway, "yupana": YupanaGateway}
GATEWAYS = tuple(ADAPTERS)


def adapter_for(config: GatewayConfig, client: httpx.Client) -> Gateway:
    try:
        return ADAPTERS[config.gateway](config, client)
    except KeyError:
        raise ValueError(config.gateway) from None


__all__ = ["GATEWAYS", "Gateway", "GatewayConfig", "Media", "SendReceipt", "adapter_for"]
