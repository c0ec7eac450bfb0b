"""The `yupana.environments` migrations of SQLite data folders, as they were written in app/core/platform/environments.py (moved here
unchanged: a folder records each step by this set's name and the step's, so names and order never change)."""

from __future__ import annotations

from sqlite_utils import Migrations

migrations = Migrations("yupana.environments")


@migrations()
def m001_sandbox_endpoints(db) -> None:
    # owner: "<process id>:sandbox" of the process running the sandbox; its rows go when it stops (or dies).
    db.execute("CREATE TABLE sandbox_endpoints (key TEXT PRIMARY KEY, value TEXT NOT NULL, owner TEXT NOT NULL)")
