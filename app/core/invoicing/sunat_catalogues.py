"""SUNAT's catalogues (the «catálogos» of its electronic vouchers) and their Spanish labels: one home.

The core, the windows (through app.core.api) and the printed voucher read codes and labels from here; a catalogue
code or label spelled anywhere else under app/ fails tests/core/test_one_home.py. Codes are SUNAT's
(../shared/sunat/validation/commons/cpe/catalogo/cat_NN.xml); the labels are what a person in a Peruvian shop reads,
in Spanish (Peru), not always SUNAT's own wording.

- 01 document types, 06 identity documents, 07 IGV affectations, 09 / 10 reasons of credit / debit notes,
  12 related documents, 16 price types, 51 operation types, 52 legends, 53 discounts, 54 detracciones, 59 means of
  payment;
- 03 units of measure: every code of the catalogue (app/data/sunat-unidades.csv, generated from cat_03.xml), a
  curated table of the ~80 units shops use with their Spanish names, and the shop spellings read as their code
  («UND» → NIU, «KG» → KGM).

What operation 1 accepts is the builder's business (app.core.invoicing.prevalidation): `UNITS_ACCEPTED` below is
every code of catalogue 03.
"""

from __future__ import annotations

import csv
import functools
import io
import unicodedata
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from pathlib import Path

from lxml import etree

from app.core.platform.paths import package_data

# ---------------------------------------------------------------- 01 document types

FACTURA, BOLETA, NOTA_CREDITO, NOTA_DEBITO = "01", "03", "07", "08"
GUIA_REMITENTE, RETENCION, GUIA_TRANSPORTISTA, PERCEPCION = "09", "20", "31", "40"
DOCUMENT_TYPES = {
    FACTURA: "Factura", BOLETA: "Boleta de venta", NOTA_CREDITO: "Nota de crédito", NOTA_DEBITO: "Nota de débito",
    GUIA_REMITENTE: "Guía de remisión remitente", RETENCION: "Comprobante de retención",
    GUIA_TRANSPORTISTA: "Guía de remisión transportista", PERCEPCION: "Comprobante de percepción",
}
SALES = (FACTURA, BOLETA)  # the vouchers a note modifies
NOTES = (NOTA_CREDITO, NOTA_DEBITO)
# How a note's form names the voucher it modifies (shorter than the catalogue's).
SHORT_NAMES = {FACTURA: "Factura", BOLETA: "Boleta"}
# How SUNAT's CDRs name each voucher («La Factura numero F001-1, ha sido aceptada»): the SUNAT sandbox writes them.
CDR_NAMES = {FACTURA: "Factura", BOLETA: "Boleta de Venta", NOTA_CREDITO: "Nota de Crédito", NOTA_DEBITO: "Nota de Débito"}
ELECTRONIC = " ELECTRÓNICA"


def printed_title(code: str) -> str:
    """The title of the printed voucher: «FACTURA ELECTRÓNICA», «NOTA DE CRÉDITO ELECTRÓNICA»…"""
    return DOCUMENT_TYPES[code].upper() + ELECTRONIC


# ---------------------------------------------------------------- 06 identity documents

SIN_DOCUMENTO, DNI, CARNET_EXTRANJERIA, RUC, PASAPORTE, CEDULA_DIPLOMATICA = "0", "1", "4", "6", "7", "A"
IDENTITY_DOCUMENTS = {RUC: "RUC", DNI: "DNI", CARNET_EXTRANJERIA: "Carnet de extranjería", PASAPORTE: "Pasaporte",
                      SIN_DOCUMENTO: "Sin documento", CEDULA_DIPLOMATICA: "Cédula diplomática"}
# What the windows offer to type by hand (a diplomatic card comes from files and the API).
IDENTITY_DOCUMENTS_OFFERED = tuple(code for code in IDENTITY_DOCUMENTS if code != CEDULA_DIPLOMATICA)
# As the printed voucher names the customer's document, in its narrow column.
IDENTITY_PRINTED = {SIN_DOCUMENTO: "DOC.", DNI: "DNI", CARNET_EXTRANJERIA: "C.E.", RUC: "RUC", PASAPORTE: "PASAPORTE",
                    CEDULA_DIPLOMATICA: "CÉD. DIPL."}
# Catalogue 06 codes by the names people write in a spreadsheet (folded: lower case, no accents).
IDENTITY_SPELLINGS = {"ruc": RUC, "dni": DNI, "ce": CARNET_EXTRANJERIA, "carnet de extranjeria": CARNET_EXTRANJERIA,
                      "pasaporte": PASAPORTE, "cedula diplomatica": CEDULA_DIPLOMATICA, "sin documento": SIN_DOCUMENTO,
                      "-": SIN_DOCUMENTO}

# ---------------------------------------------------------------- 07 IGV affectations

