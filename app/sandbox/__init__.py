"""Faithful local stand-ins for what the desktop cannot do alone (SUNAT, registry providers, gateways).

Each sandbox is a real HTTP server on loopback, so the app, the demo and the tests run with no
internet and no credentials. `yupana sandbox` starts them all (see app/commands/sandbox.py); «Modo sandbox»
starts them inside the app (app/sandbox/mode.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.optional import load_optional

if TYPE_CHECKING:
    from app.sandbox.base import Sandbox

# name -> "module:Class"; each class follows app.sandbox.base.Sandbox.
SANDBOXES = {
    "sunat": "app.sandbox.sunat:SunatSandbox",
    "registry": "app.sandbox.registry:RegistrySandbox",
    "gateway": "app.sandbox.gateway:GatewaySandbox",
}


def available() -> dict[str, type[Sandbox]]:
    """The sandboxes whose module exists in this version, by name."""
    classes = {name: load_optional(target) for name, target in SANDBOXES.items()}
    return {name: cls for name, cls in classes.items() if cls is not None}
