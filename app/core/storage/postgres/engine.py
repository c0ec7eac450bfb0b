"""The PostgreSQL engine's way in (app/core/storage/engines.py and shared.py load it, and psycopg with it, only for a
desk whose `database_url` names a shared database): opening the database, its repositories, and the schema's
commands (`schema`)."""

from __future__ import annotations

from pathlib import Path

from app import __version__
from app.core.errors import YupanaError, not_configured
from app.core.platform.processes import HOST
from app.core.storage.postgres import (
    catalog,
    certificates,
    drafts,
    gre_tickets,
    messaging,
    platform,
    registry,
    schema,
    submissions,
    summaries,
    vouchers,
)
from app.core.storage.postgres.changes import PostgresChangeFeed
from app.core.storage.postgres.common import as_common
from app.core.storage.postgres.database import PostgresStorage
from app.core.storage.repositories import Repositories

__all__ = ["PostgresStorage", "change_feed", "open_reachable", "open_shared", "repositories", "schema"]


def _unreachable(exc: BaseException) -> YupanaError:
    """psycopg's failure to connect, in Spanish (the server's own words follow)."""
    return not_configured(f"No se pudo conectar con la base de datos compartida: {str(exc).strip()}")


def change_feed(storage: PostgresStorage) -> PostgresChangeFeed:
    """The desks' change feed of the shared database (LISTEN/NOTIFY on connections of its own)."""
    return PostgresChangeFeed(storage.url)


def open_reachable(url: str, path: Path | None = None) -> PostgresStorage:
    """The database at `url`, its first connection made (a server out of reach is said in Spanish at once)."""
    storage = PostgresStorage(url, path)
    try:
        storage.conn()
    except YupanaError as exc:  # the connection refused (the Spanish `database_unavailable`: psycopg's words)
        storage.close()
        raise _unreachable(exc.__context__ or exc) from None  # psycopg's own words, which `from None` hid
    return storage


def open_shared(url: str, path: Path | None = None) -> PostgresStorage:
    """The business's shared database for this desk, refused (Spanish) unless its schema is this desk's version; the
    desk is recorded as seen (`yupana db estado`)."""
    shared = open_reachable(url, path)
    try:
        schema.require_current(shared)
        shared.see_desk(HOST, __version__)
    except BaseException:
        shared.close()
        raise
    return shared


def repositories(storage: PostgresStorage) -> Repositories:
    db = as_common(storage)
    return Repositories(
        platform.PostgresSettingsRepository(db), platform.PostgresCompanyRepository(db),
        platform.PostgresSecretRepository(db), platform.PostgresApiTokenRepository(db),
        platform.PostgresSandboxEndpointRepository(db), certificates.PostgresCertificateRepository(db),
        catalog.PostgresCustomerRepository(db), catalog.PostgresProductRepository(db),
        drafts.PostgresDraftRepository(db), messaging.PostgresMessagingRepository(db),
        registry.PostgresPadronPointerRepository(db), registry.PostgresRegistryCacheRepository(db),
        submissions.PostgresSubmissionRepository(db), summaries.PostgresSummaryRepository(db),
        vouchers.PostgresVoucherRepository(db), gre_tickets.PostgresGreTicketRepository(db))
