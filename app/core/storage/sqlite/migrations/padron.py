"""The `yupana.padron` migrations of SQLite data folders, as they were written in app/core/lookup/padron.py (moved here
unchanged: a folder records each step by this set's name and the step's, so names and order never change)."""

from __future__ import annotations

from sqlite_utils import Migrations

migrations = Migrations("yupana.padron")


@migrations()
def m001_padron_current(db) -> None:
    db.execute("""CREATE TABLE padron_current (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        file TEXT NOT NULL,
        rows INTEGER NOT NULL,
        skipped INTEGER NOT NULL,
        seconds REAL NOT NULL,
        source TEXT NOT NULL,
        loaded_at TEXT NOT NULL)""")
