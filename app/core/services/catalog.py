"""The catalogue group service (protocols.Catalog): customers, products and the guías' vehicles, drivers and carriers
(app.core.invoicing.catalog)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.errors import invalid
from app.core.invoicing.catalog import csvfiles, records
from app.core.invoicing.catalog.customers import Customers
from app.core.invoicing.catalog.products import Products
from app.core.invoicing.catalog.records import KINDS, TransportEntry
from app.core.invoicing.catalog.transport import TransportCatalogue


class CatalogGroup:
    def __init__(self, customers: Customers, products: Products, transport: TransportCatalogue) -> None:
        self._customers = customers
        self._products = products
        self._transport = transport

    def customers(self, search: str = "", limit: int = 200) -> list[records.Customer]:
        """Customers for «Clientes» and completion: those matching what was typed (document-number prefix, words of
        the name), or the ones updated last when nothing was typed."""
        return self._customers.search(search, limit) if search.strip() else self._customers.latest(limit)

    def customer(self, tipo_documento: str, numero: str | None) -> records.Customer | None:
        """The saved customer of a document (a voucher's receptor): its WhatsApp and e-mail for sending vouchers."""
        return self._customers.get(tipo_documento, numero)

    def save_customer(self, data: dict[str, Any], customer_id: int | None = None) -> records.Customer:
        """Add (or replace by document) a customer, or change the one with `customer_id`; a 400 naming each field."""
        customer = records.customer(**data)
        return self._customers.update(customer_id, customer) if customer_id else self._customers.save(customer)

    def delete_customer(self, customer_id: int) -> bool:
        return self._customers.delete(customer_id)

    def products(self, search: str = "", limit: int = 200) -> list[records.Product]:
        """Products for «Productos» and completion: exact barcode, code prefix, words of the description; or the
        first by code when nothing was typed."""
        return self._products.search(search, limit) if search.strip() else self._products.first(limit)

    def scanned_product(self, typed: str) -> records.Product | None:
        """The product of a barcode or a code typed whole (a scanner types it and Enter), or None."""
        if not typed.strip():
            return None
        return self._products.by_barcode(typed) or self._products.by_code(typed)

    def save_product(self, data: dict[str, Any], product_id: int | None = None, *,
                     version: int | None = None) -> records.Product:
        """Save a new product (by its code) or change the one of `product_id`; `version`: the one read (its
        `version`), so that a save over a change made meanwhile by another desk is refused (a 409) instead of
        undoing it."""
        product = records.product(**data)
        return self._products.update(product_id, product, version) if product_id else self._products.save(product)

    def delete_product(self, product_id: int) -> bool:
        return self._products.delete(product_id)

    def transport(self, kind: str, search: str = "", limit: int = 200) -> list[TransportEntry]:
        """The vehicles («vehiculo»), drivers («conductor»), carriers («transportista») or departure and arrival
        points («punto») earlier guías used, for the guía's window to offer as one types: those whose plate,
        document, RUC or address begins with what was typed (an address's case, accents and punctuation aside), or
        the ones used last when nothing was typed."""
        if kind not in KINDS:
            raise invalid("kind", f"«{kind}» no es vehiculo, conductor, transportista ni punto.")
        return self._transport.entries(kind, search, limit)

    def _file(self, kind: str) -> csvfiles.CatalogFile:
        if kind == "clientes":
            return csvfiles.customers_file(self._customers)
        if kind == "productos":
            return csvfiles.products_file(self._products)
        raise invalid("catalogo", f"El catálogo «{kind}» no existe: use «clientes» o «productos».")

    def preview_csv(self, kind: str, path: str | Path, encoding: str | None = None) -> csvfiles.Preview:
        """Read a CSV of «clientes» or «productos» without writing: the first rows read, each bad row's problem and,
        for a file that is not UTF-8, the encoding guessed and the rows to judge it by. `encoding`: one of
        csvfiles.ENCODINGS chosen instead of the guess."""
        return self._file(kind).preview(Path(path), encoding)

    def import_csv(self, kind: str, path: str | Path, encoding: str | None = None) -> csvfiles.ImportReport:
        """Import every row in one transaction, or nothing when any row is bad (the report lists them); the file is
        streamed. `encoding`: the one the preview showed, or None to detect it again."""
        return self._file(kind).import_file(Path(path), encoding)

    def export_csv(self, kind: str, path: str | Path) -> int:
        return self._file(kind).export(Path(path))
