"""Which process owns a row: leases of the outbox, addresses of a running sandbox."""

from __future__ import annotations

import os


def owner_of_this_process(tag: str) -> str:
    """An owner text «<process id>:<tag>» that `owner_alive` can check."""
    return f"{os.getpid()}:{tag}"


def owner_alive(owner: str | None) -> bool:
    """Whether the process named by an owner text «<pid>:…» still runs (a SIGKILLed one leaves its rows behind).

    This process, and any process on Windows (no cheap check there), count as alive: their rows end by other
    means (a lease's time, a sandbox's stop)."""
    if not owner:
        return False
    try:
        pid = int(owner.split(":", 1)[0])
    except ValueError:
        return True
    if pid == os.getpid() or os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
