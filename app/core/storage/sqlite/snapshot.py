"""A data folder's SQLite database read without changing it: what `yupana db migrar` copies into a shared database
(issue 34, item 4).

The file is opened read-only (`mode=ro`: SQLite never writes to it, so its bytes stay as they were) and every read
happens inside one read transaction, so the copy is one consistent moment of the folder even should a process still
write to it. No migration runs and no checkpoint is made: the folder is read as it is.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.core.storage.sqlite.database import BUSY_TIMEOUT_MS

BATCH_ROWS = 1000  # rows fetched at a time: a folder of years of vouchers is never held in memory whole


class Snapshot:
    """One read transaction over a folder's database."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def tables(self) -> set[str]:
        return {row[0] for row in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def schema_version(self) -> int | None:
        """The described schema's version the folder was brought to (None: a folder never adopted, or no folder)."""
        if "schema_version" not in self.tables():
            return None
        row = self._conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def columns(self, table: str) -> set[str]:
        return {row[1] for row in self._conn.execute(f"PRAGMA table_info({table})")}

    def rows(self, table: str, columns: Sequence[str], order_by: str | None = None) -> Iterator[list[tuple[Any, ...]]]:
        """The table's rows (those columns, in that order), a batch at a time."""
        order = f" ORDER BY {order_by}" if order_by else ""
        cursor = self._conn.execute(f"SELECT {', '.join(columns)} FROM {table}{order}")
        while batch := cursor.fetchmany(BATCH_ROWS):
            yield batch

    def last_row(self, table: str, columns: Sequence[str], order_by: str) -> tuple[Any, ...] | None:
        """The row that comes last by `order_by` (None: an empty table)."""
        row = self._conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order_by} DESC LIMIT 1").fetchone()
        return tuple(row) if row else None

    def last_issued_keys(self) -> dict[str, int]:
        """The highest key each AUTOINCREMENT table ever handed out (rows deleted since included): keys that must
        never be given again."""
        if "sqlite_sequence" not in self.tables():
            return {}
        return {str(name): int(seq) for name, seq in self._conn.execute("SELECT name, seq FROM sqlite_sequence")}


@contextmanager
def read_only(path: Path) -> Iterator[Snapshot]:
    """The folder's database at `path`, read-only, in one read transaction (FileNotFoundError: no such file)."""
    path = Path(path).resolve()
    if not path.is_file():
        raise FileNotFoundError(path)
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None,
                           timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    try:
        conn.execute("BEGIN")  # deferred: the snapshot starts at the first read and holds for all of them
        try:
            yield Snapshot(conn)
        finally:
            conn.execute("ROLLBACK")
    finally:
        conn.close()