GRAVADO, EXONERADO, INAFECTO, EXPORTACION = "10", "20", "30", "40"
ONEROUS_AFFECTATIONS = (GRAVADO, EXONERADO, INAFECTO, EXPORTACION)
# Free transfers (transferencias gratuitas): the line's price is a reference value, nothing is charged.
FREE_GRAVADO = ("11", "12", "13", "14", "15", "16")
FREE_EXONERADO = ("21",)
FREE_INAFECTO = ("31", "32", "33", "34", "35", "36", "37")
FREE_AFFECTATIONS = (*FREE_GRAVADO, *FREE_EXONERADO, *FREE_INAFECTO)
TAXED_AFFECTATIONS = frozenset((GRAVADO, *FREE_GRAVADO))  # IGV at 18 % (charged for 10 only)
# Rice sold pilado pays the IVAP (Ley 28211) at 4 % instead of the IGV: affectation 17, alone on its voucher.
IVAP, IVAP_PERCENT = "17", "4"
AFFECTATIONS = {
    GRAVADO: "Gravado (IGV)", EXONERADO: "Exonerado", INAFECTO: "Inafecto", EXPORTACION: "Exportación",
    IVAP: "Gravado – IVAP (arroz pilado)",
    "11": "Gratuito gravado – Retiro por premio",
    "12": "Gratuito gravado – Retiro por donación",
    "13": "Gratuito gravado – Retiro",
    "14": "Gratuito gravado – Retiro por publicidad",
    "15": "Gratuito gravado – Bonificaciones",
    "16": "Gratuito gravado – Retiro por entrega a trabajadores",
    "21": "Gratuito exonerado – Transferencia gratuita",
    "31": "Gratuito inafecto – Retiro por bonificación",
    "32": "Gratuito inafecto – Retiro",
    "33": "Gratuito inafecto – Retiro por muestras médicas",
    "34": "Gratuito inafecto – Retiro por convenio colectivo",
    "35": "Gratuito inafecto – Retiro por premio",
    "36": "Gratuito inafecto – Retiro por publicidad",
    "37": "Gratuito inafecto – Transferencia gratuita",
}

# ---------------------------------------------------------------- 08 ISC systems

ISC_AL_VALOR, ISC_MONTO_FIJO, ISC_PRECIO_PUBLICO = "01", "02", "03"
ISC_SYSTEMS = {ISC_AL_VALOR: "Sistema al valor", ISC_MONTO_FIJO: "Aplicación del monto fijo",
               ISC_PRECIO_PUBLICO: "Sistema de precios de venta al público"}

# ---------------------------------------------------------------- 09 and 10: reasons of notes

# The reasons Yupana issues; the labels are the `descripcion_motivo` a note gets when the request has none.
CREDIT_NOTE_REASONS = {"01": "Anulación de la operación", "02": "Anulación por error en el RUC",
                       "03": "Corrección por error en la descripción", "04": "Descuento global",
                       "05": "Descuento por ítem", "06": "Devolución total", "07": "Devolución por ítem",
                       "08": "Bonificación", "09": "Disminución en el valor", "10": "Otros conceptos",
                       "11": "Ajustes de operaciones de exportación", "12": "Ajustes afectos al IVAP",
                       "13": "Ajustes: montos y/o fechas de pago"}
DEBIT_NOTE_REASONS = {"01": "Intereses por mora", "02": "Aumento en el valor", "03": "Penalidades / otros conceptos",
                      "11": "Ajustes de operaciones de exportación", "12": "Ajustes afectos al IVAP"}
# Reason 12 of both catalogues («Ajustes afectos al IVAP») adjusts IVAP lines: all of affectation 17. Reason 11
# adjusts an export: its lines are all of affectation 40. Credit notes of reason 13 correct the instalments only
# (cac:PaymentTerms), nothing is credited.
IVAP_REASON = "12"
EXPORT_REASON = "11"
INSTALMENTS_REASON = "13"

# ---------------------------------------------------------------- 12 related documents

RELATED_DOCUMENTS = {"01": "Factura emitida para corregir error en el RUC", "02": "Factura emitida por anticipos",
                     "03": "Boleta de venta emitida por anticipos", "04": "Ticket de salida (ENAPU)",
                     "05": "Código SCOP", "06": "Factura electrónica remitente", "07": "Guía de remisión remitente",
                     "08": "Declaración de salida del depósito franco",
                     "09": "Declaración simplificada de importación",
                     "10": "Liquidación de compra emitida por anticipos", "99": "Otros"}

# Other related documents a sale names (cac:AdditionalDocumentReference): SUNAT's sheets admit 04 to 09 and 99 (4009);
# 02 and 03 are the anticipos, written with their payment.
RELATED_DOCUMENTS_OFFERED = ("04", "05", "06", "07", "08", "09", "99")

# ---------------------------------------------------------------- 16 price types

PRICE_WITH_IGV, REFERENCE_VALUE = "01", "02"
PRICE_TYPES = {PRICE_WITH_IGV: "Precio unitario (incluye el IGV)",
               REFERENCE_VALUE: "Valor referencial unitario en operaciones no onerosas"}

# ---------------------------------------------------------------- 51 operation types

