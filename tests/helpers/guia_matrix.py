"""Guías de remisión for the tests (issue 36): a remitente's and a transportista's request, and the matrix of guías
the acceptance asks for — each common motive (venta, compra, traslado entre establecimientos, importación,
exportación, consignación, devolución), public and private transport, several vehicles and drivers, M1/L, with and
without related documents, transportista — each built, signed and judged by ../shared/tools/sunat_check.py --strict.

Ubigeos, ports and airports are SUNAT's catalogues 13, 63 and 64; DAM numbers follow the form SUNAT's 3441 reads
(customs office-year-regime-number: regime 10 importación, 40 exportación)."""

from __future__ import annotations

import copy
from typing import Any

from tests.helpers.base import ISSUER_RUC

CUSTOMER_RUC = "20601030013"  # a valid RUC, not the issuer's
SUPPLIER_RUC = "20100070970"
CARRIER_RUC = "20131312955"
START = "2026-11-26"
ISSUED = "2026-11-25"

DRIVERS = [
    {"numero_documento": "45678912", "nombres": "JUAN CARLOS", "apellidos": "QUISPE MAMANI", "licencia": "Q45678912"},
    {"numero_documento": "41234567", "nombres": "ROSA", "apellidos": "HUAMAN TORRES", "licencia": "H41234567"},
    {"tipo_documento": "4", "numero_documento": "001234567", "nombres": "PEDRO", "apellidos": "SILVA",
     "licencia": "C001234567"},
]
VEHICLES = [{"placa": "ABC123"}, {"placa": "T4X987"}, {"placa": "B7K2Q9"}]


def remitente(numero: int = 1, **changes: Any) -> dict:
    """A remitente's guía: venta to a customer, private transport with one vehicle and one driver."""
    request = {
        "tipo": "09", "serie": "T001", "numero": numero, "emisor": {"ruc": ISSUER_RUC},
        "fecha_emision": ISSUED, "hora_emision": "09:30:00",
        "destinatario": {"tipo_documento": "6", "numero_documento": CUSTOMER_RUC,
                         "razon_social": "FERRETERIA EL CONSTRUCTOR S.A.C."},
        "motivo_traslado": "01", "modalidad_transporte": "02", "fecha_inicio_traslado": START,
        "peso_bruto": "1250.5", "unidad_peso": "KGM",
        "partida": {"ubigeo": "150101", "direccion": "AV. ABANCAY 123, LIMA"},
        "llegada": {"ubigeo": "150132", "direccion": "JR. LOS OLIVOS 456, SAN JUAN DE LURIGANCHO"},
        "vehiculos": [VEHICLES[0]], "conductores": [DRIVERS[0]],
        "items": [{"codigo": "CEM-42", "descripcion": "Cemento Portland tipo I, bolsa de 42.5 kg", "cantidad": "25",
                   "unidad": "BG"},
                  {"descripcion": "Fierro corrugado 1/2\" x 9 m", "cantidad": "40", "unidad": "NIU"}],
    }
    request.update(copy.deepcopy(changes))
    return request


def public(carrier_ruc: str = CARRIER_RUC) -> dict:
    """The changes of a public transport: the carrier instead of vehicles and drivers."""
    return {"modalidad_transporte": "01", "vehiculos": [], "conductores": [],
            "transportista": {"ruc": carrier_ruc, "razon_social": "TRANSPORTES RAPIDOS DEL SUR S.A.C.",
                              "registro_mtc": "151234567"}}


def transportista(numero: int = 1, **changes: Any) -> dict:
    """A transportista's guía: the issuer carries a remitente's goods."""
    request = {
        "tipo": "31", "serie": "V001", "numero": numero, "emisor": {"ruc": ISSUER_RUC},
        "fecha_emision": ISSUED, "hora_emision": "10:00:00",
        "remitente": {"tipo_documento": "6", "numero_documento": SUPPLIER_RUC, "razon_social": "AGRICOLA VALLE VERDE S.A."},
        "destinatario": {"tipo_documento": "6", "numero_documento": CUSTOMER_RUC,
                         "razon_social": "FERRETERIA EL CONSTRUCTOR S.A.C."},
        "pagador_flete": "remitente", "transportista": {"registro_mtc": "151234567"},
        "fecha_inicio_traslado": START, "peso_bruto": "3.2", "unidad_peso": "TNE",
        "partida": {"ubigeo": "040101", "direccion": "CALLE MERCADERES 210, AREQUIPA"},
        "llegada": {"ubigeo": "150101", "direccion": "AV. ABANCAY 123, LIMA"},
        "vehiculos": [{"placa": "ABC123", "tuc": "15M21028552E"}], "conductores": [DRIVERS[0]],
        "items": [{"descripcion": "Cajas de palta Hass", "cantidad": "120", "unidad": "BX"}],
    }
    request.update(copy.deepcopy(changes))
    return request


SUPPLIER = {"tipo_documento": "6", "numero_documento": SUPPLIER_RUC, "razon_social": "AGRICOLA VALLE VERDE S.A."}
FACTURA = {"tipo": "01", "numero": "F001-245"}
BOLETA = {"tipo": "03", "numero": "B001-88"}
SUPPLIER_FACTURA = {"tipo": "01", "numero": "F002-1534", "emisor_ruc": SUPPLIER_RUC}
OWN_ESTABLISHMENTS = {"partida": {"ubigeo": "150101", "direccion": "AV. ABANCAY 123, LIMA", "codigo_establecimiento": "0000"},
                      "llegada": {"ubigeo": "150132", "direccion": "JR. LOS OLIVOS 456, SJL",
                                  "codigo_establecimiento": "0002"}}
