"""The `yupana.vouchers` migrations of SQLite data folders, as they were written in app/core/invoicing/voucher_store.py (moved here
unchanged: a folder records each step by this set's name and the step's, so names and order never change)."""

from __future__ import annotations

import re

from sqlite_utils import Migrations

from app.core.storage.sqlite.vouchers import _INSERT_FTS, FTS_PREFIXES, FTS_TOKENIZER, _fts_values

migrations = Migrations("yupana.vouchers")


@migrations()
def m001_vouchers(db) -> None:
    db.execute(
        """CREATE TABLE vouchers (
            id INTEGER PRIMARY KEY,
            emisor_ruc TEXT NOT NULL, tipo TEXT NOT NULL, serie TEXT NOT NULL, numero INTEGER NOT NULL,
            nombre_archivo TEXT NOT NULL, xml TEXT NOT NULL, hash TEXT NOT NULL, xml_sha256 TEXT NOT NULL,
            request_json TEXT NOT NULL, content_key TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'generado',
            receptor_tipo_documento TEXT, receptor_numero_documento TEXT, receptor_nombre TEXT,
            moneda TEXT NOT NULL, total TEXT NOT NULL, fecha_emision TEXT NOT NULL,
            xml_firmado TEXT, signed_sha256 TEXT, digest_value TEXT, signature_value TEXT, certificado_id TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            UNIQUE (emisor_ruc, tipo, serie, numero)
        )""")
    db.execute("CREATE INDEX vouchers_xml_sha256 ON vouchers (xml_sha256)")
    db.execute("CREATE INDEX vouchers_signed_sha256 ON vouchers (signed_sha256)")
    db.execute("CREATE INDEX vouchers_status ON vouchers (status, id)")


@migrations()
def m002_texts_apart(db) -> None:
    """The large texts move to their own table, written once; the voucher's row stays small.

    Signing and status changes rewrite the row: with the ~15 kB XML inside, that was ~10 pages through the WAL
    each time. `canonical` marks texts written as ubl.XML_DECLARATION + their own C14N (signed without parsing);
    `signature` + `signature_offset` are the ds:Signature text and where it goes in the XML: the signed XML is
    rebuilt from them when read instead of being stored a second time (docs/signing.md).
    """
    db.execute("CREATE TABLE voucher_texts (voucher_id INTEGER PRIMARY KEY, xml_firmado TEXT,"
               " request_json TEXT NOT NULL, xml TEXT NOT NULL)")
    db.execute("INSERT INTO voucher_texts (voucher_id, xml_firmado, request_json, xml)"
               " SELECT id, xml_firmado, request_json, xml FROM vouchers")
    db.execute(
        """CREATE TABLE vouchers_m002 (
            id INTEGER PRIMARY KEY,
            emisor_ruc TEXT NOT NULL, tipo TEXT NOT NULL, serie TEXT NOT NULL, numero INTEGER NOT NULL,
            nombre_archivo TEXT NOT NULL, hash TEXT NOT NULL, xml_sha256 TEXT NOT NULL,
            content_key TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'generado',
            receptor_tipo_documento TEXT, receptor_numero_documento TEXT, receptor_nombre TEXT,
            moneda TEXT NOT NULL, total TEXT NOT NULL, fecha_emision TEXT NOT NULL,
            signed_sha256 TEXT, digest_value TEXT, signature_value TEXT, certificado_id TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            canonical INTEGER NOT NULL DEFAULT 0, signature TEXT, signature_offset INTEGER,
            UNIQUE (emisor_ruc, tipo, serie, numero)
        )""")
    kept = ("id, emisor_ruc, tipo, serie, numero, nombre_archivo, hash, xml_sha256, content_key, status,"
            " receptor_tipo_documento, receptor_numero_documento, receptor_nombre, moneda, total, fecha_emision,"
            " signed_sha256, digest_value, signature_value, certificado_id, created_at, updated_at")
    db.execute(f"INSERT INTO vouchers_m002 ({kept}) SELECT {kept} FROM vouchers")
    db.execute("DROP TABLE vouchers")
    db.execute("ALTER TABLE vouchers_m002 RENAME TO vouchers")
    db.execute("CREATE INDEX vouchers_xml_sha256 ON vouchers (xml_sha256)")
    # Partial: an unsigned voucher adds no entry (one page less to write per generation).
    db.execute("CREATE INDEX vouchers_signed_sha256 ON vouchers (signed_sha256) WHERE signed_sha256 IS NOT NULL")
    db.execute("CREATE INDEX vouchers_status ON vouchers (status, id)")


