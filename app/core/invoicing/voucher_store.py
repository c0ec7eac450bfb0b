"""The voucher store: the `vouchers` table (one row per serie-número and environment) and `voucher_texts` (the
request, the generated XML and the signed one, written once). It only stores: building, signing and sending
are elsewhere."""

from __future__ import annotations

import builtins
import hashlib
import re
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlite_utils import Migrations

from app.core.errors import invalid, not_found
from app.core.invoicing import packed_texts
from app.core.invoicing.statuses import FIRMADO, GENERADO, VOUCHER_STATUSES
from app.core.invoicing.voucher_keys import key_of_text, now_text, sha256_hex, splice_signature
from app.core.platform.environments import NAMES
from app.core.platform.storage import Storage, register_migrations, where_equal

if TYPE_CHECKING:
    from app.core.invoicing import ubl
    from app.core.invoicing.xmldsig import CanonicalSignature

STATUSES = VOUCHER_STATUSES


def dictionaries_in(db) -> Callable[[bytes], bytes]:
    """The texts' compression dictionaries of a database (a connection, or a migration's sqlite_utils database), by
    digest: what packed_texts.unpack needs; KeyError for one not stored."""
    def dictionary_of(digest: bytes) -> bytes:
        row = db.execute("SELECT data FROM voucher_dictionaries WHERE digest = ?", [digest]).fetchone()
        if row is None:
            raise KeyError(digest.hex())
        return bytes(row[0])
    return dictionary_of


migrations = register_migrations(Migrations("yupana.vouchers"))


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


# The search index (m005): one FTS5 row per voucher, rowid = vouchers.id, contentless (the words are the index's
# own, the voucher's row is the content). `sn` holds «SERIE-NUMERO» as one token (`-` is a token character), `doc`
# the customer's RUC/DNI, `nombre` the customer's name; accents and case folded (remove_diacritics 2). A voucher's
# serie-número and customer never change once stored and vouchers are never deleted, so the index is written once,
# by the INSERT's own transaction (`add`), and only read afterwards.
FTS_TOKENIZER = "unicode61 remove_diacritics 2 tokenchars '-'"
# Prefix indexes for what one types first (a letter, a whole serie, «F001-1»): one doclist to read instead of every
# word that begins so (at 300,000 vouchers «F001» begins 300,000 different words).
FTS_PREFIXES = "1 2 3 4 5 6"
_INSERT_FTS = "INSERT INTO vouchers_fts (rowid, sn, doc, nombre) VALUES (?, ?, ?, ?)"


def _fts_values(serie: str, numero: int, documento: str | None, nombre: str | None) -> tuple[str, str, str]:
    return f"{serie}-{int(numero)}", documento or "", nombre or ""


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


_SERIE_NUMERO = re.compile(r"^([A-Za-z0-9]{4})-0*(\d*)$")


def _match_expression(search: str) -> str | None:
    """The FTS5 query for what the user typed: every word must begin a word of the voucher (serie-número, RUC/DNI or
    name); «F001-00000123» is «F001-123» (numbers are stored without leading zeros). None when nothing searchable."""
    terms = []
    for word in search.split():
        found = _SERIE_NUMERO.match(word)
        if found:
            word = f"{found.group(1)}-{found.group(2)}"
        word = word.replace('"', '""')
        if word.strip('"'):
            terms.append(f'"{word}"*')
    return " AND ".join(terms) or None


@migrations()
def m006_packed_texts(db) -> None:
    """New texts are stored compressed (app.core.invoicing.packed_texts) against dictionaries kept here, each an
    earlier text of its `scope` («xml:RUC:tipo», «request:RUC», «signature:certificado_id»), written once and named by
    its digest. Rows stored before keep their TEXT values and are read as they are."""
    db.execute("CREATE TABLE voucher_dictionaries (id INTEGER PRIMARY KEY, digest BLOB NOT NULL UNIQUE,"
               " scope TEXT NOT NULL, data BLOB NOT NULL)")
    db.execute("CREATE INDEX voucher_dictionaries_scope ON voucher_dictionaries (scope, id)")


_PACKED_COLUMNS = ("xml", "request_json", "xml_firmado", "signature")


