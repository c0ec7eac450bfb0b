"""SQLite repository of the registry cache (ports.registry.RegistryCacheRepository): the `registry_cache` table."""

from __future__ import annotations

import json
from typing import Any

from app.core.storage.ports.registry import CachedAnswer
from app.core.storage.sqlite.database import Storage


class SqliteRegistryCacheRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    def get(self, environment: str, kind: str, numero: str) -> CachedAnswer | None:
        row = self._db.query_one("SELECT record, fetched_at FROM registry_cache "
                                 "WHERE environment = ? AND kind = ? AND numero = ?", (environment, kind, numero))
        return None if row is None else CachedAnswer(json.loads(row["record"]), row["fetched_at"])

    def fetched_at(self, environment: str, kind: str, numero: str) -> float | None:
        row = self._db.query_one("SELECT fetched_at FROM registry_cache WHERE environment = ? AND kind = ? "
                                 "AND numero = ?", (environment, kind, numero))
        return None if row is None else row["fetched_at"]

    def put(self, environment: str, kind: str, numero: str, record: dict[str, Any], fetched_at: float) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO registry_cache (environment, kind, numero, record, fetched_at) VALUES (?, ?, ?, ?, ?) "
                         "ON CONFLICT(environment, kind, numero) DO UPDATE SET record = excluded.record, "
                         "fetched_at = excluded.fetched_at",
                         (environment, kind, numero, json.dumps(record, ensure_ascii=False), fetched_at))
