"""The contract's field paths as a person reads them on the forms («receptor.ruc» → «RUC del cliente»).

The engine's errors name the contract's fields, which is right for the API and the command; the windows
show the same errors with the labels of their forms. `humanize` rewrites «field» mentions in a
message; `label_of` names one field path, with the line number for items and instalments. A guía's request has
its own fields (docs/guias.md): `guia_label_of` names them as «Nueva guía de remisión» labels them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

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
# The guía's request (app.core.invoicing.documents.guia) as «Nueva guía de remisión» labels its fields.
GUIA_LABELS = {
    "tipo": "Guía de",
    "serie": "Serie",
    "numero": "Número de la guía",
    "emisor": "Emisor",
    "emisor.ruc": "Emisor",
    "motivo_traslado": "Motivo del traslado",
    "descripcion_motivo": "Descripción del motivo",
    "modalidad_transporte": "Modalidad",
    "fecha_inicio_traslado": "Inicio del traslado",
    "peso_bruto": "Peso bruto total",
    "unidad_peso": "Peso bruto total",
    "numero_bultos": "Número de bultos",
    "puerto": "Puerto o aeropuerto",
    "puerto.tipo": "Puerto o aeropuerto",
    "puerto.codigo": "Puerto o aeropuerto",
    "puerto.nombre": "Puerto o aeropuerto",
    "vehiculo_m1_l": "Vehículos de categoría M1 o L",
    "vehiculos": "Vehículo principal",
    "conductores": "DNI del conductor",
    "transportista": "Transportista",
    "transportista.ruc": "RUC del transportista",
    "transportista.razon_social": "Razón social del transportista",
    "transportista.registro_mtc": "Registro MTC",
    "pagador_flete": "Paga el flete",
    "pagador": "RUC de quien paga el flete",
    "pagador.numero_documento": "RUC de quien paga el flete",
    "pagador.razon_social": "Razón social de quien paga el flete",
    "documentos_relacionados": "Documento relacionado",
    "items": "Bienes que se trasladan",
    "proveedor": "Proveedor",
}
GUIA_PARTIES = {"destinatario": "del destinatario", "remitente": "del remitente", "proveedor": "del proveedor"}
GUIA_PARTY_FIELDS = {"tipo_documento": "Documento", "numero_documento": "Número", "razon_social": "Nombre o razón social"}
GUIA_PLACES = {"ubigeo": "ubigeo", "direccion": "dirección", "codigo_establecimiento": "código de establecimiento",
               "ruc": "RUC"}
GUIA_DRIVER_FIELDS = {"numero_documento": "DNI del conductor", "tipo_documento": "Documento del conductor",
                      "nombres": "Nombres del conductor", "apellidos": "Apellidos del conductor",
                      "licencia": "Licencia de conducir"}
GUIA_LIST_FIELDS = {"numero": "número", "tipo": "tipo", "emisor_ruc": "RUC del emisor", "precinto": "precinto"}
_GUIA_INDEXED = re.compile(r"^(vehiculos|conductores|documentos_relacionados|contenedores)\[(\d+)\](?:\.(\w+))?$")
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


def guia_label_of(field: str) -> str | None:
    """The guía window's name for a field path of the guía's request («vehiculos[1].placa» → «Vehículo secundario
    1 (placa)»), or None when the window has no name for it."""
    if field in GUIA_LABELS:
        return GUIA_LABELS[field]
    head, _, leaf = field.partition(".")
    if head in GUIA_PARTIES and leaf in GUIA_PARTY_FIELDS:
        return f"{GUIA_PARTY_FIELDS[leaf]} {GUIA_PARTIES[head]}"
    if head in ("partida", "llegada") and (leaf in GUIA_PLACES or not leaf):
        return f"{head.capitalize()} ({GUIA_PLACES[leaf]})" if leaf else head.capitalize()
    if field.startswith("items["):
        return label_of(field)
    found = _GUIA_INDEXED.match(field)
    if not found:
        return None
    group, index, leaf = found.group(1), int(found.group(2)), found.group(3) or ""
    if group == "vehiculos":
        vehicle = "Vehículo principal" if index == 0 else f"Vehículo secundario {index}"
        return f"{vehicle} ({'TUC' if leaf == 'tuc' else 'placa'})"
    if group == "conductores":
        driver = GUIA_DRIVER_FIELDS.get(leaf, "Conductor")
        return driver if index == 0 else f"{driver} (secundario {index})"
    what = "Documento relacionado" if group == "documentos_relacionados" else "Contenedor"
    return f"{what} {index + 1}" + (f" ({GUIA_LIST_FIELDS.get(leaf, leaf)})" if leaf else "")


def humanize(message: str, label: Callable[[str], str | None] = label_of) -> str:
    """Each «contract.field» in an engine message replaced by its form label (`label`: the form's names), when it
    has one."""
    return _QUOTED.sub(lambda m: f"«{label(m.group(1)) or m.group(1)}»", message)
