"""The background-loop helper (app.core.platform.loops) that the engine's five workers share, and the rule that
holds it: no hand-written thread in app/core outside it and a listed few places, each with its reason.

No sleeps: every wait is on a condition (a round counted, an Event, a thread joined) with a timeout."""

from __future__ import annotations

import ast
import logging
import threading
import time
from contextlib import contextmanager

import pytest

from app.core.platform.loops import IDLE, UNTIL_WOKEN, BackgroundLoop
from tests.helpers.base import ROOT

WAIT_S = 10.0  # how long a test waits for something that must happen


class Rounds:
    """A round that records the thread it ran on and answers what the test queued (UNTIL_WOKEN once the queue is
    empty); an exception queued is raised."""

    def __init__(self, *answers: object) -> None:
        self.answers = list(answers)
        self.threads: list[threading.Thread] = []
        self.ended_at: list[float] = []
        self.started_at: list[float] = []

    def __call__(self):
        self.started_at.append(time.monotonic())
        self.threads.append(threading.current_thread())
        answer = self.answers.pop(0) if self.answers else UNTIL_WOKEN
        self.ended_at.append(time.monotonic())
        if isinstance(answer, BaseException):
            raise answer
        return answer


@pytest.fixture
def loops():
    made: list[BackgroundLoop] = []

    def make(work, **options) -> BackgroundLoop:
        loop = BackgroundLoop("test-loop", work, **options)
        made.append(loop)
        return loop

    yield make
    for loop in made:
        assert loop.stop(WAIT_S)


def test_a_loop_starts_on_demand_as_a_named_daemon_thread_and_runs_a_first_round(loops):
    work = Rounds()
    loop = loops(work)
    assert loop.thread is None and loop.rounds == 0  # nothing runs before it is asked
    loop.start()
    assert loop.wait_round(0, WAIT_S)
    thread = loop.thread
    assert thread is not None and thread.name == "test-loop" and thread.daemon and thread.is_alive()
    assert work.threads == [thread]
    loop.start()  # already running: no second thread
    assert loop.thread is thread


def test_a_wake_runs_a_round_at_once_and_a_loop_waiting_for_one_runs_none_without_it(loops):
    work = Rounds()  # every round answers UNTIL_WOKEN
    loop = loops(work)
    loop.start()
    assert loop.wait_round(0, WAIT_S)
    assert not loop.wait_round(1, 0.2)  # waiting for a wake: no round of itself
    loop.wake()
    assert loop.wait_round(1, WAIT_S)
    assert loop.rounds == 2 and len(set(work.threads)) == 1


def test_a_wake_while_a_round_runs_makes_the_next_wait_end_at_once(loops):
    in_round, go_on = threading.Event(), threading.Event()

    def work():
        if not in_round.is_set():
            in_round.set()
            assert go_on.wait(WAIT_S)
        return 3600.0  # an hour: only a wake brings the next round

    loop = loops(work)
    loop.start()
    assert in_round.wait(WAIT_S)
    loop.wake()  # during the round
    go_on.set()
    assert loop.wait_round(1, WAIT_S)  # the second round came without waiting the hour


def test_a_loop_waits_until_the_next_round_is_due(loops):
    work = Rounds(0.3, UNTIL_WOKEN)
    loop = loops(work)
    loop.start()
    assert loop.wait_round(0, WAIT_S)
    assert not loop.wait_round(1, 0.1)  # not due yet
    assert loop.wait_round(1, WAIT_S)  # then due
    assert work.started_at[1] - work.ended_at[0] >= 0.3 * 0.95  # Condition.wait may wake a hair early


def test_a_round_answering_zero_is_followed_at_once(loops):
    work = Rounds(0.0, 0.0, 0.0)
    loop = loops(work)
    loop.start()
    assert loop.wait_round(3, WAIT_S)  # four rounds without a wake
    assert len(work.threads) >= 4


def test_a_failing_round_is_logged_and_survived_on_the_same_thread(loops, caplog):
    owner = logging.getLogger("tests.loops.owner")
    work = Rounds(RuntimeError("fallo inyectado"))
    loop = loops(work, what="test worker", logger=owner, error_wait_s=3600.0)
    with caplog.at_level(logging.ERROR, logger=owner.name):
        loop.start()
        assert loop.wait_round(0, WAIT_S)  # a failed round counts
    [record] = [r for r in caplog.records if r.name == owner.name]
    assert record.message == "test worker round failed" and record.exc_info is not None
    assert not loop.wait_round(1, 0.2)  # it waits error_wait_s (an hour) ...
    loop.wake()  # ... or a wake
    assert loop.wait_round(1, WAIT_S)
    assert len(work.threads) == 2 and work.threads[0] is work.threads[1] and loop.thread is work.threads[0]


