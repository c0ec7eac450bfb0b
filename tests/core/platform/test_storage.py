"""SQLite storage: WAL, two processes on one folder, migrations applied once."""

import subprocess
import sys
import textwrap
import threading

import pytest
from sqlite_utils import Migrations

from app.core.platform.paths import database_path
from app.core.storage.engines import open_database
from app.core.storage.sqlite import database as storage_module
from app.core.storage.sqlite.database import Storage
from app.core.storage.sqlite.migrations import SETS
from tests.helpers.base import ROOT


def test_database_is_in_wal_mode(engine):
    assert engine._storage.query_one("PRAGMA journal_mode")["journal_mode"] == "wal"
    assert engine.admin.database_file() == database_path(engine.admin.home())


def test_write_rolls_back_on_error(engine):
    with pytest.raises(RuntimeError):
        with engine._storage.write() as conn:
            conn.execute("INSERT INTO settings (key, value) VALUES ('environment', 'beta')")
            raise RuntimeError("boom")
    assert engine.admin.config_get("environment") == "sandbox"


def test_threads_write_without_locking_errors(engine):
    errors = []

    def writer(n):
        try:
            for i in range(50):
                with engine._storage.write() as conn:
                    conn.execute("INSERT INTO settings (key, value) VALUES (?, ?) "
                                 "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (f"t{n}-{i}", "x"))
        except Exception as exc:  # collected, asserted below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    assert engine._storage.query_one("SELECT count(*) AS n FROM settings WHERE key LIKE 't%'")["n"] == 200


WRITER = textwrap.dedent("""
    import sys
    from app.core.engine import Engine
    engine = Engine(sys.argv[1])
    for i in range(200):
        with engine._storage.write() as conn:
            conn.execute("INSERT INTO settings (key, value) VALUES (?, ?)", (f"{sys.argv[2]}-{i}", "x"))
    engine.close()
""")


def test_two_processes_open_and_write_the_same_folder(home):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(home), name], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for name in ("a", "b")]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    store = open_database(database_path(home))
    try:
        assert store.query_one("SELECT count(*) AS n FROM settings WHERE key LIKE 'a-%' OR key LIKE 'b-%'")["n"] == 400
    finally:
        store.close()


def test_a_migration_added_later_runs_once(home, monkeypatch):
    path = database_path(home)
    first = open_database(path)
    first.close()
    runs = []
    later = Migrations("yupana.test-later")

    @later()
    def m001_add_table(db):
        runs.append(1)
        db.execute("CREATE TABLE later_things (id INTEGER PRIMARY KEY)")

    for _ in range(3):
        store = Storage.open(path, [*SETS, later])
        assert "later_things" in store.db().table_names()
        store.close()
    assert runs == [1]


# ---------------------------------------------------------------- checkpoints off the writers' path

def _insert_settings(storage, count, prefix="c"):
    for i in range(count):
        with storage.write() as conn:
            conn.execute("INSERT INTO settings (key, value) VALUES (?, ?)", (f"{prefix}-{i}", "x" * 3000))


