"""Identifiers of messaging records: `msg_<ULID>`, `sub_<ULID>`, `evt_<ULID>` and webhook secrets.

A ULID is 48 bits of milliseconds and 80 random bits in Crockford's base32: sortable by time, so the
inbox and the outbox read in order without another column. Monotonic within a process: an id made in
the same millisecond as the one before is that one plus one, so two messages stored in a row keep their order.
"""

from __future__ import annotations

import base64
import os
import random
import threading
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


# Identifiers are not secrets: a generator seeded once from the OS is enough to make them unique, and
# it costs nothing per id where `os.urandom` is a system call (tens of µs on a loaded machine).
_random = random.Random(os.urandom(32))
_last = 0
_last_lock = threading.Lock()


def ulid(now_ms: int | None = None) -> str:
    global _last
    millis = int(time.time() * 1000) if now_ms is None else now_ms
    with _last_lock:
        value = (millis << 80) | _random.getrandbits(80)
        if now_ms is None and value <= _last and _last >> 80 == millis:
            value = _last + 1
        if now_ms is None:
            _last = value
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def message_id() -> str:
    return f"msg_{ulid()}"


def subscription_id() -> str:
    return f"sub_{ulid()}"


def delivery_id() -> str:
    """Standard Webhooks' `webhook-id`: the same on every retry of one delivery."""
    return f"evt_{ulid()}"


def webhook_secret() -> str:
    """A Standard Webhooks signing secret (`whsec_` + base64 of 24 random bytes)."""
    return "whsec_" + base64.b64encode(os.urandom(24)).decode()
