"""SQLite repository of the RA/RC summaries and the consulted CDRs (ports.summaries): tables `sunat_summaries`,
`sunat_summary_lines` and `sunat_consulted_cdrs`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.core.invoicing.statuses import SUBMISSION_DONE, SUBMISSION_FAILED, SUBMISSION_PENDING, SUMMARY_UNCONFIRMED
from app.core.invoicing.summaries import CONDITION_ADD, CONDITION_MODIFY, CONDITION_VOID
from app.core.storage.ports.summaries import SummaryEntry
from app.core.storage.sql import in_chunks
from app.core.storage.sqlite.database import Storage

# A summary line holds its voucher (no other RA or RC is built for it) while its summary is pending, and a line
# reporting a boleta (status 1 or 2) also once its summary's outcome could not be learnt (sin_confirmar): SUNAT may
# have that boleta already (app.core.invoicing.voids.lost).
_HOLDS = "(s.state = ? OR (s.state = ? AND l.condition IN (?, ?)))"
_HOLDS_ARGS = (SUBMISSION_PENDING, SUMMARY_UNCONFIRMED, CONDITION_ADD, CONDITION_MODIFY)


class SqliteSummaryRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    # ------------------------------------------------------------ numbering and storing

    def pending_ident_of_voucher(self, voucher_id: int) -> str | None:
        row = self._db.query_one(
            "SELECT s.ident FROM sunat_summary_lines l JOIN sunat_summaries s ON s.id = l.summary_id"
            " WHERE l.voucher_id = ? AND s.state = ?", (voucher_id, SUBMISSION_PENDING))
        return row["ident"] if row else None

    def first_pending_line(self, voucher_ids: list[int]) -> tuple[str, int, str] | None:
        for chunk, marks in in_chunks(voucher_ids):
            row = self._db.conn().execute(  # this thread's connection: inside the caller's transaction
                "SELECT l.serie, l.numero, s.ident FROM sunat_summary_lines l JOIN sunat_summaries s"
                f" ON s.id = l.summary_id WHERE {_HOLDS} AND l.voucher_id IN ({marks})",
                (*_HOLDS_ARGS, *chunk)).fetchone()
            if row is not None:
                return row[0], row[1], row[2]
        return None

    def held_voucher_ids(self, voucher_ids: Iterable[int]) -> set[int]:
        found: set[int] = set()
        for chunk, marks in in_chunks(voucher_ids):
            found.update(row["voucher_id"] for row in self._db.query(
                "SELECT l.voucher_id FROM sunat_summary_lines l JOIN sunat_summaries s ON s.id = l.summary_id"
                f" WHERE {_HOLDS} AND l.voucher_id IN ({marks})", (*_HOLDS_ARGS, *chunk)))
        return found

    def reported_by(self, voucher_ids: Iterable[int]) -> dict[int, str]:
        found: dict[int, str] = {}
        for chunk, marks in in_chunks(voucher_ids):
            found.update((row["voucher_id"], row["ident"]) for row in self._db.query(
                "SELECT l.voucher_id, s.ident FROM sunat_summary_lines l JOIN sunat_summaries s ON s.id = l.summary_id"
                f" WHERE l.condition IN (?, ?) AND s.state IN (?, ?, ?) AND l.voucher_id IN ({marks})",
                (CONDITION_ADD, CONDITION_MODIFY, SUBMISSION_PENDING, SUBMISSION_DONE, SUMMARY_UNCONFIRMED, *chunk)))
        return found

    def refused_with(self, voucher_ids: Iterable[int], codigo: str) -> set[int]:
        found: set[int] = set()
        for chunk, marks in in_chunks(voucher_ids):
            found.update(row["voucher_id"] for row in self._db.query(
                "SELECT DISTINCT l.voucher_id FROM sunat_summary_lines l JOIN sunat_summaries s ON s.id = l.summary_id"
                f" WHERE s.state = ? AND s.codigo = ? AND l.condition IN (?, ?) AND l.voucher_id IN ({marks})",
                (SUBMISSION_FAILED, codigo, CONDITION_ADD, CONDITION_MODIFY, *chunk)))
        return found

    def void_lines(self, voucher_ids: Iterable[int]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for chunk, marks in in_chunks(voucher_ids):
            found += self._db.query(
                "SELECT l.voucher_id, l.serie, l.numero, s.id, s.ident, s.kind, s.state, s.created_at FROM sunat_summary_lines l"
                " JOIN sunat_summaries s ON s.id = l.summary_id"
                f" WHERE l.condition = ? AND s.state IN (?, ?) AND l.voucher_id IN ({marks})",
                (CONDITION_VOID, SUBMISSION_PENDING, SUMMARY_UNCONFIRMED, *chunk))
        return sorted(found, key=lambda row: row["id"])

    def last_counter(self, environment: str, emisor_ruc: str, kind: str, issue_date: str) -> int:
        row = self._db.conn().execute(
            "SELECT MAX(counter) FROM sunat_summaries WHERE environment = ? AND emisor_ruc = ?"
            " AND kind = ? AND issue_date = ?", (environment, emisor_ruc, kind, issue_date)).fetchone()
        return int(row[0] or 0)

    def raise_counter(self, environment: str, emisor_ruc: str, kind: str, issue_date: str, at_least: int) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO summary_numbering (environment, emisor_ruc, kind, issue_date, last)"
                         " VALUES (?, ?, ?, ?, ?) ON CONFLICT (environment, emisor_ruc, kind, issue_date) DO UPDATE SET"
                         " last = CASE WHEN summary_numbering.last > excluded.last THEN summary_numbering.last"
                         " ELSE excluded.last END", (environment, emisor_ruc, kind, issue_date, at_least))

    def take_counter(self, environment: str, emisor_ruc: str, kind: str, issue_date: str) -> int:
        key = (environment, emisor_ruc, kind, issue_date)
        highest = ("SELECT COALESCE(MAX(counter), 0) FROM sunat_summaries WHERE environment = ? AND emisor_ruc = ?"
                   " AND kind = ? AND issue_date = ?")
        with self._db.write() as conn:
            conn.execute("INSERT INTO summary_numbering (environment, emisor_ruc, kind, issue_date, last)"
                         " VALUES (?, ?, ?, ?, 0) ON CONFLICT (environment, emisor_ruc, kind, issue_date) DO NOTHING", key)
            row = conn.execute(  # the row's lock first (another desk's summary waits here for this one's commit)
                f"UPDATE summary_numbering SET last = (CASE WHEN last > ({highest}) THEN last ELSE ({highest}) END) + 1"
                " WHERE environment = ? AND emisor_ruc = ? AND kind = ? AND issue_date = ? RETURNING last",
                (*key, *key, *key)).fetchone()
        return int(row[0])

    def add(self, *, environment: str, emisor_ruc: str, kind: str, ident: str, issue_date: str, counter: int,
            reference_date: str, xml_firmado: str, lines: list[SummaryEntry]) -> int:
        with self._db.write() as conn:
            summary_id = conn.execute(
                "INSERT INTO sunat_summaries (environment, emisor_ruc, kind, ident, issue_date, counter, reference_date,"
                " xml_firmado) VALUES (?,?,?,?,?,?,?,?)",
                (environment, emisor_ruc, kind, ident, issue_date, counter, reference_date, xml_firmado)).lastrowid
            assert summary_id is not None  # an INSERT's row id
            conn.executemany(
                "INSERT INTO sunat_summary_lines (summary_id, voucher_id, tipo, serie, numero, condition, motivo)"
                " VALUES (?,?,?,?,?,?,?)",
                [(summary_id, line.voucher_id, line.tipo, line.serie, line.numero, line.condition, line.motivo)
                 for line in lines])
        return summary_id

    # ------------------------------------------------------------ reading

    def get(self, summary_id: int) -> dict[str, Any] | None:
        return self._db.query_one("SELECT * FROM sunat_summaries WHERE id = ?", (summary_id,))

    def find(self, environment: str, emisor_ruc: str, ident: str) -> dict[str, Any] | None:
        return self._db.query_one("SELECT id, state FROM sunat_summaries WHERE environment = ? AND emisor_ruc = ? AND"
                                  " ident = ? ORDER BY id DESC LIMIT 1", (environment, emisor_ruc, ident))

    def brief(self, summary_id: int) -> dict[str, Any] | None:
        return self._db.query_one("SELECT id, ident, state, ticket FROM sunat_summaries WHERE id = ?", (summary_id,))

    def lines(self, summary_id: int) -> list[dict[str, Any]]:
        return self._db.query("SELECT voucher_id, tipo, serie, numero, condition, motivo FROM sunat_summary_lines"
                              " WHERE summary_id = ? ORDER BY voucher_id", (summary_id,))

    def recent(self, environment: str, limit: int) -> list[dict[str, Any]]:
        # group_concat is SQLite's (and MySQL's): the PostgreSQL engine says string_agg(serie_numero, ', ').
        return self._db.query(
            "SELECT s.id, s.emisor_ruc, s.kind, s.ident, s.issue_date, s.reference_date, s.ticket, s.state, s.codigo,"
            " s.descripcion, s.created_at, s.updated_at, (SELECT group_concat(serie_numero, ', ') FROM"
            " (SELECT l.serie || '-' || l.numero AS serie_numero FROM sunat_summary_lines l WHERE l.summary_id = s.id"
            " ORDER BY l.tipo, l.serie, l.numero)) AS comprobantes"
            " FROM sunat_summaries s WHERE s.environment = ? ORDER BY s.id DESC LIMIT ?",
            (environment, max(1, int(limit))))

    def for_voucher(self, voucher_id: int) -> list[dict[str, Any]]:
        return self._db.query(
            "SELECT s.id, s.kind, s.ident, s.ticket, s.state, s.codigo, s.descripcion, l.condition, l.motivo,"
            " s.created_at, s.updated_at FROM sunat_summary_lines l JOIN sunat_summaries s ON s.id = l.summary_id"
            " WHERE l.voucher_id = ? ORDER BY s.id DESC", (voucher_id,))

    def pending(self) -> list[int]:
        return [row["id"] for row in self._db.query(
            "SELECT id FROM sunat_summaries WHERE state = ? ORDER BY id", (SUBMISSION_PENDING,))]

    # ------------------------------------------------------------ sending and SUNAT's answer

    def claim_send(self, summary_id: int, send_attempts: int, updated_at: str) -> bool:
        with self._db.write() as conn:
            return conn.execute(
                "UPDATE sunat_summaries SET send_attempts = send_attempts + 1, updated_at = ? WHERE id = ? AND"
                " send_attempts = ? AND ticket IS NULL AND state = ?",
                (updated_at, summary_id, send_attempts, SUBMISSION_PENDING)).rowcount > 0

    def note(self, summary_id: int, descripcion: str) -> None:
        with self._db.write() as conn:
            conn.execute("UPDATE sunat_summaries SET descripcion = ? WHERE id = ?", (descripcion, summary_id))

    def mark_received(self, summary_id: int, *, codigo: str, descripcion: str, updated_at: str) -> bool:
        with self._db.write() as conn:
            return conn.execute(
                "UPDATE sunat_summaries SET codigo = ?, descripcion = ?, updated_at = ? WHERE id = ? AND state = ?"
                " AND ticket IS NULL", (codigo, descripcion, updated_at, summary_id, SUBMISSION_PENDING)).rowcount > 0

    def store_ticket(self, summary_id: int, ticket: str, updated_at: str) -> None:
        with self._db.write() as conn:
            conn.execute("UPDATE sunat_summaries SET ticket = ?, descripcion = NULL, updated_at = ? WHERE id = ?",
                         (ticket, updated_at, summary_id))

    def count_poll(self, summary_id: int) -> None:
        with self._db.write() as conn:
            conn.execute("UPDATE sunat_summaries SET polls = polls + 1 WHERE id = ?", (summary_id,))

    def finish(self, summary_id: int, *, state: str, codigo: str | None, descripcion: str, cdr_xml: bytes | None,
               cdr_member: str | None, updated_at: str) -> bool:
        with self._db.write() as conn:
            return conn.execute(
                "UPDATE sunat_summaries SET state = ?, codigo = ?, descripcion = ?, cdr_xml = ?, cdr_member = ?,"
                " updated_at = ? WHERE id = ? AND state = ?",
                (state, codigo, descripcion, cdr_xml, cdr_member, updated_at, summary_id,
                 SUBMISSION_PENDING)).rowcount > 0

    # ------------------------------------------------------------ CDRs asked of SUNAT for our vouchers

    def add_consulted_cdr(self, *, voucher_id: int, environment: str, codigo: str, descripcion: str, cdr_xml: bytes,
                          cdr_member: str) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO sunat_consulted_cdrs (voucher_id, environment, codigo, descripcion, cdr_zip,"
                         " cdr_xml, cdr_member) VALUES (?,?,?,?,?,?,?)",
                         (voucher_id, environment, codigo, descripcion, b"",  # the zip is made again when read (m004)
                          cdr_xml, cdr_member))

    def latest_consulted_cdr(self, voucher_id: int) -> dict[str, Any] | None:
        return self._db.query_one("SELECT codigo, descripcion, cdr_zip, cdr_xml, cdr_member, received_at FROM"
                                  " sunat_consulted_cdrs WHERE voucher_id = ? ORDER BY id DESC LIMIT 1", (voucher_id,))
