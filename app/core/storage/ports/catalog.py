"""Ports of the catalogue: customers and products (docs/catalog.md), with their searches.

The repositories take and give the catalogue's records (app.core.invoicing.catalog.records): they convert the stored
columns (a price kept as text, flags kept as integers) and nothing else; the checks, the keys and what a search
shows first are the stores' (customers.py, products.py). A write joins the transaction the caller opened
(`Database.transaction()`). A write refused by a uniqueness rule raises one of the exceptions below and fails alone:
the caller's transaction goes on (the PostgreSQL engine runs such a statement inside a savepoint).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from app.core.invoicing.catalog.records import Customer, Product, TransportEntry


class DuplicateCustomer(Exception):
    """Another customer has this customer's key (its document, or its folded name without one)."""

    def __init__(self, customer: Customer) -> None:
        super().__init__(customer.clave)
        self.customer = customer


class DuplicateProduct(Exception):
    """Another product has this product's code (case aside) or barcode."""

    def __init__(self, product: Product) -> None:
        super().__init__(product.codigo)
        self.product = product


class StaleProduct(Exception):
    """The product changed since the version the caller read (another desk saved it meanwhile)."""


class CustomerRepository(Protocol):
    """Customers, unique by their key (`Customer.clave`)."""

    def save(self, customers: Iterable[Customer]) -> int:
        """Insert each customer, or replace the name, address, WhatsApp and e-mail of the stored one of its key;
        returns how many were given."""
        ...

    def remember(self, customers: Iterable[Customer]) -> None:
        """Insert each customer, or give the stored one of its key this name, and this address when one is given
        (WhatsApp and e-mail stay); a stored customer that would not change is not written (nor its `updated_at`)."""
        ...

    def update(self, customer_id: int, customer: Customer) -> bool:
        """Change every field of the customer of this id, its key too; False when there is none. Raises
        DuplicateCustomer when the key is another customer's."""
        ...

    def delete(self, customer_id: int) -> bool: ...

    def by_key(self, clave: str) -> Customer | None: ...

    def by_id(self, customer_id: int) -> Customer | None: ...

    def by_number_prefix(self, prefix: str, limit: int) -> list[Customer]:
        """Customers whose document number starts with `prefix` (an index range, never a scan), by number."""
        ...

    def search(self, typed: str, limit: int) -> list[Customer]:
        """At most `limit` customers with a word of the name starting with each word of `typed`, accents and case
        aside (`text.words`), found through a search index (never a scan); in no particular order. Nothing for a
        text without words."""
        ...

    def latest(self, limit: int) -> list[Customer]:
        """The customers updated last, the latest first."""
        ...

    def all(self) -> list[Customer]:
        """Every customer, by document type, number and name."""
        ...

    def count(self) -> int: ...


class ProductRepository(Protocol):
    """Products, unique by their code (case aside) and by their barcode when they have one."""

    def save(self, products: Iterable[Product]) -> list[int]:
        """Insert each product, or replace every field of the stored one of its code (case aside, the code's own
        spelling too). Returns the positions of the products refused because their barcode is another product's
        (each fails alone: the others are written; the caller rolls back if it wants all or nothing)."""
        ...

    def update(self, product_id: int, product: Product, version: int | None = None) -> bool:
        """Change every field of the product of this id, its code too, and count one more version; False when there
        is none. Raises DuplicateProduct when the code or the barcode is another product's; StaleProduct when
        `version` is given and the stored product's is another (compared in the UPDATE itself: of two desks saving
        over one version, the second is refused)."""
        ...

    def delete(self, product_id: int) -> bool: ...

    def by_id(self, product_id: int) -> Product | None: ...

    def by_code(self, codigo: str) -> Product | None:
        """The product of a code, case aside."""
        ...

    def by_barcode(self, codigo_barras: str) -> Product | None:
        """The product of a barcode (exact)."""
        ...

    def by_code_prefix(self, prefix: str, limit: int) -> list[Product]:
        """Products whose code starts with `prefix`, case aside (an index range, never a scan), by code."""
        ...

    def search(self, typed: str, limit: int) -> list[Product]:
        """At most `limit` products with a word of the description starting with each word of `typed`, accents and
        case aside (`text.words`), found through a search index (never a scan); in no particular order. Nothing for
        a text without words."""
        ...

    def first(self, limit: int) -> list[Product]:
        """The first products by code (case aside)."""
        ...

    def all(self) -> list[Product]:
        """Every product, by code (case aside)."""
        ...

    def count(self) -> int: ...


class TransportRepository(Protocol):
    """The vehicles, drivers, carriers and points the guías used (`transport_entries`), unique by kind and key."""

    def remember(self, entries: Iterable[TransportEntry]) -> None:
        """Insert each entry, or give the stored one of its kind and key this data; each marked used now."""
        ...

    def latest(self, kind: str, limit: int) -> list[TransportEntry]:
        """The entries of `kind` used last, the latest first."""
        ...

    def by_key_prefix(self, kind: str, prefix: str, limit: int) -> list[TransportEntry]:
        """The entries of `kind` whose key begins with `prefix` (an index range, never a scan), by key."""
        ...
