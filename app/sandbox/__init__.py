"""Faithful local stand-ins for what the desktop cannot do alone (SUNAT, registry providers, gateways).

Each sandbox is a real HTTP server on loopback, so the app, the demo and the tests run with no
internet and no credentials. `yupana sandbox` starts them all (see app/commands/sandbox.py).
"""

# name -> "module:Class"; each class follows app.sandbox.base.Sandbox.
SANDBOXES = {
    "sunat": "app.sandbox.sunat:SunatSandbox",
    "registry": "app.sandbox.registry:RegistrySandbox",
    "gateway": "app.sandbox.gateway:GatewaySandbox",
}
