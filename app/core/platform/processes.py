"""Which process, on which computer, owns a row: leases of the outbox and of deliveries, a running sandbox's rows.

An owner text is «<host>/<process id>:<tag>». Whether its process still runs can only be known on its own host:
rows of another host (another desk on a shared database) end by their lease's time instead. Texts written before
hosts were named («<pid>:<tag>») are read as this host's.
"""

from __future__ import annotations

import os
import socket

HOST = socket.gethostname().replace("/", "-").replace(":", "-") or "localhost"


def owner_of_this_process(tag: str) -> str:
    """An owner text «<host>/<process id>:<tag>» that `owner_alive` can check."""
    return f"{HOST}/{os.getpid()}:{tag}"


def owner_alive(owner: str | None) -> bool:
    """Whether the process named by an owner text still runs (a SIGKILLed one leaves its rows behind).

    This process, a process of another host, and any process on Windows (no cheap check there) count as alive:
    their rows end by other means (a lease's time, a sandbox's stop)."""
    if not owner:
        return False
    head = owner.split(":", 1)[0]
    host, _, pid_text = head.rpartition("/")
    if host and host != HOST:
        return True
    try:
        pid = int(pid_text)
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