def test_a_round_failing_after_the_stop_ends_quietly(loops, caplog):
    in_round, stopped = threading.Event(), threading.Event()

    def work():
        in_round.set()
        assert stopped.wait(WAIT_S)
        raise RuntimeError("the storage closed under the round")

    loop = loops(work, what="quiet worker")
    loop.start()
    assert in_round.wait(WAIT_S)
    with caplog.at_level(logging.ERROR):
        stopper = threading.Thread(target=loop.stop, args=(WAIT_S,))
        stopper.start()
        assert loop.wait_stopped(WAIT_S)  # the stop is asked before the round fails
        stopped.set()
        stopper.join(WAIT_S)
    assert loop.thread is None
    assert not [r for r in caplog.records if "quiet worker" in r.getMessage()]


def test_stop_is_final_and_ends_the_thread(loops):
    work = Rounds()
    loop = loops(work)
    loop.start()
    assert loop.wait_round(0, WAIT_S)
    thread = loop.thread
    assert loop.stop(WAIT_S)
    assert thread is not None and not thread.is_alive() and loop.thread is None and loop.stopping
    loop.start()
    loop.wake()
    assert loop.thread is None and loop.rounds == 1  # stopped for good: no new thread, no round


def test_stopping_a_loop_that_never_started_waits_for_nothing(loops):
    loop = loops(Rounds())
    assert loop.stop(0.0)
    loop.wake()
    assert loop.thread is None


def test_a_round_with_many_items_sees_the_stop_between_them(loops):
    seen: list[int] = []
    first = threading.Event()
    loop_holder: list[BackgroundLoop] = []

    def work():
        for item in range(1000):
            if loop_holder[0].stopping:
                return IDLE
            seen.append(item)
            if item == 0:
                first.set()
                assert loop_holder[0].wait_stopped(WAIT_S)  # the test stops the loop now
        return UNTIL_WOKEN

    loop = loops(work)
    loop_holder.append(loop)
    loop.start()
    assert first.wait(WAIT_S)
    assert loop.stop(WAIT_S)
    assert seen == [0]


def test_an_idle_round_ends_the_thread_and_a_wake_starts_a_new_one(loops):
    work = Rounds(IDLE, IDLE)
    loop = loops(work)
    loop.start()
    assert loop.join(WAIT_S)  # ended by itself
    assert loop.thread is None and loop.rounds == 1 and not work.threads[0].is_alive()
    loop.wake()
    assert loop.wait_round(1, WAIT_S) and loop.join(WAIT_S)
    assert work.threads[1] is not work.threads[0]  # a new thread, started by the wake


def test_a_wake_during_an_idle_round_is_not_lost(loops):
    loop_holder: list[BackgroundLoop] = []
    threads = []

    def work():
        threads.append(threading.current_thread())
        if len(threads) == 1:
            loop_holder[0].wake()  # work arrived while this round found none
        return IDLE

    loop = loops(work)
    loop_holder.append(loop)
    loop.start()
    assert loop.wait_round(1, WAIT_S)  # a second round for the wake, instead of ending
    assert loop.join(WAIT_S) and len(threads) == 2


def test_finish_runs_the_work_at_hand_then_ends_and_a_wake_starts_again(loops):
    queue = [1, 2, 3]
    done: list[int] = []
    started, release, fourth = threading.Event(), threading.Event(), threading.Event()

    def work():
        started.set()
        assert release.wait(WAIT_S)
        if queue:
            done.append(queue.pop(0))
            if done[-1] == 4:
                fourth.set()
            return 0.0  # more may be waiting: look at once
        return 3600.0  # nothing: wait for the next item

    loop = loops(work)
    loop.start()
    assert started.wait(WAIT_S)
    finisher = threading.Thread(target=lambda: done.append(loop.finish(WAIT_S)))
    finisher.start()
    release.set()
    finisher.join(WAIT_S)
    assert done == [1, 2, 3, True]  # everything written, then ended
    assert loop.thread is None and not loop.stopping
    queue.append(4)
    loop.wake()  # finished, not stopped: it starts again
    assert fourth.wait(WAIT_S) and loop.running


def test_finish_of_a_loop_that_is_not_running_returns_at_once(loops):
    loop = loops(Rounds())
    assert loop.finish(0.0)
    loop.start()
    assert loop.wait_round(0, WAIT_S) and loop.running  # no finish left pending for the new thread


def test_wait_stopped_ends_at_the_stop(loops):
    loop = loops(Rounds())
    assert not loop.wait_stopped(0.05)
    waited = []
    waiter = threading.Thread(target=lambda: waited.append(loop.wait_stopped(3600.0)))
    waiter.start()
    loop.stop(WAIT_S)
    waiter.join(WAIT_S)
    assert waited == [True]


def test_a_session_lives_as_long_as_each_thread(loops):
    events: list[tuple[str, str]] = []

    @contextmanager
    def session():
        events.append(("enter", threading.current_thread().name))
        try:
            yield
        finally:
            events.append(("leave", threading.current_thread().name))

    work = Rounds(IDLE, UNTIL_WOKEN)
    loop = loops(work, session=session)
    loop.start()
    assert loop.join(WAIT_S)
    assert events == [("enter", "test-loop"), ("leave", "test-loop")]
    loop.wake()
    assert loop.wait_round(1, WAIT_S)
    assert loop.stop(WAIT_S)
    assert events == [("enter", "test-loop"), ("leave", "test-loop")] * 2


