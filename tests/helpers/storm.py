"""The SIGKILL storm the outbox tests run (tests/core/invoicing/test_kill_storm.py for sendBill,
test_gre_kill_storm.py for guías): two sender processes on one data folder, one of them SIGKILLed after every few
documents reach the sandbox and started again, until enough kills happened and the sandbox has everything.

The senders are forked from a server process that has already imported the engine (multiprocessing's forkserver):
each is a real process of its own with its own database connections, SIGKILLed like any other, but the storm's
fifty-odd restarts no longer pay Python's and the engine's imports each time (they were most of the storm's CPU)."""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import forkserver

_numbers = itertools.count()


def _run_sender(main: Callable[[str], None], home: str, output: str, environment: dict[str, str]) -> None:
    """In the forked sender: the test's environment of now (the forkserver kept the one it started with), the data
    folder, and its printed lines into its own file."""
    os.environ.clear()
    os.environ.update(environment, YUPANA_HOME=home)
    with open(output, "w", encoding="utf-8", buffering=1) as stream:
        sys.stdout = stream
        main(home)


class ForkedSender:
    """One sender process, with the parts of subprocess.Popen the storm uses (poll, communicate, kill)."""

    def __init__(self, main: Callable[[str], None], home: Path) -> None:
        self._output = home.parent / f"sender-{os.getpid()}-{next(_numbers)}.out"
        arguments = (main, str(home), str(self._output), dict(os.environ))
        self._process = forkserver.context().Process(target=_run_sender, args=arguments)
        self._process.start()

    def poll(self) -> int | None:
        return self._process.exitcode

    def kill(self) -> None:
        self._process.kill()

    def communicate(self, timeout: float | None = None) -> tuple[str, None]:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired("sender", timeout or 0)
        text = self._output.read_text(encoding="utf-8") if self._output.exists() else ""
        return text, None


@dataclass(frozen=True)
class Sandboxed:
    """What the storm reads of the sandbox: how many documents reached it, waiting for more, whether it has all."""

    sends: Callable[[], int]
    wait_for_sends: Callable[[int, float], bool]
    has_everything: Callable[[], bool]


def storm(start: Callable[[], ForkedSender], sandbox: Sandboxed, min_kills: int, limit_s: float,
          rng: random.Random, most_between_kills: int = 4) -> tuple[int, list[str]]:
    """Run the storm; (kills, every sender's output). The last two senders run to their end."""
    senders = [start(), start()]
    outputs: list[str] = []
    kills = 0
    started = time.monotonic()
    try:
        while time.monotonic() - started < limit_s:
            if kills >= min_kills and sandbox.has_everything():
                break
            victim = rng.randrange(2)
            # kill after a few more documents reach the sandbox: while waiting for the answer, or just after
            if not sandbox.wait_for_sends(sandbox.sends() + rng.randint(1, most_between_kills), 10):
                if all(s.poll() is not None for s in senders):
                    break  # both finished: nothing left to send
            if senders[victim].poll() is None:
                senders[victim].kill()  # SIGKILL
                kills += 1
            outputs.append(senders[victim].communicate(timeout=30)[0])
            senders[victim] = start()
    finally:
        for process in senders:
            try:
                outputs.append(process.communicate(timeout=120)[0])  # the last two run to the end
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
                raise
    return kills, outputs
