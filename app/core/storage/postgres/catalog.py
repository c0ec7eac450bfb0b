"""PostgreSQL repositories of the catalogue: customers and products, the same SQL but for

- search by name or description: every word typed begins a word of it (accents and case folded), through a trigram
  index over schema.POSTGRES_FOLD (SQLite: FTS5 word prefixes);
- a product code's case: the column's collation ignores it (schema.POSTGRES `{nocase}`), as SQLite's COLLATE NOCASE
  does, so equality, order and the code's conflict are the SQLite ones;
- a clash (a barcode or a code taken): told by psycopg's UniqueViolation, each product of a save in its own
  savepoint so that one clash leaves the others stored (SQLite fails only the statement).
"""

from __future__ import annotations

from collections.abc import Iterable

from psycopg.errors import UniqueViolation

from app.core.invoicing.catalog import text
from app.core.invoicing.catalog.records import Customer, Product
from app.core.storage.ports.catalog import DuplicateCustomer, DuplicateProduct
from app.core.storage.postgres.common import OnPostgres
from app.core.storage.schema import POSTGRES_FOLD
from app.core.storage.sqlite.catalog import (
    _CUSTOMER,
    _PRODUCT,
    SqliteCustomerRepository,
    SqliteProductRepository,
    SqliteTransportRepository,
    _customer,
    _product,
)
from app.core.storage.sqlite.database import Storage


def _search(storage: Storage, columns: str, table: str, column: str, typed: str, limit: int) -> list[tuple]:
    """The rows of `table` where each word typed begins a word of `column` (both folded), oldest first; none when
    nothing searchable was typed."""
    words = text.words(typed)
    if not words:
        return []
    condition = " AND ".join(f"{POSTGRES_FOLD}({column}) LIKE ?" for _ in words)
    return storage.conn().execute(f"SELECT {columns} FROM {table} WHERE {condition} ORDER BY id LIMIT ?",
                                  (*(f"% {word}%" for word in words), limit)).fetchall()


class PostgresCustomerRepository(OnPostgres, SqliteCustomerRepository):
    def update(self, customer_id: int, customer: Customer) -> bool:
        try:
            with self._pg.savepoint():
                return super().update(customer_id, customer)
        except UniqueViolation:
            raise DuplicateCustomer(customer) from None

    def search(self, typed: str, limit: int) -> list[Customer]:
        return [_customer(row) for row in _search(self._db, _CUSTOMER, "customers", "nombre", typed, limit)]


class PostgresProductRepository(OnPostgres, SqliteProductRepository):
    def save(self, products: Iterable[Product]) -> list[int]:
        clashes = []
        with self._pg.write():
            for index, product in enumerate(products):
                try:
                    with self._pg.savepoint():
                        super().save([product])
                except UniqueViolation:  # the code's conflict is an update: only the barcode can clash
                    clashes.append(index)
        return clashes

    def update(self, product_id: int, product: Product, version: int | None = None) -> bool:
        try:
            with self._pg.savepoint():
                return super().update(product_id, product, version)
        except UniqueViolation:
            raise DuplicateProduct(product) from None

    def search(self, typed: str, limit: int) -> list[Product]:
        return [_product(row) for row in _search(self._db, _PRODUCT, "products", "descripcion", typed, limit)]


class PostgresTransportRepository(SqliteTransportRepository):
    """The same SQL: an upsert on the primary key and a range on it."""