def test_a_session_that_fails_ends_the_thread_without_spinning(loops, caplog):
    tries = []

    @contextmanager
    def broken():
        tries.append(1)
        raise OSError("no se pudo abrir")
        yield  # pragma: no cover

    loop = loops(Rounds(), session=broken, what="broken worker")
    with caplog.at_level(logging.ERROR):
        loop.wake()
        assert loop.join(WAIT_S)
    assert tries == [1] and loop.rounds == 0
    assert any(r.getMessage() == "broken worker stopped" and r.exc_info for r in caplog.records)


def test_in_loop_tells_the_loops_thread_from_others(loops):
    answers = []
    loop_holder: list[BackgroundLoop] = []

    def work():
        answers.append(loop_holder[0].in_loop())
        return UNTIL_WOKEN

    loop = loops(work)
    loop_holder.append(loop)
    loop.start()
    assert loop.wait_round(0, WAIT_S)
    assert answers == [True] and not loop.in_loop()


def test_stop_asked_from_a_round_does_not_wait_for_itself(loops):
    loop_holder: list[BackgroundLoop] = []
    answers = []

    def work():
        answers.append(loop_holder[0].stop(WAIT_S))
        return 0.0

    loop = loops(work)
    loop_holder.append(loop)
    loop.start()
    assert loop.join(WAIT_S)
    assert answers == [False] and loop.rounds == 1  # it ended after that round


# ---------------------------------------------------------------- the rule: one home for background threads

CORE = ROOT / "app" / "core"
# Where app/core may still create a thread of its own, and why none of them is a loop of rounds.
THREADS_ALLOWED = {
    "app/core/platform/loops.py": "the helper itself: every background loop's thread",
    "app/core/platform/http/asgi_server.py": "an HTTP server's thread: uvicorn's serve loop, stopped through it",
    "app/core/platform/http/httpserver.py": "an HTTP server's thread: http.server's serve_forever",
    "app/core/services/lookups.py": "the padrón import: one job run once, its progress handed to a reader",
    "app/core/invoicing/workers.py": "a signing worker's pipe reader, in the worker's own process: it sleeps in the "
                                     "read and queues each message, so that the engine's send never waits on it",
}


def thread_creations(source: str) -> list[int]:
    """Lines that create a thread: `threading.Thread(...)`, `Thread(...)` imported from threading, or a class
    deriving from it."""
    tree = ast.parse(source)
    names = {"threading.Thread"} | {
        alias.asname or alias.name for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "threading"
        for alias in node.names if alias.name == "Thread"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in names:
            found.append(node.lineno)
        elif isinstance(node, ast.ClassDef) and any(ast.unparse(base) in names for base in node.bases):
            found.append(node.lineno)
    return sorted(found)


def test_no_thread_is_written_by_hand_in_the_core_outside_the_loop_helper():
    offenders, seen = [], set()
    for path in sorted(CORE.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        lines = thread_creations(path.read_text(encoding="utf-8"))
        if lines:
            seen.add(relative)
        if lines and relative not in THREADS_ALLOWED:
            offenders += [f"{relative}:{line}" for line in lines]
    assert offenders == [], "a background loop uses app.core.platform.loops.BackgroundLoop"
    assert seen == set(THREADS_ALLOWED)  # each allowed place still needs it (the list only shrinks)


def test_the_thread_scan_sees_every_form():
    source = ("import threading\nfrom threading import Thread as T\n"
              "a = threading.Thread(target=print)\nb = T(target=print)\nclass W(threading.Thread):\n    pass\n"
              "c = threading.Event()\n")
    assert thread_creations(source) == [3, 4, 5]


def test_the_background_workers_run_on_the_helper():
    """The outbox and its lease keeper, the ticket poller, the forwarder, the checkpointer, the group commit's
    writer (the listener's and the local API's), the Evolution event streams, the desks' change feed and the shared
    database's cache watch, the scheduled backups and the backup folder's file writer."""
    users = {path.relative_to(ROOT).as_posix() for path in CORE.rglob("*.py")
             if "BackgroundLoop(" in path.read_text(encoding="utf-8")} - {"app/core/platform/loops.py"}
    assert users == {"app/core/invoicing/outbox.py", "app/core/invoicing/voids/tickets.py",
                     "app/core/messaging/forwarding.py", "app/core/storage/sqlite/database.py",
                     "app/core/storage/group_commit.py", "app/core/messaging/evolution_stream.py",
                     "app/core/storage/postgres/changes.py", "app/core/storage/postgres/cache_watch.py",
                     "app/core/invoicing/backup_schedule.py",
                     "app/core/invoicing/backup_files.py"}