# A whole voucher: its row and its texts (xml, request_json, xml_firmado).
_VOUCHER = "SELECT v.*, t.xml, t.request_json, t.xml_firmado FROM vouchers v JOIN voucher_texts t ON t.voucher_id = v.id"
# What operation 2 needs of a voucher found by its text; the text itself is the caller's, so it is not read back.
SIGNING_COLUMNS = ("id, emisor_ruc, tipo, serie, numero, canonical, certificado_id, digest_value, signature_value,"
                   " signature, signature_offset, signed_sha256 IS NOT NULL AS signed")

LIST_COLUMNS = ("id, environment, emisor_ruc, tipo, serie, numero, nombre_archivo, hash, status, receptor_tipo_documento,"
                " receptor_numero_documento, receptor_nombre, moneda, total, fecha_emision, digest_value,"
                " created_at, updated_at")

_INSERT_COLUMNS = ("environment, emisor_ruc, tipo, serie, numero, nombre_archivo, hash, xml_sha256, content_key, status,"
                   " receptor_tipo_documento, receptor_numero_documento, receptor_nombre, moneda, total, fecha_emision")
_SIGNED_COLUMNS = ", signature, signature_offset, signed_sha256, digest_value, signature_value, certificado_id, updated_at"
_INSERT_GENERATED = f"INSERT INTO vouchers ({_INSERT_COLUMNS}, canonical) VALUES ({'?, ' * 16}1)"
_INSERT_SIGNED = f"INSERT INTO vouchers ({_INSERT_COLUMNS}{_SIGNED_COLUMNS}, canonical) VALUES ({'?, ' * 23}1)"


class NumberTaken(Exception):
    """The serie-número was issued before in this environment (or by another writer meanwhile)."""


def _complete(row: dict | None, dictionary_of: Callable[[bytes], bytes]) -> dict | None:
    """A stored row as the store API shows it: its texts unpacked, `xml_firmado` rebuilt when only the Signature was
    stored."""
    if row is None:
        return None
    for column in _PACKED_COLUMNS:
        if column in row:
            row[column] = packed_texts.unpack(row[column], dictionary_of)
    if "xml" in row and row.get("signature") is not None and row.get("xml_firmado") is None:
        row["xml_firmado"] = splice_signature(row["xml"], row["signature_offset"], row["signature"])
    return row


def signed_text_of(row: dict, dictionary_of: Callable[[bytes], bytes]) -> str | None:
    """A voucher's signed text from its stored columns (`xml`, `xml_firmado`, `signature`, `signature_offset`, packed
    or not), without a store: the outbox's migrations compare it with the copies they drop."""
    complete = _complete(dict(row), dictionary_of)
    return complete["xml_firmado"] if complete else None


