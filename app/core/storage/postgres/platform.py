"""PostgreSQL repositories of the platform's aggregates: settings, companies, secrets, the API token, sandbox
endpoints. Their SQL (upserts with ON CONFLICT … DO UPDATE / DO NOTHING) is the same on both engines."""

from __future__ import annotations

from app.core.storage.sqlite.platform import (
    SqliteApiTokenRepository,
    SqliteCompanyRepository,
    SqliteDeskTurnRepository,
    SqliteSandboxEndpointRepository,
    SqliteSecretRepository,
    SqliteSettingsRepository,
)


class PostgresSettingsRepository(SqliteSettingsRepository):
    pass


class PostgresCompanyRepository(SqliteCompanyRepository):
    pass


class PostgresSecretRepository(SqliteSecretRepository):
    pass


class PostgresApiTokenRepository(SqliteApiTokenRepository):
    pass


class PostgresSandboxEndpointRepository(SqliteSandboxEndpointRepository):
    pass


class PostgresDeskTurnRepository(SqliteDeskTurnRepository):
    pass
