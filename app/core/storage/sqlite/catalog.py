"""SQLite repositories of the catalogue: customers, products and the guías' vehicles, drivers and carriers
(ports/catalog.py).

Searches never scan a table: a document number or a code prefix is a range on an index, a barcode an exact look-up
on its index, and a name or a description is searched by word prefixes in an FTS5 table whose tokenizer folds
accents (`customers_fts`, `products_fts`, kept by triggers; text.FTS_TOKENIZE).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import Decimal

from app.core.invoicing.catalog import text
from app.core.invoicing.catalog.records import Customer, Product, TransportEntry
from app.core.storage.ports.catalog import DuplicateCustomer, DuplicateProduct, StaleProduct
from app.core.storage.sqlite.database import Storage

_CUSTOMER = "id, tipo_documento, numero, nombre, direccion, whatsapp, email, created_at, updated_at"
_CUSTOMER_C = ", ".join("c." + name for name in _CUSTOMER.split(", "))  # the same, in a join as «c»
_PRODUCT = ("id, codigo, codigo_barras, descripcion, unidad, precio, precio_incluye_igv, tipo_afectacion_igv,"
            " icbper, codigo_detraccion, created_at, updated_at, version")
_PRODUCT_P = ", ".join("p." + name for name in _PRODUCT.split(", "))  # the same, in a join as «p»


def _now() -> str:
    """UTC now as the schema's defaults write it («2026-01-31T12:00:00.123Z»): one format in every row."""
    return datetime.now(UTC).replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def _customer(row: tuple) -> Customer:
    id_, tipo, numero, nombre, direccion, whatsapp, email, created_at, updated_at = row
    return Customer(tipo, numero, nombre, direccion, whatsapp, email, id_, created_at, updated_at)


def _product(row: tuple) -> Product:
    (id_, codigo, barras, descripcion, unidad, precio, incluye, afectacion, icbper, detraccion, created_at,
     updated_at, version) = row
    return Product(codigo, descripcion, Decimal(precio), unidad, bool(incluye), afectacion, bool(icbper), barras,
                   detraccion, id_, created_at, updated_at, version)


def _product_values(p: Product) -> tuple:
    return (p.codigo, p.codigo_barras, p.descripcion, p.unidad, str(p.precio), int(p.precio_incluye_igv),
            p.tipo_afectacion_igv, int(p.icbper), p.codigo_detraccion)


class SqliteCustomerRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    # ------------------------------------------------------------ writing

    def save(self, customers: Iterable[Customer]) -> int:
        count = 0
        with self._db.write() as conn:
            now = _now()
            for c in customers:
                conn.execute(
                    """INSERT INTO customers (tipo_documento, numero, nombre, clave, direccion, whatsapp, email,
                         created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                       ON CONFLICT (clave) DO UPDATE SET nombre = excluded.nombre, direccion = excluded.direccion,
                         whatsapp = excluded.whatsapp, email = excluded.email, updated_at = excluded.updated_at""",
                    (c.tipo_documento, c.numero, c.nombre, c.clave, c.direccion, c.whatsapp, c.email, now, now))
                count += 1
        return count

    def remember(self, customers: Iterable[Customer]) -> None:
        with self._db.write() as conn:
            now = _now()
            for c in customers:
                conn.execute(
                    """INSERT INTO customers (tipo_documento, numero, nombre, clave, direccion, created_at, updated_at)
                       VALUES (?, ?, ?, ?, ?, ?, ?)
                       ON CONFLICT (clave) DO UPDATE SET nombre = excluded.nombre,
                         direccion = coalesce(excluded.direccion, customers.direccion),
                         updated_at = excluded.updated_at
                       WHERE customers.nombre <> excluded.nombre
                         OR (excluded.direccion IS NOT NULL
                             AND (customers.direccion IS NULL OR customers.direccion <> excluded.direccion))""",
                    (c.tipo_documento, c.numero, c.nombre, c.clave, c.direccion, now, now))

    def update(self, customer_id: int, customer: Customer) -> bool:
        c = customer
        try:
            with self._db.write() as conn:
                return conn.execute(
                    "UPDATE customers SET tipo_documento = ?, numero = ?, nombre = ?, clave = ?, direccion = ?,"
                    " whatsapp = ?, email = ?, updated_at = ? WHERE id = ?",
                    (c.tipo_documento, c.numero, c.nombre, c.clave, c.direccion, c.whatsapp, c.email, _now(),
                     customer_id)).rowcount > 0
        except sqlite3.IntegrityError:
            raise DuplicateCustomer(customer) from None

    def delete(self, customer_id: int) -> bool:
        with self._db.write() as conn:
            return conn.execute("DELETE FROM customers WHERE id = ?", (customer_id,)).rowcount > 0

    # ------------------------------------------------------------ reading

    def by_key(self, clave: str) -> Customer | None:
        row = self._db.conn().execute(f"SELECT {_CUSTOMER} FROM customers WHERE clave = ?", (clave,)).fetchone()
        return _customer(row) if row else None

    def by_id(self, customer_id: int) -> Customer | None:
        row = self._db.conn().execute(f"SELECT {_CUSTOMER} FROM customers WHERE id = ?", (customer_id,)).fetchone()
        return _customer(row) if row else None

    def by_number_prefix(self, prefix: str, limit: int) -> list[Customer]:
        rows = self._db.conn().execute(
            f"SELECT {_CUSTOMER} FROM customers WHERE numero >= ? AND numero < ? ORDER BY numero LIMIT ?",
            (prefix, text.upper_bound(prefix), limit)).fetchall()
        return [_customer(row) for row in rows]

    def search(self, typed: str, limit: int) -> list[Customer]:
        # SQLite: FTS5 word-prefix query on customers_fts (accents folded by its tokenizer). PostgreSQL: pg_trgm
        # over unaccent(lower(nombre)) (schema.POSTGRES_EXTRA), or a tsvector with prefix tsquery terms.
        query = text.prefix_query(typed)
        if query is None:
            return []
        rows = self._db.conn().execute(
            f"SELECT {_CUSTOMER_C} FROM customers_fts f"
            " JOIN customers c ON c.id = f.rowid WHERE customers_fts MATCH ? LIMIT ?", (query, limit)).fetchall()
        return [_customer(row) for row in rows]

    def latest(self, limit: int) -> list[Customer]:
        rows = self._db.conn().execute(
            f"SELECT {_CUSTOMER} FROM customers ORDER BY updated_at DESC, id DESC LIMIT ?", (limit,)).fetchall()
        return [_customer(row) for row in rows]

    def all(self) -> list[Customer]:
        rows = self._db.conn().execute(
            f"SELECT {_CUSTOMER} FROM customers ORDER BY tipo_documento, numero, nombre").fetchall()
        return [_customer(row) for row in rows]

    def count(self) -> int:
        return self._db.conn().execute("SELECT count(*) FROM customers").fetchone()[0]


