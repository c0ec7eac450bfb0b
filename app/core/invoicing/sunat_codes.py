"""What SUNAT's response and fault codes mean: one home for their classification (docs/sunat.md).

- 0: accepted; with notes in the CDR (cbc:Note) it is accepted with observations;
- 0100-1999: an exception of the submission (credentials, file name, zip…): nothing was registered, the
  number is not spent; fix and send the same voucher again;
- 2000-3999: the voucher is rejected (its number is spent: a corrected voucher needs a new one);
- 4000 and up: observations (the voucher is accepted).
- 1032 ("rechazado previamente") and 1033 ("registrado previamente"): SUNAT already holds the voucher.
  They are exceptions in the range above but mean "ask for its CDR" (getStatusCdr), never "rejected",
  never "send again blindly".
"""

from __future__ import annotations

from app.core.invoicing.statuses import ACEPTADO, NO_ENVIADO, OBSERVADO, RECHAZADO, CdrStatus

ACCEPTED_CODE = "0"
REJECTION_RANGE = range(2000, 4000)
OBSERVATION_FROM = 4000
REGISTERED_BEFORE = "1033"
REJECTED_BEFORE = "1032"
HELD_BY_SUNAT = frozenset({REJECTED_BEFORE, REGISTERED_BEFORE})  # reconcile with getStatusCdr


def number(code: str | int | None) -> int | None:
    """The code's value ("0102" → 102), or None when it is not a number (an empty or textual code)."""
    text = str(code if code is not None else "").strip()
    return int(text) if text.isdigit() else None


def is_accepted(code: str | int | None) -> bool:
    return number(code) == 0


def is_exception(code: str | int | None) -> bool:
    """0100-1999 (and any code below 2000 but 0): the submission failed, nothing was registered."""
    value = number(code)
    return value is not None and 0 < value < REJECTION_RANGE.start


def is_rejection(code: str | int | None) -> bool:
    """2000-3999: the voucher itself is rejected."""
    value = number(code)
    return value is not None and value in REJECTION_RANGE


def is_observation(code: str | int | None) -> bool:
    """4000 and up: an observation; the voucher is accepted."""
    value = number(code)
    return value is not None and value >= OBSERVATION_FROM


def is_held_by_sunat(code: str | int | None) -> bool:
    """1032/1033: SUNAT has this voucher already; fetch its CDR and retry later if it is not there yet."""
    value = number(code)
    return value is not None and f"{value:04d}" in HELD_BY_SUNAT


def cdr_status(code: str | int | None, has_notes: bool = False) -> CdrStatus | None:
    """A CDR's status: aceptado, observado or rechazado; None for an exception (fix and send again)."""
    if is_accepted(code):
        return OBSERVADO if has_notes else ACEPTADO
    if is_observation(code):
        return OBSERVADO
    if is_rejection(code):
        return RECHAZADO
    return None


def refusal_status(code: str | int | None) -> str:
    """The outcome of a submission SUNAT refused with `code`: rechazado (number spent) or no_enviado."""
    return RECHAZADO if is_rejection(code) else NO_ENVIADO


def duplicate_fault(registered_code: str | int) -> str:
    """The fault SUNAT answers to a voucher it registered before: 1032 when that one was rejected, else 1033."""
    return REJECTED_BEFORE if is_rejection(registered_code) else REGISTERED_BEFORE


# ---------------------------------------------------------------- detracción (SPOT) catalogues

# Catalogue 54: code → (what it covers, default rate in percent). The rates are those of SUNAT's catalogue file
# (../shared/sunat/validation/commons/cpe/catalogo/cat_54.xml), except the services of Anexo 3 of RS 183-2004/SUNAT
# whose rates RS 071-2018/SUNAT raised from 2018-04-01 (012, 020, 022 and 037 to 12 %). A request may always state
# its own `detraccion.porcentaje`.
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
# Catalogue 59: means of payment of the deposit (001 «Depósito en cuenta» by default).
MEDIOS_DE_PAGO = frozenset({"001", "002", "003", "004", "005", "006", "007", "008", "009", "010", "011", "012",
                            "013", "101", "102", "103", "104", "105", "106", "107", "108", "999"})
DETRACCION_OPERATION = "1001"  # catalogue 51: «Operación sujeta a detracción»
DETRACCION_LEGEND = ("2006", "Operación sujeta a detracción")  # catalogue 52
DETRACCION_THRESHOLD = "700"  # soles: the SPOT applies to operations above this amount

# Catalogue 51: the operation types Yupana issues (cbc:InvoiceTypeCode/@listID). 0202 (hospedaje) and 0205 (paquete
# turístico) need the guest's passport data on each line and are not offered; neither is a boleta of them.
OPERATION_TYPES = {
    "0101": "Venta interna", "0200": "Exportación de bienes",
    "0201": "Exportación de servicios: prestación realizada íntegramente en el país",
    "0203": "Exportación de servicios: transporte de navieras",
    "0204": "Exportación de servicios: servicios a naves y aeronaves de bandera extranjera",
    "0206": "Exportación de servicios: servicios complementarios al transporte de carga",
    "0207": "Exportación de servicios: suministro de energía eléctrica a sujetos domiciliados en ZED",
    "0208": "Exportación de servicios: prestación realizada parcialmente en el extranjero",
    DETRACCION_OPERATION: "Operación sujeta a detracción",
}
DOMESTIC_SALE = "0101"
EXPORT_OF_GOODS = "0200"
# Exports whose customer SUNAT's sheets refuse with a RUC (2800); for 0203, 0206, 0207 and 0208 either is accepted.
EXPORTS_TO_NON_RESIDENTS = frozenset({"0200", "0201", "0204"})
