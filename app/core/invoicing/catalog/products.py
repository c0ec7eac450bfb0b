"""The products and services store: code, barcode, description, unit, price (with or without IGV), affectation,
bag-tax flag and detracción code.

A product is unique by its code (case aside) and by its barcode when it has one. Searches never scan the table:
a code prefix is a range on the code's index, a barcode an exact look-up on its index, a description is
searched by word prefixes in an FTS5 index whose tokenizer folds accents.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal

from sqlite_utils import Migrations

from app.core.errors import conflict, invalid
from app.core.invoicing.catalog import records, text
from app.core.invoicing.catalog.records import Product
from app.core.platform.storage import Storage, register_migrations

SEARCH_LIMIT = 20
_COLUMNS = ("id, codigo, codigo_barras, descripcion, unidad, precio, precio_incluye_igv, tipo_afectacion_igv,"
            " icbper, codigo_detraccion, created_at, updated_at")
_COLUMNS_P = ", ".join("p." + name for name in _COLUMNS.split(", "))  # the same, in a join as «p»

migrations = register_migrations(Migrations("yupana.products"))


@migrations()
def m001_products(db) -> None:
    db.execute(
        """CREATE TABLE products (
            id INTEGER PRIMARY KEY,
            codigo TEXT NOT NULL COLLATE NOCASE UNIQUE,
            codigo_barras TEXT UNIQUE,
            descripcion TEXT NOT NULL,
            unidad TEXT NOT NULL DEFAULT 'NIU',
            precio TEXT NOT NULL,
            precio_incluye_igv INTEGER NOT NULL DEFAULT 1,
            tipo_afectacion_igv TEXT NOT NULL DEFAULT '10',
            icbper INTEGER NOT NULL DEFAULT 0,
            codigo_detraccion TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        )""")
    db.execute(f"CREATE VIRTUAL TABLE products_fts USING fts5(descripcion, content='products', content_rowid='id',"
               f" tokenize='{text.FTS_TOKENIZE}', prefix='{text.FTS_PREFIXES}')")
    db.execute("CREATE TRIGGER products_fts_insert AFTER INSERT ON products BEGIN"
               " INSERT INTO products_fts (rowid, descripcion) VALUES (new.id, new.descripcion); END")
    db.execute("CREATE TRIGGER products_fts_delete AFTER DELETE ON products BEGIN INSERT INTO products_fts"
               " (products_fts, rowid, descripcion) VALUES ('delete', old.id, old.descripcion); END")
    db.execute("CREATE TRIGGER products_fts_update AFTER UPDATE OF descripcion ON products BEGIN"
               " INSERT INTO products_fts (products_fts, rowid, descripcion) VALUES ('delete', old.id, old.descripcion);"
               " INSERT INTO products_fts (rowid, descripcion) VALUES (new.id, new.descripcion); END")


def _product(row: tuple) -> Product:
    (id_, codigo, barras, descripcion, unidad, precio, incluye, afectacion, icbper, detraccion, created_at,
     updated_at) = row
    return Product(codigo, descripcion, Decimal(precio), unidad, bool(incluye), afectacion, bool(icbper), barras,
                   detraccion, id_, created_at, updated_at)


def _values(p: Product) -> tuple:
    return (p.codigo, p.codigo_barras, p.descripcion, p.unidad, str(p.precio), int(p.precio_incluye_igv),
            p.tipo_afectacion_igv, int(p.icbper), p.codigo_detraccion)


class DuplicateBarcode(Exception):
    """A product's barcode belongs to another product already."""

    def __init__(self, product: Product) -> None:
        super().__init__(product.codigo_barras)
        self.product = product

    @property
    def message(self) -> str:
        return f"El código de barras «{self.product.codigo_barras}» ya es de otro producto."


class _RollBack(Exception):
    """Leaves a write block so that its transaction is rolled back."""


