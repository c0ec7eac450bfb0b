"""The `yupana.products` migrations of SQLite data folders, as they were written in app/core/invoicing/catalog/products.py (moved here
unchanged: a folder records each step by this set's name and the step's, so names and order never change)."""

from __future__ import annotations

from sqlite_utils import Migrations

from app.core.invoicing.catalog import text

migrations = Migrations("yupana.products")


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
