"""The customers store: saved from issued vouchers and registry look-ups, edited by hand, imported from CSV.

A customer is unique by its document (catalogue 06 type + number); one without a number (tipo 0) by its
folded name. Searches never scan the table: a document-number prefix is a range on an index, a name is
searched by word prefixes in a search index that folds accents («perez» finds «Pérez»; the repository's `search`,
SQLite: FTS5).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from app.core.errors import conflict, invalid
from app.core.invoicing import packed_texts
from app.core.invoicing.catalog import records, text
from app.core.invoicing.catalog.codes import NO_DOCUMENT
from app.core.invoicing.catalog.records import Customer
from app.core.storage.ports.catalog import CustomerRepository, DuplicateCustomer
from app.core.storage.ports.database import Database

SEARCH_LIMIT = 20
REMEMBERED_CACHE = 8192  # parties remembered lately: a batch's repeated customers cost nothing after the first


def _address_in(request: str | bytes | None, dictionary_of) -> str | None:
    """The customer's address a stored request gave (`receptor.direccion`), or None (none, or unreadable)."""
    try:
        receptor = json.loads(packed_texts.unpack(request, dictionary_of) or "{}").get("receptor") or {}
    except (KeyError, ValueError, AttributeError):
        return None
    direccion = receptor.get("direccion") if isinstance(receptor, dict) else None
    return direccion.strip() or None if isinstance(direccion, str) else None


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
    def __init__(self, db: Database, repository: CustomerRepository) -> None:
        self._db = db
        self._repository = repository
        # (tipo, numero) → the (tipo, numero, nombre, direccion) `remember_all` wrote last for it, unchanged since:
        # remembering it again would write nothing. Emptied by any other write (a name edited by hand is replaced by
        # the next voucher's name, as without the cache).
        self._remembered: dict[tuple, tuple] = {}

    # ------------------------------------------------------------ writing

    def save(self, customer: Customer) -> Customer:
        """Insert or replace (by its document, or its name without one) a customer; returns it as stored."""
        customer = records.customer(**customer.data())
        self._remembered.clear()
        self._repository.save([customer])
        return _saved(self.get(customer.tipo_documento, customer.numero, customer.nombre))

    def save_all(self, customers: Iterable[Customer]) -> int:
        """Save every customer in one transaction: all of them or, on any error, none. Already checked values."""
        self._remembered.clear()
        with self._db.transaction():
            return self._repository.save(customers)

    def update(self, customer_id: int, customer: Customer) -> Customer:
        """Change a stored customer (its document too); a 409 if another customer has that document."""
        customer = records.customer(**customer.data())
        self._remembered.clear()
        try:
            changed = self._repository.update(customer_id, customer)
        except DuplicateCustomer:
            raise conflict("numero", f"Ya hay otro cliente con el documento «{customer.numero or customer.nombre}».") \
                from None
        if not changed:
            raise invalid("id", f"No hay un cliente con id {customer_id}.")
        return _saved(self.by_id(customer_id))

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
        self._repository.remember([c])
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
            self._repository.remember(c for c, _party in chosen.values())
            if len(self._remembered) + len(chosen) > REMEMBERED_CACHE:
                self._remembered.clear()
            self._remembered.update({party[:2]: party for _c, party in chosen.values()})
        return len(chosen)

    def remember_ruc(self, ruc: str, razon_social: str | None, direccion: str | None = None) -> Customer | None:
        """`remember` for a RUC found in the registry (a `RucRecord`'s fields)."""
        return self.remember("6", ruc, razon_social or "", direccion)

    def delete(self, customer_id: int) -> bool:
        self._remembered.clear()
        return self._repository.delete(customer_id)

    # ------------------------------------------------------------ reading

    def get(self, tipo_documento: str, numero: str | None, nombre: str = "") -> Customer | None:
        """The customer of a document (or, without a number, of a name)."""
        return self._repository.by_key(records.customer_key(tipo_documento, numero, nombre))

    def by_id(self, customer_id: int) -> Customer | None:
        return self._repository.by_id(customer_id)

    def by_number_prefix(self, prefix: str, limit: int = SEARCH_LIMIT) -> list[Customer]:
        """Customers whose document number starts with `prefix` (a range on the number's index), by number."""
        prefix = prefix.strip().upper()
        if not prefix:
            return []
        return self._repository.by_number_prefix(prefix, limit)

    def by_name(self, words: str, limit: int = SEARCH_LIMIT) -> list[Customer]:
        """Customers with a word of the name starting with each word typed, accents and case aside («per jua»
        finds «Juan Pérez»). The first `limit` found in the index, then sorted by name."""
        if not text.words(words):
            return []
        return sorted(self._repository.search(words, limit), key=lambda c: text.key(c.nombre))

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
        return self._repository.latest(limit)

    def all(self) -> list[Customer]:
        """Every customer, by document then name (export)."""
        return self._repository.all()

    def count(self) -> int:
        return self._repository.count()


def _saved(customer: Customer | None) -> Customer:
    """A customer read back inside the call that wrote it: there."""
    assert customer is not None
    return customer
