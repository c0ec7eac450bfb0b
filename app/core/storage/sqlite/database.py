"""SQLite storage: one database per data folder, WAL mode, migrations applied on open.

Concurrency discipline (docs/architecture.md):
- every thread gets its own connection (`Storage.db()` / `Storage.conn()`); reads never wait
  for writers thanks to WAL; a thread that ends closes its connection (short-lived threads, such
  as a server's, would otherwise leave one open file each until close);
- every write goes through `with storage.write() as conn:`, which holds the process's single
  writer lock and an IMMEDIATE transaction, so writers queue instead of failing with "database
  is locked"; other processes on the same folder wait through `busy_timeout`;
- a write block must not call sqlite-utils helpers that commit by themselves (`insert_all`,
  `upsert`…): inside it, use SQL on the connection it yields;
- durability: connections run `synchronous=NORMAL` (a commit reaches the WAL, which is synced at
  checkpoints: a power cut may lose the last commits, never corrupt the file); the commits that must
  survive a power cut (handing out a voucher number, storing SUNAT's CDR) ask for
  `write(durable=True)`, which commits that one transaction with `synchronous=FULL` (the WAL is synced
  before COMMIT returns). A batch asks once per block: one sync per block.

Files are private (POSIX): the database is created 0600 before SQLite opens it, and SQLite gives its
-wal and -shm files the database's mode (docs/sunat.md, «Durabilidad»).

Checkpoints run off the writers' path (docs/architecture.md, «Storage discipline»): connections
set `wal_autocheckpoint=0` and a checkpointer thread owned by the Storage copies the WAL back into
the database in the background (PASSIVE, about every 4 MiB of WAL or after a quiet second), then a
TRUNCATE checkpoint at close. If it falls behind, the WAL is still bounded: past a hard cap the
checkpoint is completed while holding the writer lock, and writers check themselves in its place
should the thread not keep up at all.

Each concept module declares its own `sqlite_utils.Migrations` set and registers it with
`register_migrations`; `Storage.open` applies every pending one, under an inter-process file
lock so two processes opening a new folder at once do not both migrate.
"""

from __future__ import annotations

import itertools
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils
from sqlite_utils import Migrations

from app.core.platform.file_lock import exclusive_file_lock
from app.core.platform.loops import BackgroundLoop
from app.core.platform.paths import private_file

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 10_000
# The database's clock in epoch seconds (with milliseconds), for leases written and compared in one statement: every
# process and host sharing a database then agrees on «now». (PostgreSQL: extract(epoch from clock_timestamp()).)
DB_NOW = "((julianday('now') - 2440587.5) * 86400.0)"
# WAL sizes in pages (4 KiB each by default): the checkpointer aims at SOFT, completes a checkpoint
# under the writer lock past HARD; a writer checkpoints inline if HARD_COMMITS pass with none done.
WAL_SOFT_PAGES = 1024
WAL_HARD_PAGES = 8 * WAL_SOFT_PAGES
QUIET_CHECKPOINT_S = 1.0
HARD_COMMITS = 4096

_STEADY_EPOCHS = itertools.count(1)  # unique ids of steady_reads blocks

