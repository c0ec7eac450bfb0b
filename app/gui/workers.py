"""The worker pool: engine calls that touch disk, network or crypto never run on the GUI thread.

A job runs `fn(*args)` on a QThreadPool thread; its outcome comes back through Qt signals of a
small relay object living on the GUI thread, so it is delivered there, and dropped silently if the
widget that asked is gone by then. Widgets listed as `busy` are disabled while it runs.

Python objects that reach a worker (the function, its closure over a widget, the result, an
exception with its traceback) are kept by the job and released on the GUI thread: a Qt object
whose last reference died on a worker thread would be destroyed there, which crashes Qt.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot
from PySide6.QtWidgets import QWidget

from app.core.api import YupanaError

log = logging.getLogger(__name__)


class Relay(QObject):
    """Lives on the GUI thread; forwards each outcome to the owner's callbacks while the owner exists.
    It holds the owner weakly, so no reference cycle keeps a closed window alive."""

    succeeded = Signal(object)
    failed = Signal(object)
    progressed = Signal(object)
    ended = Signal()

    def __init__(self, owner: QObject, done: Callable[[Any], object] | None,
                 failed: Callable[[BaseException], object], progress: Callable[[Any], object] | None,
                 finish: Callable[[Relay], None],
                 release: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.owner = weakref.ref(owner)
        # Every callback is None once forgotten.
        self.done: Callable[[Any], object] | None = done
        self.on_failure: Callable[[BaseException], object] | None = failed
        self.progress: Callable[[Any], object] | None = progress
        self.finish: Callable[[Relay], None] | None = finish
        self.release: Callable[[], None] | None = release
        self.succeeded.connect(self._succeeded)
        self.failed.connect(self._failed)
        self.progressed.connect(self._progressed)
        self.ended.connect(self._ended)

    def _owner_alive(self) -> bool:
        owner = self.owner()
        return owner is not None and shiboken6.isValid(owner)

    def _release_busy(self) -> None:
        # Busy widgets come back before the outcome is shown, so the outcome's own state wins.
        if self.release:
            self.release()

    @Slot(object)
    def _succeeded(self, value: Any) -> None:
        self._release_busy()
        if self.done and self._owner_alive():
            self.done(value)

    @Slot(object)
    def _failed(self, exc: BaseException) -> None:
        self._release_busy()
        if self.on_failure and self._owner_alive():
            self.on_failure(exc)

    @Slot(object)
    def _progressed(self, value: Any) -> None:
        if self.progress and self._owner_alive():
            self.progress(value)

    @Slot()
    def _ended(self) -> None:
        if self.finish:
            self.finish(self)

    def forget(self) -> None:
        """Drop the callbacks (closures over widgets) on the GUI thread."""
        self.done = self.on_failure = self.progress = self.finish = self.release = None


class Job:
    """What a running call exposes: progress reports from the worker and a cancel flag. It also holds
    what the worker touched until the GUI thread releases it."""

    def __init__(self, relay: Relay, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.relay: Relay | None = relay
        # None once released.
        self.fn: Callable[..., Any] | None = fn
        self.args: tuple[Any, ...] | None = args
        self.kwargs: dict[str, Any] | None = kwargs
        self.outcome: tuple[bool, Any] | None = None
        self.cancelled = threading.Event()
        self.done = threading.Event()
        self.returned = threading.Event()  # the worker no longer touches the relay

    def report(self, *values: Any) -> None:
        """Called from the worker thread; delivered to `progress` on the GUI thread (several values as a
        tuple, e.g. `report(done, total)` for a progress bar)."""
        if self.relay is not None:
            _emit(self.relay.progressed, values[0] if len(values) == 1 else values)

    def cancel(self) -> None:
        self.cancelled.set()

    def release(self) -> None:
        """On the GUI thread: let go of everything the worker used."""
        self.fn = self.args = self.kwargs = self.outcome = None


def _emit(signal: Any, *values: Any) -> None:
    try:
        signal.emit(*values)
    except RuntimeError:  # the relay is gone: nobody is waiting any more
        pass


class _Task(QRunnable):
    def __init__(self, job: Job) -> None:
        super().__init__()
        self.job = job

    def run(self) -> None:
        job = self.job
        try:
            if job.fn is None or job.args is None or job.kwargs is None:
                raise RuntimeError("a background job was released before it ran")
            job.outcome = (True, job.fn(*job.args, **job.kwargs))
        except BaseException as exc:  # noqa: BLE001 - every failure must reach the window
            if not isinstance(exc, YupanaError):
                log.exception("unexpected error in a background task")
            job.outcome = (False, exc)
        succeeded, value = job.outcome
        # The relay is there: it goes only after `returned` is set, below (Workers._bury).
        if job.relay is not None:
            _emit(job.relay.succeeded if succeeded else job.relay.failed, value)
        del value
        job.done.set()
        if job.relay is not None:
            _emit(job.relay.ended)
        job.returned.set()


class Workers(QObject):
    """A pool of worker threads plus the bookkeeping to show that work is running."""

    busy_changed = Signal(int)

    def __init__(self, threads: int = 4, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(threads)
        self.running = 0
        self._jobs: dict[Relay, Job] = {}
        self._retired: list[Job] = []  # finished jobs whose worker may still be returning
        # Fallback handler for a failure nobody handles (set by the main window).
        self.on_error: Callable[[QObject, BaseException], None] | None = None

    def run(self, owner: QObject, fn: Callable[..., Any], *args: Any,
            done: Callable[[Any], object] | None = None,
            failed: Callable[[BaseException], object] | None = None,
            progress: Callable[[Any], object] | None = None,
            busy: Iterable[QWidget] = (), pass_job: bool = False, **kwargs: Any) -> Job:
        """Run `fn(*args)` (or `fn(job, *args)` with `pass_job`, for progress and cancel) on the pool."""
        widgets = [w for w in busy if w is not None]
        owner_ref = weakref.ref(owner)
        relay = Relay(owner, done, failed or (lambda exc: self._unhandled(owner_ref(), exc)), progress,
                      lambda finished: self._finish(finished, widgets), lambda: self._release(widgets))
        job = Job(relay, fn, args, kwargs)
        if pass_job:
            job.args = (job, *args)
        self._jobs[relay] = job
        for widget in widgets:
            widget.setEnabled(False)
        self.running += 1
        self.busy_changed.emit(self.running)
        self.pool.start(_Task(job))
        return job

    @staticmethod
    def _release(widgets: list[QWidget]) -> None:
        """Enable the job's busy widgets once (the outcome or the job's end, whichever comes first)."""
        for widget in widgets:
            if shiboken6.isValid(widget):
                widget.setEnabled(True)
        widgets.clear()

    def _finish(self, relay: Relay, widgets: list[QWidget]) -> None:
        self._release(widgets)
        job = self._jobs.pop(relay)
        relay.forget()
        job.release()
        self._retired.append(job)
        self._bury()
        if not shiboken6.isValid(self):  # the window that owned the pool is gone
            return
        self.running -= 1
        self.busy_changed.emit(self.running)

    def _bury(self) -> None:
        """Delete the relays of jobs whose worker has returned (on the GUI thread)."""
        keep = []
        for job in self._retired:
            if job.returned.is_set():
                if job.relay is not None and shiboken6.isValid(job.relay):
                    job.relay.deleteLater()
                job.relay = None
            else:
                keep.append(job)
        self._retired = keep

    def _unhandled(self, owner: QObject | None, exc: BaseException) -> None:
        if self.on_error and owner is not None:
            self.on_error(owner, exc)
        else:
            log.error("unhandled background error: %s", exc)

    def wait(self, timeout_ms: int = 10_000) -> bool:
        """Block until every job has finished (used at exit and by tests)."""
        finished = self.pool.waitForDone(timeout_ms)
        self._bury()
        return finished