DOMESTIC_SALE, EXPORT_OF_GOODS, DETRACCION_OPERATION = "0101", "0200", "1001"
# The operation types Yupana issues (cbc:InvoiceTypeCode/@listID). 0202 (hospedaje) and 0205 (paquete turístico)
# need the guest's data on each line (items[].huesped, catalogue 55 properties 4000-4009).
HOSPEDAJE_EXPORT, PAQUETE_TURISTICO = "0202", "0205"
OPERATION_TYPES = {
    DOMESTIC_SALE: "Venta interna", EXPORT_OF_GOODS: "Exportación de bienes",
    "0201": "Exportación de servicios: prestación realizada íntegramente en el país",
    "0202": "Exportación de servicios: hospedaje de no domiciliados",
    "0203": "Exportación de servicios: transporte de navieras",
    "0204": "Exportación de servicios: servicios a naves y aeronaves de bandera extranjera",
    "0205": "Exportación de servicios: paquete turístico",
    "0206": "Exportación de servicios: servicios complementarios al transporte de carga",
    "0207": "Exportación de servicios: suministro de energía eléctrica a sujetos domiciliados en ZED",
    "0208": "Exportación de servicios: prestación realizada parcialmente en el extranjero",
    DETRACCION_OPERATION: "Operación sujeta a detracción",
    "1002": "Operación sujeta a detracción: recursos hidrobiológicos",
    "1004": "Operación sujeta a detracción: servicios de transporte de carga",
    "2001": "Operación sujeta a percepción",
}
PERCEPCION_OPERATION = "2001"
# The detracción's own operation types: hydrobiological goods (code 004 only, SUNAT's 3129) and road freight
# (code 027 only). Each needs its data on every line (catalogue 55 properties, the route).
HYDROBIOLOGICAL_OPERATION, FREIGHT_OPERATION = "1002", "1004"  # offered in OPERATION_TYPES above
HYDROBIOLOGICAL_SPOT, FREIGHT_SPOT = "004", "027"
# Freight's reference values (cac:DeliveryTerms/cbc:ID, SUNAT's 3124-3126): the service, the effective load and the
# nominal useful load.
FREIGHT_REFERENCE_VALUES = ("01", "02", "03")
# Exports whose customer SUNAT's sheets refuse with a RUC (2800); for 0203, 0206, 0207 and 0208 either is accepted.
EXPORTS_TO_NON_RESIDENTS = frozenset({EXPORT_OF_GOODS, "0201", "0204"})

# ---------------------------------------------------------------- 55 item properties (the ones Yupana writes)

ITEM_PROPERTIES = {
    "3001": "Detracciones: Recursos Hidrobiológicos-Matrícula de la embarcación",
    "3002": "Detracciones: Recursos Hidrobiológicos-Nombre de la embarcación",
    "3003": "Detracciones: Recursos Hidrobiológicos-Tipo de especie vendida",
    "3004": "Detracciones: Recursos Hidrobiológicos-Lugar de descarga",
    "3005": "Detracciones: Recursos Hidrobiológicos-Fecha de descarga",
    "3006": "Detracciones: Recursos Hidrobiológicos-Cantidad de especie vendida",
    "4000": "Beneficio Hospedajes: Código de país de emisión del pasaporte",
    "4001": "Beneficio Hospedajes: Código de país de residencia del sujeto no domiciliado",
    "4002": "Beneficio Hospedajes: Fecha de ingreso al país",
    "4003": "Beneficio Hospedajes: Fecha de Ingreso al Establecimiento",
    "4004": "Beneficio Hospedajes: Fecha de Salida del Establecimiento",
    "4005": "Beneficio Hospedajes: Número de Días de Permanencia",
    "4006": "Beneficio Hospedajes: Fecha de Consumo",
    "4007": "Beneficio Hospedajes: Nombres y apellidos del huesped",
    "4008": "Beneficio Hospedajes: Tipo de documento de identidad del huesped",
    "4009": "Beneficio Hospedajes: Número de documento de identidad del huesped",
}
DAYS_UNIT = "DAY"  # cbc:DurationMeasure/@unitCode of property 4005 (SUNAT's 4313)

# ---------------------------------------------------------------- 52 legends

AMOUNT_IN_WORDS, FREE_TRANSFER, DETRACCION_NOTICE, ITINERANT_SALE, IVAP_NOTICE = "1000", "1002", "2006", "2005", "2007"
PERCEPCION_NOTICE = "2000"  # a factura or boleta with percepción (operation 2001, charge 51-53), issue 37
LEGENDS = {AMOUNT_IN_WORDS: "Monto en letras",
           FREE_TRANSFER: "TRANSFERENCIA GRATUITA DE UN BIEN Y/O SERVICIO PRESTADO GRATUITAMENTE",
           PERCEPCION_NOTICE: "COMPROBANTE DE PERCEPCIÓN",
           DETRACCION_NOTICE: OPERATION_TYPES[DETRACCION_OPERATION],
           # SUNAT's sheets pair the place of delivery (cac:Delivery/cac:DeliveryLocation) with this legend (4266).
           ITINERANT_SALE: "Venta realizada por emisor itinerante",
           IVAP_NOTICE: "Operación sujeta al IVAP"}

# ---------------------------------------------------------------- 53 discounts

