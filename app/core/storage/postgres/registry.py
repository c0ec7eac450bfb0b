"""PostgreSQL repositories of the lookups: the registry cache (shared by the desks) and the padrón's pointer. The
register files themselves stay SQLite files in each desk's folder (SqlitePadronFiles)."""

from __future__ import annotations

from app.core.storage.sqlite.padron import SqlitePadronPointerRepository
from app.core.storage.sqlite.registry import SqliteRegistryCacheRepository


class PostgresRegistryCacheRepository(SqliteRegistryCacheRepository):
    pass


class PostgresPadronPointerRepository(SqlitePadronPointerRepository):
    pass
