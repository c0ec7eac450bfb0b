"""SQLite storage of SUNAT's padrón (ports.registry): the `padron_current` pointer of a SQLite data folder, and the
register files themselves, which are SQLite files on every engine (a PostgreSQL data folder uses SqlitePadronFiles
too; only the pointer is the engine's).

A register file: `bloques` (BLOCK_LINES consecutive lines of SUNAT's file as they are, keyed by the first line's RUC),
`sueltos` (the rare lines out of RUC order, one by one) and `meta` (the import's facts). It is written with journal and
syncing off (an interrupted import leaves a `.part` file that is never read) and read-only and immutable afterwards.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from app.core.storage.ports.registry import RegisterUnavailable
from app.core.storage.sqlite.database import Storage

MAX_OPEN_CONNECTIONS = 32


class SqlitePadronPointerRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    def current_file(self) -> str | None:
        row = self._db.query_one("SELECT file FROM padron_current WHERE id = 1")
        return row["file"] if row else None

    def status(self) -> dict[str, Any] | None:
        return self._db.query_one("SELECT file, rows, skipped, seconds, source, loaded_at "
                                  "FROM padron_current WHERE id = 1")

    def switch_to(self, file: str, rows: int, skipped: int, seconds: float, source: str, loaded_at: str) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO padron_current (id, file, rows, skipped, seconds, source, loaded_at) "
                         "VALUES (1, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET file = excluded.file, "
                         "rows = excluded.rows, skipped = excluded.skipped, seconds = excluded.seconds, "
                         "source = excluded.source, loaded_at = excluded.loaded_at",
                         (file, rows, skipped, seconds, source, loaded_at))


def _block_at_or_before(conn: sqlite3.Connection, ruc: int) -> bytes | None:
    row = conn.execute("SELECT lineas FROM bloques WHERE ruc <= ? ORDER BY ruc DESC LIMIT 1", (ruc,)).fetchone()
    return row[0] if row else None


def _loose_line(conn: sqlite3.Connection, ruc: int) -> bytes | None:
    row = conn.execute("SELECT linea FROM sueltos WHERE ruc = ?", (ruc,)).fetchone()
    return row[0] if row else None


class SqlitePadronWriter:
    """A new register file, written in one transaction by one thread (ports.registry.PadronFileWriter)."""

    def __init__(self, path: Path) -> None:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        # Nothing reads the file before it is complete, and an interrupted import throws it away: no journal, no sync.
        for pragma in ("journal_mode = OFF", "synchronous = OFF", "locking_mode = EXCLUSIVE", "page_size = 65536",
                       "cache_size = -16384"):
            conn.execute(f"PRAGMA {pragma}")
        conn.execute("CREATE TABLE bloques (ruc INTEGER PRIMARY KEY, lineas BLOB NOT NULL)")
        conn.execute("CREATE TABLE sueltos (ruc INTEGER PRIMARY KEY, linea BLOB NOT NULL)")
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("BEGIN")
        self._conn = conn

    def add_blocks(self, starts: list[int], blocks: list[bytes]) -> None:
        self._conn.executemany("INSERT INTO bloques (ruc, lineas) VALUES (?, ?)", zip(starts, blocks, strict=True))

    def add_loose(self, lines: Iterable[tuple[int, bytes]]) -> int:
        before = self._conn.total_changes
        self._conn.executemany("INSERT INTO sueltos (ruc, linea) VALUES (?, ?) ON CONFLICT (ruc) DO NOTHING", lines)
        return self._conn.total_changes - before

    def block_at_or_before(self, ruc: int) -> bytes | None:
        return _block_at_or_before(self._conn, ruc)

    def loose_line(self, ruc: int) -> bytes | None:
        return _loose_line(self._conn, ruc)

    def commit(self, meta: dict[str, str]) -> None:
        self._conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", list(meta.items()))
        self._conn.execute("COMMIT")
        self._conn.close()

    def abandon(self) -> None:
        self._conn.execute("ROLLBACK")
        self._conn.close()

    def close(self) -> None:
        self._conn.close()


class _Reader:
    """One thread's read-only handle of a register file; a failed read forgets it (ports.registry.PadronLines)."""

    def __init__(self, files: SqlitePadronFiles, conn: sqlite3.Connection) -> None:
        self._files = files
        self.conn = conn

    def block_at_or_before(self, ruc: int) -> bytes | None:
        try:
            return _block_at_or_before(self.conn, ruc)
        except sqlite3.DatabaseError:
            raise self._failed() from None

    def loose_line(self, ruc: int) -> bytes | None:
        try:
            return _loose_line(self.conn, ruc)
        except sqlite3.DatabaseError:
            raise self._failed() from None

    def _failed(self) -> RegisterUnavailable:
        """Closed as one of the oldest handles (see SqlitePadronFiles.reader), or the file went bad: reopen."""
        self._files.drop(self.conn)
        return RegisterUnavailable()


class SqlitePadronFiles:
    """The register files of a data folder (ports.registry.PadronFiles): one read-only connection per thread."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._opened_lock = threading.Lock()

    def create(self, path: Path) -> SqlitePadronWriter:
        return SqlitePadronWriter(path)

    def reader(self, path: Path) -> _Reader:
        held = getattr(self._local, "held", None)
        if held is not None and held[0] == path:
            return held[1]
        try:
            conn = sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False)
        except sqlite3.OperationalError:
            raise RegisterUnavailable() from None  # switched and removed between reading its name and opening it
        if held is not None:
            self._forget(held[1].conn)
        reader = _Reader(self, conn)
        self._local.held = (path, reader)
        with self._opened_lock:
            self._opened.append(conn)
            # Threads come and go (GUI workers): keep the number of open files bounded. A thread whose
            # connection was closed here gets an error on its next lookup and reopens (see _Reader).
            stale = self._opened[:-MAX_OPEN_CONNECTIONS]
            del self._opened[:-MAX_OPEN_CONNECTIONS]
        for old in stale:
            old.close()
        return reader

    def drop(self, conn: sqlite3.Connection) -> None:
        """Close this thread's handle after a failed read; its next lookup reopens the file."""
        self._forget(conn)
        self._local.held = None

    def _forget(self, conn: sqlite3.Connection) -> None:
        with self._opened_lock:
            if conn in self._opened:
                self._opened.remove(conn)
        conn.close()

    def close(self) -> None:
        with self._opened_lock:
            for conn in self._opened:
                try:
                    conn.close()
                except sqlite3.ProgrammingError:
                    pass
            self._opened.clear()