class VoucherStore:
    """The vouchers of a data folder and their texts: the one INSERT, finds, signatures and status changes.
    `environment` says which environment's vouchers are seen and numbered; `on_change(id, status)` is told of
    every change of status (the engine turns it into an event)."""

    def __init__(self, storage: Storage, environment: Callable[[], str],
                 on_change: Callable[[int, str], None] = lambda voucher_id, status: None) -> None:
        self.storage = storage
        self.environment = environment
        self.on_change = on_change
        self._dictionaries: dict[bytes, bytes] = {}  # digest → bytes: a digest names its bytes forever
        self._scopes: dict[str, bytes] = {}  # scope → the dictionary new texts of that scope are packed against

    # ------------------------------------------------------------ packed texts

    def _pack(self, conn: sqlite3.Connection, scope: str, text: str | None) -> bytes | None:
        """`text` packed against its scope's dictionary (the scope's first text becomes it), inside the caller's write
        transaction: the dictionary's row is written there too (a no-op when it is stored), so a rollback that takes
        it away takes away the rows that need it. None stays None (the table's constraints decide)."""
        return None if text is None else self.pack_bytes(conn, scope, text.encode("utf-8"))

    def pack_bytes(self, conn: sqlite3.Connection, scope: str, data: bytes) -> bytes:
        """`_pack` for bytes kept as they came (a submission's signed XML, a CDR's zip), for the stores that keep
        them (the outbox): one set of dictionaries per data folder; read back with `unpack_bytes`."""
        dictionary = self._scopes.get(scope)
        if dictionary is None:
            row = conn.execute("SELECT data FROM voucher_dictionaries WHERE scope = ? ORDER BY id DESC LIMIT 1",
                               (scope,)).fetchone()
            dictionary = bytes(row[0]) if row else bytes(data[-packed_texts.MAX_DICTIONARY:])
            self._scopes[scope] = dictionary
        digest = packed_texts.digest_of(dictionary)
        conn.execute("INSERT OR IGNORE INTO voucher_dictionaries (digest, scope, data) VALUES (?, ?, ?)",
                     (digest, scope, dictionary))
        self._dictionaries[digest] = dictionary
        return packed_texts.pack_bytes(data, dictionary)

    def unpack_bytes(self, value: bytes | None) -> bytes | None:
        """What `pack_bytes` packed, byte for byte; a value stored before packing as it is."""
        return packed_texts.unpack_bytes(value, self._dictionary_of)

    def signed_bytes(self, voucher_id: int) -> bytes | None:
        """A voucher's signed XML as operation 3 sends it (UTF-8), or None while it is not signed (or not stored)."""
        row = self._voucher("v.id = ?", (voucher_id,))
        return row["xml_firmado"].encode("utf-8") if row and row.get("xml_firmado") else None

    def _dictionary_of(self, digest: bytes) -> bytes:
        data = self._dictionaries.get(digest)
        if data is None:
            data = self._dictionaries[digest] = dictionaries_in(self.storage.conn())(digest)
        return data

    # ------------------------------------------------------------ the one INSERT

    def add(self, conn: sqlite3.Connection, doc: ubl.Document, *, name: str, xml_hash: str, xml_sha256: str,
            content_key: str, request_json: str, xml: str, signed: CanonicalSignature | None = None,
            certificado_id: str | None = None) -> int:
        """Insert a voucher inside the caller's write transaction (`storage.write(durable=True)`: a number handed
        out must survive a power cut): generated, or already signed in memory (a batch). Raises
        NumberTaken when its serie-número was issued in this environment (any other failure as it comes)."""
        values = [self.environment(), doc.emisor_ruc, doc.tipo, doc.serie, doc.numero, name, xml_hash, xml_sha256,
                  content_key, FIRMADO if signed else GENERADO, doc.receptor.tipo_documento,
                  doc.receptor.numero_documento, doc.receptor.nombre, doc.moneda, f"{doc.total:.2f}",
                  doc.fecha.isoformat()]
        if signed is not None:
            values += [self._pack(conn, f"signature:{certificado_id}", signed.signature), signed.offset, signed.sha256,
                       signed.digest_value, signed.signature_value,
                       certificado_id, now_text()]
        try:
            voucher_id = int(conn.execute(_INSERT_SIGNED if signed else _INSERT_GENERATED, values).lastrowid or 0)
        except sqlite3.IntegrityError as exc:
            if "UNIQUE" not in str(exc):
                raise
            raise NumberTaken(doc.serie, doc.numero) from exc
        conn.execute("INSERT INTO voucher_texts (voucher_id, request_json, xml) VALUES (?,?,?)",
                     (voucher_id, self._pack(conn, f"request:{doc.emisor_ruc}", request_json),
                      self._pack(conn, f"xml:{doc.emisor_ruc}:{doc.tipo}", xml)))
        conn.execute(_INSERT_FTS, (voucher_id, *_fts_values(doc.serie, doc.numero, doc.receptor.numero_documento,
                                                            doc.receptor.nombre)))
        return voucher_id

    # ------------------------------------------------------------ finds

    def id_of(self, emisor_ruc: str, tipo: str, serie: str, numero: int) -> int | None:
        """The id of a serie-número in the current environment: one look in the unique index, no texts."""
        row = self.storage.conn().execute(
            "SELECT id FROM vouchers WHERE environment = ? AND emisor_ruc = ? AND tipo = ? AND serie = ? AND numero = ?",
            (self.environment(), emisor_ruc, tipo, serie, numero)).fetchone()
        return row[0] if row else None

    def _voucher(self, where: str, params: tuple) -> dict | None:
        return _complete(self.storage.query_one(f"{_VOUCHER} WHERE {where}", params), self._dictionary_of)

    def find(self, emisor_ruc: str, tipo: str, serie: str, numero: int) -> dict | None:
        """A voucher of the current environment by its serie-número."""
        return self._voucher("v.environment = ? AND v.emisor_ruc = ? AND v.tipo = ? AND v.serie = ? AND v.numero = ?",
                        (self.environment(), emisor_ruc, tipo, serie, numero))

    def get(self, voucher_id: int) -> dict | None:
        return self._voucher("v.id = ?", (voucher_id,))

    def require(self, voucher_id: int) -> dict:
        """The whole voucher, or a 404 naming its id."""
        row = self.get(voucher_id)
        if row is None:
            raise not_found("voucher_id", f"No existe el comprobante con id {voucher_id}.")
        return row

    def _by_text(self, columns: str, hash_column: str, text: str, encoded: bytes | None = None,
                 environments: tuple[str, ...] | None = None) -> dict | None:
        """The voucher of one of `environments` (the current one by default) whose text is exactly `text`."""
        environments = environments or (self.environment(),)
        marks = ", ".join("?" * len(environments))
        digest = hashlib.sha256(encoded if encoded is not None else text.encode("utf-8")).hexdigest()
        key = key_of_text(text)
        if key is not None:
            for row in self.storage.query(
                    f"SELECT {columns}, {hash_column} AS text_sha256 FROM vouchers v"
                    f" WHERE environment IN ({marks}) AND emisor_ruc = ? AND tipo = ? AND serie = ? AND numero = ?",
                    (*environments, *key)):
                if row.pop("text_sha256") == digest:
                    return _complete(row, self._dictionary_of)
        return _complete(self.storage.query_one(  # rows stored before this scheme (the partial index covers only those)
            f"SELECT {columns} FROM vouchers v WHERE {hash_column} = ? AND canonical = 0 AND environment IN ({marks}) "
            "ORDER BY id DESC LIMIT 1", (digest, *environments)), self._dictionary_of)

    def find_by_xml(self, xml: str) -> dict | None:
        row = self._by_text("id", "xml_sha256", xml)
        return self.get(row["id"]) if row else None

    def find_by_signed_xml(self, xml_firmado: str) -> dict | None:
        row = self._by_text("id", "signed_sha256", xml_firmado)
        return self.get(row["id"]) if row else None

    def environment_of_signed(self, xml_firmado: str) -> str | None:
        """The environment a signed voucher was generated in, whichever it is; None for one Yupana did not generate."""
        row = self._by_text("environment", "signed_sha256", xml_firmado, environments=NAMES)
        return row["environment"] if row else None

    def find_for_signing(self, xml: str, encoded: bytes | None = None) -> dict | None:
        """The voucher whose generated text is exactly `xml` (`encoded`: its UTF-8, when the caller has it), with the
        columns operation 2 needs (not the text)."""
        return self._by_text(SIGNING_COLUMNS, "xml_sha256", xml, encoded)

    def record_signature(self, voucher_id: int, xml_firmado: str, digest_value: str, signature_value: str,
                         certificado_id: str) -> None:
        with self.storage.write() as conn:
            changed = conn.execute(
                "UPDATE vouchers SET signed_sha256 = ?, digest_value = ?, signature_value = ?, certificado_id = ?,"
                " status = 'firmado', updated_at = ?, signature = NULL, signature_offset = NULL WHERE id = ?",
                (sha256_hex(xml_firmado), digest_value, signature_value, certificado_id, now_text(), voucher_id)).rowcount
            if changed:
                emisor_ruc, tipo = conn.execute("SELECT emisor_ruc, tipo FROM vouchers WHERE id = ?",
                                                (voucher_id,)).fetchone()
                conn.execute("UPDATE voucher_texts SET xml_firmado = ? WHERE voucher_id = ?",
                             (self._pack(conn, f"xml:{emisor_ruc}:{tipo}", xml_firmado), voucher_id))
        if not changed:
            raise not_found("voucher_id", f"No existe el comprobante con id {voucher_id}.")
        self.on_change(voucher_id, FIRMADO)

    def record_signature_fragment(self, voucher_id: int, signature: str, offset: int, signed_sha256: str,
                                  digest_value: str, signature_value: str, certificado_id: str) -> bool:
        """`record_signature` storing only the Signature and where it goes in the stored text (the signed XML is
        `splice_signature(xml, offset, signature)`, of SHA-256 `signed_sha256`). False, and nothing written, when
        the voucher was signed meanwhile (or does not exist)."""
        with self.storage.write() as conn:
            changed = conn.execute(
                "UPDATE vouchers SET signature = ?, signature_offset = ?, signed_sha256 = ?, digest_value = ?,"
                " signature_value = ?, certificado_id = ?, status = 'firmado', updated_at = ?"
                " WHERE id = ? AND signed_sha256 IS NULL",
                (self._pack(conn, f"signature:{certificado_id}", signature), offset, signed_sha256, digest_value,
                 signature_value, certificado_id, now_text(),
                 voucher_id)).rowcount
        if changed:
            self.on_change(voucher_id, FIRMADO)
        return bool(changed)

    def set_status(self, voucher_id: int, status: str) -> None:
        if status not in STATUSES:
            raise invalid("status", f"El estado «{status}» no es válido: {', '.join(STATUSES)}.")
        with self.storage.write() as conn:
            changed = conn.execute("UPDATE vouchers SET status = ?, updated_at = ? WHERE id = ?",
                                   (status, now_text(), voucher_id)).rowcount
        if not changed:
            raise not_found("voucher_id", f"No existe el comprobante con id {voucher_id}.")
        self.on_change(voucher_id, status)

    def list(self, search: str | None = None, status: str | None = None, limit: int = 200, *,
             before_id: int | None = None, offset: int = 0, desde: str | None = None, hasta: str | None = None,
             tipo: str | None = None, cliente: str | None = None) -> list[dict]:
        """A page of the current environment's vouchers, newest first, always from an index (never a scan of the table).

        `search`: every word begins the serie-número («F001-12», «F001-00000123»), the customer's RUC/DNI or a word of
        their name (accents and case ignored). Filters: `status`, `tipo` (catalogue 01 code), `cliente` (the customer's
        RUC/DNI, exactly), `desde`/`hasta` (fecha de emisión, ISO dates, both included). Paging: `before_id` (the
        last id of the previous page: keyset, the same cost for any page) or `offset`."""
        where: builtins.list[str] = ["v.environment = ?"]
        params: builtins.list[Any] = [self.environment()]
        match_terms = []
        if search and search.strip():
            expression = _match_expression(search.strip())
            if expression is None:
                return []
            match_terms.append(f"({expression})")
        if cliente and cliente.strip():
            match_terms.append('doc : "{}"'.format(cliente.strip().replace('"', '""')))
        where_equal(where, params, {"v.status": status, "v.tipo": tipo})
        if desde:
            where.append("v.fecha_emision >= ?")
            params.append(desde)
        if hasta:
            where.append("v.fecha_emision <= ?")
            params.append(hasta)
        columns = ", ".join(f"v.{c.strip()}" for c in LIST_COLUMNS.split(","))
        if match_terms:  # the index's matches, newest first, each joined to its row by id
            sql = (f"SELECT {columns} FROM vouchers_fts f JOIN vouchers v ON v.id = f.rowid"
                   " WHERE f.vouchers_fts MATCH ? AND ")
            params.insert(0, " AND ".join(match_terms))
            order = "f.rowid"
        else:
            index = ("vouchers_fecha" if desde or hasta
                     else "vouchers_status" if status else "vouchers_environment")
            sql = f"SELECT {columns} FROM vouchers v INDEXED BY {index} WHERE "
            order = "v.id"
        if before_id is not None:
            where.append(f"{order} < ?")
            params.append(int(before_id))
        sql += " AND ".join(where) + f" ORDER BY {order} DESC LIMIT ? OFFSET ?"
        params += [max(1, int(limit)), max(0, int(offset))]
        return self.storage.query(sql, tuple(params))

    def next_numero(self, emisor_ruc: str, tipo: str, serie: str) -> int:
        """The next number of a serie in the current environment: sandbox and beta trials never use up real numbers."""
        row = self.storage.query_one(
            "SELECT MAX(numero) AS last FROM vouchers WHERE environment = ? AND emisor_ruc = ? AND tipo = ? AND serie = ?",
            (self.environment(), emisor_ruc, tipo, serie))
        return int(row["last"] or 0) + 1 if row else 1

    def find_by_serie_numero(self, serie: str, numero: int, emisor_ruc: str | None = None,
                             tipo: str | None = None) -> builtins.list[dict]:
        """The vouchers numbered SERIE-NUMERO (a factura and its credit note may share a series), newest first."""
        where, params = ["serie = ?", "numero = ?"], [serie, numero]
        where_equal(where, params, {"emisor_ruc": emisor_ruc, "tipo": tipo})
        return self.storage.query(f"SELECT {LIST_COLUMNS} FROM vouchers WHERE {' AND '.join(where)} ORDER BY id DESC",
                                    tuple(params))
