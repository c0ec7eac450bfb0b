"""SQLite storage: one database per data folder, WAL mode, migrations applied on open.

Concurrency discipline (docs/architecture.md):
- every thread gets its own connection (`Storage.db()` / `Storage.conn()`); reads never wait
  for writers thanks to WAL;
- every write goes through `with storage.write() as conn:`, which holds the process's single
  writer lock and an IMMEDIATE transaction, so writers queue instead of failing with "database
  is locked"; other processes on the same folder wait through `busy_timeout`;
- a write block must not call sqlite-utils helpers that commit by themselves (`insert_all`,
  `upsert`…): inside it, use SQL on the connection it yields.

Each concept module declares its own `sqlite_utils.Migrations` set and registers it with
`register_migrations`; `Storage.open` applies every pending one, under an inter-process file
lock so two processes opening a new folder at once do not both migrate.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils
from sqlite_utils import Migrations

BUSY_TIMEOUT_MS = 10_000

_MIGRATION_SETS: list[Migrations] = []


def register_migrations(migrations: Migrations) -> Migrations:
    """Add a module's migration set; sets are applied in registration order."""
    if all(m is not migrations for m in _MIGRATION_SETS):
        _MIGRATION_SETS.append(migrations)
    return migrations


core = register_migrations(Migrations("yupana.core"))


@core()
def m001_settings_and_companies(db: sqlite_utils.Database) -> None:
    db.execute("CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute(
        """CREATE TABLE companies (
            ruc TEXT PRIMARY KEY,
            razon_social TEXT NOT NULL,
            nombre_comercial TEXT,
            ubigeo TEXT NOT NULL,
            direccion TEXT NOT NULL,
            codigo_establecimiento TEXT NOT NULL DEFAULT '0000',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        )"""
    )


@contextmanager
def _file_lock(path: Path, timeout: float = 60.0) -> Iterator[None]:
    """An exclusive lock on a file shared by every process (fcntl on POSIX, msvcrt on Windows)."""
    with open(path, "a+b") as handle:
        deadline = time.monotonic() + timeout
        if os.name == "nt":
            import msvcrt

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
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class Storage:
    """The database of one data folder, shared by the GUI thread, workers and listener threads."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._closed = False

    @classmethod
    def open(cls, path: Path) -> Storage:
        storage = cls(path)
        storage.migrate()
        return storage

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                               check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        with self._connections_lock:
            self._connections.append(conn)
        return conn

    def conn(self) -> sqlite3.Connection:
        """This thread's connection (autocommit; use `write()` for transactions)."""
        if self._closed:
            raise RuntimeError("storage is closed")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    def db(self) -> sqlite_utils.Database:
        """This thread's connection wrapped by sqlite-utils, for reads and schema work."""
        wrapped = getattr(self._local, "db", None)
        if wrapped is None or wrapped.conn is not self.conn():
            wrapped = self._local.db = sqlite_utils.Database(self.conn())
        return wrapped

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction under the process's writer lock; commits, or rolls back on error."""
        conn = self.conn()
        with self._write_lock:
            if conn.in_transaction:  # nested use inside a write block joins the outer transaction
                yield conn
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def query(self, sql: str, params: tuple | dict = ()) -> list[dict]:
        cursor = self.conn().execute(sql, params)
        names = [c[0] for c in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def query_one(self, sql: str, params: tuple | dict = ()) -> dict | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def migrate(self) -> list[str]:
        """Apply every registered migration set's pending migrations; returns their names."""
        applied: list[str] = []
        with _file_lock(self.path.with_name(self.path.name + ".migrate.lock")):
            db = self.db()
            with self._write_lock:
                for migrations in _MIGRATION_SETS:
                    pending = [m.name for m in migrations.pending(db)]
                    if pending:
                        migrations.apply(db)
                        applied += [f"{migrations.name}:{name}" for name in pending]
        return applied

    def close(self) -> None:
        self._closed = True
        with self._connections_lock:
            for conn in self._connections:
                try:
                    conn.close()
                except sqlite3.ProgrammingError:
                    pass  # closed from another thread already
            self._connections.clear()
