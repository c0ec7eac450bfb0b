"""PostgreSQL repository of messaging: the same SQL (a received event's new `seq` comes back by the RETURNING the
translation adds; a duplicate returns no row). Delivery leases are on the server's clock."""

from __future__ import annotations

from app.core.storage.sqlite.messaging import SqliteMessagingRepository


class PostgresMessagingRepository(SqliteMessagingRepository):
    pass
