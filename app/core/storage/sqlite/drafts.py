"""SQLite repository of the voucher form's drafts (ports.drafts.DraftRepository): the `voucher_drafts` table."""

from __future__ import annotations

from typing import Any

from app.core.storage.ports.drafts import DraftRow
from app.core.storage.sqlite.database import Storage

NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"  # the text the table's defaults write
COLUMNS = ("id, content, cliente, total, moneda, updated_at, "
           "(julianday('now') - julianday(updated_at)) * 86400.0 AS age_seconds")


def _row(row: dict[str, Any]) -> DraftRow:
    return DraftRow(int(row["id"]), row["content"], row["cliente"], row["total"], row["moneda"], row["updated_at"],
                    max(float(row["age_seconds"] or 0.0), 0.0))


class SqliteDraftRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    def save(self, desk: str, draft_id: int | None, content: str, cliente: str, total: str, moneda: str) -> int:
        with self._db.write() as conn:
            if draft_id is not None:
                updated = conn.execute(f"UPDATE voucher_drafts SET content = ?, cliente = ?, total = ?, moneda = ?, "
                                       f"updated_at = {NOW} WHERE id = ? AND desk = ?",
                                       (content, cliente, total, moneda, draft_id, desk))
                if updated.rowcount:
                    return draft_id
            inserted = conn.execute("INSERT INTO voucher_drafts (desk, content, cliente, total, moneda) "
                                    "VALUES (?, ?, ?, ?, ?)", (desk, content, cliente, total, moneda))
            return int(inserted.lastrowid or 0)

    def get(self, desk: str, draft_id: int) -> DraftRow | None:
        row = self._db.query_one(f"SELECT {COLUMNS} FROM voucher_drafts WHERE id = ? AND desk = ?", (draft_id, desk))
        return None if row is None else _row(row)

    def list(self, desk: str) -> list[DraftRow]:
        return [_row(row) for row in self._db.query(f"SELECT {COLUMNS} FROM voucher_drafts WHERE desk = ? "
                                                   "ORDER BY updated_at DESC, id DESC", (desk,))]

    def delete(self, desk: str, draft_id: int) -> bool:
        with self._db.write() as conn:
            return conn.execute("DELETE FROM voucher_drafts WHERE id = ? AND desk = ?", (draft_id, desk)).rowcount > 0
