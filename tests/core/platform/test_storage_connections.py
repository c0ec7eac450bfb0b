"""Storage connections follow their thread: a thread that ends gives its SQLite connection back.

Reported: `ThreadingHTTPServer` made a thread per TCP connection and Storage kept every thread's
connection until close; 20k client connections left 9,984 descriptors open.
"""

from __future__ import annotations

import os
import threading

import pytest

from app.core.storage.engines import open_database


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc (Linux)")


def test_threads_that_end_close_their_connections(tmp_path):
    storage = open_database(tmp_path / "db.sqlite")
    try:
        storage.query("SELECT 1")  # this thread's connection (and the WAL files) before the baseline
        before = open_files()
        for _ in range(200):
            worker = threading.Thread(target=storage.query, args=("SELECT count(*) FROM settings",))
            worker.start()
            worker.join(10)
        assert open_files() - before <= 3
        assert len(storage._connections) <= 3  # this thread's and, perhaps, the checkpointer's
    finally:
        storage.close()


def test_close_still_closes_the_connections_of_live_threads(tmp_path):
    storage = open_database(tmp_path / "db.sqlite")
    ready, release = threading.Event(), threading.Event()

    def hold() -> None:
        storage.query("SELECT 1")
        ready.set()
        release.wait(10)

    worker = threading.Thread(target=hold)
    worker.start()
    assert ready.wait(10)
    storage.close()
    assert storage._connections == []
    release.set()
    worker.join(10)
