"""What the PostgreSQL repositories share: the SQLite repository they extend, handed this engine's storage."""

from __future__ import annotations

from typing import cast

from app.core.storage.postgres.database import PostgresStorage
from app.core.storage.sqlite.database import Storage


def as_common(storage: PostgresStorage) -> Storage:
    """The storage as the SQLite repositories' annotations name it: they use only `conn()`, `query()`,
    `query_one()` and `write()`, which this engine offers in the same shape (its connection translates the SQL)."""
    return cast(Storage, storage)


def like_prefix(text: str) -> str:
    """A LIKE pattern matching what begins with `text` (its own `%`, `_` and `\\` taken literally)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


class OnPostgres:
    """Mixed into a PostgreSQL repository: its storage as this engine's (savepoints)."""

    _db: Storage

    @property
    def _pg(self) -> PostgresStorage:
        return cast(PostgresStorage, self._db)
