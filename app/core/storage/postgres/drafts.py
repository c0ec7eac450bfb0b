"""PostgreSQL repository of the voucher form's drafts: the same SQL (the columns' «now» text and the draft's age in
seconds are translated by dialect.py)."""

from __future__ import annotations

from app.core.storage.sqlite.drafts import SqliteDraftRepository


class PostgresDraftRepository(SqliteDraftRepository):
    pass