TO_ONESELF = {"tipo_documento": "6", "numero_documento": ISSUER_RUC, "razon_social": "COMERCIAL YUPANA S.A.C."}
IMPORT = {"motivo_traslado": "08", "numero_bultos": 40,
          "documentos_relacionados": [{"tipo": "50", "numero": "118-2026-10-012345"}],
          "partida": {"ubigeo": "070101", "direccion": "TERMINAL PORTUARIO DEL CALLAO"},
          "puerto": {"tipo": "puerto", "codigo": "CLL", "nombre": "CALLAO"}, "destinatario": TO_ONESELF}
IMPORT_BY_AIR = {**IMPORT, "puerto": {"tipo": "aeropuerto", "codigo": "LIM", "nombre": "JORGE CHAVEZ"},
                 "partida": {"ubigeo": "070101", "direccion": "TERMINAL DE CARGA AEROPUERTO JORGE CHAVEZ"},
                 "numero_bultos": None, "contenedores": [{"numero": "MSKU1234567", "precinto": "PR998877"}]}
EXPORT = {"motivo_traslado": "09", "numero_bultos": 12,
          "documentos_relacionados": [{"tipo": "50", "numero": "118-2026-40-004321"}],
          "destinatario": {"tipo_documento": "0", "numero_documento": "US-884422",
                           "razon_social": "GREEN FOODS IMPORT LLC"},
          "llegada": {"ubigeo": "070101", "direccion": "TERMINAL PORTUARIO DEL CALLAO, MUELLE 5"},
          "puerto": {"tipo": "puerto", "codigo": "CLL", "nombre": "CALLAO"}}

MATRIX: list[tuple[str, dict]] = [
    ("venta-privado", remitente(1)),
    ("venta-privado-factura", remitente(2, documentos_relacionados=[FACTURA])),
    ("venta-publico-factura", remitente(3, **public(), documentos_relacionados=[FACTURA])),
    ("venta-publico-boleta-dni", remitente(4, **public(), documentos_relacionados=[BOLETA],
                                           destinatario={"tipo_documento": "1", "numero_documento": "40123456",
                                                         "razon_social": "MARIA ELENA CONDORI"})),
    ("venta-dos-vehiculos-dos-conductores", remitente(5, vehiculos=VEHICLES[:2], conductores=DRIVERS[:2])),
    ("venta-tres-vehiculos-tres-conductores", remitente(6, vehiculos=VEHICLES, conductores=DRIVERS,
                                                        documentos_relacionados=[FACTURA, BOLETA])),
    ("venta-m1l-privado", remitente(7, vehiculo_m1_l=True, vehiculos=[], conductores=[])),
    ("venta-m1l-publico", remitente(8, **{**public(), "transportista": None}, vehiculo_m1_l=True)),
    ("venta-toneladas", remitente(9, peso_bruto="2.75", unidad_peso="TNE")),
    ("compra-privado", remitente(10, motivo_traslado="02", destinatario=TO_ONESELF, proveedor=SUPPLIER,
                                 documentos_relacionados=[SUPPLIER_FACTURA])),
    ("compra-publico", remitente(11, **public(), motivo_traslado="02", destinatario=TO_ONESELF, proveedor=SUPPLIER,
                                 partida={"ubigeo": "040101", "direccion": "ALMACEN DEL PROVEEDOR, AREQUIPA",
                                          "codigo_establecimiento": "0001", "ruc": SUPPLIER_RUC})),
    ("entre-establecimientos-privado", remitente(12, motivo_traslado="04", destinatario=TO_ONESELF,
                                                 **OWN_ESTABLISHMENTS)),
    ("entre-establecimientos-publico", remitente(13, **public(), motivo_traslado="04", destinatario=TO_ONESELF,
                                                 **OWN_ESTABLISHMENTS)),
    ("importacion-puerto", remitente(14, **IMPORT)),
    ("importacion-aeropuerto-contenedor", remitente(15, **public(), **IMPORT_BY_AIR)),
    ("exportacion-puerto", remitente(16, **EXPORT)),
    ("exportacion-publico", remitente(17, **public(), **EXPORT)),
    ("consignacion", remitente(18, motivo_traslado="05")),
    ("consignacion-publico", remitente(19, **public(), motivo_traslado="05")),
    ("devolucion", remitente(20, motivo_traslado="06")),
    ("devolucion-factura-secundario", remitente(21, motivo_traslado="06", documentos_relacionados=[
                                                    {"tipo": "01", "numero": "F001-245"}],
                                                vehiculos=VEHICLES[:2])),
    ("otros-con-descripcion", remitente(22, motivo_traslado="13", descripcion_motivo="Traslado a feria comercial")),
    ("venta-con-observaciones", remitente(23, observaciones="Entregar en horario de oficina & llamar antes")),
    ("transportista", transportista(1)),
    ("transportista-dos-conductores", transportista(2, conductores=DRIVERS[:2],
                                                    vehiculos=[{"placa": "ABC123", "tuc": "15M21028552E"},
                                                               {"placa": "C3D456", "tuc": "15M21028553F"}],
                                                    pagador_flete="tercero",
                                                    pagador={"numero_documento": CUSTOMER_RUC,
                                                             "razon_social": "FERRETERIA EL CONSTRUCTOR S.A.C."})),
    ("transportista-factura", transportista(3, documentos_relacionados=[SUPPLIER_FACTURA])),
]
