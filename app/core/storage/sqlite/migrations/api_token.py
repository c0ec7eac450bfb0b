"""The `yupana.api_token` migrations of SQLite data folders, as they were written in app/core/platform/api_token.py (moved here
unchanged: a folder records each step by this set's name and the step's, so names and order never change)."""

from __future__ import annotations

from sqlite_utils import Migrations

migrations = Migrations("yupana.api_token")


@migrations()
def m001_api_token(db) -> None:
    db.execute("CREATE TABLE api_token (id INTEGER PRIMARY KEY CHECK (id = 1), hash BLOB NOT NULL, "
               "blob BLOB NOT NULL, created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))")
