"""The `yupana.registry` migrations of SQLite data folders, as they were written in app/core/lookup/registry.py (moved here
unchanged: a folder records each step by this set's name and the step's, so names and order never change)."""

from __future__ import annotations

from sqlite_utils import Migrations

migrations = Migrations("yupana.registry")


@migrations()
def m001_registry_cache(db) -> None:
    db.execute("""CREATE TABLE registry_cache (
        kind TEXT NOT NULL,
        numero TEXT NOT NULL,
        record TEXT NOT NULL,
        fetched_at REAL NOT NULL,
        PRIMARY KEY (kind, numero)) WITHOUT ROWID""")


@migrations()
def m002_cache_per_environment(db) -> None:
    """A cached answer belongs to the environment that got it: the sandbox's made-up records never answer beta or
    production. Entries cached before are kept for the folder's environment."""
    row = db.execute("SELECT value FROM settings WHERE key = 'environment'").fetchone()
    db.execute("""CREATE TABLE registry_cache_m002 (
        environment TEXT NOT NULL,
        kind TEXT NOT NULL,
        numero TEXT NOT NULL,
        record TEXT NOT NULL,
        fetched_at REAL NOT NULL,
        PRIMARY KEY (environment, kind, numero)) WITHOUT ROWID""")
    db.execute("INSERT INTO registry_cache_m002 SELECT ?, kind, numero, record, fetched_at FROM registry_cache",
               [row[0] if row else "sandbox"])
    db.execute("DROP TABLE registry_cache")
    db.execute("ALTER TABLE registry_cache_m002 RENAME TO registry_cache")
