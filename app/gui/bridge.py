"""Engine events → Qt signals, so widgets always update on the GUI thread."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:
    from app.core.engine import Engine


class EngineEvents(QObject):
    """Subscribes to `engine.events`; every event is re-emitted as `event(name, payload)`."""

    event = Signal(str, object)

    def __init__(self, engine: Engine, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._unsubscribe = engine.events.subscribe(self._relay)
        self.destroyed.connect(lambda *_: self.stop())

    def _relay(self, name: str, payload: dict[str, Any]) -> None:
        try:
            self.event.emit(name, payload)
        except RuntimeError:  # the window closed while a worker was still telling
            self.stop()

    @property
    def active(self) -> bool:
        """False once stopped: the window is closing and the engine may be closed next."""
        return self._unsubscribe is not None

    def stop(self) -> None:
        if self._unsubscribe:
            self._unsubscribe()
            self._unsubscribe = None
