"""PostgreSQL repository of the certificate store: the same SQL; a certificate stored twice is told by its error."""

from __future__ import annotations

from typing import Any

from psycopg.errors import UniqueViolation

from app.core.storage.ports.certificates import DuplicateCertificate
from app.core.storage.postgres.common import OnPostgres
from app.core.storage.sqlite.certificates import SqliteCertificateRepository


class PostgresCertificateRepository(OnPostgres, SqliteCertificateRepository):
    def add(self, certificate: dict[str, Any]) -> None:
        try:
            with self._pg.savepoint():
                super().add(certificate)
        except UniqueViolation:
            raise DuplicateCertificate(certificate["id"]) from None