class Products:
    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    # ------------------------------------------------------------ writing

    def save(self, product: Product) -> Product:
        """Insert or replace (by its code) a product; a 409 when its barcode is another product's."""
        product = records.product(**product.data())
        try:
            with self._storage.write() as conn:
                self._upsert(conn, product)
        except DuplicateBarcode as exc:
            raise conflict("codigo_barras", exc.message) from None
        return _saved(self.by_code(product.codigo))

    def save_all(self, products: list[Product]) -> list[int]:
        """Save every product in one transaction: all of them or none. Already checked values. Returns the
        positions of the products whose barcode is another stored product's: if there is any, nothing is saved."""
        clashes = []
        try:
            with self._storage.write() as conn:
                for index, product in enumerate(products):
                    try:
                        self._upsert(conn, product)
                    except DuplicateBarcode:  # only that statement failed: go on, to list every clash
                        clashes.append(index)
                if clashes:
                    raise _RollBack
        except _RollBack:
            pass
        return clashes

    def update(self, product_id: int, product: Product) -> Product:
        """Change a stored product (its code too); a 409 if another product has that code or barcode."""
        product = records.product(**product.data())
        try:
            with self._storage.write() as conn:
                changed = conn.execute(
                    "UPDATE products SET codigo = ?, codigo_barras = ?, descripcion = ?, unidad = ?, precio = ?,"
                    " precio_incluye_igv = ?, tipo_afectacion_igv = ?, icbper = ?, codigo_detraccion = ?,"
                    " updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
                    (*_values(product), product_id)).rowcount
        except sqlite3.IntegrityError:
            raise conflict("codigo", f"Ya hay otro producto con el código «{product.codigo}» o con el código de "
                                     f"barras «{product.codigo_barras}».") from None
        if not changed:
            raise invalid("id", f"No hay un producto con id {product_id}.")
        return _saved(self.by_id(product_id))

    @staticmethod
    def _upsert(conn: sqlite3.Connection, p: Product) -> None:
        try:
            conn.execute(
                """INSERT INTO products (codigo, codigo_barras, descripcion, unidad, precio, precio_incluye_igv,
                     tipo_afectacion_igv, icbper, codigo_detraccion) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT(codigo) DO UPDATE SET codigo = excluded.codigo, codigo_barras = excluded.codigo_barras,
                     descripcion = excluded.descripcion, unidad = excluded.unidad, precio = excluded.precio,
                     precio_incluye_igv = excluded.precio_incluye_igv,
                     tipo_afectacion_igv = excluded.tipo_afectacion_igv, icbper = excluded.icbper,
                     codigo_detraccion = excluded.codigo_detraccion,
                     updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')""", _values(p))
        except sqlite3.IntegrityError:  # the code's conflict is an update: only the barcode can clash
            raise DuplicateBarcode(p) from None

    def delete(self, product_id: int) -> bool:
        with self._storage.write() as conn:
            return conn.execute("DELETE FROM products WHERE id = ?", (product_id,)).rowcount > 0

    # ------------------------------------------------------------ reading

    def _one(self, where: str, value: object) -> Product | None:
        row = self._storage.conn().execute(f"SELECT {_COLUMNS} FROM products WHERE {where}", (value,)).fetchone()
        return _product(row) if row else None

    def by_id(self, product_id: int) -> Product | None:
        return self._one("id = ?", product_id)

    def by_code(self, codigo: str) -> Product | None:
        """The product of a code, case aside."""
        return self._one("codigo = ?", codigo.strip())

    def by_barcode(self, codigo_barras: str) -> Product | None:
        """The product of a scanned barcode (exact)."""
        return self._one("codigo_barras = ?", codigo_barras.strip())

    def by_code_prefix(self, prefix: str, limit: int = SEARCH_LIMIT) -> list[Product]:
        """Products whose code starts with `prefix`, case aside (a range on the code's index), by code."""
        prefix = prefix.strip()
        if not prefix:
            return []
        rows = self._storage.conn().execute(
            f"SELECT {_COLUMNS} FROM products WHERE codigo >= ? AND codigo < ? ORDER BY codigo LIMIT ?",
            (prefix, text.upper_bound(prefix), limit)).fetchall()
        return [_product(row) for row in rows]

    def by_description(self, words: str, limit: int = SEARCH_LIMIT) -> list[Product]:
        """Products with a word of the description starting with each word typed, accents and case aside. The
        first `limit` found in the index, then sorted by description."""
        query = text.prefix_query(words)
        if query is None:
            return []
        rows = self._storage.conn().execute(
            f"SELECT {_COLUMNS_P} FROM products_fts f JOIN products p ON p.id = f.rowid"
            " WHERE products_fts MATCH ? LIMIT ?", (query, limit)).fetchall()
        return sorted((_product(row) for row in rows), key=lambda p: text.key(p.descripcion))

    def search(self, typed: str, limit: int = SEARCH_LIMIT) -> list[Product]:
        """What completion shows for `typed`: the product of that exact barcode, then codes starting with it
        (both when it has no space), then descriptions with words starting with the words typed; each product
        once, at most `limit`."""
        typed = typed.strip()
        if not typed:
            return []
        found: list[Product] = []
        if " " not in typed:
            scanned = self.by_barcode(typed)
            found = [scanned] if scanned else []
            found += [p for p in self.by_code_prefix(typed, limit) if p.id != (scanned.id if scanned else None)]
            found = found[:limit]
        if len(found) < limit:
            seen = {p.id for p in found}
            found += [p for p in self.by_description(typed, limit) if p.id not in seen][:limit - len(found)]
        return found

    def first(self, limit: int) -> list[Product]:
        """The first `limit` products by code (the «Productos» section before anything is searched)."""
        rows = self._storage.conn().execute(f"SELECT {_COLUMNS} FROM products ORDER BY codigo LIMIT ?",
                                            (limit,)).fetchall()
        return [_product(row) for row in rows]

    def all(self) -> list[Product]:
        """Every product, by code (export)."""
        rows = self._storage.conn().execute(f"SELECT {_COLUMNS} FROM products ORDER BY codigo").fetchall()
        return [_product(row) for row in rows]

    def count(self) -> int:
        return self._storage.conn().execute("SELECT count(*) FROM products").fetchone()[0]


def _saved(product: Product | None) -> Product:
    """A product read back inside the call that wrote it: there."""
    assert product is not None
    return product
