"""A small thread-safe publish/subscribe bus: the engine tells, listeners (GUI adapters, tests) hear.

The engine never knows who listens; the GUI turns these calls into Qt signals on its side.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

Listener = Callable[[str, dict[str, Any]], None]
log = logging.getLogger(__name__)


class EventBus:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(name, payload)` for every event; returns the function that unsubscribes."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def emit(self, name: str, payload: dict[str, Any] | None = None) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(name, payload or {})
            except Exception:  # a broken listener must not break the engine
                log.exception("event listener failed for %s", name)