class SqliteProductRepository:
    """`codigo` is declared COLLATE NOCASE here: comparing, ordering and the code's conflict are case aside as they are
    written. (PostgreSQL: lower(codigo) in those places, which its unique index on lower(codigo) answers.)"""

    def __init__(self, db: Storage) -> None:
        self._db = db

    # ------------------------------------------------------------ writing

    def save(self, products: Iterable[Product]) -> list[int]:
        clashes = []
        with self._db.write() as conn:
            now = _now()
            for index, p in enumerate(products):
                try:
                    conn.execute(
                        """INSERT INTO products (codigo, codigo_barras, descripcion, unidad, precio, precio_incluye_igv,
                             tipo_afectacion_igv, icbper, codigo_detraccion, created_at, updated_at)
                           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                           ON CONFLICT (codigo) DO UPDATE SET codigo = excluded.codigo,
                             codigo_barras = excluded.codigo_barras, descripcion = excluded.descripcion,
                             unidad = excluded.unidad, precio = excluded.precio,
                             precio_incluye_igv = excluded.precio_incluye_igv,
                             tipo_afectacion_igv = excluded.tipo_afectacion_igv, icbper = excluded.icbper,
                             codigo_detraccion = excluded.codigo_detraccion, updated_at = excluded.updated_at,
                             version = products.version + 1""",
                        (*_product_values(p), now, now))
                except sqlite3.IntegrityError:  # the code's conflict is an update: only the barcode can clash
                    clashes.append(index)  # only that statement failed: go on, to list every clash
        return clashes

    def update(self, product_id: int, product: Product, version: int | None = None) -> bool:
        try:
            with self._db.write() as conn:
                changed = conn.execute(
                    "UPDATE products SET codigo = ?, codigo_barras = ?, descripcion = ?, unidad = ?, precio = ?,"
                    " precio_incluye_igv = ?, tipo_afectacion_igv = ?, icbper = ?, codigo_detraccion = ?,"
                    " updated_at = ?, version = version + 1 WHERE id = ? AND (? IS NULL OR version = ?)",
                    (*_product_values(product), _now(), product_id, version, version)).rowcount > 0
                if not changed and version is not None and conn.execute(
                        "SELECT 1 FROM products WHERE id = ?", (product_id,)).fetchone() is not None:
                    raise StaleProduct(product_id)
                return changed
        except sqlite3.IntegrityError:
            raise DuplicateProduct(product) from None

    def delete(self, product_id: int) -> bool:
        with self._db.write() as conn:
            return conn.execute("DELETE FROM products WHERE id = ?", (product_id,)).rowcount > 0

    # ------------------------------------------------------------ reading

    def _one(self, where: str, value: object) -> Product | None:
        row = self._db.conn().execute(f"SELECT {_PRODUCT} FROM products WHERE {where}", (value,)).fetchone()
        return _product(row) if row else None

    def by_id(self, product_id: int) -> Product | None:
        return self._one("id = ?", product_id)

    def by_code(self, codigo: str) -> Product | None:
        return self._one("codigo = ?", codigo)

    def by_barcode(self, codigo_barras: str) -> Product | None:
        return self._one("codigo_barras = ?", codigo_barras)

    def by_code_prefix(self, prefix: str, limit: int) -> list[Product]:
        rows = self._db.conn().execute(
            f"SELECT {_PRODUCT} FROM products WHERE codigo >= ? AND codigo < ? ORDER BY codigo LIMIT ?",
            (prefix, text.upper_bound(prefix), limit)).fetchall()
        return [_product(row) for row in rows]

    def search(self, typed: str, limit: int) -> list[Product]:
        # SQLite: FTS5 word-prefix query on products_fts (accents folded by its tokenizer). PostgreSQL: pg_trgm
        # over unaccent(lower(descripcion)) (schema.POSTGRES_EXTRA), or a tsvector with prefix tsquery terms.
        query = text.prefix_query(typed)
        if query is None:
            return []
        rows = self._db.conn().execute(
            f"SELECT {_PRODUCT_P} FROM products_fts f JOIN products p ON p.id = f.rowid"
            " WHERE products_fts MATCH ? LIMIT ?", (query, limit)).fetchall()
        return [_product(row) for row in rows]

    def first(self, limit: int) -> list[Product]:
        rows = self._db.conn().execute(f"SELECT {_PRODUCT} FROM products ORDER BY codigo LIMIT ?",
                                       (limit,)).fetchall()
        return [_product(row) for row in rows]

    def all(self) -> list[Product]:
        rows = self._db.conn().execute(f"SELECT {_PRODUCT} FROM products ORDER BY codigo").fetchall()
        return [_product(row) for row in rows]

    def count(self) -> int:
        return self._db.conn().execute("SELECT count(*) FROM products").fetchone()[0]


class SqliteTransportRepository:
    """`transport_entries`: (kind, clave) is the primary key, so a key prefix is a range on it."""

    def __init__(self, db: Storage) -> None:
        self._db = db

    def remember(self, entries: Iterable[TransportEntry]) -> None:
        with self._db.write() as conn:
            now = _now()
            for entry in entries:
                conn.execute(
                    """INSERT INTO transport_entries (kind, clave, data, used_at) VALUES (?, ?, ?, ?)
                       ON CONFLICT (kind, clave) DO UPDATE SET data = excluded.data, used_at = excluded.used_at""",
                    (entry.kind, entry.clave, entry.data(), now))

    def latest(self, kind: str, limit: int) -> list[TransportEntry]:
        rows = self._db.conn().execute(
            "SELECT kind, clave, data, used_at FROM transport_entries WHERE kind = ?"
            " ORDER BY used_at DESC, clave LIMIT ?", (kind, limit)).fetchall()
        return [TransportEntry.stored(*row) for row in rows]

    def by_key_prefix(self, kind: str, prefix: str, limit: int) -> list[TransportEntry]:
        rows = self._db.conn().execute(
            "SELECT kind, clave, data, used_at FROM transport_entries WHERE kind = ? AND clave >= ? AND clave < ?"
            " ORDER BY clave LIMIT ?", (kind, prefix, text.upper_bound(prefix), limit)).fetchall()
        return [TransportEntry.stored(*row) for row in rows]
