"""A shared database's backup in the same format as a folder's (issue 35): every described table read inside one
REPEATABLE READ, READ ONLY transaction (one consistent moment while the desks go on issuing), through a server-side
cursor a batch at a time, into a new SQLite database of the same schema (app/core/storage/sqlite/backup.py). The
backup's zip, manifest and checks are then a folder's (app/core/invoicing/backups.py), and a restore gives a single
desk's folder (`yupana db migrar` takes it to a new shared database). The secrets go as they are stored: encrypted
under the business passphrase's key (its salt and probe copied with them).

The desks' turns (`desk_turns`: which desk runs a job now) are not copied: a restored folder has no other desk.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.core.storage import schema
from app.core.storage.postgres.database import PostgresStorage, connect
from app.core.storage.sqlite import backup as sqlite_backup

BATCH_ROWS = 1000
LEFT_OUT = ("desk_turns",)


def snapshot(storage: PostgresStorage, target: Path) -> None:
    """The shared database at one moment into a new SQLite file `target`."""
    raw = connect(storage.url)
    try:
        with raw.transaction():
            raw.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            sqlite_backup.database_from_rows(target, _tables(raw))
    finally:
        raw.close()


def _tables(raw: Any) -> Iterator[tuple[str, list[str], Iterator[tuple[Any, ...]]]]:
    for table in schema.TABLES:
        if table.name in LEFT_OUT:
            continue
        columns = [name for name, _kind in table.columns]
        yield table.name, columns, _rows(raw, table.name, columns)


def _rows(raw: Any, table: str, columns: list[str]) -> Iterator[tuple[Any, ...]]:
    with raw.cursor(name=f"yupana_backup_{table}") as cursor:
        cursor.execute(f"SELECT {', '.join(columns)} FROM {table}")
        while batch := cursor.fetchmany(BATCH_ROWS):
            for row in batch:
                yield tuple(bytes(value) if isinstance(value, memoryview) else value for value in row)
