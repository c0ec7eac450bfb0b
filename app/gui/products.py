"""«Productos»: products and services with their price (with or without IGV), unit, affectation, bag tax and
detracción; edited by hand, imported and exported as CSV (docs/catalog.md)."""

from __future__ import annotations

from typing import Any

from app.core.api import DETRACCIONES, sunat_catalogues

from .catalog import PAGE_ROWS, CatalogPage, Field
from .numbers import parse_decimal

cat = sunat_catalogues
# Catalogue 03, every code a voucher accepts: the units shops use first, with the names a shop gives them, then the
# rest with SUNAT's code and the description of its catalogue (the editor completes on any part of either).
UNIT_CHOICES = (tuple((code, f"{code} — {name}") for code, name in cat.UNITS.items())
                + tuple((code, f"{code} — {name}") for code, name in sorted(cat.unit_catalogue().items())
                        if code not in cat.UNITS))
# Catalogue 07: the onerous affectations a product takes (a free transfer is chosen on the voucher's line).
AFFECTATION_CHOICES = tuple((code, cat.AFFECTATIONS[code]) for code in cat.ONEROUS_AFFECTATIONS)


class ProductsPage(CatalogPage):
    TITLE = "Productos"
    KIND = "productos"
    SINGULAR = "producto"
    PLURAL = "productos"
    SEARCH_HINT = "Buscar por código, código de barras o descripción…"
    COLUMNS = [
        ("Código", lambda p: p.codigo),
        ("Código de barras", lambda p: p.codigo_barras),
        ("Descripción", lambda p: p.descripcion),
        ("Unidad", lambda p: p.unidad),
        ("Precio", lambda p: p.precio),
        ("Incluye IGV", lambda p: p.precio_incluye_igv),
        ("Afectación", lambda p: dict(AFFECTATION_CHOICES).get(p.tipo_afectacion_igv, p.tipo_afectacion_igv)),
        ("Bolsa (ICBPER)", lambda p: p.icbper),
        ("Detracción", lambda p: p.codigo_detraccion),
    ]
    FIELDS = (
        Field("codigo", "Código", placeholder="p. ej. BEB-001"),
        Field("codigo_barras", "Código de barras", placeholder="opcional: escanéelo aquí"),
        Field("descripcion", "Descripción"),
        Field("unidad", "Unidad", "choice", UNIT_CHOICES, default=cat.UNIDAD),
        Field("precio", "Precio", placeholder="p. ej. 2.50"),
        Field("precio_incluye_igv", "El precio incluye IGV", "flag", default=True),
        Field("tipo_afectacion_igv", "Afectación del IGV", "choice", AFFECTATION_CHOICES, default=cat.GRAVADO),
        Field("icbper", "Bolsa plástica (ICBPER)", "flag", default=False),
        Field("codigo_detraccion", "Código de detracción", "choice",
              (("", "Ninguno"),) + tuple((code, f"{code} — {name}") for code, (name, _rate) in DETRACCIONES.items()),
              default=""),
    )

    def list_records(self, typed: str) -> list[Any]:
        return self.engine.catalog.products(typed, PAGE_ROWS)

    def save_record(self, data: dict[str, Any], record_id: int | None) -> Any:
        # The version the editor opened: saving over another desk's change meanwhile is refused (issue 34).
        editing = self.editor.record if self.editor is not None else None
        version = editing.version if editing is not None and editing.id == record_id else None
        return save_product(self.engine, data, record_id, version)

    def delete_record(self, record_id: int) -> bool:
        return self.engine.catalog.delete_product(record_id)

    def describe(self, record: Any) -> str:
        return f"El producto {record.codigo} ({record.descripcion})"


def save_product(engine: Any, data: dict[str, Any], record_id: int | None = None, version: int | None = None) -> Any:
    """The editor's fields to the engine: a price typed «2,50» as a person in Peru types it (anything else is
    refused naming what was typed), no detracción when «Ninguno» was chosen; `version`: the one read."""
    typed = data.get("precio") or ""
    precio = parse_decimal(typed)
    return engine.catalog.save_product({**data, "precio": typed if precio is None else precio,
                                        "codigo_detraccion": data.get("codigo_detraccion") or None}, record_id,
                                       version=version)
