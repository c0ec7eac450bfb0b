"""SQLite repository of the submissions to SUNAT (ports.submissions): tables `sunat_submissions` and `sunat_cdrs`.

Leases are written and compared with the database's clock (`DB_NOW`) in the same statement; the stored values stay
epoch seconds, as before."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from app.core.invoicing.statuses import SUBMISSION_DONE, SUBMISSION_FAILED, SUBMISSION_PENDING
from app.core.storage.ports.submissions import Lease
from app.core.storage.sql import in_chunks
from app.core.storage.sqlite.database import DB_NOW, Storage


def _stamp() -> str:
    """UTC now as the `updated_at` columns keep it («2024-01-31T12:00:00.000000Z»)."""
    return datetime.now(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


class SqliteSubmissionRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    # ------------------------------------------------------------ rows

    def enqueue(self, environment: str, ruc: str, tipo: str, serie: str, numero: str, *, voucher_id: int | None,
                ambiente: str, file_name: str, xml: bytes, digest: str | None) -> None:
        key = (environment, ruc, tipo, serie, numero)
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO sunat_submissions (voucher_id, environment, ruc, tipo, serie, numero, ambiente, file_name, "
                "xml, digest_value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (environment, ruc, tipo, serie, numero) DO NOTHING",
                (voucher_id, *key, ambiente, file_name, xml, digest))
            conn.execute(
                "UPDATE sunat_submissions SET xml = ?, digest_value = ?, state = ?, fault_code = NULL, "
                "next_attempt_at = 0, voucher_id = COALESCE(?, voucher_id), updated_at = ? "
                "WHERE environment = ? AND ruc = ? AND tipo = ? AND serie = ? AND numero = ? "
                "AND (state = ? OR (state = ? AND attempts = 0 AND must_reconcile = 0)) "
                "AND NOT EXISTS (SELECT 1 FROM sunat_cdrs WHERE submission_id = sunat_submissions.id)",
                (xml, digest, SUBMISSION_PENDING, voucher_id, _stamp(), *key, SUBMISSION_FAILED, SUBMISSION_PENDING))

    def enqueue_sending(self, environment: str, ruc: str, tipo: str, serie: str, numero: str, *, voucher_id: int,
                        ambiente: str, file_name: str, xml: bytes, digest: str, owner: str,
                        seconds: float) -> int | None:
        with self._db.write() as conn:
            row = conn.execute(
                "INSERT INTO sunat_submissions (voucher_id, environment, ruc, tipo, serie, numero, ambiente, file_name, "
                "xml, digest_value, attempts, must_reconcile, claimed_by, claimed_until) "
                f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 1, ?, {DB_NOW} + ?) "
                "ON CONFLICT (environment, ruc, tipo, serie, numero) DO NOTHING RETURNING id",
                (voucher_id, environment, ruc, tipo, serie, numero, ambiente, file_name, xml, digest, owner,
                 float(seconds))).fetchone()
        return None if row is None else int(row[0])

    def find(self, environment: str, ruc: str, tipo: str, serie: str, numero: str) -> dict[str, Any] | None:
        return self._db.query_one(
            "SELECT * FROM sunat_submissions WHERE environment = ? AND ruc = ? AND tipo = ? AND serie = ? AND numero = ?",
            (environment, ruc, tipo, serie, numero))

    def get(self, submission_id: int) -> dict[str, Any] | None:
        return self._db.query_one("SELECT * FROM sunat_submissions WHERE id = ?", (submission_id,))

    def due(self, environment: str, now: float) -> list[int]:
        return [row["id"] for row in self._db.query(
            "SELECT id FROM sunat_submissions WHERE environment = ? AND state = ? AND next_attempt_at <= ? "
            "ORDER BY next_attempt_at, id", (environment, SUBMISSION_PENDING, now))]

    def next_due_at(self, environment: str) -> float | None:
        rows = self._db.query("SELECT MIN(next_attempt_at) AS at FROM sunat_submissions "
                              "WHERE environment = ? AND state = ?", (environment, SUBMISSION_PENDING))
        return rows[0]["at"]  # an aggregate has its one row, NULL when nothing is pending

    def pending_by_environment(self) -> dict[str, int]:
        rows = self._db.query("SELECT environment, COUNT(*) AS n FROM sunat_submissions WHERE state = ? "
                              "GROUP BY environment", (SUBMISSION_PENDING,))
        return {row["environment"]: row["n"] for row in rows}

    # ------------------------------------------------------------ leases (the database's clock)

    def lease(self, submission_id: int) -> Lease | None:
        row = self._db.query_one(
            f"SELECT state, claimed_by, claimed_until IS NOT NULL AND claimed_until > {DB_NOW} AS running "
            "FROM sunat_submissions WHERE id = ?", (submission_id,))
        return None if row is None else Lease(row["state"], row["claimed_by"], bool(row["running"]))

    def claim(self, submission_id: int, owner: str, seconds: float, replacing: str | None = None) -> bool:
        with self._db.write() as conn:
            return conn.execute(
                f"UPDATE sunat_submissions SET claimed_by = ?, claimed_until = {DB_NOW} + ? WHERE id = ? AND state = ? "
                f"AND (claimed_by IS NULL OR claimed_until IS NULL OR claimed_until <= {DB_NOW} OR claimed_by = ?)",
                (owner, float(seconds), submission_id, SUBMISSION_PENDING, replacing)).rowcount > 0

    def renew_lease(self, submission_id: int, owner: str, seconds: float) -> bool:
        with self._db.write() as conn:
            return conn.execute(
                f"UPDATE sunat_submissions SET claimed_until = {DB_NOW} + ? WHERE id = ? AND claimed_by = ?",
                (float(seconds), submission_id, owner)).rowcount > 0

    def now(self) -> float:
        return float(self._db.conn().execute(f"SELECT {DB_NOW}").fetchone()[0])

    # ------------------------------------------------------------ an attempt

    def mark_sending(self, submission_id: int, owner: str) -> bool:
        with self._db.write() as conn:
            return conn.execute(
                "UPDATE sunat_submissions SET attempts = attempts + 1, must_reconcile = 1 "
                "WHERE id = ? AND state = ? AND claimed_by = ?", (submission_id, SUBMISSION_PENDING, owner)).rowcount > 0

    def store_cdr(self, submission_id: int, *, codigo: str, descripcion: str, notas: str, estado: str | None,
                  hash_cdr: str, cdr_xml: bytes, member: str) -> bool:
        with self._db.write() as conn:
            kept = conn.execute(
                "INSERT INTO sunat_cdrs (submission_id, codigo, descripcion, notas, estado, hash_cdr, cdr_zip, cdr_xml, "
                "cdr_member) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (submission_id) DO NOTHING",
                (submission_id, codigo, descripcion, notas, estado, hash_cdr, b"",  # the zip is made again when read
                 cdr_xml, member)).rowcount > 0
            conn.execute(
                "UPDATE sunat_submissions SET state = ?, must_reconcile = 0, claimed_by = NULL, claimed_until = NULL, "
                "fault_code = NULL, last_error = NULL, updated_at = ? WHERE id = ?",
                (SUBMISSION_DONE, _stamp(), submission_id))
        return kept

    def fail(self, submission_id: int, *, code: str, text: str, owner: str | None) -> bool:
        with self._db.write() as conn:
            return conn.execute(
                "UPDATE sunat_submissions SET state = ?, must_reconcile = 0, claimed_by = NULL, claimed_until = NULL, "
                "fault_code = ?, last_error = ?, updated_at = ? "
                "WHERE id = ? AND state = ? AND (? IS NULL OR claimed_by = ?) "
                "AND NOT EXISTS (SELECT 1 FROM sunat_cdrs WHERE submission_id = sunat_submissions.id)",
                (SUBMISSION_FAILED, code, text, _stamp(), submission_id, SUBMISSION_PENDING, owner,
                 owner)).rowcount > 0

    def retry_later(self, submission_id: int, *, owner: str, must_reconcile: int, next_attempt_at: float,
                    reason: str) -> bool:
        with self._db.write() as conn:
            return conn.execute(
                "UPDATE sunat_submissions SET must_reconcile = ?, next_attempt_at = ?, claimed_by = NULL, "
                "claimed_until = NULL, last_error = ?, updated_at = ? "
                "WHERE id = ? AND state = ? AND claimed_by = ?",
                (int(must_reconcile), next_attempt_at, reason, _stamp(), submission_id, SUBMISSION_PENDING,
                 owner)).rowcount > 0

    # ------------------------------------------------------------ CDRs

    def cdr(self, submission_id: int) -> dict[str, Any] | None:
        return self._db.query_one("SELECT * FROM sunat_cdrs WHERE submission_id = ?", (submission_id,))

    def latest_cdr_of_voucher(self, voucher_id: int) -> dict[str, Any] | None:
        return self._db.query_one(
            "SELECT c.codigo, c.descripcion, c.notas, c.estado, c.hash_cdr, c.cdr_zip, c.cdr_xml, c.cdr_member, "
            "c.received_at "
            "FROM sunat_cdrs c JOIN sunat_submissions s ON s.id = c.submission_id "
            "WHERE s.voucher_id = ? ORDER BY c.id DESC LIMIT 1", (voucher_id,))

    # ------------------------------------------------------------ repair on open

    def unfinished_with_cdr(self) -> list[int]:
        return [row["id"] for row in self._db.query(  # through the (environment, state, next_attempt_at) index
            "SELECT s.id FROM sunat_submissions s WHERE s.state IN (?, ?) "
            "AND EXISTS (SELECT 1 FROM sunat_cdrs c WHERE c.submission_id = s.id)",
            (SUBMISSION_PENDING, SUBMISSION_FAILED))]

    def finish(self, submission_id: int) -> None:
        with self._db.write() as conn:
            conn.execute(
                "UPDATE sunat_submissions SET state = ?, must_reconcile = 0, claimed_by = NULL, claimed_until = NULL, "
                "fault_code = NULL, updated_at = ? WHERE id = ?", (SUBMISSION_DONE, _stamp(), submission_id))

    def cdr_states_of_vouchers(self, voucher_ids: Iterable[int]) -> list[tuple[int, str]]:
        found: list[tuple[int, int, str]] = []
        for chunk, marks in in_chunks(voucher_ids):
            found += [(row["id"], row["voucher_id"], row["estado"]) for row in self._db.query(
                "SELECT c.id, s.voucher_id, c.estado FROM sunat_submissions s JOIN sunat_cdrs c"
                f" ON c.submission_id = s.id WHERE s.voucher_id IN ({marks}) AND c.estado IS NOT NULL",
                tuple(chunk))]
        return [(voucher_id, estado) for _cdr_id, voucher_id, estado in sorted(found)]

    # ------------------------------------------------------------ one path per boleta

    def submitted_vouchers(self, voucher_ids: Iterable[int]) -> set[int]:
        found: set[int] = set()
        for chunk, marks in in_chunks(voucher_ids):
            found.update(row["voucher_id"] for row in self._db.query(  # the sunat_submissions_voucher index
                f"SELECT DISTINCT voucher_id FROM sunat_submissions WHERE voucher_id IN ({marks})", tuple(chunk)))
        return found
