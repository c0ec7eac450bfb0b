"""Where a SQLite folder stands against the schema's description (app/core/storage/schema.py).

A folder reaches the described schema through its history (the sqlite-utils sets of ./migrations, which record
each step in `_sqlite_migrations`: a folder of any earlier version runs only its pending steps). Once that history is
complete the folder is adopted as version 1 of the description, recorded in `schema_version`; changes after it are
versions of the description, written once for every engine (`schema.upgrades`), run here in order. Adopting runs no
step and changes no row; an upgrade only adds.
"""

from __future__ import annotations

from datetime import UTC, datetime

from app.core.errors import not_configured
from app.core.storage import schema
from app.core.storage.sqlite.database import Storage

ADOPTED = "adopted: sqlite-utils history complete"
UPGRADED = "upgraded: described schema"


def adopt(storage: Storage) -> int:
    """Record the folder's schema version when it has none (the history just brought it to version 1), then bring it
    to the description's version (the later versions' statements, each recorded); its version. One transaction: two
    processes opening the folder at once upgrade it once."""
    with storage.write() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, how TEXT NOT NULL, "
                     "applied_at TEXT NOT NULL)")
        row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        version = 1 if row[0] is None else int(row[0])
        if version > schema.VERSION:  # a newer Yupana wrote this folder: refuse rather than misread it
            raise not_configured(f"La carpeta de datos tiene el esquema {version}, más nuevo que el que conoce esta "
                                 f"versión de Yupana ({schema.VERSION}): actualice Yupana para abrirla.")
        now = datetime.now(UTC).isoformat(timespec="seconds")
        if row[0] is None:
            conn.execute("INSERT INTO schema_version (version, how, applied_at) VALUES (?, ?, ?)", (1, ADOPTED, now))
        for later, statements in schema.upgrades(schema.SQLITE, version):
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version, how, applied_at) VALUES (?, ?, ?)",
                         (later, UPGRADED, now))
    return schema.VERSION


def version(storage: Storage) -> int | None:
    if "schema_version" not in storage.db().table_names():
        return None
    rows = storage.query("SELECT MAX(version) AS v FROM schema_version")
    return int(rows[0]["v"]) if rows and rows[0]["v"] is not None else None
