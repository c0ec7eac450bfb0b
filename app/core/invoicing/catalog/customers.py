"""The customers store: saved from issued vouchers and registry look-ups, edited by hand, imported from CSV.

A customer is unique by its document (catalogue 06 type + number); one without a number (tipo 0) by its
folded name. Searches never scan the table: a document-number prefix is a range on an index, a name is
searched by word prefixes in an FTS5 index whose tokenizer folds accents («perez» finds «Pérez»).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from sqlite_utils import Migrations

from app.core.errors import conflict, invalid
from app.core.invoicing import packed_texts
from app.core.invoicing.catalog import records, text
from app.core.invoicing.catalog.codes import NO_DOCUMENT
from app.core.invoicing.catalog.records import Customer
from app.core.invoicing.voucher_store import dictionaries_in
from app.core.platform.storage import Storage, register_migrations, table_names

SEARCH_LIMIT = 20
REMEMBERED_CACHE = 8192  # parties remembered lately: a batch's repeated customers cost nothing after the first
_COLUMNS = "id, tipo_documento, numero, nombre, direccion, whatsapp, email, created_at, updated_at"
_COLUMNS_C = ", ".join("c." + name for name in _COLUMNS.split(", "))  # the same, in a join as «c»

migrations = register_migrations(Migrations("yupana.customers"))


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


def _address_in(request: str | bytes | None, dictionary_of) -> str | None:
    """The customer's address a stored request gave (`receptor.direccion`), or None (none, or unreadable)."""
    try:
        receptor = json.loads(packed_texts.unpack(request, dictionary_of) or "{}").get("receptor") or {}
    except (KeyError, ValueError, AttributeError):
        return None
    direccion = receptor.get("direccion") if isinstance(receptor, dict) else None
    return direccion.strip() or None if isinstance(direccion, str) else None


def _customer(row: tuple) -> Customer:
    id_, tipo, numero, nombre, direccion, whatsapp, email, created_at, updated_at = row
    return Customer(tipo, numero, nombre, direccion, whatsapp, email, id_, created_at, updated_at)


def _rememberable(tipo_documento: str, numero: str | None, nombre: str, direccion: str | None) -> Customer | None:
    """The customer to remember from a voucher's or a look-up's data; None without a document number or a name, or
    when the data would not pass the checks."""
    numero = (numero or "").strip()
    if tipo_documento == NO_DOCUMENT or numero in ("", "-") or not (nombre or "").strip():
        return None
    values, problems = records.check_customer({"tipo_documento": tipo_documento, "numero": numero,
                                               "nombre": nombre, "direccion": direccion})
    return None if problems else Customer(**values)


