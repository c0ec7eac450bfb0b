"""One background loop for the engine's workers (the outbox and its lease keeper, the voids' ticket poller, the
forwarder, the SQLite checkpointer, the listener's writer, the desks' change feed and cache watch, the scheduled
backups and their file writer): a named daemon thread, started on demand, that runs
rounds until it is stopped.

A round is a callable that does one pass of work and says when the next one is due:
- a number of seconds (0 or less: at once): the thread waits that long, or until `wake()`;
- `UNTIL_WOKEN`: it waits for a `wake()`;
- `IDLE`: nothing is left to do and the thread ends; the next `start()` or `wake()` starts a new one (a wake that
  came while the round ran is never lost: it runs another round instead).
A `wake()` while a round runs makes the next wait end at once. An exception in a round is logged («<what> round
failed», with its traceback, on the owner's logger) and survived: the next round comes `error_wait_s` later, or at a
wake. `rounds` counts the rounds finished (failed ones too) and `wait_round` waits for one, so tests wait on a
condition instead of sleeping.

Two ways to end: `stop()` is final (the loop never starts again: an engine that closed); `finish()` lets the thread
run rounds while they have work at once, then ends it, and a later `wake()` starts it again (a queue's consumer
whose server stops and may start again). `join()` waits for a thread that ends by itself (`IDLE`).

A `session` (a context manager factory) is entered by each thread before its first round and left after its last:
resources that live as long as the thread (an HTTP client, a pool). A thread leaves its session before another one
may start.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

log = logging.getLogger(__name__)

UNTIL_WOKEN = math.inf  # a round's answer: wait for a wake, however long
IDLE = None  # a round's answer: nothing left to do, the thread ends
Due = float | None  # what a round answers: seconds until the next round, UNTIL_WOKEN or IDLE
ERROR_WAIT_S = 5.0


class BackgroundLoop:
    """A named daemon thread running `work` (one round) again and again (see the module's doc)."""

    def __init__(self, name: str, work: Callable[[], Due], *, what: str | None = None,
                 logger: logging.Logger | None = None, error_wait_s: float = ERROR_WAIT_S,
                 session: Callable[[], AbstractContextManager[object]] | None = None) -> None:
        self.name = name  # the thread's
        self.what = what or name  # in the log: «<what> round failed»
        self.error_wait_s = error_wait_s
        self._work = work  # one round
        self._log = logger or log
        self._session = session
        self._state = threading.Condition()  # guards everything below; notified on every change
        self._thread: threading.Thread | None = None
        self._woken = False  # a wake since the current round began
        self._stopping = False  # stop(): final
        self._finishing = False  # finish(): end once a round has nothing to do at once
        self._rounds = 0

    # ------------------------------------------------------------ what the owner and tests read

    @property
    def rounds(self) -> int:
        """Rounds finished so far (failed ones too)."""
        return self._rounds

    @property
    def thread(self) -> threading.Thread | None:
        """The loop's thread while it runs, else None."""
        return self._thread

    @property
    def running(self) -> bool:
        return self._thread is not None

    @property
    def stopping(self) -> bool:
        """Whether `stop()` was asked: a round with many items checks it between them."""
        return self._stopping

    def in_loop(self) -> bool:
        """Whether the calling thread is the loop's."""
        return self._thread is not None and threading.current_thread() is self._thread

    # ------------------------------------------------------------ life cycle

    def start(self) -> None:
        """Start the thread unless it runs already or the loop was stopped."""
        with self._state:
            self._start_locked()

    def wake(self, start: bool = True) -> None:
        """Run a round now: the current wait ends, or (a round under way) the next one does not happen. `start`:
        start the thread if it is not running (else a loop that is not running stays so)."""
        with self._state:
            self._woken = True
            if start:
                self._start_locked()
            self._state.notify_all()

    def stop(self, timeout: float = 5.0) -> bool:
        """End the loop for good after the round under way; True once its thread has ended (or there was none)."""
        with self._state:
            self._stopping = True
            self._state.notify_all()
        return self._join(timeout)

    def finish(self, timeout: float = 10.0) -> bool:
        """End the thread once its rounds have no work at once (what it holds is done first); a later `wake()` starts
        a new one. True once it has ended."""
        with self._state:
            if self._thread is None:
                return True
            self._finishing = True
            self._state.notify_all()
        return self._join(timeout)

    def join(self, timeout: float) -> bool:
        """Wait for the thread to end by itself (a round answered IDLE), without asking it to; True once it has."""
        return self._join(timeout)

    def wait_round(self, after: int, timeout: float = 10.0) -> bool:
        """Wait until a round numbered past `after` has finished (`rounds` read before the change awaited)."""
        with self._state:
            return self._state.wait_for(lambda: self._rounds > after, timeout)

    def wait_stopped(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds, ending early when the loop is stopped (a pause of a caller that must end
        with the engine); True when stopped."""
        with self._state:
            return self._state.wait_for(lambda: self._stopping, timeout)

    # ------------------------------------------------------------ the thread

    def _start_locked(self) -> None:
        if self._thread is None and not self._stopping:
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def _join(self, timeout: float) -> bool:
        """Join the loop's thread, and the one that replaced it if a wake came as it ended."""
        deadline = time.monotonic() + timeout
        while True:
            with self._state:
                thread = self._thread
            if thread is None:
                return True
            if thread is threading.current_thread():
                return False  # asked from a round: it ends when the round returns
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                return False

    def _run(self) -> None:
        restart = True
        try:
            with self._session() if self._session is not None else nullcontext():
                self._rounds_until_the_end()
        except Exception:  # the session could not be entered or left: no new thread until the next wake
            self._log.exception("%s stopped", self.what)
            restart = False
        finally:
            with self._state:
                self._thread = None
                if restart and self._woken and not self._stopping:  # woken as it ended: a new thread takes over
                    self._start_locked()
                else:
                    self._finishing = False
                    self._woken = False
                self._state.notify_all()

    def _rounds_until_the_end(self) -> None:
        while True:
            with self._state:
                if self._stopping:
                    return
                self._woken = False
            try:
                due = self._work()
            except Exception:
                if self._stopping:
                    return  # a round cut short by the stop (its storage closing): nothing to report
                self._log.exception("%s round failed", self.what)
                due = self.error_wait_s
            with self._state:
                self._rounds += 1
                self._state.notify_all()
                if not self._another_round(due):
                    return

    def _another_round(self, due: Due) -> bool:
        """Wait as the round asked (holding `_state`); whether to run another round."""
        if self._stopping:
            return False
        if due is None or (self._finishing and due > 0):
            return self._woken  # nothing to do at once: end, unless a wake came meanwhile
        if due > 0:
            self._state.wait_for(lambda: self._woken or self._stopping or self._finishing,
                                 None if due == UNTIL_WOKEN else due)
            if self._finishing and not self._woken:
                return False
        return not self._stopping
