"""The products and services store: code, barcode, description, unit, price (with or without IGV), affectation,
bag-tax flag and detracción code.

A product is unique by its code (case aside) and by its barcode when it has one. Searches never scan the table:
a code prefix is a range on the code's index, a barcode an exact look-up on its index, a description is
searched by word prefixes in a search index that folds accents (the repository's `search`; SQLite: FTS5).
"""

from __future__ import annotations

from collections.abc import Iterable

from app.core.errors import conflict, invalid
from app.core.invoicing.catalog import records, text
from app.core.invoicing.catalog.records import Product
from app.core.storage.ports.catalog import DuplicateProduct, ProductRepository, StaleProduct
from app.core.storage.ports.database import Database

SEARCH_LIMIT = 20
# A save over a product another desk changed since it was read (issue 34).
STALE_PRODUCT = "Otro puesto cambió este producto; revise y guarde de nuevo"


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
    def __init__(self, db: Database, repository: ProductRepository) -> None:
        self._db = db
        self._repository = repository

    # ------------------------------------------------------------ writing

    def save(self, product: Product) -> Product:
        """Insert or replace (by its code) a product; a 409 when its barcode is another product's."""
        product = records.product(**product.data())
        if self._repository.save([product]):
            raise conflict("codigo_barras", DuplicateBarcode(product).message)
        return _saved(self.by_code(product.codigo))

    def save_all(self, products: Iterable[Product]) -> list[int]:
        """Save every product in one transaction: all of them or none. Already checked values, written as they come
        (a CSV import's are read from the file meanwhile; an error raised by `products` rolls everything back).
        Returns the positions of the products whose barcode is another stored product's: if there is any, nothing
        is saved."""
        clashes: list[int] = []
        try:
            with self._db.transaction():
                clashes = self._repository.save(products)  # each clash fails alone: every one is listed
                if clashes:
                    raise _RollBack
        except _RollBack:
            pass
        return clashes

    def update(self, product_id: int, product: Product, version: int | None = None) -> Product:
        """Change a stored product (its code too); a 409 if another product has that code or barcode, or when
        `version` (the one the caller read) is no longer the stored one: another desk saved it meanwhile."""
        product = records.product(**product.data())
        try:
            changed = self._repository.update(product_id, product, version)
        except DuplicateProduct:
            raise conflict("codigo", f"Ya hay otro producto con el código «{product.codigo}» o con el código de "
                                     f"barras «{product.codigo_barras}».") from None
        except StaleProduct:
            raise conflict("version", STALE_PRODUCT) from None
        if not changed:
            raise invalid("id", f"No hay un producto con id {product_id}.")
        return _saved(self.by_id(product_id))

    def delete(self, product_id: int) -> bool:
        return self._repository.delete(product_id)

    # ------------------------------------------------------------ reading

    def by_id(self, product_id: int) -> Product | None:
        return self._repository.by_id(product_id)

    def by_code(self, codigo: str) -> Product | None:
        """The product of a code, case aside."""
        return self._repository.by_code(codigo.strip())

    def by_barcode(self, codigo_barras: str) -> Product | None:
        """The product of a scanned barcode (exact)."""
        return self._repository.by_barcode(codigo_barras.strip())

    def by_code_prefix(self, prefix: str, limit: int = SEARCH_LIMIT) -> list[Product]:
        """Products whose code starts with `prefix`, case aside (a range on the code's index), by code."""
        prefix = prefix.strip()
        if not prefix:
            return []
        return self._repository.by_code_prefix(prefix, limit)

    def by_description(self, words: str, limit: int = SEARCH_LIMIT) -> list[Product]:
        """Products with a word of the description starting with each word typed, accents and case aside. The
        first `limit` found in the index, then sorted by description."""
        if not text.words(words):
            return []
        return sorted(self._repository.search(words, limit), key=lambda p: text.key(p.descripcion))

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
        return self._repository.first(limit)

    def all(self) -> list[Product]:
        """Every product, by code (export)."""
        return self._repository.all()

    def count(self) -> int:
        return self._repository.count()


def _saved(product: Product | None) -> Product:
    """A product read back inside the call that wrote it: there."""
    assert product is not None
    return product
