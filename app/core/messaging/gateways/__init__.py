"""WhatsApp gateway adapters: each turns a send into its gateway's HTTP call and its answers or
failures into one `SendReceipt` or a Spanish `YupanaError`. They know nothing of storage."""

from __future__ import annotations

from app.core.messaging.gateways.base import Gateway, GatewayConfig, Media, SendReceipt

GATEWAYS = ("evolution", "meta", "yupana")


def adapter_for(config: GatewayConfig, client) -> Gateway:
    if config.gateway == "evolution":
        from app.core.messaging.gateways.evolution import EvolutionGateway

        return EvolutionGateway(config, client)
    if config.gateway == "meta":
        from app.core.messaging.gateways.meta import MetaGateway

        return MetaGateway(config, client)
    if config.gateway == "yupana":
        from app.core.messaging.gateways.yupana import YupanaGateway

        return YupanaGateway(config, client)
    raise ValueError(config.gateway)


__all__ = ["GATEWAYS", "Gateway", "GatewayConfig", "Media", "SendReceipt", "adapter_for"]
