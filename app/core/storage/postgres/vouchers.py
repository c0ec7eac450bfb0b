"""PostgreSQL repository of the vouchers and their texts: the same SQL, but for the search of the voucher list and
a number taken twice.

Numbering across desks: a serie-número is unique per environment and issuer (the table's unique index). Two desks
inserting the same number at once meet in that index: the second waits for the first's transaction and, once it
commits, fails (NumberTaken) — never two vouchers with one number. The insert runs in a savepoint, so the failure
leaves the caller's transaction usable (a batch goes on with its next voucher, as on SQLite).

Search: the `vouchers_fts` table holds the same three values as SQLite's FTS5 index («SERIE-NUMERO», the customer's
document, the name), trigram-indexed; every word typed must begin the serie-número, the document or a word of the
name (accents and case folded by schema.POSTGRES_FOLD).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from psycopg.errors import UniqueViolation

from app.core.invoicing.catalog import text
from app.core.storage.ports.vouchers import NewVoucher, NumberTaken
from app.core.storage.postgres.common import OnPostgres, like_prefix
from app.core.storage.schema import POSTGRES_FOLD
from app.core.storage.sql import in_chunks, where_equal
from app.core.storage.sqlite.vouchers import _SERIE_NUMERO, LIST_COLUMNS, SqliteVoucherRepository

# One word typed: it begins the serie-número or the document.
_NUMBER_MATCHES = "lower(f.sn) LIKE lower(?) OR f.doc LIKE ?"
# … or a word of the name (the word folded as text.words does).
_NAME_MATCHES = f"{POSTGRES_FOLD}(f.nombre) LIKE ?"


def _typed_words(search: str) -> list[str]:
    """The words typed (quotes are not searched), «F001-00000123» read as «F001-123» (numbers are stored without
    leading zeros)."""
    words = []
    for word in search.replace('"', " ").split():
        found = _SERIE_NUMERO.match(word)
        words.append(f"{found.group(1)}-{found.group(2)}" if found else word)
    return words


def _word_condition(word: str) -> tuple[str, list[str]]:
    folded = " ".join(text.words(word))
    if not folded:
        return f"({_NUMBER_MATCHES})", [like_prefix(word)] * 2
    return f"({_NUMBER_MATCHES} OR {_NAME_MATCHES})", [like_prefix(word)] * 2 + [f"% {like_prefix(folded)}"]


class PostgresVoucherRepository(OnPostgres, SqliteVoucherRepository):
    def add(self, voucher: NewVoucher) -> int:
        try:
            with self._pg.savepoint():
                return super().add(voucher)
        except UniqueViolation as exc:
            raise NumberTaken(voucher.serie, voucher.numero) from exc

    def hold_paths(self, voucher_ids: Iterable[int]) -> None:
        # The rows' locks, taken in the order of their ids (two holders of several never wait for each other in a
        # circle); READ COMMITTED: each later statement of the transaction reads what the one waited for committed.
        with self._db.write() as conn:
            for chunk, marks in in_chunks(sorted(set(voucher_ids))):
                conn.execute(f"SELECT id FROM vouchers WHERE id IN ({marks}) ORDER BY id FOR UPDATE", tuple(chunk))

    def list_page(self, environment: str, *, search: str | None, cliente: str | None, status: str | None,
                  tipo: str | None, desde: str | None, hasta: str | None, before_id: int | None, offset: int,
                  limit: int) -> list[dict[str, Any]]:
        where: list[str] = ["v.environment = ?"]
        params: list[Any] = [environment]
        words = _typed_words(search or "")
        if search and search.strip() and not words:
            return []  # nothing searchable
        for word in words:
            condition, values = _word_condition(word)
            where.append(condition)
            params += values
        searched = bool(words) or bool(cliente and cliente.strip())
        if cliente and cliente.strip():
            where.append("f.doc = ?")
            params.append(cliente.strip())
        where_equal(where, params, {"v.status": status, "v.tipo": tipo})
        for column, bound, value in (("v.fecha_emision", ">=", desde), ("v.fecha_emision", "<=", hasta),
                                     ("v.id", "<", before_id)):
            if value is not None and value != "":
                where.append(f"{column} {bound} ?")
                params.append(value)
        columns = ", ".join(f"v.{c.strip()}" for c in LIST_COLUMNS.split(","))
        source = "vouchers v JOIN vouchers_fts f ON f.rowid = v.id" if searched else "vouchers v"
        params += [max(1, int(limit)), max(0, int(offset))]
        return self._db.query(f"SELECT {columns} FROM {source} WHERE {' AND '.join(where)} "
                              "ORDER BY v.id DESC LIMIT ? OFFSET ?", tuple(params))