def _wal_bytes(storage):
    wal = storage.path.with_name(storage.path.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def test_connections_leave_checkpoints_to_the_checkpointer(engine):
    assert engine._storage.query_one("PRAGMA wal_autocheckpoint")["wal_autocheckpoint"] == 0


def test_the_checkpointer_thread_copies_the_wal_back_in_the_background(engine, monkeypatch):
    checkpointer = engine._storage._checkpointer
    calls_by_writers = []
    real_run = checkpointer.run

    def tracking_run(conn, mode):
        if not checkpointer.in_loop():
            calls_by_writers.append(mode)
        return real_run(conn, mode)

    monkeypatch.setattr(checkpointer, "run", tracking_run)
    _insert_settings(engine._storage, 300)
    with checkpointer.done:
        assert checkpointer.done.wait_for(lambda: checkpointer.checkpoints > 0, timeout=30)
    assert calls_by_writers == []
    checkpointer.stop()
    busy, wal_pages, copied = engine._storage.checkpoint()
    assert busy == 0 and copied == wal_pages  # nothing left behind


def test_the_wal_stays_bounded_when_the_checkpointer_does_not_run(home, monkeypatch):
    monkeypatch.setattr(storage_module, "HARD_COMMITS", 40)
    store = open_database(database_path(home))
    try:
        store._checkpointer.stop()  # as if the thread never got the CPU: writers must bound the WAL themselves
        # Start from an empty WAL: the migrations of every module (registered when the whole suite runs) have
        # grown the file already, and its size is what this test measures.
        store.conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        _insert_settings(store, 400)
        assert store._checkpointer.checkpoints >= 9
        assert _wal_bytes(store) < 400 * 3000  # less than the data written: the WAL was started over
    finally:
        store.close()


def _lock_is_free(lock):
    free = []

    def probe():
        got = lock.acquire(blocking=False)
        if got:
            lock.release()
        free.append(got)

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join(timeout=10)
    return free == [True]


def test_past_the_hard_cap_the_checkpoint_is_completed_holding_the_writer_lock(home, monkeypatch):
    monkeypatch.setattr(storage_module, "WAL_HARD_PAGES", 20)
    store = open_database(database_path(home))
    try:
        checkpointer = store._checkpointer
        checkpointer.stop()
        store.checkpoint("TRUNCATE")  # the migrations' pages out of the way
        lock_free_during_runs = []
        real_run = checkpointer.run
        monkeypatch.setattr(checkpointer, "run", lambda conn, mode: (
            lock_free_during_runs.append(_lock_is_free(store._write_lock)), real_run(conn, mode))[1])
        _insert_settings(store, 5)  # a WAL under the cap: one passive checkpoint, no lock
        checkpointer._checkpoint(store.conn())
        assert lock_free_during_runs == [True]
        _insert_settings(store, 30, prefix="more")  # past the cap: then a second one under the lock
        checkpointer._checkpoint(store.conn())
        assert lock_free_during_runs == [True, True, False]
        size = _wal_bytes(store)
        _insert_settings(store, 5, prefix="after")
        assert _wal_bytes(store) <= size  # complete: the next writer started the WAL over
    finally:
        store.close()


def test_close_leaves_an_empty_wal(home):
    store = open_database(database_path(home))
    _insert_settings(store, 20)
    assert _wal_bytes(store) > 0
    store.close()
    assert _wal_bytes(store) == 0


def test_closing_waits_for_a_write_another_thread_is_making_and_refuses_later_ones(tmp_path, monkeypatch):
    """A window's worker still saving when the engine closes: its write ends before its connection is closed (closed
    under it, a test process crashed with a segmentation fault in CI). The worker takes the writer lock just after
    close's final checkpoint let it go, as it did there; the worker goes on once close has reached its connections
    (the old code: closed them at once) or waits for the writer lock to reach them (the fix)."""
    storage = Storage.open(tmp_path / "yupana.db", SETS)
    inside, go_on, written = threading.Event(), threading.Event(), threading.Event()
    close_reached = threading.Event()  # close, past its checkpoint, asked for either lock
    checkpointed = threading.Event()
    failed: list[BaseException] = []

    class Watched:
        """A lock whose entry by the closing thread, after its checkpoint, is told to the test."""

        def __init__(self, lock) -> None:
            self.lock = lock

        def __enter__(self):
            if threading.current_thread() is closing and checkpointed.is_set():
                close_reached.set()
            return self.lock.__enter__()

        def __exit__(self, *exc):
            return self.lock.__exit__(*exc)

    def worker() -> None:
        try:
            with storage.write() as conn:
                inside.set()
                assert go_on.wait(30)
                conn.execute("CREATE TABLE late (x)")
            written.set()
        except BaseException as exc:  # noqa: BLE001 - what the worker met is the test's finding
            failed.append(exc)

    writing = threading.Thread(target=worker)
    checkpoint = storage.checkpoint

    def checkpoint_then_a_write_begins(*args: object) -> object:
        done = checkpoint(*args)
        writing.start()
        assert inside.wait(30)
        checkpointed.set()
        return done

    monkeypatch.setattr(storage, "checkpoint", checkpoint_then_a_write_begins)
    monkeypatch.setattr(storage, "_write_lock", Watched(storage._write_lock))
    monkeypatch.setattr(storage, "_connections_lock", Watched(storage._connections_lock))
    closing = threading.Thread(target=storage.close)
    closing.start()
    assert close_reached.wait(30)
    go_on.set()
    writing.join(30)
    closing.join(30)
    assert failed == [] and written.is_set() and not closing.is_alive()
    with pytest.raises(RuntimeError, match="closed"):
        with storage.write():
            pass
