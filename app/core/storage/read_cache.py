"""Values read from the database kept in memory until anyone writes: for the reads every operation makes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol


class Versioned(Protocol):
    """What the cache asks of a database: whether other connections committed (and which steady-reads block is on)."""

    def data_version(self) -> int: ...
    def steady_epoch(self) -> int: ...


class ReadCache:
    """Values read from the database kept in memory (company profiles, settings), for reads on every operation.

    Correct across threads and processes: the owner calls `clear()` after writing them, and any commit by
    another connection (another process, or another thread of this one) drops everything, detected by
    `PRAGMA data_version` on the reading thread's connection, which changes exactly then. A value read
    while a `clear()` happened is returned but not kept.
    """

    def __init__(self, storage: Versioned) -> None:
        self._storage = storage
        self._values: dict[Any, Any] = {}
        self._generation = 0
        self._lock = threading.Lock()
        self._seen = threading.local()  # the data_version this thread's connection showed last

    def get(self, key: Any, load: Callable[[], Any]) -> Any:
        steady = self._storage.steady_epoch()
        if not steady or getattr(self._seen, "steady", 0) != steady:
            self._seen.steady = steady
            version = self._storage.data_version()
            if getattr(self._seen, "version", None) != version:
                self._seen.version = version
                self.clear()
        try:
            return self._values[key]
        except KeyError:
            pass
        generation = self._generation
        value = load()
        with self._lock:
            if generation == self._generation:
                self._values[key] = value
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._generation += 1
