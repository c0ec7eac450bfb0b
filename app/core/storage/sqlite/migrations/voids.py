"""The `yupana.voids` migrations of SQLite data folders, as they were written in the voids module of
app.core.invoicing (moved here unchanged: a folder records each step by this set's name and the step's, so names and
order never change)."""

from __future__ import annotations

from sqlite_utils import Migrations

migrations = Migrations("yupana.voids")


@migrations()
def m001_summaries(db) -> None:
    db.execute(
        """CREATE TABLE sunat_summaries (
            id INTEGER PRIMARY KEY,
            environment TEXT NOT NULL, emisor_ruc TEXT NOT NULL, kind TEXT NOT NULL, ident TEXT NOT NULL,
            issue_date TEXT NOT NULL, counter INTEGER NOT NULL, reference_date TEXT NOT NULL,
            xml_firmado TEXT NOT NULL, ticket TEXT, state TEXT NOT NULL DEFAULT 'pendiente',
            codigo TEXT, descripcion TEXT, cdr_zip BLOB, polls INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            UNIQUE (environment, emisor_ruc, kind, issue_date, counter)
        )""")
    db.execute("CREATE INDEX sunat_summaries_state ON sunat_summaries (state, id)")
    db.execute(
        """CREATE TABLE sunat_summary_lines (
            summary_id INTEGER NOT NULL REFERENCES sunat_summaries (id), voucher_id INTEGER NOT NULL,
            tipo TEXT NOT NULL, serie TEXT NOT NULL, numero INTEGER NOT NULL, condition TEXT NOT NULL,
            motivo TEXT NOT NULL, PRIMARY KEY (summary_id, voucher_id)
        )""")
    db.execute("CREATE INDEX sunat_summary_lines_voucher ON sunat_summary_lines (voucher_id)")


@migrations()
def m002_consulted_cdrs(db) -> None:
    """CDRs asked of SUNAT with getStatusCdr for our own vouchers."""
    db.execute(
        """CREATE TABLE sunat_consulted_cdrs (
            id INTEGER PRIMARY KEY, voucher_id INTEGER NOT NULL, environment TEXT NOT NULL,
            codigo TEXT NOT NULL, descripcion TEXT NOT NULL, cdr_zip BLOB NOT NULL,
            received_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        )""")
    db.execute("CREATE INDEX sunat_consulted_cdrs_voucher ON sunat_consulted_cdrs (voucher_id, id)")


@migrations()
def m003_send_attempts(db) -> None:
    """How many times a summary was handed to sendSummary: a summary without a ticket is sent again."""
    db.execute("ALTER TABLE sunat_summaries ADD COLUMN send_attempts INTEGER NOT NULL DEFAULT 0")


@migrations()
def m004_cdrs_as_their_xml(db) -> None:
    """A summary's CDR and a consulted CDR are stored as their signed ApplicationResponse (packed) and the name it had
    in the zip, as the outbox stores a voucher's (outbox.m005; docs/vouchers.md, «Muchos comprobantes»); the zip is
    made again when read. Rows stored before keep their zip in `cdr_zip`."""
    for table in ("sunat_summaries", "sunat_consulted_cdrs"):
        db.execute(f"ALTER TABLE {table} ADD COLUMN cdr_xml BLOB")
        db.execute(f"ALTER TABLE {table} ADD COLUMN cdr_member TEXT")