class Storage:
    """The database of one data folder, shared by the GUI thread, workers and listener threads."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._closed = False
        self._checkpointer = _Checkpointer(self)
        self._steady = threading.local()
        self._counter_conn: sqlite3.Connection | None = None
        self._counter_lock = threading.Lock()
        self.syncs = 0  # durable commits so far, each of which synced the WAL once (tests and bench/api.py count)
        self._watcher: Callable[[int, str], None] | None = None  # see `watch`

    @classmethod
    def open(cls, path: Path, migrations: Sequence[Migrations] = ()) -> Storage:
        """The database of a data folder, its schema brought up to date (the legacy sets, in order) under an
        inter-process lock."""
        private_file(Path(path))
        storage = cls(path)
        storage.migrate(migrations)
        storage._checkpointer.start()
        return storage

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                               check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA wal_autocheckpoint = 0")  # the checkpointer thread does it (see module doc)
        conn.execute("PRAGMA foreign_keys = ON")
        with self._connections_lock:
            self._connections.append(conn)
            self._trace(conn, self._watcher)
        return conn

    def watch(self, callback: Callable[[int, str], None] | None) -> None:
        """Tell `callback` (None: stop) every statement SQLite runs on this database's connections, open or opened
        later, as (the connection's number, the statement): how the tests and bench/_emitir.py count transactions
        and syncs (a COMMIT under `synchronous = FULL` syncs the WAL; `-- fsync WAL` is `_sync_wal`'s)."""
        with self._connections_lock:
            self._watcher = callback
            for conn in self._connections:
                self._trace(conn, callback)

    @staticmethod
    def _trace(conn: sqlite3.Connection, callback: Callable[[int, str], None] | None) -> None:
        number = id(conn)
        conn.set_trace_callback(None if callback is None else lambda statement: callback(number, statement))

    def conn(self) -> sqlite3.Connection:
        """This thread's connection (autocommit; use `write()` for transactions)."""
        if self._closed:
            raise RuntimeError("storage is closed")
        held = getattr(self._local, "held", None)
        if held is None:
            held = self._local.held = _ThreadConnection(self, self._connect())
        return held.conn

    def _release(self, conn: sqlite3.Connection) -> None:
        """A thread ended: close its connection and forget it."""
        with self._connections_lock:
            try:
                self._connections.remove(conn)
            except ValueError:
                return  # close() got there first
        try:
            conn.close()
        except sqlite3.Error:
            log.warning("closing a finished thread's connection to %s failed", self.path, exc_info=True)

    def db(self) -> sqlite_utils.Database:
        """This thread's connection wrapped by sqlite-utils, for reads and schema work."""
        wrapped = getattr(self._local, "db", None)
        if wrapped is None or wrapped.conn is not self.conn():
            wrapped = self._local.db = sqlite_utils.Database(self.conn())
        return wrapped

    @contextmanager
    def write(self, durable: bool = False) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction under the process's writer lock; commits, or rolls back on error.

        `durable`: the commit is synced to disk before it returns (see the module doc); a nested durable
        block makes the outer transaction's commit durable."""
        conn = self.conn()
        with self._write_lock:
            if self._closed:  # closed while this thread waited for the lock: its connection is closed too
                raise RuntimeError("storage is closed")
            if conn.in_transaction:  # nested use inside a write block joins the outer transaction
                if durable:
                    self._local.sync_after = True  # the pragma cannot change inside a transaction: see below
                yield conn
                return
            self._local.sync_after = False
            if durable:
                conn.execute("PRAGMA synchronous = FULL")
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
                if self._local.sync_after and not durable:  # a nested block asked: sync the WAL file itself
                    self._sync_wal()
                if durable or self._local.sync_after:
                    self.syncs += 1  # under the writer lock
            finally:
                if durable:
                    conn.execute("PRAGMA synchronous = NORMAL")
                self._local.sync_after = False
            self._checkpointer.committed(conn)

    @contextmanager
    def transaction(self, durable: bool = False) -> Iterator[None]:
        """The unit of work (ports.database.Database): the repositories' writes inside the block share one
        transaction, committed (durably when asked) at its end or rolled back on an error."""
        with self.write(durable):
            yield

    @contextmanager
    def group(self, durable: bool = False) -> Iterator[RequestGroup]:
        """Several independent requests in one transaction and one (durable) commit, each failing alone: the block
        yields a `RequestGroup` whose `each()` wraps one request in a savepoint; a request that raises is rolled
        back to its savepoint (the others stay) and its exception goes on to the caller of `each()`."""
        with self.write(durable) as conn:
            yield RequestGroup(conn)

    def _sync_wal(self) -> None:
        """fsync the WAL after a commit: what synchronous=FULL does at COMMIT, for a transaction that began
        without it."""
        watcher = self._watcher
        if watcher is not None:
            watcher(id(self.conn()), "-- fsync WAL")
        fd = os.open(self.path.with_name(self.path.name + "-wal"), os.O_RDWR | getattr(os, "O_BINARY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    @contextmanager
    def steady_reads(self) -> Iterator[None]:
        """Within the block, this thread's cached reads (ReadCache) check for other writers once instead of at
        every read: for a batch that reads the same company and settings for each of its vouchers. A change
        made by another connection meanwhile is seen after the block."""
        previous = getattr(self._steady, "epoch", 0)
        self._steady.epoch = next(_STEADY_EPOCHS)
        try:
            yield
        finally:
            self._steady.epoch = previous

    def steady_epoch(self) -> int:
        """The current `steady_reads` block of this thread (0: none)."""
        return getattr(self._steady, "epoch", 0)

    def query(self, sql: str, params: tuple | dict = ()) -> list[dict]:
        cursor = self.conn().execute(sql, params)
        names = [c[0] for c in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def query_one(self, sql: str, params: tuple | dict = ()) -> dict | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def migrate(self, sets: Sequence[Migrations]) -> list[str]:
        """Apply the pending migrations of each set, in order; returns their names."""
        applied: list[str] = []
        with exclusive_file_lock(self.path.with_name(self.path.name + ".migrate.lock")):
            db = self.db()
            with self._write_lock:
                for migrations in sets:
                    pending = [m.name for m in migrations.pending(db)]
                    if pending:
                        migrations.apply(db)
                        applied += [f"{migrations.name}:{name}" for name in pending]
        return applied

    def checkpoint(self, mode: str = "PASSIVE") -> tuple[int, int, int]:
        """Run a WAL checkpoint on this thread's connection: (busy, pages in the WAL, pages copied back)."""
        return self._checkpointer.run(self.conn(), mode)

    def quick_check(self, budget_s: float, *, clock: Callable[[], float] = time.monotonic,
                    every: int = 10_000) -> tuple[list[str], bool]:
        """SQLite's `PRAGMA quick_check` within a time budget: (its findings — ["ok"] when sound —, finished).

        The whole check reads every page: on a folder of 300,000 vouchers it took 15-100 s. A progress handler, called
        every `every` virtual-machine steps, stops it once `budget_s` has passed: `finished` is then False and there are
        no findings (the pragma reports at its end, so nothing is known of the part it read)."""
        conn = self.conn()
        deadline = clock() + budget_s
        conn.set_progress_handler(lambda: 1 if clock() > deadline else 0, max(1, every))
        try:
            return [row[0] for row in conn.execute("PRAGMA quick_check(20)")], True
        except sqlite3.OperationalError as exc:
            if "interrupt" not in str(exc).lower():
                raise
            return [], False
        finally:
            conn.set_progress_handler(None, 0)

    def change_counter(self) -> int:
        """A number that changes whenever any connection (of this process or another) commits to the database:
        SQLite's `data_version`, read on a connection of its own that never writes (a connection's own commits do
        not move its counter). For caches kept outside the database, such as the local API's memory of lookups."""
        with self._counter_lock:
            if self._counter_conn is None:
                self._counter_conn = sqlite3.connect(self.path, timeout=60, isolation_level=None,
                                                     check_same_thread=False)
            return int(self._counter_conn.execute("PRAGMA data_version").fetchone()[0])

    def data_version(self) -> int:
        """This thread's connection's view of other connections' commits: it changes exactly when another
        connection (of this process or another) committed since this connection last looked (ReadCache)."""
        return int(self.conn().execute("PRAGMA data_version").fetchone()[0])

    def table_count(self) -> int:
        row = self.query_one("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'")
        return int(row["n"]) if row else 0

    def close(self) -> None:
        with self._counter_lock:
            if self._counter_conn is not None:
                self._counter_conn.close()
                self._counter_conn = None
        self._checkpointer.stop()
        if not self._closed:
            try:
                conn = self.conn()
                conn.execute("PRAGMA busy_timeout = 1000")  # another process busy: its own close will do it
                self.checkpoint("TRUNCATE")  # leave an empty WAL behind when no one else is using it
            except sqlite3.Error:
                log.warning("final checkpoint of %s failed", self.path, exc_info=True)
        self._closed = True
        # Under the writer lock: a write another thread is making (a window's worker still saving when the engine
        # closes) ends before its connection is closed under it, which crashed the process (SQLite used after
        # close); a write that starts later finds the storage closed (`write`).
        with self._write_lock, self._connections_lock:
            for conn in self._connections:
                try:
                    conn.close()
                except sqlite3.ProgrammingError:
                    pass  # closed from another thread already
            self._connections.clear()


class RequestGroup:
    """The requests of one `Storage.group()` transaction (see there)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._names = itertools.count(1)
        self.failed = 0

    @contextmanager
    def each(self) -> Iterator[None]:
        name = f"request_{next(self._names)}"
        self._conn.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            self._conn.execute(f"ROLLBACK TO {name}")
            self._conn.execute(f"RELEASE {name}")
            self.failed += 1
            raise
        self._conn.execute(f"RELEASE {name}")


class _ThreadConnection:
    """One thread's connection, kept in the Storage's thread-local: when the thread ends, Python drops
    its thread-local values and this closes the connection (sqlite3 connections take no weak references)."""

    __slots__ = ("storage", "conn")

    def __init__(self, storage: Storage, conn: sqlite3.Connection) -> None:
        self.storage, self.conn = storage, conn

    def __del__(self) -> None:
        try:
            self.storage._release(self.conn)
        except Exception:  # noqa: BLE001 - at interpreter exit anything may be half gone
            pass


class _Checkpointer:
    """The Storage's background loop (app.core.platform.loops) copying the WAL back into the database, off the
    writers' path.

    Writers call `committed()` (a counter and, now and then, a wake). The loop wakes about every
    WAL_SOFT_PAGES pages of WAL (estimated from the pages per commit its last checkpoint saw) or after
    QUIET_CHECKPOINT_S without commits, and runs a PASSIVE checkpoint, which never blocks writers. While
    writers keep writing, a passive checkpoint never catches up with the last frames, and the WAL cannot
    restart from its beginning; past WAL_HARD_PAGES the loop therefore finishes one holding the writer
    lock (a short one: most frames are copied already).
    """

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._loop = BackgroundLoop("yupana-checkpointer", self._round, what="checkpointer", logger=log)
        self._conn: sqlite3.Connection | None = None  # the loop thread's own (closed with the Storage)
        self.commits = 0  # commits by this process, only written under the writer lock
        self._checked_at = 0  # `commits` when the last checkpoint started
        self._every = 64  # commits between checkpoints, re-estimated after each one
        self._wal_pages = 0  # pages in the WAL at the last checkpoint
        self.checkpoints = 0  # checkpoints run so far (by the loop, a writer or close)
        self.done = threading.Condition()  # notified after each checkpoint

    def start(self) -> None:
        self._loop.start()

    def stop(self) -> None:
        self._loop.stop(timeout=30)

    def in_loop(self) -> bool:
        """Whether the calling thread is the checkpointer's own."""
        return self._loop.in_loop()

    def committed(self, conn: sqlite3.Connection) -> None:
        """Called by a writer after its COMMIT, still holding the writer lock."""
        self.commits += 1
        pending = self.commits - self._checked_at
        if pending >= self._every:
            self._loop.wake(start=False)  # only a Storage that was opened has the loop running
        if pending >= HARD_COMMITS:  # the loop is not keeping up: do its work here, once
            try:
                self.run(conn, "PASSIVE")
            except sqlite3.Error:  # the commit stands; the next commit tries again
                log.warning("inline checkpoint of %s failed", self._storage.path, exc_info=True)

    def run(self, conn: sqlite3.Connection, mode: str) -> tuple[int, int, int]:
        started_at = self.commits
        busy, wal_pages, copied = conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
        commits = started_at - self._checked_at
        added = wal_pages - self._wal_pages if wal_pages >= self._wal_pages else wal_pages  # else it restarted
        if commits > 0 and added > 0:
            self._every = max(1, min(1024, WAL_SOFT_PAGES * commits // added))
        self._checked_at, self._wal_pages = started_at, wal_pages
        with self.done:
            self.checkpoints += 1
            self.done.notify_all()
        return busy, wal_pages, copied

    def _round(self) -> float:
        """One round of the loop: a checkpoint when anything was committed since the last one; then a quiet wait
        (woken by writers)."""
        if self.commits != self._checked_at:
            try:
                self._conn = self._conn or self._storage._connect()
                self._checkpoint(self._conn)
            except sqlite3.Error:
                log.warning("background checkpoint of %s failed", self._storage.path, exc_info=True)
        return QUIET_CHECKPOINT_S

    def _checkpoint(self, conn: sqlite3.Connection) -> None:
        _busy, wal_pages, _copied = self.run(conn, "PASSIVE")
        if wal_pages > WAL_HARD_PAGES:
            with self._storage._write_lock:  # no writer of this process appends meanwhile: the WAL restarts
                self.run(conn, "PASSIVE")
