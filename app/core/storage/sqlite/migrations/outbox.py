"""The `yupana.outbox` migrations of SQLite data folders, as they were written in app/core/invoicing/outbox.py (moved here
unchanged: a folder records each step by this set's name and the step's, so names and order never change)."""

from __future__ import annotations

from sqlite_utils import Migrations

from app.core.invoicing import packed_texts
from app.core.invoicing.outbox import NO_COPY
from app.core.invoicing.voucher_store import signed_text_of
from app.core.storage.sql import table_names
from app.core.storage.sqlite.vouchers import dictionaries_in

migrations = Migrations("yupana.outbox")

# Columns as m001 created them; m003 rebuilds both tables with the same ones (only the key moves to the
# environment), so they are written once. Frozen: a later change of schema is a new migration, never an edit here.
QUEUE_COLUMNS = """file_name TEXT NOT NULL,
        xml BLOB NOT NULL,
        state TEXT NOT NULL DEFAULT 'pendiente',
        attempts INTEGER NOT NULL DEFAULT 0,
        must_reconcile INTEGER NOT NULL DEFAULT 0,
        next_attempt_at REAL NOT NULL DEFAULT 0,
        claimed_by TEXT, claimed_until REAL,
        fault_code TEXT, last_error TEXT,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
        updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),"""
CDR_COLUMNS = """codigo TEXT NOT NULL, descripcion TEXT NOT NULL, notas TEXT NOT NULL, estado TEXT,
        hash_cdr TEXT NOT NULL, cdr_zip BLOB NOT NULL,
        received_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"""


@migrations()
def m001_outbox(db) -> None:
    # voucher_id is vouchers.id for a voucher Yupana generated (NULL for a foreign one); no FOREIGN
    # KEY clause so this module does not depend on the order the vouchers module migrates in.
    db.execute(f"""CREATE TABLE sunat_submissions (
        id INTEGER PRIMARY KEY,
        voucher_id INTEGER,
        ambiente TEXT NOT NULL,
        ruc TEXT NOT NULL, tipo TEXT NOT NULL, serie TEXT NOT NULL, numero TEXT NOT NULL,
        {QUEUE_COLUMNS}
        UNIQUE (ambiente, ruc, tipo, serie, numero))""")
    db.execute("CREATE INDEX sunat_submissions_due ON sunat_submissions (state, next_attempt_at)")
    db.execute(f"""CREATE TABLE sunat_cdrs (
        id INTEGER PRIMARY KEY,
        submission_id INTEGER NOT NULL UNIQUE REFERENCES sunat_submissions(id),
        {CDR_COLUMNS})""")


@migrations()
def m002_signed_digest(db) -> None:
    # The ds:DigestValue of the document sent: a stored CDR is handed out only for that same signed content.
    db.execute("ALTER TABLE sunat_submissions ADD COLUMN digest_value TEXT")
    # Repair on open looks up the submissions of the few vouchers still `enviado` or `pendiente`.
    db.execute("CREATE INDEX sunat_submissions_voucher ON sunat_submissions (voucher_id) WHERE voucher_id IS NOT NULL")


