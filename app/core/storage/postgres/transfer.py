"""A single desk's SQLite folder copied into an empty shared database (`yupana db migrar`, issue 34, item 4).

Every table of the schema's description (app/core/storage/schema.py) is copied row by row with its keys as they are,
in the description's order (a table after those it refers to), inside one transaction: the shared database ends with
all of the folder or, should anything fail, with none of it. Nothing is rebuilt: a voucher's texts, its signature,
SUNAT's CDRs and the secrets' ciphertexts are the folder's bytes (a packed text stays packed against the same
dictionary, copied with it), so signatures verify as before and the secrets open with the same key. Numbering needs
nothing of its own: the next number of a serie is read from its vouchers, and each generated key continues after the
highest the folder ever handed out.

What only this engine keeps is filled from the copied rows: the voucher list's search table (`vouchers_fts`, SQLite's
FTS5 index holds no readable content) and the key sequences.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from app.core.invoicing import packed_texts
from app.core.storage import schema
from app.core.storage.postgres.database import Connection, PostgresStorage
from app.core.storage.sqlite.snapshot import Snapshot
from app.core.storage.sqlite.vouchers import _fts_values

GENERATED = ("{id}", "{serial}")
# The voucher and what identifies its content: how a second copy of the same folder is recognised.
_LAST_VOUCHER = ("id", "content_key")


@dataclass(frozen=True)
class Copied:
    table: str
    rows: int


def _key_of(table: schema.Table) -> str | None:
    return next((name for name, kind in table.columns if kind in GENERATED), None)


def row_counts(storage: PostgresStorage) -> dict[str, int]:
    """Each described table's rows in the shared database."""
    counts = {}
    for table in schema.TABLES:
        row = storage.conn().execute(f"SELECT count(*) FROM {table.name}").fetchone()
        counts[table.name] = int(row[0]) if row else 0
    return counts


def holds(storage: PostgresStorage, snapshot: Snapshot) -> bool:
    """Whether the shared database holds this folder already (a second `yupana db migrar` of it): its last voucher,
    by key and content, or the secret store's identity (its random salt or folder id, made once per folder)."""
    present = snapshot.tables()
    last = snapshot.last_row("vouchers", _LAST_VOUCHER, order_by="id") if "vouchers" in present else None
    if last is not None:
        found = storage.conn().execute("SELECT content_key FROM vouchers WHERE id = ?", (last[0],)).fetchone()
        return found is not None and found[0] == last[1]
    identity = {key: value for batch in snapshot.rows("secret_meta", ("key", "value")) for key, value in batch} \
        if "secret_meta" in present else {}
    held = dict(storage.conn().execute("SELECT key, value FROM secret_meta").fetchall())
    return bool(identity) and all(held.get(key) == value for key, value in identity.items())


# ---------------------------------------------------------------- values as the shared database keeps them

def _as_packed(value: Any) -> Any:
    """A text stored before packing (a `str` in SQLite's untyped column) becomes a packed text without a dictionary:
    `BYTEA` holds no flag telling the two apart, and unpacking gives back the same text."""
    return packed_texts.pack(value) if isinstance(value, str) else _as_bytes(value)


