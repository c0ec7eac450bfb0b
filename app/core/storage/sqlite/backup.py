"""A SQLite data folder's database copied while Yupana runs, and what a backup's manifest says of a copy (issue 35).

The one place that reads every table: a backup is of the whole database, not of one aggregate. The copy is made by
`VACUUM INTO`, which reads the database inside one read transaction (a consistent snapshot, whatever commits
meanwhile: WAL readers never block writers) and writes a compact file that needs no WAL beside it. The facts are
read from the copy, never from the live database, so the manifest describes exactly what was copied. A shared
PostgreSQL database is exported in the same format (app/core/storage/postgres/backup.py, through
`database_from_rows` below).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.storage.sqlite.database import BUSY_TIMEOUT_MS, Storage
from app.core.storage.sqlite.migrations import SETS
from app.core.storage.sqlite.schema import adopt
from app.core.storage.sqlite.vouchers import _fts_values


@dataclass(frozen=True)
class CopyFacts:
    """What a backup's manifest records of the copied database."""

    tables: dict[str, int]  # rows per table
    series: list[dict[str, Any]] = field(default_factory=list)  # {entorno, ruc, tipo, serie, ultimo}
    summaries: list[dict[str, Any]] = field(default_factory=list)  # {entorno, ruc, tipo: RA|RC, dia, ultimo}


def snapshot(database: Path, target: Path) -> None:
    """Copy the live database at `database` to `target` (which must not exist) in one read transaction."""
    conn = sqlite3.connect(database, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("VACUUM INTO ?", (str(target),))
    finally:
        conn.close()


def _read_only(copy: Path) -> sqlite3.Connection:
    """A copy opened without writing to it or locking it (it is ours alone, and never changes)."""
    return sqlite3.connect(f"{copy.resolve().as_uri()}?mode=ro&immutable=1", uri=True, isolation_level=None)


def integrity_problems(copy: Path) -> list[str]:
    """SQLite's integrity_check of a copy: [] when it is sound, else what SQLite found (or why it cannot open)."""
    try:
        conn = _read_only(copy)
        try:
            rows = [str(row[0]) for row in conn.execute("PRAGMA integrity_check(20)")]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    return [] if rows == ["ok"] else rows


def facts(copy: Path) -> CopyFacts:
    """Rows per table, the last number of each serie and the last RA/RC counter of each day, read from a copy."""
    conn = _read_only(copy)
    try:
        names = [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name")]
        tables = {name: int(conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]) for name in names}
        series = [{"entorno": row[0], "ruc": row[1], "tipo": row[2], "serie": row[3], "ultimo": int(row[4])}
                  for row in conn.execute(
                      "SELECT environment, emisor_ruc, tipo, serie, MAX(numero) FROM vouchers "
                      "GROUP BY environment, emisor_ruc, tipo, serie ORDER BY environment, emisor_ruc, tipo, serie")]
        summaries = [{"entorno": row[0], "ruc": row[1], "tipo": row[2], "dia": row[3], "ultimo": int(row[4])}
                     for row in conn.execute(
                         "SELECT environment, emisor_ruc, kind, issue_date, MAX(counter) FROM sunat_summaries "
                         "GROUP BY environment, emisor_ruc, kind, issue_date "
                         "ORDER BY environment, emisor_ruc, kind, issue_date")]
    finally:
        conn.close()
    return CopyFacts(tables, series, summaries)


def signed_sample(copy: Path, size: int) -> tuple[list[dict[str, Any]], dict[bytes, bytes]]:
    """Up to `size` signed vouchers of a copy, spread over its whole history (their stored columns, texts packed),
    and the compression dictionaries they need (digest → bytes)."""
    conn = _read_only(copy)
    conn.row_factory = sqlite3.Row
    try:
        ids = [row[0] for row in conn.execute(
            "SELECT id FROM vouchers WHERE digest_value IS NOT NULL ORDER BY id")]
        step = max(1, len(ids) // size) if ids else 1
        chosen = ids[::step][:size]
        marks = ",".join("?" * len(chosen))
        rows = [dict(row) for row in conn.execute(
            "SELECT v.id, v.serie, v.numero, v.signature, v.signature_offset, t.xml, t.xml_firmado "
            f"FROM vouchers v JOIN voucher_texts t ON t.voucher_id = v.id WHERE v.id IN ({marks}) ORDER BY v.id",
            chosen)] if chosen else []
        dictionaries = {bytes(row[0]): bytes(row[1])
                        for row in conn.execute("SELECT digest, data FROM voucher_dictionaries")}
    finally:
        conn.close()
    return rows, dictionaries


def database_from_rows(target: Path, tables: Iterable[tuple[str, list[str], Iterable[tuple[Any, ...]]]]) -> None:
    """A new SQLite database at `target` (which must not exist), at the described schema, holding these rows: a
    shared database's backup in the same format as a folder's (app/core/storage/postgres/backup.py). The file ends
    standalone (no WAL beside it), as `VACUUM INTO` writes one."""
    storage = Storage.open(target, SETS)
    try:
        adopt(storage)
    finally:
        storage.close()
    conn = sqlite3.connect(target, isolation_level=None)
    try:
        conn.execute("BEGIN")
        for name, columns, rows in tables:
            conn.execute(f"DELETE FROM {name}")  # what creating the schema put there (its defaults): the backup's rows
            conn.executemany(f"INSERT INTO {name} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                             rows)
        conn.execute("DELETE FROM vouchers_fts")
        conn.executemany("INSERT INTO vouchers_fts (rowid, sn, doc, nombre) VALUES (?, ?, ?, ?)",
                         ((voucher_id, *_fts_values(serie, numero, documento, nombre))
                          for voucher_id, serie, numero, documento, nombre in conn.execute(
                              "SELECT id, serie, numero, receptor_numero_documento, receptor_nombre FROM vouchers"
                          ).fetchall()))
        conn.execute("COMMIT")
        conn.execute("PRAGMA journal_mode = DELETE")  # checkpoints the WAL into the file and drops it
    finally:
        conn.close()
