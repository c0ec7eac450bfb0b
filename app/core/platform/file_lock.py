"""An exclusive lock on a file shared by every process of the machine (fcntl on POSIX, msvcrt on Windows).

The operating system drops the lock when its holder dies, SIGKILL included: whoever takes it next knows that what
an earlier holder left behind (a half-written backup, a migration) belongs to nobody any more.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from app.core.platform.paths import private_file

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl


@contextmanager
def exclusive_file_lock(path: Path, timeout: float = 60.0) -> Iterator[None]:
    """Hold the lock on `path` (created 0600 if missing) for the block; waits for another holder (on Windows at
    most `timeout` seconds, then OSError)."""
    private_file(path)
    with open(path, "a+b") as handle:
        if sys.platform == "win32":
            deadline = time.monotonic() + timeout
            while True:
                try:
                    handle.seek(0)
                    msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
