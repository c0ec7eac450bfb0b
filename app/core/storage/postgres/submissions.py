"""PostgreSQL repository of the submissions to SUNAT: the same SQL. Leases are written and compared on the server's
clock (dialect.py translates the SQLite engine's DB_NOW), the one clock every desk shares: a desk that dies mid-send
is taken over once its lease has run out, whichever desk's worker looks."""

from __future__ import annotations

from app.core.storage.sqlite.submissions import SqliteSubmissionRepository


class PostgresSubmissionRepository(SqliteSubmissionRepository):
    pass
