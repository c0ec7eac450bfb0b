"""The `yupana.customers` migrations of SQLite data folders, as they were written in app/core/invoicing/catalog/customers.py (moved here
unchanged: a folder records each step by this set's name and the step's, so names and order never change)."""

from __future__ import annotations

from sqlite_utils import Migrations

from app.core.invoicing.catalog import text
from app.core.invoicing.catalog.customers import _address_in, _rememberable
from app.core.storage.sql import table_names
from app.core.storage.sqlite.vouchers import dictionaries_in

migrations = Migrations("yupana.customers")


@migrations()
def m001_customers(db) -> None:
    db.execute(
        """CREATE TABLE customers (
            id INTEGER PRIMARY KEY,
            tipo_documento TEXT NOT NULL,
            numero TEXT,
            nombre TEXT NOT NULL,
            clave TEXT NOT NULL UNIQUE,
            direccion TEXT, whatsapp TEXT, email TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        )""")
    db.execute("CREATE INDEX customers_numero ON customers (numero) WHERE numero IS NOT NULL")
    db.execute(f"CREATE VIRTUAL TABLE customers_fts USING fts5(nombre, content='customers', content_rowid='id',"
               f" tokenize='{text.FTS_TOKENIZE}', prefix='{text.FTS_PREFIXES}')")
    db.execute("CREATE TRIGGER customers_fts_insert AFTER INSERT ON customers BEGIN"
               " INSERT INTO customers_fts (rowid, nombre) VALUES (new.id, new.nombre); END")
    db.execute("CREATE TRIGGER customers_fts_delete AFTER DELETE ON customers BEGIN"
               " INSERT INTO customers_fts (customers_fts, rowid, nombre) VALUES ('delete', old.id, old.nombre); END")
    db.execute("CREATE TRIGGER customers_fts_update AFTER UPDATE OF nombre ON customers BEGIN"
               " INSERT INTO customers_fts (customers_fts, rowid, nombre) VALUES ('delete', old.id, old.nombre);"
               " INSERT INTO customers_fts (rowid, nombre) VALUES (new.id, new.nombre); END")


@migrations()
def m002_customers_of_stored_vouchers(db) -> None:
    """Customers are remembered when a voucher is issued (since m001); the customers of vouchers issued before are
    added once here: for each customer document, its latest voucher's name and address (the request's
    `receptor.direccion`). A customer already in the catalogue (edited by hand, imported, or remembered since) is left
    as it is; a voucher without a customer document («CLIENTES VARIOS») adds nobody. Vouchers of every environment."""
    tables = table_names(db)
    if "vouchers" not in tables or "voucher_texts" not in tables:  # a new folder: no vouchers yet
        return

    dictionary_of = dictionaries_in(db)

    cursor = db.execute(
        "SELECT v.receptor_tipo_documento, v.receptor_numero_documento, v.receptor_nombre, t.request_json "
        "FROM vouchers v JOIN voucher_texts t ON t.voucher_id = v.id WHERE v.id IN (SELECT max(id) FROM vouchers "
        "WHERE receptor_numero_documento IS NOT NULL GROUP BY receptor_tipo_documento, receptor_numero_documento) "
        "ORDER BY v.id")
    while rows := cursor.fetchmany(500):
        for tipo, numero, nombre, request in rows:
            customer = _rememberable(tipo, numero, nombre, _address_in(request, dictionary_of))
            if customer is not None:
                db.execute("INSERT INTO customers (tipo_documento, numero, nombre, clave, direccion) "
                           "VALUES (?, ?, ?, ?, ?) ON CONFLICT (clave) DO NOTHING",
                           [customer.tipo_documento, customer.numero, customer.nombre, customer.clave,
                            customer.direccion])
