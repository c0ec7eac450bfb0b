"""«Clientes»: the customers remembered from vouchers and registry look-ups, edited by hand, imported and exported
as CSV (docs/catalog.md)."""

from __future__ import annotations

from typing import Any

from .catalog import PAGE_ROWS, CatalogPage, Field
from .voucher_form import DOCUMENT_TYPES


class CustomersPage(CatalogPage):
    TITLE = "Clientes"
    KIND = "clientes"
    SINGULAR = "cliente"
    PLURAL = "clientes"
    SEARCH_HINT = "Buscar por RUC, DNI o nombre…"
    COLUMNS = [
        ("Documento", lambda c: DOCUMENT_TYPES.get(c.tipo_documento, c.tipo_documento)),
        ("Número", lambda c: c.numero),
        ("Nombre o razón social", lambda c: c.nombre),
        ("Dirección", lambda c: c.direccion),
        ("WhatsApp", lambda c: c.whatsapp),
        ("Correo", lambda c: c.email),
    ]
    FIELDS = (
        Field("tipo_documento", "Documento", "choice", tuple(DOCUMENT_TYPES.items()), default="6"),
        Field("numero", "Número", placeholder="RUC de 11 dígitos, DNI de 8…"),
        Field("nombre", "Nombre o razón social"),
        Field("direccion", "Dirección", placeholder="opcional"),
        Field("whatsapp", "WhatsApp", placeholder="opcional, p. ej. 987654321"),
        Field("email", "Correo electrónico", placeholder="opcional"),
    )

    def list_records(self, typed: str) -> list[Any]:
        return self.engine.catalog.customers(typed, PAGE_ROWS)

    def save_record(self, data: dict[str, Any], record_id: int | None) -> Any:
        return self.engine.catalog.save_customer(data, record_id)

    def delete_record(self, record_id: int) -> bool:
        return self.engine.catalog.delete_customer(record_id)

    def describe(self, record: Any) -> str:
        return f"El cliente {record.nombre}" + (f" ({record.numero})" if record.numero else "")
