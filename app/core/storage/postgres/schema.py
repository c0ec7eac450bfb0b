"""Where a shared PostgreSQL database stands against the schema's description (app/core/storage/schema.py), and the
desks seen on it.

Unlike a SQLite folder, a shared database is never changed by opening it: `yupana db init` creates it whole from the
description (`create`), `yupana db actualizar` runs the later versions' statements (`upgrade`), once every desk has
the new version. A desk opening it checks its version (`require_current`): one newer than this desk knows, or older,
is refused with a Spanish message naming what to do (a newer one would be misread; an older one lacks what this
desk writes).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from app.core.errors import YupanaError, not_configured
from app.core.storage import schema
from app.core.storage.postgres.database import PostgresStorage

CREATED = "created: described schema"
UPGRADED = "upgraded: described schema"
# Two desks running `db init` or `db actualizar` at once: the second waits for the first, then finds it done.
_SCHEMA_LOCK = 0x59555041  # «YUPA»
RECENT_S = 15 * 60  # a desk seen within this many seconds counts as in use (`yupana db estado`)


@dataclass(frozen=True)
class Desk:
    host: str
    app_version: str
    last_seen_s: float  # seconds since it was last seen, on the server's clock


def version(storage: PostgresStorage) -> int | None:
    """The database's schema version; None for a database Yupana never initialised."""
    found = storage.conn().execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()
    if not found or not found[0]:
        return None
    row = storage.conn().execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else None


def _stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def create(storage: PostgresStorage) -> bool:
    """Create the schema on an empty database (one transaction); False when it was created already. A database
    holding other tables is refused: it is not Yupana's (or not empty)."""
    with storage.write() as conn:
        conn.execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
        if version(storage) is not None:
            return False
        if storage.table_count():
            raise not_configured("La base de datos no está vacía y no es de Yupana: use una base de datos nueva "
                                 "(p. ej. createdb -O yupana tienda).")
        for statement in schema.statements(schema.POSTGRES):
            conn.execute(statement)
        conn.execute("CREATE TABLE schema_version (version BIGINT NOT NULL, how TEXT NOT NULL, applied_at TEXT NOT NULL)")
        conn.execute("INSERT INTO schema_version (version, how, applied_at) VALUES (?, ?, ?)",
                     (schema.VERSION, CREATED, _stamp()))
    return True


def upgrade(storage: PostgresStorage) -> list[int]:
    """Bring the database to this desk's schema version (each later version's statements, each recorded, in one
    transaction); the versions run. A newer database is refused."""
    with storage.write() as conn:
        conn.execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
        current = _initialised(storage)
        if current > schema.VERSION:
            raise _too_new(current)
        ran = []
        for later, statements in schema.upgrades(schema.POSTGRES, current):
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version, how, applied_at) VALUES (?, ?, ?)",
                         (later, UPGRADED, _stamp()))
            ran.append(later)
    return ran


def _initialised(storage: PostgresStorage) -> int:
    current = version(storage)
    if current is None:
        raise not_configured("La base de datos compartida aún no tiene las tablas de Yupana: ejecute "
                             "«yupana db init» en un puesto.")
    return current


def _too_new(current: int) -> YupanaError:
    return not_configured(f"La base de datos compartida tiene el esquema {current}, más nuevo que el que conoce esta "
                          f"versión de Yupana ({schema.VERSION}): actualice Yupana en este puesto antes de emitir.")


def require_current(storage: PostgresStorage) -> int:
    """The database's version when it is this desk's; else a refusal saying what to do."""
    current = _initialised(storage)
    if current > schema.VERSION:
        raise _too_new(current)
    if current < schema.VERSION:
        raise not_configured(f"La base de datos compartida tiene el esquema {current} y esta versión de Yupana usa el "
                             f"{schema.VERSION}: cuando todos los puestos tengan esta versión, ejecute "
                             "«yupana db actualizar» en uno de ellos.")
    return current


def desks(storage: PostgresStorage, within_s: float = RECENT_S) -> list[Desk]:
    """The desks seen within `within_s` seconds, the latest first."""
    rows = storage.conn().execute(
        "SELECT host, app_version, extract(epoch from clock_timestamp()) - last_seen AS ago FROM desks "
        "WHERE last_seen >= extract(epoch from clock_timestamp()) - ? ORDER BY last_seen DESC, host",
        (float(within_s),)).fetchall()
    return [Desk(host, app, float(ago)) for host, app, ago in rows]


def server_version(storage: PostgresStorage) -> str:
    row = storage.conn().execute("SHOW server_version").fetchone()
    return str(row[0]) if row else ""

