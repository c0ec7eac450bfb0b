"""The worker pool: engine calls that touch disk, network or crypto never run on the GUI thread.

A job runs `fn(*args)` on a QThreadPool thread; its outcome comes back through Qt signals of a
small relay object living on the GUI thread, so it is delivered there, and dropped silently if the
widget that asked is gone by then. Widgets listed as `busy` are disabled while it runs.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot
from PySide6.QtWidgets import QWidget

from app.core.errors import ErrorCode, YupanaError

log = logging.getLogger(__name__)


class Relay(QObject):
    """Lives on the GUI thread, owned by the pool (never by the asking widget, so a worker never emits on
    a deleted object); it forwards each outcome to the owner's callbacks only while the owner exists."""

    succeeded = Signal(object)
    failed = Signal(object)
    progressed = Signal(object)
    ended = Signal()

    def __init__(self, owner: QObject, done: Callable[[Any], None] | None, failed: Callable[[BaseException], None],
                 progress: Callable[[Any], None] | None, finish: Callable[[Relay], None]) -> None:
        super().__init__()
        self.owner, self.done, self.on_failure, self.progress, self.finish = owner, done, failed, progress, finish
        self.succeeded.connect(self._succeeded)
        self.failed.connect(self._failed)
        self.progressed.connect(self._progressed)
        self.ended.connect(self._ended)

    def _owner_alive(self) -> bool:
        return shiboken6.isValid(self.owner)

    @Slot(object)
    def _succeeded(self, value: Any) -> None:
        if self.done and self._owner_alive():
            self.done(value)

    @Slot(object)
    def _failed(self, exc: BaseException) -> None:
        if self._owner_alive():
            self.on_failure(exc)

    @Slot(object)
    def _progressed(self, value: Any) -> None:
        if self.progress and self._owner_alive():
            self.progress(value)

    @Slot()
    def _ended(self) -> None:
        self.finish(self)


class Job:
    """What a running call exposes: progress reports from the worker and a cancel flag."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.cancelled = threading.Event()
        self.done = threading.Event()

    def report(self, value: Any) -> None:
        """Called from the worker thread; delivered to `progress` on the GUI thread."""
        try:
            self.relay.progressed.emit(value)
        except RuntimeError:  # the owner widget was closed meanwhile
            pass

    def cancel(self) -> None:
        self.cancelled.set()


class _Task(QRunnable):
    def __init__(self, job: Job, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
        super().__init__()
        self.job, self.fn, self.args, self.kwargs = job, fn, args, kwargs

    def run(self) -> None:
        relay = self.job.relay
        try:
            result = self.fn(*self.args, **self.kwargs)
        except BaseException as exc:  # noqa: BLE001 - every failure must reach the window
            if not isinstance(exc, YupanaError):
                log.exception("unexpected error in a background task")
            self._emit(relay.failed, exc)
        else:
            self._emit(relay.succeeded, result)
        finally:
            self.job.done.set()
            self._emit(relay.ended)

    @staticmethod
    def _emit(signal: Any, *values: Any) -> None:
        try:
            signal.emit(*values)
        except RuntimeError:  # the relay's owner was destroyed: nobody is waiting any more
            pass


def require(engine: Any, method: str) -> Callable[..., Any]:
    """The engine's `method`, or a NOT_CONFIGURED error while the feature is not in this version."""
    function = getattr(engine, method, None)
    if function is None:
        raise YupanaError(ErrorCode.NOT_CONFIGURED, "Esta función todavía no está disponible en esta versión de Yupana.")
    return function


class Workers(QObject):
    """A pool of worker threads plus the bookkeeping to show that work is running."""

    busy_changed = Signal(int)

    def __init__(self, threads: int = 4, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(threads)
        self.running = 0
        self._relays: set[Relay] = set()
        # Fallback handlers for a failure nobody handles (set by the main window).
        self.on_error: Callable[[QObject, BaseException], None] | None = None

    def run(self, owner: QObject, fn: Callable[..., Any], *args: Any,
            done: Callable[[Any], None] | None = None,
            failed: Callable[[BaseException], None] | None = None,
            progress: Callable[[Any], None] | None = None,
            busy: Iterable[QWidget] = (), pass_job: bool = False, **kwargs: Any) -> Job:
        """Run `fn(*args)` (or `fn(job, *args)` with `pass_job`, for progress and cancel) on the pool."""
        widgets = [w for w in busy if w is not None]
        relay = Relay(owner, done, failed or (lambda exc: self._unhandled(owner, exc)), progress,
                      lambda finished: self._finish(finished, widgets))
        self._relays.add(relay)
        job = Job(relay)
        if pass_job:
            args = (job, *args)
        for widget in widgets:
            widget.setEnabled(False)
        self.running += 1
        self.busy_changed.emit(self.running)
        self.pool.start(_Task(job, fn, args, kwargs))
        return job

    def _finish(self, relay: Relay, widgets: list[QWidget]) -> None:
        for widget in widgets:
            if shiboken6.isValid(widget):
                widget.setEnabled(True)
        self._relays.discard(relay)
        if not shiboken6.isValid(self):  # the window that owned the pool is gone
            return
        self.running -= 1
        self.busy_changed.emit(self.running)
        relay.deleteLater()

    def _unhandled(self, owner: QObject, exc: BaseException) -> None:
        if self.on_error:
            self.on_error(owner, exc)
        else:
            log.error("unhandled background error: %s", exc)

    def wait(self, timeout_ms: int = 10_000) -> bool:
        """Block until every job has finished (used at exit and by tests)."""
        return self.pool.waitForDone(timeout_ms)
