"""The OAuth tokens a SUNAT sandbox hands out (the GRE platform's password grant, the consulta de validez's client
credentials): issued with a lifetime, valid until then, all refused at once when a test says so."""

from __future__ import annotations

import secrets
import threading
import time


class SandboxTokens:
    def __init__(self, lifetime_s: int, lock: threading.Lock) -> None:
        self.lifetime_s = lifetime_s
        self.lock = lock  # the sandbox's own lock: its fault injection refuses every token under it
        self.clock = time.monotonic  # the tokens' expiry (tests move it)
        self._expiry: dict[str, float] = {}  # token -> when it expires
        self.issued = 0

    def issue(self) -> str:
        token = secrets.token_urlsafe(24)
        with self.lock:
            self._expiry[token] = self.clock() + self.lifetime_s
            self.issued += 1
        return token

    def valid(self, token: str) -> bool:
        with self.lock:
            expiry = self._expiry.get(token)
            return expiry is not None and self.clock() < expiry

    def refuse_all(self) -> None:
        """Every token issued so far is refused from now on; the caller holds `lock`."""
        self._expiry.clear()
