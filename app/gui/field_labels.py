"""The contract's field paths as a person reads them on the forms («receptor.ruc» → «RUC del cliente»).

The engine's errors name the contract's fields, which is right for the API and the command; the windows
show the same errors with the labels of their forms. `humanize` rewrites «field» mentions in a
message; `label_of` names one field path, with the line number for items and instalments.
"""

from __future__ import annotations

import re

from app.core.api import SETTINGS

LABELS = {
    "tipo": "Tipo de comprobante",
    "serie": "Serie",
    "numero": "Número",
    "emisor": "Empresa emisora",
    "emisor.ruc": "RUC de la empresa",
    "receptor": "Cliente",
    "receptor.ruc": "RUC del cliente",
    "receptor.tipo_documento": "Documento del cliente",
    "receptor.numero_documento": "Número de documento del cliente",
    "receptor.razon_social": "Nombre o razón social del cliente",
    "receptor.direccion": "Dirección del cliente",
    "items": "Líneas del comprobante",
    "fecha_emision": "Fecha de emisión",
    "hora_emision": "Hora de emisión",
    "moneda": "Moneda",
    "forma_pago": "Forma de pago",
    "forma_pago.tipo": "Forma de pago",
    "forma_pago.cuotas": "Cuotas",
    "documento_referencia": "Comprobante que modifica",
    "documento_referencia.tipo": "Tipo del comprobante que modifica",
    "documento_referencia.serie": "Serie del comprobante que modifica",
    "documento_referencia.numero": "Número del comprobante que modifica",
    "codigo_motivo": "Motivo",
    "descripcion_motivo": "Descripción del motivo",
    "descuento_global": "Descuento global",
    "certificado_id": "Certificado",
    "xml": "XML",
    "xml_firmado": "XML firmado",
    "ambiente": "Entorno de SUNAT",
    "instance": "Instancia",
    "to": "Número de destino",
    "message": "Mensaje",
    "media_url": "Adjunto",
    "url": "URL",
    "events": "Eventos",
    "ruc": "RUC",
    "razon_social": "Razón social",
    "ubigeo": "Ubigeo",
    "direccion": "Dirección",
    "codigo_establecimiento": "Código de establecimiento",
    "usuario": "Usuario SOL",
    "clave": "Clave SOL",
}
ITEM_LABELS = {
    "descripcion": "Descripción",
    "cantidad": "Cantidad",
    "precio_unitario": "Valor unitario",
    "igv": "IGV",
    "codigo": "Código",
    "unidad": "Unidad",
    "tipo_afectacion_igv": "Afectación del IGV",
    "icbper": "Bolsas plásticas (ICBPER)",
    "descuento": "Descuento",
    "precio_con_igv": "Precio con IGV",
}
CUOTA_LABELS = {"monto": "Monto", "fecha_vencimiento": "Vencimiento"}
_INDEXED = re.compile(r"^(items|forma_pago\.cuotas)\[(\d+)\](?:\.(\w+))?$")
_QUOTED = re.compile(r"«([a-z_][\w.\[\]]*)»")


def label_of(field: str) -> str | None:
    """The form's name for a contract field path, or None when the windows have no name for it."""
    if field in LABELS:
        return LABELS[field]
    if field in SETTINGS and SETTINGS[field].label:
        return SETTINGS[field].label
    found = _INDEXED.match(field)
    if not found:
        return None
    group, index, leaf = found.group(1), int(found.group(2)) + 1, found.group(3)
    if group == "items":
        return f"{ITEM_LABELS.get(leaf, leaf)} (línea {index})" if leaf else f"Línea {index}"
    return f"{CUOTA_LABELS.get(leaf, leaf)} (cuota {index})" if leaf else f"Cuota {index}"


def humanize(message: str) -> str:
    """Each «contract.field» in an engine message replaced by its form label, when it has one."""
    return _QUOTED.sub(lambda m: f"«{label_of(m.group(1)) or m.group(1)}»", message)
