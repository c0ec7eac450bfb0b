"""The SIGKILL storm the outbox tests run (tests/core/invoicing/test_kill_storm.py for sendBill,
test_gre_kill_storm.py for guías): two sender processes on one data folder, one of them SIGKILLed after every few
documents reach the sandbox and started again, until enough kills happened and the sandbox has everything."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Sandboxed:
    """What the storm reads of the sandbox: how many documents reached it, waiting for more, whether it has all."""

    sends: Callable[[], int]
    wait_for_sends: Callable[[int, float], bool]
    has_everything: Callable[[], bool]


def storm(start: Callable[[], subprocess.Popen], sandbox: Sandboxed, min_kills: int, limit_s: float,
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
                os.kill(senders[victim].pid, signal.SIGKILL)
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
