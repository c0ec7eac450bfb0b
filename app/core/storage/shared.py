"""The desk's database as `yupana db init|estado|actualizar` see it (issue 34): which engine, which server, which
schema version, and the desks seen on a shared one. psycopg is loaded only when a shared database is named."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app import __version__
from app.core.errors import not_configured
from app.core.platform.paths import database_path
from app.core.platform.processes import HOST
from app.core.platform.settings import DeskSettings, checked
from app.core.storage import schema
from app.core.storage.engines import is_postgres_url, open_database


@dataclass(frozen=True)
class DeskSeen:
    host: str
    app_version: str
    seconds_ago: float


@dataclass(frozen=True)
class DatabaseState:
    engine: str  # "SQLite" or "PostgreSQL"
    where: str  # the data folder's file, or the shared database's address
    server_version: str  # PostgreSQL's version ("" for SQLite: the library's is the app's)
    schema_version: int | None  # None: a shared database not initialised yet
    known_version: int  # the schema version this desk's Yupana uses
    desks: tuple[DeskSeen, ...] = ()  # seen recently on a shared database, the latest first

    @property
    def current(self) -> bool:
        return self.schema_version == self.known_version


def database_url(home: Path) -> str:
    """This desk's `database_url` ("" for SQLite in its data folder)."""
    return DeskSettings(home).get("database_url")


def _shared_url(home: Path) -> str:
    url = database_url(home)
    if not url:
        raise not_configured("Este puesto usa SQLite en su carpeta de datos: no hay base de datos compartida. "
                             "Para compartir una, configure «database_url» (yupana config set database_url "
                             "postgresql://usuario@servidor/base).")
    if not is_postgres_url(url):
        raise not_configured(f"«{url}» no es la dirección de una base de datos PostgreSQL.")
    return url


def _shared(home: Path):  # noqa: ANN202 - the PostgreSQL engine's module, loaded here only (psycopg with it)
    from app.core.storage.postgres import engine  # about 0.2 s: only a desk with a shared database pays it

    return engine, engine.open_reachable(_shared_url(home))


def initialise(home: Path) -> bool:
    """`yupana db init`: create the schema on the desk's (empty) shared database; False when it had it already."""
    engine, storage = _shared(home)
    try:
        created = engine.schema.create(storage)
        storage.see_desk(HOST, __version__)
        return created
    finally:
        storage.close()


def upgrade(home: Path) -> list[int]:
    """`yupana db actualizar`: bring the shared schema to this desk's version; the versions run."""
    engine, storage = _shared(home)
    try:
        return engine.schema.upgrade(storage)
    finally:
        storage.close()


def state(home: Path) -> DatabaseState:
    """`yupana db estado`: the desk's engine, the server's version, the schema's and the desks seen recently."""
    url = database_url(home)
    if not url:
        local = open_database(database_path(home))
        try:
            version = local.query_one("SELECT MAX(version) AS v FROM schema_version")
        finally:
            local.close()
        return DatabaseState("SQLite", str(database_path(home)), "", int(version["v"]) if version else None,
                             schema.VERSION)
    engine, storage = _shared(home)
    try:
        found = engine.schema.version(storage)
        desks = tuple(DeskSeen(d.host, d.app_version, d.last_seen_s) for d in engine.schema.desks(storage)) \
            if found is not None else ()
        return DatabaseState("PostgreSQL", _without_password(url), engine.schema.server_version(storage), found,
                             schema.VERSION, desks)
    finally:
        storage.close()


def _without_password(url: str) -> str:
    """The address as it may be shown (a password, should one be there, left out)."""
    scheme, _, rest = url.partition("://")
    credentials, at, place = rest.rpartition("@")
    return f"{scheme}://{credentials.split(':', 1)[0]}{at}{place}" if at else url


def use(home: Path, url: str) -> str:
    """`yupana db usar`: set this desk's `database_url` (checked; "" for SQLite) without opening any database, so a
    desk whose shared database is out of reach can still be pointed elsewhere. The value kept."""
    clean = checked("database_url", url)
    DeskSettings(home).put("database_url", clean)
    return clean
