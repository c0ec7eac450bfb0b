"""The SUNAT catalogue codes the catalogue's records carry.

Units (catalogue 03), identity documents (catalogue 06) and IGV affectations (catalogue 07) are the ones the
voucher builder accepts, defined once in `app.core.invoicing.prevalidation` and imported from there. Catalogue 54
(goods and services subject to detracción) is only used by the catalogue so far: its home is here.
"""

from __future__ import annotations

from app.core.invoicing.prevalidation import AFFECTATIONS, DOCUMENT_TYPES, UNITS

__all__ = ["AFFECTATIONS", "DETRACCIONES", "DOCUMENT_TYPES", "DOCUMENT_NAMES", "UNITS", "NO_DOCUMENT"]

NO_DOCUMENT = "0"  # catalogue 06: «sin documento»

# Catalogue 06 codes by the names people write in a spreadsheet (folded: lower case, no accents).
DOCUMENT_NAMES = {"ruc": "6", "dni": "1", "ce": "4", "carnet de extranjeria": "4", "pasaporte": "7",
                  "cedula diplomatica": "A", "sin documento": "0", "-": "0"}

# Catalogue 54: code → what it covers (SUNAT's catalogue as of its public validation files).
DETRACCIONES = {
    "001": "Azúcar y melaza de caña", "002": "Arroz", "003": "Alcohol etílico", "004": "Recursos hidrobiológicos",
    "005": "Maíz amarillo duro", "007": "Caña de azúcar", "008": "Madera", "009": "Arena y piedra",
    "010": "Residuos, subproductos, desechos, recortes y desperdicios",
    "011": "Bienes gravados con el IGV, o renuncia a la exoneración",
    "012": "Intermediación laboral y tercerización", "013": "Animales vivos", "014": "Carnes y despojos comestibles",
    "015": "Abonos, cueros y pieles de origen animal", "016": "Aceite de pescado",
    "017": "Harina, polvo y pellets de pescado, crustáceos, moluscos y demás invertebrados acuáticos",
    "019": "Arrendamiento de bienes muebles", "020": "Mantenimiento y reparación de bienes muebles",
    "021": "Movimiento de carga", "022": "Otros servicios empresariales", "023": "Leche",
    "024": "Comisión mercantil", "025": "Fabricación de bienes por encargo",
    "026": "Servicio de transporte de personas", "027": "Servicio de transporte de carga",
    "028": "Transporte de pasajeros", "030": "Contratos de construcción", "031": "Oro gravado con el IGV",
    "032": "Páprika y otros frutos de los géneros capsicum o pimienta", "034": "Minerales metálicos no auríferos",
    "035": "Bienes exonerados del IGV", "036": "Oro y demás minerales metálicos exonerados del IGV",
    "037": "Demás servicios gravados con el IGV", "039": "Minerales no metálicos",
    "040": "Bien inmueble gravado con IGV", "041": "Plomo", "099": "Ley 30737",
}

assert set(DOCUMENT_NAMES.values()) <= set(DOCUMENT_TYPES)
