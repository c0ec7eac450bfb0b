"""The local API's token: one per data folder, created once, atomically.

Kept twice in the database: its SHA-256 hash, which requests are checked against, and encrypted
with the secret store, so the settings window can show it to whoever sets up the point of sale. Two
processes opening a new folder at once (`yupana serve` and `yupana serve --show-token`) agree on
one token: each proposes one and the first insert wins inside SQLite's write transaction.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets as random

from app.core.platform.secrets import SecretStore
from app.core.storage.ports.database import Database
from app.core.storage.ports.platform import ApiTokenRepository
from app.core.storage.read_cache import ReadCache

PURPOSE = "api.token"  # the secret store's purpose (authenticated data) for the encrypted copy
LEGACY_SECRET = "api.token"  # where versions before the hash kept it: adopted so integrations keep working


def token_hash(token: str | bytes) -> bytes:
    """The token is 256 random bits: a plain SHA-256 is enough (there is nothing to guess)."""
    return hashlib.sha256(token.encode() if isinstance(token, str) else token).digest()


def hash_matches(presented: str | bytes, stored: bytes | None) -> bool:
    """Constant-time comparison of the whole token (through its hash)."""
    return stored is not None and hmac.compare_digest(token_hash(presented), stored)


class ApiTokens:
    def __init__(self, database: Database, repository: ApiTokenRepository, secrets: SecretStore) -> None:
        self._db = database
        self._repository = repository
        self._secrets = secrets
        self._cache = ReadCache(database)  # checked on every request; a rotation by any process clears it

    def stored_hash(self) -> bytes | None:
        return self._cache.get("hash", self._load_hash)

    def _load_hash(self) -> bytes | None:
        stored = self._repository.stored()
        return stored[0] if stored else None

    def current(self) -> str:
        """The token, created on first use (by whichever process gets there first)."""
        stored = self._repository.stored()
        if stored is None:
            legacy = self._secrets.get(LEGACY_SECRET)
            self._store(legacy.decode() if legacy else random.token_urlsafe(32), replace=False)
            stored = self._repository.stored()
        assert stored is not None  # stored just above, or by another process first
        return self._secrets.decrypt(stored[1], PURPOSE).decode()

    def rotate(self) -> str:
        """A new token; the previous one stops working at once."""
        token = random.token_urlsafe(32)
        self._store(token, replace=True)
        return token

    def matches(self, presented: str | bytes) -> bool:
        return hash_matches(presented, self.stored_hash())

    def _store(self, token: str, *, replace: bool) -> None:
        blob = self._secrets.encrypt(token.encode(), PURPOSE)  # the master key is settled before the write lock
        with self._db.transaction():
            if replace:
                self._repository.replace(token_hash(token), blob)
                self._secrets.delete(LEGACY_SECRET)
            else:
                self._repository.propose(token_hash(token), blob)
        self._cache.clear()
