"""Where the environment in use finds its services: the settings in beta and production, the running sandboxes'
addresses (and public test tokens) in the sandbox environment. The one place that reads the `environment` setting
for the operations (docs/architecture.md, «Entornos»)."""

from __future__ import annotations

from app.core.platform.environments import SANDBOX, SandboxEndpoints, in_settings
from app.core.platform.secrets import SecretStore
from app.core.platform.settings import SETTINGS, Settings


class Addresses:
    def __init__(self, settings: Settings, sandbox_endpoints: SandboxEndpoints, secrets: SecretStore) -> None:
        self.settings = settings
        self.sandbox_endpoints = sandbox_endpoints
        self.secrets = secrets

    def current(self) -> str:
        """The environment in use: its vouchers, numbering, outbox and lookup cache are the ones seen."""
        return in_settings(self.settings)

    def endpoint(self, key: str, environment: str | None = None) -> str:
        """The value of an address setting in `environment` (the current one by default): in the sandbox
        environment the running sandbox's ("" when none runs) for a `sandboxed` setting; elsewhere the setting."""
        environment = environment or self.current()
        if environment == SANDBOX and SETTINGS[key].sandboxed:
            return self.sandbox_endpoints.get(key) or ""
        return self.settings.get(key)

    def secret(self, name: str, environment: str | None = None) -> bytes | None:
        """A provider's token in `environment`: the sandbox's public test token in the sandbox environment (never
        the user's real one, which stays in the secret store for beta and production)."""
        environment = environment or self.current()
        if environment == SANDBOX:
            value = self.sandbox_endpoints.get(name)
            return value.encode() if value is not None else None
        return self.secrets.get(name)
