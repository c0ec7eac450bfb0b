"""SQLite repository of the vouchers and their texts (ports.vouchers): tables `vouchers`, `voucher_texts`,
`voucher_dictionaries` and the FTS5 search index `vouchers_fts`."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable
from typing import Any

from app.core.storage.ports.vouchers import NewVoucher, NumberTaken, TextKind, View
from app.core.storage.sql import in_chunks, where_equal
from app.core.storage.sqlite.database import Storage


def dictionaries_in(db) -> Callable[[bytes], bytes]:
    """The texts' compression dictionaries of a database (a connection, or a migration's sqlite_utils database), by
    digest: what packed_texts.unpack needs; KeyError for one not stored."""
    def dictionary_of(digest: bytes) -> bytes:
        row = db.execute("SELECT data FROM voucher_dictionaries WHERE digest = ?", [digest]).fetchone()
        if row is None:
            raise KeyError(digest.hex())
        return bytes(row[0])
    return dictionary_of


# The search index (vouchers m005): one FTS5 row per voucher, rowid = vouchers.id, contentless (the words are the
# index's own, the voucher's row is the content). `sn` holds «SERIE-NUMERO» as one token (`-` is a token character),
# `doc` the customer's RUC/DNI, `nombre` the customer's name; accents and case folded (remove_diacritics 2). A
# voucher's serie-número and customer never change once stored and vouchers are never deleted, so the index is
# written once, by the INSERT's own transaction (`add`), and only read afterwards. (PostgreSQL: a tsvector or pg_trgm
# index over the same three values, with unaccent.)
FTS_TOKENIZER = "unicode61 remove_diacritics 2 tokenchars '-'"
# Prefix indexes for what one types first (a letter, a whole serie, «F001-1»): one doclist to read instead of every
# word that begins so (at 300,000 vouchers «F001» begins 300,000 different words).
FTS_PREFIXES = "1 2 3 4 5 6"
_INSERT_FTS = "INSERT INTO vouchers_fts (rowid, sn, doc, nombre) VALUES (?, ?, ?, ?)"


def _fts_values(serie: str, numero: int, documento: str | None, nombre: str | None) -> tuple[str, str, str]:
    return f"{serie}-{int(numero)}", documento or "", nombre or ""


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


# A whole voucher: its row and its texts (xml, request_json, xml_firmado).
_VOUCHER = "SELECT v.*, t.xml, t.request_json, t.xml_firmado FROM vouchers v JOIN voucher_texts t ON t.voucher_id = v.id"
# What operation 2 needs of a voucher found by its text; the text itself is the caller's, so it is not read back.
_VIEWS = {
    "id": "id",
    "environment": "environment",
    "signing": ("id, emisor_ruc, tipo, serie, numero, canonical, certificado_id, digest_value, signature_value,"
                " signature, signature_offset, signed_sha256 IS NOT NULL AS signed"),
}
_TEXT_HASHES = {"xml": "xml_sha256", "signed": "signed_sha256"}

LIST_COLUMNS = ("id, environment, emisor_ruc, tipo, serie, numero, nombre_archivo, hash, status, receptor_tipo_documento,"
                " receptor_numero_documento, receptor_nombre, moneda, total, fecha_emision, digest_value,"
                " created_at, updated_at")

_INSERT_COLUMNS = ("environment, emisor_ruc, tipo, serie, numero, nombre_archivo, hash, xml_sha256, content_key, status,"
                   " receptor_tipo_documento, receptor_numero_documento, receptor_nombre, moneda, total, fecha_emision")
_SIGNED_COLUMNS = ", signature, signature_offset, signed_sha256, digest_value, signature_value, certificado_id, updated_at"
_INSERT_GENERATED = f"INSERT INTO vouchers ({_INSERT_COLUMNS}, canonical) VALUES ({'?, ' * 16}1)"
_INSERT_SIGNED = f"INSERT INTO vouchers ({_INSERT_COLUMNS}{_SIGNED_COLUMNS}, canonical) VALUES ({'?, ' * 23}1)"

# The highest number stored on a serie (the unique index answers it); parameters: environment, issuer, type, serie.
_HIGHEST = ("SELECT COALESCE(MAX(numero), 0) FROM vouchers WHERE environment = ? AND emisor_ruc = ? AND tipo = ?"
            " AND serie = ?")


class SqliteVoucherRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    # ------------------------------------------------------------ the texts' dictionaries

    def dictionary(self, digest: bytes) -> bytes | None:
        row = self._db.conn().execute("SELECT data FROM voucher_dictionaries WHERE digest = ?", (digest,)).fetchone()
        return bytes(row[0]) if row else None

    def latest_dictionary(self, scope: str) -> bytes | None:
        # This thread's connection: inside the caller's transaction, what it wrote counts.
        row = self._db.conn().execute("SELECT data FROM voucher_dictionaries WHERE scope = ? ORDER BY id DESC LIMIT 1",
                                      (scope,)).fetchone()
        return bytes(row[0]) if row else None

    def keep_dictionary(self, digest: bytes, scope: str, data: bytes) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO voucher_dictionaries (digest, scope, data) VALUES (?, ?, ?) "
                         "ON CONFLICT (digest) DO NOTHING", (digest, scope, data))

    # ------------------------------------------------------------ the one insert

    def add(self, voucher: NewVoucher) -> int:
        v = voucher
        values: list[Any] = [v.environment, v.emisor_ruc, v.tipo, v.serie, v.numero, v.nombre_archivo, v.hash,
                             v.xml_sha256, v.content_key, v.status, v.receptor_tipo_documento,
                             v.receptor_numero_documento, v.receptor_nombre, v.moneda, v.total, v.fecha_emision]
        signed = v.signed_sha256 is not None
        if signed:
            values += [v.signature, v.signature_offset, v.signed_sha256, v.digest_value, v.signature_value,
                       v.certificado_id, v.updated_at]
        with self._db.write() as conn:
            try:
                voucher_id = int(conn.execute(_INSERT_SIGNED if signed else _INSERT_GENERATED, values).lastrowid or 0)
            except sqlite3.IntegrityError as exc:
                if "UNIQUE" not in str(exc):
                    raise
                raise NumberTaken(v.serie, v.numero) from exc
            conn.execute("INSERT INTO voucher_texts (voucher_id, request_json, xml) VALUES (?,?,?)",
                         (voucher_id, v.request_json, v.xml))
            conn.execute(_INSERT_FTS, (voucher_id, *_fts_values(v.serie, v.numero, v.receptor_numero_documento,
                                                                v.receptor_nombre)))
        return voucher_id

    # ------------------------------------------------------------ finds

    def id_of(self, environment: str, emisor_ruc: str, tipo: str, serie: str, numero: int) -> int | None:
        row = self._db.conn().execute(
            "SELECT id FROM vouchers WHERE environment = ? AND emisor_ruc = ? AND tipo = ? AND serie = ? AND numero = ?",
            (environment, emisor_ruc, tipo, serie, numero)).fetchone()
        return row[0] if row else None

    def get(self, voucher_id: int) -> dict[str, Any] | None:
        return self._db.query_one(f"{_VOUCHER} WHERE v.id = ?", (voucher_id,))

    def find(self, environment: str, emisor_ruc: str, tipo: str, serie: str, numero: int) -> dict[str, Any] | None:
        return self._db.query_one(
            f"{_VOUCHER} WHERE v.environment = ? AND v.emisor_ruc = ? AND v.tipo = ? AND v.serie = ? AND v.numero = ?",
            (environment, emisor_ruc, tipo, serie, numero))

    def with_number(self, environments: tuple[str, ...], emisor_ruc: str, tipo: str, serie: str, numero: int,
                    text: TextKind, view: View) -> list[dict[str, Any]]:
        marks = ", ".join("?" * len(environments))
        return self._db.query(
            f"SELECT {_VIEWS[view]}, {_TEXT_HASHES[text]} AS text_sha256 FROM vouchers v"
            f" WHERE environment IN ({marks}) AND emisor_ruc = ? AND tipo = ? AND serie = ? AND numero = ?",
            (*environments, emisor_ruc, tipo, serie, numero))

    def legacy_by_hash(self, digest: str, environments: tuple[str, ...], text: TextKind,
                       view: View) -> dict[str, Any] | None:
        marks = ", ".join("?" * len(environments))
        return self._db.query_one(  # the partial index covers only the rows stored before canonical texts
            f"SELECT {_VIEWS[view]} FROM vouchers v WHERE {_TEXT_HASHES[text]} = ? AND canonical = 0"
            f" AND environment IN ({marks}) ORDER BY id DESC LIMIT 1", (digest, *environments))

    def issuer_and_type(self, voucher_id: int) -> tuple[str, str] | None:
        row = self._db.conn().execute("SELECT emisor_ruc, tipo FROM vouchers WHERE id = ?", (voucher_id,)).fetchone()
        return (row[0], row[1]) if row else None

    def last_numero(self, environment: str, emisor_ruc: str, tipo: str, serie: str) -> int:
        key = (environment, emisor_ruc, tipo, serie)
        row = self._db.query_one(
            "SELECT MAX(numero) AS last FROM vouchers WHERE environment = ? AND emisor_ruc = ? AND tipo = ? AND serie = ?",
            key)
        floor = self._db.query_one("SELECT last FROM voucher_numbering WHERE environment = ? AND emisor_ruc = ? AND "
                                   "tipo = ? AND serie = ?", key)
        return max(int(row["last"] or 0) if row else 0, int(floor["last"] or 0) if floor else 0)

    def series(self, environment: str) -> list[dict[str, Any]]:
        found: dict[tuple[str, str, str], int] = {}
        for row in self._db.query("SELECT emisor_ruc, tipo, serie, MAX(numero) AS ultimo FROM vouchers "
                                  "WHERE environment = ? GROUP BY emisor_ruc, tipo, serie", (environment,)):
            found[(row["emisor_ruc"], row["tipo"], row["serie"])] = int(row["ultimo"])
        for row in self._db.query("SELECT emisor_ruc, tipo, serie, last FROM voucher_numbering WHERE environment = ?",
                                  (environment,)):
            key = (row["emisor_ruc"], row["tipo"], row["serie"])
            found[key] = max(found.get(key, 0), int(row["last"]))
        return [{"emisor_ruc": ruc, "tipo": tipo, "serie": serie, "ultimo": last}
                for (ruc, tipo, serie), last in sorted(found.items())]

    def raise_numero(self, environment: str, emisor_ruc: str, tipo: str, serie: str, at_least: int) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO voucher_numbering (environment, emisor_ruc, tipo, serie, last) VALUES (?, ?, ?, ?, ?)"
                         " ON CONFLICT (environment, emisor_ruc, tipo, serie) DO UPDATE SET last = CASE WHEN"
                         " voucher_numbering.last > excluded.last THEN voucher_numbering.last ELSE excluded.last END",
                         (environment, emisor_ruc, tipo, serie, at_least))

    def take_numero(self, environment: str, emisor_ruc: str, tipo: str, serie: str) -> int:
        key = (environment, emisor_ruc, tipo, serie)
        with self._db.write() as conn:
            conn.execute("INSERT INTO voucher_numbering (environment, emisor_ruc, tipo, serie, last) VALUES (?, ?, ?, ?, 0)"
                         " ON CONFLICT (environment, emisor_ruc, tipo, serie) DO NOTHING", key)
            # The UPDATE takes the row's lock first (PostgreSQL: a second desk waits here for the first's commit, then
            # reads the row it committed); the serie's highest stored number is read after it.
            row = conn.execute(
                f"UPDATE voucher_numbering SET last = (CASE WHEN last > ({_HIGHEST}) THEN last ELSE ({_HIGHEST}) END) + 1"
                " WHERE environment = ? AND emisor_ruc = ? AND tipo = ? AND serie = ? RETURNING last",
                (*key, *key, *key)).fetchone()
        return int(row[0])

    def find_by_serie_numero(self, serie: str, numero: int, emisor_ruc: str | None = None,
                             tipo: str | None = None) -> list[dict[str, Any]]:
        where, params = ["serie = ?", "numero = ?"], [serie, numero]
        where_equal(where, params, {"emisor_ruc": emisor_ruc, "tipo": tipo})
        return self._db.query(f"SELECT {LIST_COLUMNS} FROM vouchers WHERE {' AND '.join(where)} ORDER BY id DESC",
                              tuple(params))

    def list_page(self, environment: str, *, search: str | None, cliente: str | None, status: str | None,
                  tipo: str | None, desde: str | None, hasta: str | None, before_id: int | None, offset: int,
                  limit: int) -> list[dict[str, Any]]:
        # FTS5 MATCH and INDEXED BY are SQLite's: the PostgreSQL engine searches a tsvector/pg_trgm index and leaves
        # the choice of index to its planner.
        where: list[str] = ["v.environment = ?"]
        params: list[Any] = [environment]
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
        return self._db.query(sql, tuple(params))

    # ------------------------------------------------------------ for the outbox and the voids

    def ids_in_status(self, environments: tuple[str, ...], statuses: tuple[str, ...]) -> list[int]:
        environment_marks, status_marks = ", ".join("?" * len(environments)), ", ".join("?" * len(statuses))
        return [row["id"] for row in self._db.query(  # the (environment, status, id) index
            f"SELECT id FROM vouchers WHERE environment IN ({environment_marks}) AND status IN ({status_marks})"
            " ORDER BY id", (*environments, *statuses))]

    def statuses_of(self, voucher_ids: Iterable[int]) -> dict[int, str]:
        found: dict[int, str] = {}
        for chunk, marks in in_chunks(voucher_ids):
            found.update((row["id"], row["status"]) for row in self._db.query(
                f"SELECT id, status FROM vouchers WHERE id IN ({marks})", tuple(chunk)))
        return found

    def hold_paths(self, voucher_ids: Iterable[int]) -> None:
        """Nothing to do: a SQLite write transaction (BEGIN IMMEDIATE) already has the database to itself."""

    def summary_candidates(self, environment: str, status: str, day: str) -> list[int]:
        return [row["id"] for row in self._db.query(
            "SELECT id FROM vouchers WHERE environment = ? AND status = ? AND substr(fecha_emision, 1, 10) = ?"
            " AND (tipo = '03' OR (tipo IN ('07', '08') AND upper(serie) LIKE 'B%'))"
            " ORDER BY emisor_ruc, tipo, serie, numero", (environment, status, day))]

    # ------------------------------------------------------------ changes

    def mark_signed(self, voucher_id: int, signed_sha256: str, digest_value: str, signature_value: str,
                    certificado_id: str, updated_at: str) -> bool:
        with self._db.write() as conn:
            return bool(conn.execute(
                "UPDATE vouchers SET signed_sha256 = ?, digest_value = ?, signature_value = ?, certificado_id = ?,"
                " status = 'firmado', updated_at = ?, signature = NULL, signature_offset = NULL WHERE id = ?",
                (signed_sha256, digest_value, signature_value, certificado_id, updated_at, voucher_id)).rowcount)

    def set_signed_text(self, voucher_id: int, xml_firmado: bytes) -> None:
        with self._db.write() as conn:
            conn.execute("UPDATE voucher_texts SET xml_firmado = ? WHERE voucher_id = ?", (xml_firmado, voucher_id))

    def mark_signed_fragment(self, voucher_id: int, signature: bytes, offset: int, signed_sha256: str,
                             digest_value: str, signature_value: str, certificado_id: str, updated_at: str) -> bool:
        with self._db.write() as conn:
            return bool(conn.execute(
                "UPDATE vouchers SET signature = ?, signature_offset = ?, signed_sha256 = ?, digest_value = ?,"
                " signature_value = ?, certificado_id = ?, status = 'firmado', updated_at = ?"
                " WHERE id = ? AND signed_sha256 IS NULL",
                (signature, offset, signed_sha256, digest_value, signature_value, certificado_id, updated_at,
                 voucher_id)).rowcount)

    def set_status(self, voucher_id: int, status: str, updated_at: str) -> bool:
        with self._db.write() as conn:
            return bool(conn.execute("UPDATE vouchers SET status = ?, updated_at = ? WHERE id = ?",
                                     (status, updated_at, voucher_id)).rowcount)
