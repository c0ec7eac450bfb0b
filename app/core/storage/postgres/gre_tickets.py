"""PostgreSQL repository of the GRE tickets: the same SQL (ON CONFLICT DO NOTHING is both engines')."""

from __future__ import annotations

from app.core.storage.sqlite.gre_tickets import SqliteGreTicketRepository


class PostgresGreTicketRepository(SqliteGreTicketRepository):
    pass
