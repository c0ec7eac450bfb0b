"""The `yupana.core` migrations of SQLite data folders (settings and companies), as they were written in
the platform's storage module (moved here unchanged: a folder records each step by this set's name and the step's)."""

from __future__ import annotations

import sqlite_utils
from sqlite_utils import Migrations

migrations = Migrations("yupana.core")


@migrations()
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
