"""The `yupana.certificates` migrations of SQLite data folders, as they were written in app/core/invoicing/certificates.py (moved here
unchanged: a folder records each step by this set's name and the step's, so names and order never change)."""

from __future__ import annotations

from sqlite_utils import Migrations

migrations = Migrations("yupana.certificates")


@migrations()
def m001_certificates(db) -> None:
    db.execute(
        """CREATE TABLE certificates (
            id TEXT PRIMARY KEY,
            subject TEXT NOT NULL,
            ruc TEXT NOT NULL,
            issuer TEXT NOT NULL,
            serial TEXT NOT NULL,
            not_before TEXT NOT NULL,
            not_after TEXT NOT NULL,
            fingerprint_sha256 TEXT NOT NULL UNIQUE,
            certificate_pem TEXT NOT NULL,
            is_test INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        )"""
    )
    db.execute(
        """CREATE TABLE default_certificates (
            ruc TEXT PRIMARY KEY,
            certificate_id TEXT NOT NULL REFERENCES certificates(id) ON DELETE CASCADE
        )"""
    )