class Customers:
    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        # (tipo, numero) → the (tipo, numero, nombre, direccion) `remember_all` wrote last for it, unchanged since:
        # remembering it again would write nothing. Emptied by any other write (a name edited by hand is replaced by
        # the next voucher's name, as without the cache).
        self._remembered: dict[tuple, tuple] = {}

    # ------------------------------------------------------------ writing

    def save(self, customer: Customer) -> Customer:
        """Insert or replace (by its document, or its name without one) a customer; returns it as stored."""
        customer = records.customer(**customer.data())
        self._remembered.clear()
        with self._storage.write() as conn:
            self._upsert(conn, customer)
        return _saved(self.get(customer.tipo_documento, customer.numero, customer.nombre))

    def save_all(self, customers: Iterable[Customer]) -> int:
        """Save every customer in one transaction: all of them or, on any error, none. Already checked values."""
        count = 0
        self._remembered.clear()
        with self._storage.write() as conn:
            for customer in customers:
                self._upsert(conn, customer)
                count += 1
        return count

    def update(self, customer_id: int, customer: Customer) -> Customer:
        """Change a stored customer (its document too); a 409 if another customer has that document."""
        customer = records.customer(**customer.data())
        self._remembered.clear()
        try:
            with self._storage.write() as conn:
                changed = conn.execute(
                    "UPDATE customers SET tipo_documento = ?, numero = ?, nombre = ?, clave = ?, direccion = ?,"
                    " whatsapp = ?, email = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
                    (customer.tipo_documento, customer.numero, customer.nombre, customer.clave, customer.direccion,
                     customer.whatsapp, customer.email, customer_id)).rowcount
        except sqlite3.IntegrityError:
            raise conflict("numero", f"Ya hay otro cliente con el documento «{customer.numero or customer.nombre}».") \
                from None
        if not changed:
            raise invalid("id", f"No hay un cliente con id {customer_id}.")
        return _saved(self.by_id(customer_id))

    @staticmethod
    def _upsert(conn: sqlite3.Connection, c: Customer) -> None:
        conn.execute(
            """INSERT INTO customers (tipo_documento, numero, nombre, clave, direccion, whatsapp, email)
               VALUES (?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT(clave) DO UPDATE SET nombre = excluded.nombre, direccion = excluded.direccion,
                 whatsapp = excluded.whatsapp, email = excluded.email,
                 updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')""",
            (c.tipo_documento, c.numero, c.nombre, c.clave, c.direccion, c.whatsapp, c.email))

    def remember(self, tipo_documento: str, numero: str | None, nombre: str, direccion: str | None = None
                 ) -> Customer | None:
        """Keep the customer of an issued voucher, or of a registry look-up, up to date.

        Plain data (the engine calls it after issuing): the name (and the address, when one is given) replace the
        stored ones; the WhatsApp number and e-mail typed by hand are kept. A customer without a document number
        («CLIENTES VARIOS» of a boleta) is not remembered, nor data that would not pass the checks: it returns
        None then, and never raises for it."""
        c = _rememberable(tipo_documento, numero, nombre, direccion)
        if c is None:
            return None
        stored = self.get(c.tipo_documento, c.numero)
        if stored is not None and stored.nombre == c.nombre and c.direccion in (None, stored.direccion):
            return stored  # nothing would change: a look-up stays a read (no write lock, no change others must see)
        self._remembered.clear()
        with self._storage.write() as conn:
            self._remember(conn, c)
        return self.get(c.tipo_documento, c.numero)

    def remember_all(self, parties: Iterable[tuple[str, str | None, str, str | None]]) -> int:
        """`remember` for many (tipo_documento, numero, nombre, direccion) at once, in one transaction (a batch's
        block of vouchers); the last of a repeated document wins. Returns how many could be remembered."""
        chosen: dict[str, tuple[Customer, tuple]] = {}
        for given in parties:
            party = (given[0], given[1], given[2], given[3])  # a list counts as the same party
            if self._remembered.get(party[:2]) == party:  # written lately as it is now: nothing would change
                continue
            c = _rememberable(*party)
            if c is not None:
                chosen[c.clave] = (c, party)
        if chosen:
            with self._storage.write() as conn:
                for c, _party in chosen.values():
                    self._remember(conn, c)
            if len(self._remembered) + len(chosen) > REMEMBERED_CACHE:
                self._remembered.clear()
            self._remembered.update({party[:2]: party for _c, party in chosen.values()})
        return len(chosen)

    @staticmethod
    def _remember(conn: sqlite3.Connection, c: Customer) -> None:
        conn.execute(
            """INSERT INTO customers (tipo_documento, numero, nombre, clave, direccion)
               VALUES (?, ?, ?, ?, ?)
               ON CONFLICT(clave) DO UPDATE SET nombre = excluded.nombre,
                 direccion = coalesce(excluded.direccion, direccion),
                 updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
               WHERE nombre IS NOT excluded.nombre
                 OR (excluded.direccion IS NOT NULL AND direccion IS NOT excluded.direccion)""",
            (c.tipo_documento, c.numero, c.nombre, c.clave, c.direccion))

    def remember_ruc(self, ruc: str, razon_social: str | None, direccion: str | None = None) -> Customer | None:
        """`remember` for a RUC found in the registry (a `RucRecord`'s fields)."""
        return self.remember("6", ruc, razon_social or "", direccion)

    def delete(self, customer_id: int) -> bool:
        self._remembered.clear()
        with self._storage.write() as conn:
            return conn.execute("DELETE FROM customers WHERE id = ?", (customer_id,)).rowcount > 0

    # ------------------------------------------------------------ reading

    def get(self, tipo_documento: str, numero: str | None, nombre: str = "") -> Customer | None:
        """The customer of a document (or, without a number, of a name)."""
        row = self._storage.conn().execute(f"SELECT {_COLUMNS} FROM customers WHERE clave = ?",
                                           (records.customer_key(tipo_documento, numero, nombre),)).fetchone()
        return _customer(row) if row else None

    def by_id(self, customer_id: int) -> Customer | None:
        row = self._storage.conn().execute(f"SELECT {_COLUMNS} FROM customers WHERE id = ?",
                                           (customer_id,)).fetchone()
        return _customer(row) if row else None

    def by_number_prefix(self, prefix: str, limit: int = SEARCH_LIMIT) -> list[Customer]:
        """Customers whose document number starts with `prefix` (a range on the number's index), by number."""
        prefix = prefix.strip().upper()
        if not prefix:
            return []
        rows = self._storage.conn().execute(
            f"SELECT {_COLUMNS} FROM customers WHERE numero >= ? AND numero < ? ORDER BY numero LIMIT ?",
            (prefix, text.upper_bound(prefix), limit)).fetchall()
        return [_customer(row) for row in rows]

    def by_name(self, words: str, limit: int = SEARCH_LIMIT) -> list[Customer]:
        """Customers with a word of the name starting with each word typed, accents and case aside («per jua»
        finds «Juan Pérez»). The first `limit` found in the index, then sorted by name."""
        query = text.prefix_query(words)
        if query is None:
            return []
        rows = self._storage.conn().execute(
            f"SELECT {_COLUMNS_C} FROM customers_fts f"
            " JOIN customers c ON c.id = f.rowid WHERE customers_fts MATCH ? LIMIT ?", (query, limit)).fetchall()
        return sorted((_customer(row) for row in rows), key=lambda c: text.key(c.nombre))

    def search(self, typed: str, limit: int = SEARCH_LIMIT) -> list[Customer]:
        """What completion shows for `typed`: by document-number prefix when it looks like a number (digits, or
        no space and a digit), then by words of the name; each customer once, at most `limit`."""
        typed = typed.strip()
        found: list[Customer] = []
        if typed and " " not in typed and any(ch.isdigit() for ch in typed):
            found = self.by_number_prefix(typed, limit)
        if len(found) < limit and any(ch.isalpha() for ch in typed):
            seen = {c.id for c in found}
            found += [c for c in self.by_name(typed, limit) if c.id not in seen][:limit - len(found)]
        return found

    def latest(self, limit: int) -> list[Customer]:
        """The `limit` customers updated last (the «Clientes» section before anything is searched)."""
        rows = self._storage.conn().execute(
            f"SELECT {_COLUMNS} FROM customers ORDER BY updated_at DESC, id DESC LIMIT ?", (limit,)).fetchall()
        return [_customer(row) for row in rows]

    def all(self) -> list[Customer]:
        """Every customer, by document then name (export)."""
        rows = self._storage.conn().execute(
            f"SELECT {_COLUMNS} FROM customers ORDER BY tipo_documento, numero, nombre").fetchall()
        return [_customer(row) for row in rows]

    def count(self) -> int:
        return self._storage.conn().execute("SELECT count(*) FROM customers").fetchone()[0]


def _saved(customer: Customer | None) -> Customer:
    """A customer read back inside the call that wrote it: there."""
    assert customer is not None
    return customer
