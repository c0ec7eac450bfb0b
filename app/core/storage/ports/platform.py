"""Ports of what the three groups share: settings, companies, secrets, the local API's token and the addresses of the
sandboxes running for a data folder. Rows come back as plain dicts; the platform modules make them typed."""

from __future__ import annotations

from typing import Any, Protocol


class SettingsRepository(Protocol):
    def all(self) -> dict[str, str]:
        """Every stored setting (those never set are absent: their defaults apply)."""
        ...

    def put(self, key: str, value: str) -> None: ...


class CompanyRepository(Protocol):
    """Issuer profiles, each with its print options, price default and detracción account."""

    def save(self, profile: dict[str, Any]) -> None:
        """Insert or update the profile's columns (ruc, razon_social, nombre_comercial, ubigeo, direccion,
        codigo_establecimiento); the other columns of an existing company stay."""
        ...

    def get(self, ruc: str) -> dict[str, Any] | None: ...
    def all(self) -> list[dict[str, Any]]: ...
    def print_options(self, ruc: str) -> dict[str, Any] | None: ...

    def set_print_options(self, ruc: str, formato: str | None, logo: bytes | None, change_logo: bool) -> bool:
        """Change what is given (`change_logo`: set the logo to `logo`, None removing it); False for an unknown RUC."""
        ...

    def prices_include_igv(self, ruc: str) -> bool: ...
    def set_prices_include_igv(self, ruc: str, value: bool) -> bool: ...
    def detraction_account(self, ruc: str) -> str | None: ...
    def set_detraction_account(self, ruc: str, cuenta: str | None) -> bool: ...
    def delete(self, ruc: str) -> bool: ...


class SecretRepository(Protocol):
    """Encrypted blobs by name, and the secret store's own facts (the folder's id, where its master key comes from)."""

    def meta(self, key: str) -> str | None: ...

    def set_meta_once(self, key: str, value: str) -> None:
        """Record a fact unless it is recorded already (the first writer wins)."""
        ...

    def set_meta(self, key: str, value: str) -> None:
        """Record a fact, replacing the one recorded (a recovery passphrase changed)."""
        ...

    def put(self, name: str, blob: bytes, updated_at: str) -> None: ...
    def get(self, name: str) -> bytes | None: ...
    def delete(self, name: str) -> bool: ...


class ApiTokenRepository(Protocol):
    """The local API's one token: its hash (checked on every request) and its encrypted copy."""

    def stored(self) -> tuple[bytes, bytes] | None:
        """(hash, encrypted token), or None before the first token."""
        ...

    def propose(self, token_hash: bytes, blob: bytes) -> None:
        """Store this token unless one exists (two processes opening a new folder agree on the first)."""
        ...

    def replace(self, token_hash: bytes, blob: bytes) -> None: ...


class DeskTurnRepository(Protocol):
    """Whose turn it is to run a job over a shared database (platform.turns.DeskTurn)."""

    def hold(self, name: str, holder: str, seconds: float, replacing: str | None = None) -> bool:
        """Take or renew the turn for `seconds` on the database's clock: True when `holder` has it now (it was free,
        its own, run out, or held by `replacing`), False when another holder's turn is running."""
        ...

    def current(self, name: str) -> tuple[str, bool] | None:
        """(holder, whether its turn is still running) or None when nobody ever took it."""
        ...

    def release(self, name: str, holder: str) -> None:
        """Give the turn up (the next desk to look takes it at once), if `holder` has it."""
        ...


class SandboxEndpointRepository(Protocol):
    """Addresses of the sandboxes running for a data folder, with the process that wrote each."""

    def put(self, values: dict[str, str], owner: str) -> None: ...

    def remove(self, keys: list[str], owner: str) -> None:
        """Forget these keys where `owner` wrote them last."""
        ...

    def owners(self) -> set[str]: ...
    def remove_owners(self, owners: set[str]) -> None: ...
    def all(self) -> dict[str, str]: ...
