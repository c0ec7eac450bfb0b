"""WhatsApp gateway adapters: each turns a send into its gateway's HTTP call and its answers or
failures into one `SendReceipt` or a Spanish `YupanaError`. They know nothing of storage."""

from __future__ import annotations

from .base import Gateway, GatewayConfig, Media, SendReceipt

GATEWAYS = ("evolution", "meta", "yupana")


def adapter_for(config: GatewayConfig, client) -> Gateway:
    if config.gateway == "evolution":
        from .evolution import EvolutionGateway

        return EvolutionGateway(config, client)
    if config.gateway == "meta":
        from .meta import MetaGateway

        return MetaGateway(config, client)
    if config.gateway == "yupana":
        from .yupana import YupanaGateway

        return YupanaGateway(config, client)
    raise ValueError(config.gateway)


__all__ = ["GATEWAYS", "Gateway", "GatewayConfig", "Media", "SendReceipt", "adapter_for"]