LINE_DISCOUNT, GLOBAL_DISCOUNT = "00", "02"  # both reduce the IGV base
DISCOUNTS = {LINE_DISCOUNT: "Descuento que afecta la base imponible del IGV",
             GLOBAL_DISCOUNT: "Descuento global que afecta la base imponible del IGV"}
# The other charges and discounts Yupana writes (issue 37): on a line, 01 keeps the base (it lowers the price paid),
# 47 raises it and 48 does not; on the voucher, 03 keeps the base, 49 raises it, 45, 46 and 50 do not. What keeps
# the base is summed in cbc:AllowanceTotalAmount or cbc:ChargeTotalAmount and changes the payable amount only.
LINE_DISCOUNT_KEEPING_BASE, GLOBAL_DISCOUNT_KEEPING_BASE = "01", "03"
LINE_CHARGE, LINE_CHARGE_KEEPING_BASE = "47", "48"
FISE, RECARGO_AL_CONSUMO, GLOBAL_CHARGE, GLOBAL_CHARGE_KEEPING_BASE = "45", "46", "49", "50"
ALLOWANCES_AND_CHARGES = {
    LINE_DISCOUNT_KEEPING_BASE: "Descuento que no afecta la base imponible del IGV",
    GLOBAL_DISCOUNT_KEEPING_BASE: "Descuento global que no afecta la base imponible del IGV",
    FISE: "FISE", RECARGO_AL_CONSUMO: "Recargo al consumo y/o propinas",
    LINE_CHARGE: "Cargo que afecta la base imponible del IGV",
    LINE_CHARGE_KEEPING_BASE: "Cargo que no afecta la base imponible del IGV",
    GLOBAL_CHARGE: "Cargo global que afecta la base imponible del IGV",
    GLOBAL_CHARGE_KEEPING_BASE: "Cargo global que no afecta la base imponible del IGV",
}
LINE_ALLOWANCES_OFFERED = (LINE_DISCOUNT_KEEPING_BASE, LINE_CHARGE, LINE_CHARGE_KEEPING_BASE)
GLOBAL_ALLOWANCES_OFFERED = (GLOBAL_DISCOUNT_KEEPING_BASE, FISE, RECARGO_AL_CONSUMO, GLOBAL_CHARGE,
                             GLOBAL_CHARGE_KEEPING_BASE)
# The percepción of the IGV the seller collects (codes 51-53, with the rate of each regime, RS 058-2006/SUNAT and
# catalogue 22) and the retención its customer, a retention agent, will make (62, regime 01 of catalogue 23: 3 %).
# Neither changes the payable amount: they are stated beside it (issue 37).
PERCEPCIONES = {"51": ("Percepción venta interna", "2"), "52": ("Percepción a la adquisición de combustible", "1"),
                "53": ("Percepción realizada al agente de percepción con tasa especial", "0.5")}
RETENCION_IGV, RETENCION_RATE = "62", "3"
# Advances deducted in the final voucher (catalogue 53 04 gravado, 05 exonerado, 06 inafecto), by the affectation the
# advance was sold with; the advance voucher is catalogue 12 02 (factura) or 03 (boleta).
PREPAYMENT_DISCOUNTS = {GRAVADO: "04", EXONERADO: "05", INAFECTO: "06"}
PREPAYMENT_VOUCHERS = {"02": "F", "03": "B"}  # catalogue 12 type → the serie's letter of the advance voucher
CHARGES = frozenset({FISE, RECARGO_AL_CONSUMO, LINE_CHARGE, LINE_CHARGE_KEEPING_BASE, GLOBAL_CHARGE,
                     GLOBAL_CHARGE_KEEPING_BASE, *PERCEPCIONES})

# ---------------------------------------------------------------- 54 detracciones (SPOT)

# Code → (what it covers, default rate in percent). The rates are those of SUNAT's catalogue file (cat_54.xml), except
# the services of Anexo 3 of RS 183-2004/SUNAT whose rates RS 071-2018/SUNAT raised from 2018-04-01 (012, 020, 022 and
# 037 to 12 %). A request may always state its own `detraccion.porcentaje`.
DETRACCIONES: dict[str, tuple[str, str]] = {
    "001": ("Azúcar y melaza de caña", "10"), "002": ("Arroz", "10"), "003": ("Alcohol etílico", "10"),
    "004": ("Recursos hidrobiológicos", "4"), "005": ("Maíz amarillo duro", "4"), "007": ("Caña de azúcar", "10"),
    "008": ("Madera", "4"), "009": ("Arena y piedra", "10"),
    "010": ("Residuos, subproductos, desechos, recortes y desperdicios", "15"),
    "011": ("Bienes gravados con el IGV, o renuncia a la exoneración", "15"),
    "012": ("Intermediación laboral y tercerización", "12"), "013": ("Animales vivos", "10"),
    "014": ("Carnes y despojos comestibles", "4"), "015": ("Abonos, cueros y pieles de origen animal", "10"),
    "016": ("Aceite de pescado", "4"),
    "017": ("Harina, polvo y pellets de pescado, crustáceos, moluscos y demás invertebrados acuáticos", "4"),
    "019": ("Arrendamiento de bienes muebles", "10"), "020": ("Mantenimiento y reparación de bienes muebles", "12"),
    "021": ("Movimiento de carga", "10"), "022": ("Otros servicios empresariales", "12"), "023": ("Leche", "10"),
    "024": ("Comisión mercantil", "10"), "025": ("Fabricación de bienes por encargo", "10"),
    "026": ("Servicio de transporte de personas", "10"), "027": ("Servicio de transporte de carga", "4"),
    "028": ("Transporte de pasajeros", "4"), "030": ("Contratos de construcción", "4"),
    "031": ("Oro gravado con el IGV", "10"), "032": ("Páprika y otros frutos de los géneros capsicum o pimienta", "10"),
    "034": ("Minerales metálicos no auríferos", "10"), "035": ("Bienes exonerados del IGV", "1.5"),
    "036": ("Oro y demás minerales metálicos exonerados del IGV", "1.5"),
    "037": ("Demás servicios gravados con el IGV", "12"), "039": ("Minerales no metálicos", "10"),
    "040": ("Bien inmueble gravado con IGV", "4"), "041": ("Plomo", "15"), "099": ("Ley 30737", "8"),
}

