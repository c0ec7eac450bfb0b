"""PostgreSQL repository of the RA/RC summaries and the consulted CDRs: the same SQL but for the list of recent
summaries, whose vouchers are joined by string_agg (SQLite: group_concat over an ordered subquery)."""

from __future__ import annotations

from typing import Any

from app.core.storage.sqlite.summaries import SqliteSummaryRepository


class PostgresSummaryRepository(SqliteSummaryRepository):
    def recent(self, environment: str, limit: int) -> list[dict[str, Any]]:
        return self._db.query(
            "SELECT s.id, s.emisor_ruc, s.kind, s.ident, s.issue_date, s.reference_date, s.ticket, s.state, s.codigo,"
            " s.descripcion, s.created_at, s.updated_at, (SELECT string_agg(l.serie || '-' || l.numero, ', '"
            " ORDER BY l.tipo, l.serie, l.numero) FROM sunat_summary_lines l WHERE l.summary_id = s.id) AS comprobantes"
            " FROM sunat_summaries s WHERE s.environment = ? ORDER BY s.id DESC LIMIT ?",
            (environment, max(1, int(limit))))