@migrations()
def m003_environment(db) -> None:
    """Each submission belongs to the environment it was made in (sandbox, beta, produccion) and is only sent to
    that environment's addresses; the sandbox and beta both speak `ambiente` beta, so the key moves to the
    environment. Rows stored before: production ones are production's; the others belong to the folder's
    environment when it is sandbox or beta (the sandbox used to stand in for beta's address), else to beta."""
    row = db.execute("SELECT value FROM settings WHERE key = 'environment'").fetchone()
    folder = row[0] if row and row[0] in ("sandbox", "beta") else ("sandbox" if row is None else "beta")
    # sunat_cdrs references this table: both are rebuilt, the CDRs pointing at the new table, whose renaming
    # carries the reference along (dropping a referenced table would fail its foreign key check).
    db.execute(f"""CREATE TABLE sunat_submissions_m003 (
        id INTEGER PRIMARY KEY,
        voucher_id INTEGER,
        environment TEXT NOT NULL,
        ambiente TEXT NOT NULL,
        ruc TEXT NOT NULL, tipo TEXT NOT NULL, serie TEXT NOT NULL, numero TEXT NOT NULL,
        {QUEUE_COLUMNS}
        digest_value TEXT,
        UNIQUE (environment, ruc, tipo, serie, numero))""")
    columns = ("id, voucher_id, ambiente, ruc, tipo, serie, numero, file_name, xml, state, attempts, must_reconcile, "
               "next_attempt_at, claimed_by, claimed_until, fault_code, last_error, created_at, updated_at, "
               "digest_value")
    db.execute(f"INSERT INTO sunat_submissions_m003 (environment, {columns}) "
               f"SELECT CASE ambiente WHEN 'produccion' THEN 'produccion' ELSE ? END, {columns} "
               "FROM sunat_submissions", [folder])
    db.execute(f"""CREATE TABLE sunat_cdrs_m003 (
        id INTEGER PRIMARY KEY,
        submission_id INTEGER NOT NULL UNIQUE REFERENCES sunat_submissions_m003(id),
        {CDR_COLUMNS})""")
    db.execute("INSERT INTO sunat_cdrs_m003 SELECT id, submission_id, codigo, descripcion, notas, estado, hash_cdr, "
               "cdr_zip, received_at FROM sunat_cdrs")
    db.execute("DROP TABLE sunat_cdrs")
    db.execute("DROP TABLE sunat_submissions")
    db.execute("ALTER TABLE sunat_submissions_m003 RENAME TO sunat_submissions")
    db.execute("ALTER TABLE sunat_cdrs_m003 RENAME TO sunat_cdrs")
    db.execute("CREATE INDEX sunat_submissions_due ON sunat_submissions (environment, state, next_attempt_at)")
    db.execute("CREATE INDEX sunat_submissions_voucher ON sunat_submissions (voucher_id) WHERE voucher_id IS NOT NULL")


@migrations()
def m004_no_copy_of_our_vouchers(db) -> None:
    """Submissions of vouchers Yupana keeps stored a second (packed) copy of the signed XML: each copy that is, byte for
    byte, the voucher's stored signed text is emptied; any other (none expected) is kept as it is. Where the vouchers'
    texts are not where this version keeps them (their own migrations not run yet), nothing is compared: the copies
    stay."""
    tables = table_names(db)
    columns = {row[1] for row in db.execute("PRAGMA table_info(vouchers)")}
    if "voucher_texts" not in tables or not {"signature", "signature_offset"} <= columns:
        return

    dictionary_of = dictionaries_in(db)

    cursor = db.execute(
        "SELECT s.id, s.xml AS copy, t.xml, t.xml_firmado, v.signature, v.signature_offset FROM sunat_submissions s "
        "JOIN vouchers v ON v.id = s.voucher_id JOIN voucher_texts t ON t.voucher_id = v.id "
        "WHERE s.voucher_id IS NOT NULL AND length(s.xml) > 0")
    names = [c[0] for c in cursor.description]
    emptied = []
    while rows := cursor.fetchmany(500):
        for values in rows:
            row = dict(zip(names, values, strict=True))
            try:
                copy = packed_texts.unpack_bytes(row.pop("copy"), dictionary_of)
                signed = signed_text_of(row, dictionary_of)
            except (KeyError, ValueError):  # unreadable here: keep the copy
                continue
            if signed is not None and signed.encode("utf-8") == copy:
                emptied.append(row["id"])
    for submission_id in emptied:
        db.execute("UPDATE sunat_submissions SET xml = ? WHERE id = ?", [NO_COPY, submission_id])


@migrations()
def m005_cdr_as_its_xml(db) -> None:
    """A CDR is stored as its signed ApplicationResponse (packed against the environment's first one) and the name
    it had in SUNAT's zip; the zip is made again when handed out (cdr.rebuild_zip). Rows stored before keep their
    zip as received in `cdr_zip`; new rows leave it empty."""
    db.execute("ALTER TABLE sunat_cdrs ADD COLUMN cdr_xml BLOB")
    db.execute("ALTER TABLE sunat_cdrs ADD COLUMN cdr_member TEXT")