# ---------------------------------------------------------------- 59 means of payment

DEPOSITO_EN_CUENTA = "001"  # the detracción's deposit by default
MEANS_OF_PAYMENT = {
    DEPOSITO_EN_CUENTA: "Depósito en cuenta", "002": "Giro", "003": "Transferencia de fondos", "004": "Orden de pago",
    "005": "Tarjeta de débito", "006": "Tarjeta de crédito",  # of the country's financial system
    "007": "Cheque «no negociable», «intransferible» o «no a la orden»",
    "008": "Efectivo, sin obligación de usar medio de pago", "009": "Efectivo",  # in the other cases
    "010": "Medios de pago de comercio exterior",
    "011": "Documentos de EDPYMES y cooperativas de ahorro y crédito no autorizadas a captar depósitos",
    "012": "Tarjeta de crédito de una empresa no perteneciente al sistema financiero",
    "013": "Tarjeta de crédito emitida en el exterior por bancos o financieras no domiciliados",
    "101": "Transferencia (comercio exterior)", "102": "Cheque bancario (comercio exterior)",
    "103": "Orden de pago simple (comercio exterior)", "104": "Orden de pago documentaria (comercio exterior)",
    "105": "Remesa simple (comercio exterior)", "106": "Remesa documentaria (comercio exterior)",
    "107": "Carta de crédito simple (comercio exterior)", "108": "Carta de crédito documentaria (comercio exterior)",
    "999": "Otros medios de pago",
}
# The ones a small business uses, offered by the windows.
MEANS_OF_PAYMENT_OFFERED = (DEPOSITO_EN_CUENTA, "002", "003", "004", "005", "006", "009", "999")

# ---------------------------------------------------------------- forma de pago (cac:PaymentTerms «FormaPago»)

CONTADO, CREDITO = "Contado", "Credito"  # the cbc:PaymentMeansID a voucher writes (not a numbered catalogue)
PAYMENT_FORMS = {CONTADO: "Contado", CREDITO: "Crédito"}  # as the printed voucher names them

# ---------------------------------------------------------------- guías de remisión (GRE 2.0)

# 18 transport mode
TRANSPORTE_PUBLICO, TRANSPORTE_PRIVADO = "01", "02"
TRANSPORT_MODES = {TRANSPORTE_PUBLICO: "Transporte público", TRANSPORTE_PRIVADO: "Transporte privado"}

# 20 transfer motive
MOTIVO_VENTA, MOTIVO_COMPRA, MOTIVO_VENTA_TERCEROS, MOTIVO_ENTRE_ESTABLECIMIENTOS = "01", "02", "03", "04"
MOTIVO_CONSIGNACION, MOTIVO_DEVOLUCION, MOTIVO_RECOJO_TRANSFORMADOS = "05", "06", "07"
MOTIVO_IMPORTACION, MOTIVO_EXPORTACION, MOTIVO_OTROS = "08", "09", "13"
MOTIVO_VENTA_CONFIRMACION, MOTIVO_TRANSFORMACION, MOTIVO_ITINERANTE = "14", "17", "18"
TRANSFER_MOTIVES = {
    MOTIVO_VENTA: "Venta", MOTIVO_COMPRA: "Compra", MOTIVO_VENTA_TERCEROS: "Venta con entrega a terceros",
    MOTIVO_ENTRE_ESTABLECIMIENTOS: "Traslado entre establecimientos de la misma empresa",
    MOTIVO_CONSIGNACION: "Consignación", MOTIVO_DEVOLUCION: "Devolución",
    MOTIVO_RECOJO_TRANSFORMADOS: "Recojo de bienes transformados", MOTIVO_IMPORTACION: "Importación",
    MOTIVO_EXPORTACION: "Exportación", MOTIVO_OTROS: "Otros",
    MOTIVO_VENTA_CONFIRMACION: "Venta sujeta a confirmación del comprador",
    MOTIVO_TRANSFORMACION: "Traslado de bienes para transformación",
    MOTIVO_ITINERANTE: "Traslado emisor itinerante de comprobantes de pago",
}
# Motives whose destinatario is the remitente itself (SUNAT's 2554) and those where it must be another (2555).
MOTIVES_TO_ONESELF = frozenset({MOTIVO_COMPRA, MOTIVO_ENTRE_ESTABLECIMIENTOS, MOTIVO_RECOJO_TRANSFORMADOS})
MOTIVES_TO_ANOTHER = frozenset({MOTIVO_VENTA, MOTIVO_VENTA_TERCEROS, MOTIVO_CONSIGNACION, MOTIVO_DEVOLUCION,
                                MOTIVO_EXPORTACION, MOTIVO_VENTA_CONFIRMACION, MOTIVO_TRANSFORMACION})
