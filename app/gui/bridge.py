"""Engine events → Qt signals, so widgets always update on the GUI thread."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:
    from app.core.api import Engine, Event, EventHandle


class EngineEvents(QObject):
    """Subscribes to the engine's events (`engine.admin.subscribe`); every event is re-emitted as
    `occurred(name, payload)`, the payload one of the typed events of `app.core.api.events`."""

    occurred = Signal(str, object)  # not `event`, which would hide QObject.event()

    def __init__(self, engine: Engine, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._handle: EventHandle | None = engine.admin.subscribe(self._relay)
        self.destroyed.connect(lambda *_: self.stop())

    def _relay(self, name: str, payload: Event) -> None:
        try:
            self.occurred.emit(name, payload)
        except RuntimeError:  # the window closed while a worker was still telling
            self.stop()

    @property
    def active(self) -> bool:
        """False once stopped: the window is closing and the engine may be closed next."""
        return self._handle is not None

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
