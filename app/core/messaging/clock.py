"""The messaging clock: one function, so tests move time (retries hours apart) instead of waiting."""

from __future__ import annotations

import time


def now() -> float:
    return time.time()