MOTIVES_OF_CUSTOMS = frozenset({MOTIVO_IMPORTACION, MOTIVO_EXPORTACION})  # a DAM or DS, packages, a port
MOTIVES_WITH_SUPPLIER = frozenset({MOTIVO_COMPRA, MOTIVO_RECOJO_TRANSFORMADOS})  # the proveedor (SUNAT's 4375)
SALE_MOTIVES = frozenset({MOTIVO_VENTA, MOTIVO_VENTA_TERCEROS})  # the sale's factura is the remitente's (3381)

# 61 documents related to a transport (the part a remitente's guía may cite: gre-r = 1)
DAM, DECLARACION_SIMPLIFICADA = "50", "52"
TRANSPORT_DOCUMENTS = {
    FACTURA: "Factura", BOLETA: "Boleta de venta", "04": "Liquidación de compra",
    GUIA_REMITENTE: "Guía de remisión remitente", "12": "Ticket o cinta de máquina registradora",
    GUIA_TRANSPORTISTA: "Guía de remisión transportista", "48": "Comprobante de operaciones – Ley N° 29972",
    "49": "Constancia de depósito - IVAP (Ley 28211)", DAM: "Declaración aduanera de mercancías",
    DECLARACION_SIMPLIFICADA: "Declaración simplificada (DS)", "80": "Constancia de depósito – Detracción",
}
CUSTOMS_DOCUMENTS = frozenset({DAM, DECLARACION_SIMPLIFICADA})
SALE_DOCUMENTS = frozenset({FACTURA, BOLETA, "12"})  # a sale's voucher: factura, boleta, ticket
# The documents a guía names with their issuer's RUC (SUNAT's 3380).
ISSUED_DOCUMENTS = frozenset({FACTURA, BOLETA, "04", GUIA_REMITENTE, "12", "48"})

# The indicators of cac:Shipment/cbc:SpecialInstructions
INDICATOR_M1L = "SUNAT_Envio_IndicadorTrasladoVehiculoM1L"  # vehicles of categories M1 or L: no carrier or plate
INDICATOR_TOTAL_DAM = "SUNAT_Envio_IndicadorTrasladoTotalDAMoDS"  # the whole DAM or DS travels in this guía
FREIGHT_PAYERS = {"remitente": "SUNAT_Envio_IndicadorPagadorFlete_Remitente",
                  "subcontratador": "SUNAT_Envio_IndicadorPagadorFlete_Subcontratador",
                  "tercero": "SUNAT_Envio_IndicadorPagadorFlete_Tercero"}
# Weight units a guía takes (catalogue 03): kilograms or tonnes (SUNAT's 2523)
WEIGHT_UNITS = {"KGM": "Kilogramos", "TNE": "Toneladas"}
# Port (catalogue 63) or airport (64) of a guía of importación / exportación
PORT, AIRPORT = "1", "2"


# ---------------------------------------------------------------- consulta integrada de validez (REST API)
# As SUNAT's «Manual de consulta integrada de comprobante de pago por servicio web» gives them: the vouchers it
# answers for (codComp), the voucher's state (estadoCp), the taxpayer's state (estadoRuc) and its address's
# condition (condDomiRuc).

LIQUIDACION_COMPRA, RECIBO_HONORARIOS, NOTA_CREDITO_RECIBO = "04", "R1", "R7"
VALIDITY_DOCUMENT_TYPES = {
    FACTURA: DOCUMENT_TYPES[FACTURA], BOLETA: DOCUMENT_TYPES[BOLETA], LIQUIDACION_COMPRA: "Liquidación de compra",
    NOTA_CREDITO: DOCUMENT_TYPES[NOTA_CREDITO], NOTA_DEBITO: DOCUMENT_TYPES[NOTA_DEBITO],
    RECIBO_HONORARIOS: "Recibo por honorarios", NOTA_CREDITO_RECIBO: "Nota de crédito de recibos",
}
CP_NO_EXISTE, CP_ACEPTADO, CP_ANULADO, CP_AUTORIZADO, CP_NO_AUTORIZADO = "0", "1", "2", "3", "4"
VOUCHER_VALIDITY = {  # estadoCp: (its name, what it means)
    CP_NO_EXISTE: ("NO EXISTE", "comprobante no informado a SUNAT"),
    CP_ACEPTADO: ("ACEPTADO", "comprobante aceptado por SUNAT"),
    CP_ANULADO: ("ANULADO", "comunicado en una baja"),
    CP_AUTORIZADO: ("AUTORIZADO", "con autorización de imprenta"),
    CP_NO_AUTORIZADO: ("NO AUTORIZADO", "sin autorización de imprenta"),
}
VALID_VOUCHER_STATES = frozenset({CP_ACEPTADO, CP_AUTORIZADO})
RUC_ACTIVO, HABIDO = "00", "00"
TAXPAYER_STATES = {RUC_ACTIVO: "ACTIVO", "01": "BAJA PROVISIONAL", "02": "BAJA PROV. POR OFICIO",
                   "03": "SUSPENSION TEMPORAL", "10": "BAJA DEFINITIVA", "11": "BAJA DE OFICIO",
                   "22": "INHABILITADO-VENT.UNICA"}
