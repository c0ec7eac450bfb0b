"""Opening a desk's database, on the engine the desk chose: the engine's one way into storage.

A desk without `database_url` (the default) keeps SQLite in its data folder, needing nothing; with it
(`postgresql://yupana@caja1/tienda`) every repository is the PostgreSQL engine's, over the business's shared
database (issue 34). `repositories(database)` hands the engine's parts the repositories of whichever engine opened
(app/core/storage/repositories.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from app.core.storage.ports.database import ChangeFeed
from app.core.storage.repositories import Repositories
from app.core.storage.sqlite import backup as sqlite_backup
from app.core.storage.sqlite import (
    catalog,
    certificates,
    drafts,
    gre_tickets,
    messaging,
    padron,
    registry,
    submissions,
    summaries,
    vouchers,
)
from app.core.storage.sqlite import platform as sqlite_platform
from app.core.storage.sqlite.database import Storage
from app.core.storage.sqlite.migrations import SETS
from app.core.storage.sqlite.schema import adopt

if TYPE_CHECKING:
    from app.core.storage.postgres.database import PostgresStorage

POSTGRES_SCHEMES = ("postgresql", "postgres")


def is_postgres_url(url: str) -> bool:
    scheme, separator, _rest = url.partition("://")
    return bool(separator) and scheme.lower() in POSTGRES_SCHEMES


def open_database(path: Path) -> Storage:
    """The data folder's SQLite database, its schema brought up to date: the history's pending steps run, then the
    folder is adopted as the described schema's version (app/core/storage/sqlite/schema.py)."""
    storage = Storage.open(path, SETS)
    adopt(storage)
    return storage


def open_shared_database(url: str, path: Path | None = None) -> PostgresStorage:
    """The business's shared PostgreSQL database at `url`, refused (Spanish) unless its schema is this desk's version:
    it is created by `yupana db init` and upgraded by `yupana db actualizar`, never by opening it."""
    from app.core.storage.postgres import engine  # psycopg loads only for a shared database (about 0.2 s)

    return engine.open_shared(url, path)


def open_desk_database(path: Path, url: str = "") -> Storage | PostgresStorage:
    """The desk's database: the shared one when `database_url` names it, else SQLite at `path`."""
    return open_shared_database(url, path) if url else open_database(path)


def is_shared(database: Storage | PostgresStorage) -> bool:
    """Whether several desks may use this database (PostgreSQL), rather than one folder's SQLite."""
    return not isinstance(database, Storage)


def change_feed(database: Storage | PostgresStorage) -> ChangeFeed | None:
    """The desks' change feed of a shared database (LISTEN/NOTIFY); None for a single desk's SQLite, which has no
    other desk to tell."""
    if isinstance(database, Storage):
        return None
    from app.core.storage.postgres import engine  # loaded already by open_shared_database

    return engine.change_feed(database)


def repositories(database: Storage | PostgresStorage) -> Repositories:
    """The repositories of the engine `database` belongs to (open_desk_database's answer)."""
    if not isinstance(database, Storage):
        from app.core.storage.postgres import engine  # loaded already by open_shared_database

        return engine.repositories(database)
    db = database
    return Repositories(
        sqlite_platform.SqliteSettingsRepository(db), sqlite_platform.SqliteCompanyRepository(db),
        sqlite_platform.SqliteSecretRepository(db), sqlite_platform.SqliteApiTokenRepository(db),
        sqlite_platform.SqliteSandboxEndpointRepository(db), certificates.SqliteCertificateRepository(db),
        catalog.SqliteCustomerRepository(db), catalog.SqliteProductRepository(db),
        drafts.SqliteDraftRepository(db), messaging.SqliteMessagingRepository(db),
        padron.SqlitePadronPointerRepository(db), registry.SqliteRegistryCacheRepository(db),
        submissions.SqliteSubmissionRepository(db), summaries.SqliteSummaryRepository(db),
        vouchers.SqliteVoucherRepository(db), sqlite_platform.SqliteDeskTurnRepository(db),
        gre_tickets.SqliteGreTicketRepository(db), catalog.SqliteTransportRepository(db))


def backup_snapshot(database: Storage | PostgresStorage, target: Path) -> None:
    """A consistent copy of the desk's database, while others write, as a new SQLite file `target` (issue 35): a
    folder's by `VACUUM INTO`, a shared database's through one read transaction (app/core/storage/postgres/backup.py)."""
    if isinstance(database, Storage):
        sqlite_backup.snapshot(database.path, target)
        return
    from app.core.storage.postgres import backup as postgres_backup  # loaded with psycopg already (a shared database)

    postgres_backup.snapshot(database, target)
