"""The gateways this Yupana speaks, each registered once by its class (app.core.messaging.gateways.base.Gateway).

Everything else is generated from here: the gateway an instance may name and the credentials it keeps (the
service), the listener's routes (one per registered gateway, built when the listener starts), and the Mensajes
form's gateway choice and fields (through `engine.messaging.gateways()`). The built-in gateways register
themselves when app.core.messaging.gateways is imported; a plug-in (or a test's toy gateway) calls `register`
before the listener starts and `unregister` when it is done, or uses `registered(...)` for both.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from app.core.messaging.gateways.base import Gateway, GatewayDescription

G = TypeVar("G", bound=type[Gateway])

NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
RESERVED_PATHS = {"/webhooks/ping/{}"}  # the listener's reachability check (app.core.messaging.listener)

_gateways: dict[str, type[Gateway]] = {}
_lock = threading.Lock()


def _shape(path: str) -> str:
    """A path with its parameters blanked: two paths of one shape would shadow each other's route."""
    return re.sub(r"\{[^}]*\}", "{}", path)


def register(gateway: G) -> G:
    """Register a gateway class (usable as a class decorator); a second gateway with its name or its listener path
    is refused."""
    kind, path = gateway.kind, gateway.listener_path
    if not NAME.match(kind or ""):
        raise ValueError(f"gateway name {kind!r}: lower-case letters, digits, '-' or '_'")
    if not gateway.label:
        raise ValueError(f"gateway {kind!r} has no label")
    if not path.startswith("/webhooks/") or _shape(path) in RESERVED_PATHS:
        raise ValueError(f"gateway {kind!r}: listener path {path!r} must start with /webhooks/ and not be reserved")
    if len({c.key for c in gateway.credentials}) != len(gateway.credentials) or \
            len({o.key for o in gateway.options}) != len(gateway.options):
        raise ValueError(f"gateway {kind!r} names a credential or an option twice")
    with _lock:
        if kind in _gateways:
            raise ValueError(f"gateway {kind!r} is already registered")
        taken = {_shape(other.listener_path): other.kind for other in _gateways.values()}
        if _shape(path) in taken:
            raise ValueError(f"gateway {kind!r}: listener path {path!r} is already {taken[_shape(path)]!r}'s")
        _gateways[kind] = gateway
    return gateway


def unregister(kind: str) -> None:
    with _lock:
        _gateways.pop(kind, None)


@contextmanager
def registered(gateway: type[Gateway]) -> Iterator[type[Gateway]]:
    """The gateway registered for the block, unregistered after it (a test's toy gateway)."""
    register(gateway)
    try:
        yield gateway
    finally:
        unregister(gateway.kind)


def find(kind: str) -> type[Gateway] | None:
    with _lock:
        return _gateways.get(kind)


def gateway_class(kind: str) -> type[Gateway]:
    found = find(kind)
    if found is None:
        raise ValueError(kind)
    return found


def names() -> tuple[str, ...]:
    """The registered gateways' names, in the order they were registered."""
    with _lock:
        return tuple(_gateways)


def gateways() -> tuple[type[Gateway], ...]:
    with _lock:
        return tuple(_gateways.values())


def descriptions() -> list[GatewayDescription]:
    return [gateway.describe() for gateway in gateways()]
