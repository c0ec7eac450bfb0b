"""The `yupana.secrets` migrations of SQLite data folders, as they were written in app/core/platform/secrets.py (moved here
unchanged: a folder records each step by this set's name and the step's, so names and order never change)."""

from __future__ import annotations

from sqlite_utils import Migrations

migrations = Migrations("yupana.secrets")


@migrations()
def m001_secrets(db) -> None:
    db.execute("CREATE TABLE secret_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("CREATE TABLE secrets (name TEXT PRIMARY KEY, blob BLOB NOT NULL, "
               "updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))")
