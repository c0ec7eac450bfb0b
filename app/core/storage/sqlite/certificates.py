"""SQLite repository of the certificate store (ports/certificates.py): `certificates` and `default_certificates`."""

from __future__ import annotations

import sqlite3
from typing import Any

from app.core.storage.ports.certificates import DuplicateCertificate
from app.core.storage.sqlite.database import Storage

_COLUMNS = ("id", "subject", "ruc", "issuer", "serial", "not_before", "not_after", "fingerprint_sha256",
            "certificate_pem", "is_test")


class SqliteCertificateRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    def add(self, certificate: dict[str, Any]) -> None:
        try:
            with self._db.write() as conn:
                conn.execute(f"INSERT INTO certificates ({', '.join(_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             tuple(certificate[column] for column in _COLUMNS))
        except sqlite3.IntegrityError:
            raise DuplicateCertificate(certificate["id"]) from None

    def find(self, certificate_id: str) -> dict[str, Any] | None:
        return self._db.query_one("SELECT * FROM certificates WHERE id = ?", (certificate_id,))

    def all(self, ruc: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT * FROM certificates" + (" WHERE ruc = ?" if ruc else "") + " ORDER BY ruc, not_after DESC"
        return self._db.query(sql, (ruc,) if ruc else ())

    def certificate_pem(self, certificate_id: str) -> str | None:
        row = self._db.query_one("SELECT certificate_pem FROM certificates WHERE id = ?", (certificate_id,))
        return row["certificate_pem"] if row else None

    def latest_of(self, ruc: str) -> str | None:
        row = self._db.query_one("SELECT id FROM certificates WHERE ruc = ? ORDER BY not_after DESC LIMIT 1", (ruc,))
        return row["id"] if row else None

    def delete(self, certificate_id: str) -> None:
        with self._db.write() as conn:
            conn.execute("DELETE FROM default_certificates WHERE certificate_id = ?", (certificate_id,))
            conn.execute("DELETE FROM certificates WHERE id = ?", (certificate_id,))

    def default_ids(self) -> set[str]:
        return {row["certificate_id"] for row in self._db.query("SELECT certificate_id FROM default_certificates")}

    def default_of(self, ruc: str) -> str | None:
        row = self._db.query_one("SELECT certificate_id FROM default_certificates WHERE ruc = ?", (ruc,))
        return row["certificate_id"] if row else None

    def propose_default(self, ruc: str, certificate_id: str) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO default_certificates (ruc, certificate_id) VALUES (?, ?) "
                         "ON CONFLICT (ruc) DO NOTHING", (ruc, certificate_id))

    def set_default(self, ruc: str, certificate_id: str) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO default_certificates (ruc, certificate_id) VALUES (?, ?) "
                         "ON CONFLICT (ruc) DO UPDATE SET certificate_id = excluded.certificate_id",
                         (ruc, certificate_id))