ADDRESS_CONDITIONS = {HABIDO: "HABIDO", "09": "PENDIENTE", "11": "POR VERIFICAR", "12": "NO HABIDO",
                      "20": "NO HALLADO"}


# ---------------------------------------------------------------- 03 units of measure

UNIDAD, SERVICIO, KILOGRAMO, LITRO = "NIU", "ZZ", "KGM", "LTR"
# The units shops use, with the names a Peruvian shop gives them (written from SUNAT's published lists of units:
# the UN/ECE descriptions of cat_03.xml are English). Most used first: the windows offer them in this order.
UNITS = {
    UNIDAD: "unidad", SERVICIO: "servicio", KILOGRAMO: "kilogramo", "GRM": "gramo", LITRO: "litro",
    "MTR": "metro", "BX": "caja", "PK": "paquete", "DZN": "docena", "HUR": "hora", "BG": "bolsa", "SA": "saco",
    "RO": "rollo", "BO": "botella", "CA": "lata", "SET": "juego", "PR": "par", "CEN": "ciento", "MIL": "millar",
    "GLL": "galón", "MLT": "mililitro", "TNE": "tonelada", "CMT": "centímetro", "MTK": "metro cuadrado",
    "MTQ": "metro cúbico", "DAY": "día", "MON": "mes", "ANN": "año", "WEE": "semana", "MIN": "minuto",
    "KT": "kit", "H87": "pieza", "C62": "unidad de conteo", "UM": "millón de unidades", "LBR": "libra",
    "ONZ": "onza", "MGM": "miligramo", "KTM": "kilómetro", "MMT": "milímetro", "INH": "pulgada", "FOT": "pie",
    "YRD": "yarda", "CMK": "centímetro cuadrado", "FTK": "pie cuadrado", "YDK": "yarda cuadrada",
    "CMQ": "centímetro cúbico", "FTQ": "pie cúbico", "GLI": "galón inglés", "HLT": "hectolitro",
    "STN": "tonelada corta", "LTN": "tonelada larga", "PA": "sobre", "JR": "frasco", "TU": "tubo", "CY": "cilindro",
    "DR": "tambor", "BLL": "barril", "BJ": "balde", "CT": "cartón", "CR": "jaba", "BE": "fardo", "BK": "canasta",
    "PU": "bandeja", "HD": "media docena", "DZP": "docena de paquetes", "GRO": "gruesa", "RM": "resma",
    "ST": "pliego", "LEF": "hoja", "PG": "placa", "4A": "bobina", "U2": "tableta", "AV": "cápsula", "CU": "vaso",
    "JG": "jarra", "PF": "paleta", "CH": "contenedor", "CS": "estuche", "DS": "exhibidor", "VI": "vial",
    "KWH": "kilovatio hora", "MWH": "megavatio hora",
}


class _CatalogueUnits(AbstractSet[str]):
    """Every code of catalogue 03, read from app/data on first use (not at import): the units operation 1 accepts
    (issue 37: SUNAT's sheets accept each of them, SA, RO and FOT as much as NIU)."""

    def __contains__(self, code: object) -> bool:
        return isinstance(code, str) and code in unit_catalogue()

    def __iter__(self) -> Iterator[str]:
        return iter(unit_catalogue())

    def __len__(self) -> int:
        return len(unit_catalogue())


