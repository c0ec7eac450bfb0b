"""Faithful local stand-ins for what the desktop cannot do alone (SUNAT, registry providers, gateways).

Each sandbox is a real HTTP server on loopback, so the app, the demo and the tests run with no
internet and no credentials. `yupana sandbox` starts them all (see app/commands/sandbox.py); «Modo sandbox»
starts them inside the app (app/sandbox/mode.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.sandbox.base import Sandbox

# name -> "module:Class"; each class follows app.sandbox.base.Sandbox.
SANDBOXES = {
    "sunat": "app.sandbox.sunat:SunatSandbox",
    "sunat_gre": "app.sandbox.sunat_gre:SunatGreSandbox",  # guías de remisión: SUNAT's REST platform
    "registry": "app.sandbox.registry:RegistrySandbox",
    "gateway": "app.sandbox.gateway:GatewaySandbox",
}


def available() -> dict[str, type[Sandbox]]:
    """Every sandbox class, by name (a missing or broken module fails loudly)."""
    return {name: _load(target) for name, target in SANDBOXES.items()}


def _load(target: str) -> type[Sandbox]:
    module_name, _, class_name = target.partition(":")
    return getattr(importlib.import_module(module_name), class_name)
