"""Group commit: requests that arrive together share one transaction and one commit, each failing alone.

The webhook listener's posts and the local API's operations 1 and 2 come from an asyncio event loop. Each request
hands its work (a function that writes through the repositories) to `GroupCommit.run` and awaits it. One writer thread
(a BackgroundLoop, started by the first request, ended after `idle_exit_s` without one) takes what has arrived, up to
`max_batch` requests, and runs it in one `Database.group()`: each request's work in its own savepoint
(`RequestGroup.each`), so a request that raises is rolled back alone while the others stay, then one commit for all.
Durability is the requests' own: a work that opens `transaction(durable=True)` inside the group makes the group's
commit durable, so a batch of operation-1 requests costs one sync instead of one each.

A request is answered only once the commit that holds it returned (on disk when it was durable). The writer hands
the answers of a batch to each event loop in one call (`call_soon_threadsafe` once per batch and loop, not once per
request: waking a loop costs the writer a write to its self-pipe and the loop a turn). A request that waits on an
empty queue wakes the writer; the others find it awake.

What a request announces (the engine's events, a wake of the forwarder) must wait for its commit too: `after`, given
to `run`, is called on the writer thread with the work's result once the commit is done, never for a request whose
work failed or was undone. A work may raise `Undo(answer)`: its writes are rolled back like a failure's, and `run`
returns `answer` (an error envelope that must not leave half a request stored behind).

Should the commit itself fail, every request of the batch is run again alone, so one bad request cannot fail the
others. `close()` lets the writer finish what it holds, then ends it (a later request starts it again).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.platform.lazy import lazy_module
from app.core.platform.loops import IDLE, BackgroundLoop, Due
from app.core.storage.ports.database import Database

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_module("asyncio")  # only a request from an event loop needs it (the windows never do)

log = logging.getLogger(__name__)

MAX_BATCH = 256
IDLE_EXIT_S = 30.0


class Undo(Exception):  # noqa: N818 - an instruction to the writer, not an error
    """Raised by a request's work: roll its writes back (the others' stay) and answer `answer`."""

    def __init__(self, answer: Any) -> None:
        super().__init__("undone")
        self.answer = answer


@dataclass(slots=True)
class _Request:
    work: Callable[[], Any]
    after: Callable[[Any], None] | None
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future


@dataclass(slots=True)
class _Outcome:
    value: Any = None
    error: BaseException | None = None
    stored: bool = False  # the work's writes are in the commit: `after` is due


class GroupCommit:
    """The writer thread and its queue (see the module's doc). `batches` counts the commits it made (a batch whose
    commit failed counts again in its retries), `loop_wakes` the times it handed answers to an event loop."""

    def __init__(self, database: Database, name: str, *, what: str | None = None, max_batch: int = MAX_BATCH,
                 idle_exit_s: float = IDLE_EXIT_S, logger: logging.Logger | None = None) -> None:
        self.database = database
        self.max_batch = max_batch
        self.idle_exit_s = idle_exit_s
        self._log = logger or log
        self._pending: list[_Request] = []
        self._lock = threading.Lock()  # guards `_pending`
        self._last_batch = time.monotonic()  # when the writer last wrote one (its idle time counts from there)
        self.received = 0  # requests handed to `run`
        self.batches = 0
        self.loop_wakes = 0
        self._writer = BackgroundLoop(name, self._round, what=what or name, logger=self._log)

    @property
    def writer(self) -> BackgroundLoop:
        return self._writer

    async def run(self, work: Callable[[], Any], after: Callable[[Any], None] | None = None) -> Any:
        """`work()` on the writer thread inside the next group; its result once the commit holding it is done, or
        its exception (the request alone failed). `after(result)` runs on the writer after that commit."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._lock:
            first = not self._pending
            self._pending.append(_Request(work, after, loop, future))
            self.received += 1
        if first:  # the writer takes everything waiting: later arrivals find it woken already
            self._writer.wake()  # started if it is not running
        return await future

    def close(self, timeout: float = 10.0) -> None:
        """Let the writer finish what it holds (before the storage closes), then end it."""
        self._writer.finish(timeout)

    # ------------------------------------------------------------ the writer thread

    def _round(self) -> Due:
        """Up to max_batch requests committed together and answered; with none waiting, the wait for the next one
        (IDLE after idle_exit_s without one: the writer ends)."""
        with self._lock:
            batch, self._pending = self._pending[:self.max_batch], self._pending[self.max_batch:]
        if not batch:
            idle = time.monotonic() - self._last_batch
            return IDLE if idle >= self.idle_exit_s else self.idle_exit_s - idle
        outcomes = self._commit(batch)
        for request, outcome in zip(batch, outcomes, strict=True):
            if outcome.stored and request.after is not None:
                try:
                    request.after(outcome.value)
                except Exception:  # stored is stored: a broken announcement must not fail the answer
                    self._log.exception("after a group commit: announcing a request failed")
        self._answer(batch, outcomes)
        self._last_batch = time.monotonic()
        return 0.0  # look for more at once

    def _commit(self, batch: list[_Request]) -> list[_Outcome]:
        """Each request's outcome. The batch is one transaction, each request in a savepoint; when the commit fails,
        each request is committed again on its own, so a bad request fails alone."""
        outcomes: list[_Outcome] = []
        try:
            with self.database.group() as group:
                for request in batch:
                    outcomes.append(_run_one(group, request))
            self.batches += 1
            return outcomes
        except Exception as exc:
            if len(batch) == 1:  # nothing of it is stored
                self._log.exception("%s: a group commit failed", self._writer.what)
                return [_Outcome(error=exc)]
        return [outcome for request in batch for outcome in self._commit([request])]

    def _answer(self, batch: list[_Request], outcomes: list[_Outcome]) -> None:
        """The batch's answers handed to each event loop in one call."""
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future, _Outcome]]] = {}
        for request, outcome in zip(batch, outcomes, strict=True):
            by_loop.setdefault(request.loop, []).append((request.future, outcome))
        for loop, answers in by_loop.items():
            # Counted before the loop may answer: whoever reads the counter after an answer arrived sees its wake.
            self.loop_wakes += 1
            try:
                loop.call_soon_threadsafe(_settle, answers)
            except RuntimeError:  # the server stopped meanwhile: what is stored stays, nobody waits
                self.loop_wakes -= 1


def _run_one(group: Any, request: _Request) -> _Outcome:
    """One request's work in its savepoint of `group` (a RequestGroup)."""
    try:
        with group.each():
            value = request.work()
    except Undo as undone:
        return _Outcome(value=undone.answer)
    except Exception as exc:
        return _Outcome(error=exc)
    return _Outcome(value=value, stored=True)


def _settle(answers: list[tuple[asyncio.Future, _Outcome]]) -> None:
    for future, outcome in answers:
        if future.done():  # its request was cancelled (the client went away)
            continue
        if outcome.error is not None:
            future.set_exception(outcome.error)
        else:
            future.set_result(outcome.value)


@dataclass(frozen=True)
class GroupCommitHandle:
    """A group commit as the engine publishes it (to the local HTTP API): what its owner may do with it (`run`,
    `close`) and its counters, without the writer's internals."""

    _group: GroupCommit

    async def run(self, work: Callable[[], Any], after: Callable[[Any], None] | None = None) -> Any:
        return await self._group.run(work, after)

    def close(self, timeout: float = 10.0) -> None:
        self._group.close(timeout)

    @property
    def received(self) -> int:
        return self._group.received

    @property
    def batches(self) -> int:
        return self._group.batches

    @property
    def loop_wakes(self) -> int:
        return self._group.loop_wakes