@migrations()
def m003_no_hash_indexes_for_new_vouchers(db) -> None:
    """A voucher is found by its text through the serie-número written in it (`key_of_text`) and the hash kept
    in its row, so new vouchers add no entry to an index of hashes (two pages fewer written per voucher: one
    when generated, one when signed). Rows stored before the canonical form keep theirs."""
    db.execute("DROP INDEX vouchers_xml_sha256")
    db.execute("DROP INDEX vouchers_signed_sha256")
    db.execute("CREATE INDEX vouchers_old_xml_sha256 ON vouchers (xml_sha256) WHERE canonical = 0")
    db.execute("CREATE INDEX vouchers_old_signed_sha256 ON vouchers (signed_sha256) WHERE canonical = 0")


@migrations()
def m004_environment(db) -> None:
    """A voucher belongs to the environment it was generated in: its number, its place in the list and where it
    can be sent (docs/architecture.md, «Entornos»). Rows stored before: those sent to SUNAT production are
    production's; the others belong to the folder's environment (sandbox when never set)."""
    row = db.execute("SELECT value FROM settings WHERE key = 'environment'").fetchone()
    folder = row[0] if row else "sandbox"
    sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'vouchers'").fetchone()[0]
    unique = re.search(r"UNIQUE \(emisor_ruc, tipo, serie, numero\)", sql)
    assert unique is not None, "the vouchers table is not the one m002 made"
    create = (sql[:unique.start()] + "environment TEXT NOT NULL, UNIQUE (environment, emisor_ruc, tipo, serie, numero)"
              + sql[unique.end():])
    create = re.sub(r'^CREATE TABLE "?vouchers"?', "CREATE TABLE vouchers_m004", create)
    db.execute(create)
    columns = ", ".join(r[1] for r in db.execute("PRAGMA table_info(vouchers)").fetchall())
    produced = ("SELECT voucher_id FROM sunat_submissions WHERE ambiente = 'produccion' AND voucher_id IS NOT NULL"
                if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'sunat_submissions'").fetchone()
                else "SELECT NULL WHERE 0")
    db.execute(f"INSERT INTO vouchers_m004 ({columns}, environment) SELECT {columns}, "
               f"CASE WHEN id IN ({produced}) THEN 'produccion' ELSE ? END FROM vouchers", [folder])
    db.execute("DROP TABLE vouchers")
    db.execute("ALTER TABLE vouchers_m004 RENAME TO vouchers")
    db.execute("CREATE INDEX vouchers_status ON vouchers (environment, status, id)")
    db.execute("CREATE INDEX vouchers_old_xml_sha256 ON vouchers (xml_sha256) WHERE canonical = 0")
    db.execute("CREATE INDEX vouchers_old_signed_sha256 ON vouchers (signed_sha256) WHERE canonical = 0")


@migrations()
def m005_search_index(db) -> None:
    """Searches answer from an index, never a scan of the table: FTS5 for serie-número, RUC/DNI and name, filled here
    for the vouchers stored before; `vouchers_environment` pages the list newest first and `vouchers_fecha` the
    list filtered by date (docs/vouchers.md, «Muchos comprobantes»)."""
    db.execute(f"CREATE VIRTUAL TABLE vouchers_fts USING fts5(sn, doc, nombre, content='', prefix='{FTS_PREFIXES}',"
               f" tokenize=\"{FTS_TOKENIZER}\")")
    rows = db.execute("SELECT id, serie, numero, receptor_numero_documento, receptor_nombre FROM vouchers").fetchall()
    for voucher_id, serie, numero, documento, nombre in rows:
        db.execute(_INSERT_FTS, (voucher_id, *_fts_values(serie, numero, documento, nombre)))
    db.execute("CREATE INDEX vouchers_environment ON vouchers (environment)")
    db.execute("CREATE INDEX vouchers_fecha ON vouchers (environment, fecha_emision)")


@migrations()
def m006_packed_texts(db) -> None:
    """New texts are stored compressed (app.core.invoicing.packed_texts) against dictionaries kept here, each an
    earlier text of its `scope` («xml:RUC:tipo», «request:RUC», «signature:certificado_id»), written once and named by
    its digest. Rows stored before keep their TEXT values and are read as they are."""
    db.execute("CREATE TABLE voucher_dictionaries (id INTEGER PRIMARY KEY, digest BLOB NOT NULL UNIQUE,"
               " scope TEXT NOT NULL, data BLOB NOT NULL)")
    db.execute("CREATE INDEX voucher_dictionaries_scope ON voucher_dictionaries (scope, id)")