UNITS_ACCEPTED: AbstractSet[str] = _CatalogueUnits()
# How shops write units on their lists and spreadsheets (folded: upper case, no accents), read as the code. A shop
# spelling wins over a UN/ECE code written the same: «KG» is a kilogram, not a keg; «MT» a metre, not a mat; «CJ» a
# box, not a cone; «TN» a tonne, not a tin; «OZ», «PZ», «KGS», «MTS», «SCO» and «BLD» likewise.
UNIT_SPELLINGS = {
    "UND": UNIDAD, "UNID": UNIDAD, "UNIDAD": UNIDAD, "UNIDADES": UNIDAD, "UN": UNIDAD, "U": UNIDAD,
    "SERV": SERVICIO, "SERVICIO": SERVICIO, "SERVICIOS": SERVICIO,
    "KG": KILOGRAMO, "KGS": KILOGRAMO, "KILO": KILOGRAMO, "KILOS": KILOGRAMO, "KILOGRAMO": KILOGRAMO,
    "KILOGRAMOS": KILOGRAMO, "GR": "GRM", "GRS": "GRM", "G": "GRM", "GRAMO": "GRM", "GRAMOS": "GRM",
    "LT": LITRO, "LTS": LITRO, "L": LITRO, "LITRO": LITRO, "LITROS": LITRO, "ML": "MLT", "MILILITRO": "MLT",
    "MT": "MTR", "MTS": "MTR", "M": "MTR", "METRO": "MTR", "METROS": "MTR", "CM": "CMT", "MM": "MMT", "KM": "KTM",
    "M2": "MTK", "M3": "MTQ", "CJ": "BX", "CAJ": "BX", "CAJA": "BX", "CAJAS": "BX", "PQT": "PK", "PAQ": "PK",
    "PAQUETE": "PK", "PAQUETES": "PK", "BLS": "BG", "BOLSA": "BG", "BOLSAS": "BG", "SCO": "SA", "SACO": "SA",
    "SACOS": "SA", "ROL": "RO", "ROLLO": "RO", "ROLLOS": "RO", "BOT": "BO", "BOTELLA": "BO", "BOTELLAS": "BO",
    "LAT": "CA", "LATA": "CA", "LATAS": "CA", "DOC": "DZN", "DOCENA": "DZN", "DOCENAS": "DZN", "CTO": "CEN",
    "CIENTO": "CEN", "MILLAR": "MIL", "JGO": "SET", "JUEGO": "SET", "PZA": "H87", "PZ": "H87", "PIEZA": "H87",
    "PIEZAS": "H87", "GLN": "GLL", "GAL": "GLL", "GALON": "GLL", "GALONES": "GLL", "HR": "HUR",
    "HRS": "HUR", "HORA": "HUR", "HORAS": "HUR", "DIA": "DAY", "DIAS": "DAY", "MES": "MON", "MESES": "MON",
    "ANO": "ANN", "TN": "TNE", "TON": "TNE", "TONELADA": "TNE", "LB": "LBR", "LIBRA": "LBR", "OZ": "ONZ",
    "ONZA": "ONZ", "FCO": "JR", "FRASCO": "JR", "BLD": "BJ", "BALDE": "BJ", "RSM": "RM", "RESMA": "RM",
    "PULG": "INH", "PULGADA": "INH", "YD": "YRD", "YARDA": "YRD", "TAB": "U2", "TABLETA": "U2", "CAP": "AV",
    "CAPSULA": "AV", "FDO": "BE", "FARDO": "BE", "JABA": "CR", "PAR": "PR", "SOBRE": "PA",
}
UNITS_FILE = "sunat-unidades.csv"  # app/data: every code of catalogue 03 (scripts/make_sunat_units.py)
_UNIT_HEADER = ("# Catálogo 03 de SUNAT (unidades de medida, UN/ECE rec. 20): todos sus códigos con la descripción de "
                "su archivo.\n# Generated from SUNAT's cat_03.xml (validation files, commons/cpe/catalogo) by "
                "scripts/make_sunat_units.py;\n# the header row «Code» is left out, a code written twice keeps its "
                "first description.\n")


@functools.cache
def unit_catalogue() -> dict[str, str]:
    """Every code of catalogue 03 with the (English) description SUNAT's file gives it."""
    with open(package_data(UNITS_FILE), encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(line for line in handle if not line.startswith("#"))
        return {row["codigo"]: row["descripcion"] for row in rows}


def is_unit(code: str) -> bool:
    """Whether `code` is a code of catalogue 03."""
    return code in unit_catalogue()


def unit_name(code: str) -> str:
    """A unit's Spanish name; for a unit shops rarely use, SUNAT's description; the code itself when unknown."""
    return UNITS.get(code) or unit_catalogue().get(code) or code


def _folded(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.strip().upper())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).rstrip(".")


def unit_code(typed: str) -> str | None:
    """The catalogue 03 code of a unit as a shop writes it («UND», «Kg.», «litros», «NIU»), or None when it is
    neither a shop spelling nor a code of the catalogue."""
    folded = _folded(typed)
    code = UNIT_SPELLINGS.get(folded)
    if code is not None:
        return code
    return folded if is_unit(folded) else None


def units_file_text(catalogue_xml: Path) -> str:
    """The text of app/data/sunat-unidades.csv made from SUNAT's cat_03.xml (scripts/make_sunat_units.py)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    codes: dict[str, str] = {}
    for entry in etree.parse(str(catalogue_xml), parser).getroot().iter("c"):
        code, text = (entry.get("id") or "").strip(), " ".join((entry.text or "").split())
        if code and code != "Code" and code not in codes:
            codes[code] = text
    out = io.StringIO()
    out.write(_UNIT_HEADER)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("codigo", "descripcion"))
    for code in sorted(codes):
        writer.writerow((code, codes[code]))
    return out.getvalue()