def _as_bytes(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(value) if isinstance(value, memoryview) else value


def _as_integer(value: Any) -> Any:
    """SQLite keeps a fraction in an INTEGER column; PostgreSQL's BIGINT rounds it, as its INSERT would."""
    if isinstance(value, float):
        return int(Decimal(value).to_integral_value(ROUND_HALF_UP))
    return value


def _as_text(value: Any) -> Any:
    return value.decode("utf-8") if isinstance(value, bytes) else value


_CONVERSIONS: dict[str, Callable[[Any], Any]] = {
    "{packed}": _as_packed, "{blob}": _as_bytes, "{int}": _as_integer, "{id}": _as_integer,
    "{serial}": _as_integer, "TEXT": _as_text,
}


def _converted(kinds: list[str]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    conversions = [_CONVERSIONS.get(kind) for kind in kinds]

    def convert(row: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(value if value is None or conversion is None else conversion(value)
                     for value, conversion in zip(row, conversions, strict=True))
    return convert


# ---------------------------------------------------------------- the copy

def _copy_rows(conn: Connection, table: str, columns: Iterable[str], rows: Iterable[tuple[Any, ...]]) -> int:
    count = 0
    with conn.started().cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
            count += 1
    return count


def _copy_table(conn: Connection, snapshot: Snapshot, table: schema.Table,
                kept: Callable[[tuple[Any, ...]], bool]) -> int:
    """The folder's rows of `table` that `kept` takes, in the columns the folder has (one a later version added keeps
    its default)."""
    had = snapshot.columns(table.name)
    columns = [(name, kind) for name, kind in table.columns if name in had]
    names = [name for name, _kind in columns]
    convert = _converted([kind for _name, kind in columns])
    rows = (convert(row) for batch in snapshot.rows(table.name, names, order_by=_key_of(table)) for row in batch
            if kept(row))
    return _copy_rows(conn, table.name, names, rows)


def _every(_row: tuple[Any, ...]) -> bool:
    return True


def _index_vouchers(conn: Connection) -> None:
    """The voucher list's search rows of the copied vouchers (what the voucher repository writes at each insert)."""
    rows = conn.execute("SELECT id, serie, numero, receptor_numero_documento, receptor_nombre FROM vouchers").fetchall()
    _copy_rows(conn, "vouchers_fts", ("rowid", "sn", "doc", "nombre"),
               ((voucher_id, *_fts_values(serie, numero, documento, nombre))
                for voucher_id, serie, numero, documento, nombre in rows))


def _continue_keys(conn: Connection, snapshot: Snapshot) -> None:
    """Each generated key's sequence continues after the highest key the folder handed out."""
    issued = snapshot.last_issued_keys()
    for table in schema.TABLES:
        key = _key_of(table)
        if key is None:
            continue
        row = conn.execute(f"SELECT COALESCE(MAX({key}), 0) FROM {table.name}").fetchone()
        last = max(int(row[0]) if row else 0, issued.get(table.name, 0))
        if last:
            conn.execute("SELECT setval(pg_get_serial_sequence(?, ?), ?)", (table.name, key, last))


def copy(snapshot: Snapshot, storage: PostgresStorage, *, left_out: Collection[str] = (),
         desk_settings: Collection[str] = (),
         replaced: Mapping[str, tuple[Sequence[str], list[tuple[Any, ...]]]] | None = None) -> list[Copied]:
    """Every described table of the folder into the (empty) shared database, in one transaction; the rows of each.
    The tables `left_out` and the settings `desk_settings` (each desk's own) are not copied; a table the folder does
    not have yet (a folder of an earlier schema version) stays empty; a table `replaced` gets those (columns, rows)
    instead of the folder's (its keys wrapped again under the business passphrase)."""
    replaced = replaced or {}
    present = snapshot.tables() - set(left_out)
    business_setting: Callable[[tuple[Any, ...]], bool] = lambda row: row[0] not in desk_settings  # noqa: E731
    copied = []
    with storage.write(durable=True) as conn:
        for table in schema.TABLES:
            kept = business_setting if table.name == "settings" else _every
            if table.name in replaced:
                columns, rows = replaced[table.name]
                copied.append(Copied(table.name, _copy_rows(conn, table.name, columns, rows)))
                continue
            copied.append(Copied(table.name, _copy_table(conn, snapshot, table, kept) if table.name in present else 0))
        _index_vouchers(conn)
        _continue_keys(conn, snapshot)
    storage.conn().execute("ANALYZE")  # the planner's statistics for tables that went from empty to full at once
    return copied


def last_numbers(storage: PostgresStorage) -> list[tuple[str, str, str, str, int]]:
    """The last number of every serie: (environment, issuer, type, serie, number)."""
    rows = storage.conn().execute(
        "SELECT environment, emisor_ruc, tipo, serie, MAX(numero) FROM vouchers "
        "GROUP BY environment, emisor_ruc, tipo, serie ORDER BY environment, emisor_ruc, tipo, serie").fetchall()
    return [(str(e), str(r), str(t), str(s), int(n)) for e, r, t, s, n in rows]
