"""Guías de remisión electrónicas (GRE 2.0): remitente (09, series T###) and transportista (31, series V###), UBL
2.1 DespatchAdvice told apart by cbc:DespatchAdviceTypeCode; judged by SUNAT's ValidaExprRegGreRemitente /
ValidaExprRegGreTransportista sheets; their own request model (`GuiaRemisionRequest`, Spanish names in the contract's
style: docs/contract.md).

The builder refuses, before anything is stored or sent, what SUNAT's GRE sheets would reject, naming the field and
SUNAT's code (../shared/sunat/README.md, «GRE notes» and its mutation→code table): the motive and transport mode
(catalogues 20 and 18), the ubigeos (catalogue 13), plates of 6-8 letters or digits, licences of 9-10, the carrier's
RUC and MTC registration, the drivers and vehicles of a private transport, the start date, the weight, the
destinatario a motive needs, the establishment codes of a transfer between establishments, the DAM of an import or
export, the remitente of a transportista's guía. The XML is app.core.invoicing.documents.guia_ubl's.
"""

from __future__ import annotations

import re
from datetime import date, time
from typing import Any, Literal

from pydantic import Field

from app.core.contract import ContractModel, Emisor, Quantity, extra
from app.core.errors import not_configured
from app.core.invoicing import prevalidation as pv
from app.core.invoicing.documents.guia_ubl import (
    Address,
    Carrier,
    Container,
    Despatch,
    DespatchLine,
    Driver,
    Port,
    Related,
    Vehicle,
    render,
)
from app.core.invoicing.documents.kind import (
    Channel,
    ClientFactory,
    CompanyOf,
    DocumentType,
    Identity,
    NameOf,
    Numbering,
)
from app.core.invoicing.namespaces import DESPATCH_ADVICE
from app.core.invoicing.sunat_catalogues import (
    AIRPORT,
    CUSTOMS_DOCUMENTS,
    DNI,
    DOCUMENT_TYPES,
    FREIGHT_PAYERS,
    GUIA_REMITENTE,
    GUIA_TRANSPORTISTA,
    IDENTITY_DOCUMENTS,
    INDICATOR_M1L,
    INDICATOR_TOTAL_DAM,
    ISSUED_DOCUMENTS,
    MOTIVES_OF_CUSTOMS,
    MOTIVES_TO_ANOTHER,
    MOTIVES_TO_ONESELF,
    MOTIVES_WITH_SUPPLIER,
    MOTIVO_DEVOLUCION,
    MOTIVO_ENTRE_ESTABLECIMIENTOS,
    MOTIVO_EXPORTACION,
    MOTIVO_IMPORTACION,
    MOTIVO_OTROS,
    PORT,
    RUC,
    SALE_DOCUMENTS,
    SALE_MOTIVES,
    TRANSFER_MOTIVES,
    TRANSPORT_DOCUMENTS,
    TRANSPORT_MODES,
    TRANSPORTE_PRIVADO,
    TRANSPORTE_PUBLICO,
    UNITS_ACCEPTED,
    WEIGHT_UNITS,
    unit_code,
)
from app.core.invoicing.ubl import Party
from app.core.platform import clock, ubigeo
from app.core.platform.identifiers import ruc_problem

PLATE = re.compile(r"^(?!0+$)[0-9A-Z]{6,8}$")  # SUNAT's 2567: no hyphen
LICENCE = re.compile(r"^[0-9A-Z]{9,10}$")  # SUNAT's 2573
MTC = re.compile(r"^[0-9A-Z]{1,20}$")  # SUNAT's 4392: letters and digits only
TUC = re.compile(r"^(?!0+$)[0-9A-Z]{10,15}$")  # the vehicle's certificate (SUNAT's 4399 asks it of a transportista)
CONTAINER = re.compile(r"^[0-9A-Za-z]{1,11}$")  # SUNAT's 4071
SEAL = re.compile(r"^(?!0+$)[0-9A-Za-z]{1,20}$")  # SUNAT's 4074
ESTABLISHMENT = re.compile(r"^[0-9]{4}$")
# A related document's number as SUNAT's 3441 reads it, by catalogue 61 type (the DAM's by motive, below).
RELATED_NUMBERS = {
    "01": re.compile(r"^([F][A-Z0-9]{3}|[0-9]{1,4}|E001)-(?!0+$)[0-9]{1,8}$"),
    "03": re.compile(r"^([B][A-Z0-9]{3}|[0-9]{1,4}|EB01)-(?!0+$)[0-9]{1,8}$"),
    "04": re.compile(r"^([L][A-Z0-9]{3}|[0-9]{1,4}|E001)-(?!0+$)[0-9]{1,8}$"),
    GUIA_REMITENTE: re.compile(r"^([T][A-Z0-9]{3}|[0-9]{1,4}|EG01|EG02)-(?!0+$)[0-9]{1,8}$"),
    "12": re.compile(r"^[a-zA-Z0-9-]{1,20}-[a-zA-Z0-9-]{1,20}$"),
    "48": re.compile(r"^[0-9]{1,4}-(?!0+$)[0-9]{1,7}$"),
    "49": re.compile(r"^(?!0+$)[0-9]{1,15}$"),
    "80": re.compile(r"^(?!0+$)[0-9]{1,15}$"),
}
# The DAM's regime in its number: 10 importación, 40 exportación (DS: 18 and 48).
CUSTOMS_REGIMES = {(MOTIVO_IMPORTACION, "50"): "10", (MOTIVO_EXPORTACION, "50"): "40",
                   (MOTIVO_IMPORTACION, "52"): "18", (MOTIVO_EXPORTACION, "52"): "48"}
MAX_SECONDARY_VEHICLES = 2  # SUNAT's sheets: at most two secondary vehicles and two secondary drivers
MAX_SECONDARY_DRIVERS = 2


# ---------------------------------------------------------------- the request (Spanish names, the contract's style)

class GuiaParte(ContractModel):
    tipo_documento: str = RUC  # catalogue 06
    numero_documento: str
    razon_social: str


class GuiaDireccion(ContractModel):
    ubigeo: str  # catalogue 13 (INEI)
    direccion: str
    codigo_establecimiento: str | None = None  # four digits, as registered in SUNAT (motive 04 needs it)
    ruc: str | None = None  # whose establishment it is; the issuer's by default


class GuiaTransportista(ContractModel):
    ruc: str | None = None  # public transport: the carrier (a transportista's own guía: the issuer)
    razon_social: str | None = None
    registro_mtc: str | None = None  # the carrier's MTC registration number


class GuiaVehiculo(ContractModel):
    placa: str
    tuc: str | None = None  # tarjeta única de circulación / certificado de habilitación vehicular


class GuiaConductor(ContractModel):
    tipo_documento: str = DNI
    numero_documento: str
    nombres: str
    apellidos: str
    licencia: str


class GuiaDocumentoRelacionado(ContractModel):
    tipo: str  # catalogue 61: 01 factura, 03 boleta, 50 DAM, …
    numero: str  # F001-25, 118-2026-10-000123
    emisor_ruc: str | None = None  # the issuer of a factura or boleta; the guía's issuer by default


class GuiaContenedor(ContractModel):
    numero: str
    precinto: str


class GuiaPuerto(ContractModel):
    tipo: Literal["puerto", "aeropuerto"] = "puerto"
    codigo: str  # catalogue 63 (ports) or 64 (airports): CLL, LIM
    nombre: str


class GuiaItem(ContractModel):
    descripcion: str
    cantidad: Quantity
    unidad: str | None = None  # catalogue 03; NIU by default
    codigo: str | None = None


class GuiaRemisionRequest(ContractModel):
    tipo: str  # catalogue 01: 09 (remitente) or 31 (transportista), the registry's key
    serie: str
    numero: int
    emisor: Emisor
    destinatario: GuiaParte
    fecha_inicio_traslado: date
    peso_bruto: Quantity
    partida: GuiaDireccion
    llegada: GuiaDireccion
    items: list[GuiaItem]
    unidad_peso: str = "KGM"  # KGM or TNE
    fecha_emision: date | None = extra()
    hora_emision: time | None = extra()
    observaciones: str | None = extra()
    motivo_traslado: str | None = None  # remitente: catalogue 20
    descripcion_motivo: str | None = None  # motive 13 (otros) needs it
    modalidad_transporte: str | None = None  # remitente: catalogue 18, 01 público or 02 privado
    vehiculo_m1_l: bool = False  # vehicles of categories M1 or L (cars, motorcycles): no plate or carrier needed
    numero_bultos: int | None = None  # importación / exportación
    proveedor: GuiaParte | None = None  # compra (02) and recojo (07): who sells or transforms the goods
    remitente: GuiaParte | None = None  # transportista: who sends the goods
    pagador_flete: Literal["remitente", "subcontratador", "tercero"] | None = None  # transportista
    pagador: GuiaParte | None = None  # transportista, pagador_flete «tercero»: who pays the freight
    transportista: GuiaTransportista | None = None
    vehiculos: list[GuiaVehiculo] = Field(default_factory=list)  # the first is the principal one
    conductores: list[GuiaConductor] = Field(default_factory=list)  # the first is the principal one
    documentos_relacionados: list[GuiaDocumentoRelacionado] = Field(default_factory=list)
    contenedores: list[GuiaContenedor] = Field(default_factory=list)
    puerto: GuiaPuerto | None = None  # importación: where the goods land; exportación: where they leave


# ---------------------------------------------------------------- the checks (SUNAT's codes)

def _check_party(problems: pv.Problems, field: str, party: GuiaParte) -> None:
    if party.tipo_documento not in IDENTITY_DOCUMENTS:
        problems.add(f"{field}.tipo_documento", f"El tipo de documento «{party.tipo_documento}» del campo "
                     f"«{field}.tipo_documento» no está en el catálogo 06 de SUNAT.", "2760")
    elif party.tipo_documento == RUC and ruc_problem(party.numero_documento):
        problems.add(f"{field}.numero_documento", f"El RUC «{party.numero_documento}» del campo "
                     f"«{field}.numero_documento» no es válido: {ruc_problem(party.numero_documento)}.", "2758")
    if not party.razon_social:
        problems.add(f"{field}.razon_social", f"El campo «{field}.razon_social» es obligatorio.", "2759")


def _check_address(problems: pv.Problems, field: str, address: GuiaDireccion, code: str) -> None:
    if ubigeo.lookup(address.ubigeo) is None:
        problems.add(f"{field}.ubigeo", f"El ubigeo «{address.ubigeo}» del campo «{field}.ubigeo» no está en el "
                     "catálogo 13 de SUNAT (INEI).", code)
    if len(address.direccion) < 3:
        problems.add(f"{field}.direccion", f"El campo «{field}.direccion» debe tener al menos 3 caracteres.", "2577")
    if address.codigo_establecimiento is not None and not ESTABLISHMENT.match(address.codigo_establecimiento):
        problems.add(f"{field}.codigo_establecimiento", f"El código de establecimiento «{address.codigo_establecimiento}»"
                     f" del campo «{field}.codigo_establecimiento» debe tener 4 dígitos (0000 el domicilio fiscal).")


def _check_motive(problems: pv.Problems, request: GuiaRemisionRequest, issuer: str) -> None:
    motive = request.motivo_traslado
    if not motive:
        problems.add("motivo_traslado", "El campo «motivo_traslado» es obligatorio en una guía de remitente "
                     "(catálogo 20: 01 venta, 02 compra, 04 traslado entre establecimientos, …).", "3404")
        return
    if motive not in TRANSFER_MOTIVES:
        problems.add("motivo_traslado", f"El motivo de traslado «{motive}» del campo «motivo_traslado» no está en el "
                     f"catálogo 20 de SUNAT ({', '.join(TRANSFER_MOTIVES)}).", "3405")
        return
    to_oneself = request.destinatario.numero_documento == issuer
    if motive in MOTIVES_TO_ONESELF and not to_oneself:
        problems.add("destinatario.numero_documento", f"Con el motivo {motive} ({TRANSFER_MOTIVES[motive]}) el "
                     f"destinatario es el mismo remitente: use el RUC {issuer} en «destinatario.numero_documento».",
                     "2554")
    if motive in MOTIVES_TO_ANOTHER and to_oneself:
        problems.add("destinatario.numero_documento", f"Con el motivo {motive} ({TRANSFER_MOTIVES[motive]}) el "
                     "destinatario no puede ser el mismo remitente.", "2555")
    if motive == MOTIVO_OTROS and not request.descripcion_motivo:
        problems.add("descripcion_motivo", "Con el motivo 13 (Otros) el campo «descripcion_motivo» es obligatorio.",
                     "3457")
    if motive == MOTIVO_ENTRE_ESTABLECIMIENTOS:
        for field, address in (("partida", request.partida), ("llegada", request.llegada)):
            if not address.codigo_establecimiento:
                problems.add(f"{field}.codigo_establecimiento", "Con el motivo 04 (traslado entre establecimientos) "
                             f"el campo «{field}.codigo_establecimiento» es obligatorio.",
                             "3365" if field == "partida" else "3369")
    if motive in MOTIVES_OF_CUSTOMS:
        _check_customs(problems, request, motive)


def _check_customs(problems: pv.Problems, request: GuiaRemisionRequest, motive: str) -> None:
    if not any(doc.tipo in CUSTOMS_DOCUMENTS for doc in request.documentos_relacionados):
        problems.add("documentos_relacionados", f"Con el motivo {motive} ({TRANSFER_MOTIVES[motive]}) indique la "
                     "DAM (tipo 50) o la declaración simplificada (tipo 52) en «documentos_relacionados».", "3440")
    if request.numero_bultos is None and not request.contenedores:
        problems.add("numero_bultos", f"Con el motivo {motive} ({TRANSFER_MOTIVES[motive]}) indique "
                     "«numero_bultos» o los «contenedores».", "3419")
    if request.puerto is None:
        problems.add("puerto", f"Con el motivo {motive} ({TRANSFER_MOTIVES[motive]}) indique el «puerto» (o el "
                     "aeropuerto, en una importación) de embarque o desembarque.",
                     "3365" if motive == MOTIVO_IMPORTACION else "3369")
    elif motive == MOTIVO_EXPORTACION and request.puerto.tipo != "puerto":
        problems.add("puerto.tipo", "Una exportación sale por un puerto: «puerto.tipo» debe ser «puerto».", "3369")
    for index, box in enumerate(request.contenedores):
        if not CONTAINER.match(box.numero):
            problems.add(f"contenedores[{index}].numero", f"El contenedor «{box.numero}» debe tener de 1 a 11 letras o "
                         "dígitos.", "4071")
        if not SEAL.match(box.precinto):
            problems.add(f"contenedores[{index}].precinto", f"El precinto «{box.precinto}» debe tener de 1 a 20 "
                         "letras o dígitos.", "4074")


def _check_transport(problems: pv.Problems, request: GuiaRemisionRequest, issuer: str) -> None:
    mode = request.modalidad_transporte
    if not mode:
        problems.add("modalidad_transporte", "El campo «modalidad_transporte» es obligatorio en una guía de "
                     "remitente: 01 (transporte público) o 02 (transporte privado).", "2532")
    elif mode not in TRANSPORT_MODES:
        problems.add("modalidad_transporte", f"La modalidad «{mode}» del campo «modalidad_transporte» debe ser 01 "
                     "(transporte público) o 02 (transporte privado).", "2773")
    elif mode == TRANSPORTE_PUBLICO and not request.vehiculo_m1_l:
        _check_carrier(problems, request.transportista, issuer)
    elif mode == TRANSPORTE_PRIVADO and not request.vehiculo_m1_l:
        _check_vehicles_and_drivers(problems, request)


def _check_carrier(problems: pv.Problems, carrier: GuiaTransportista | None, issuer: str) -> None:
    if carrier is None or not carrier.ruc:
        problems.add("transportista.ruc", "En transporte público indique el RUC del transportista "
                     "(«transportista.ruc»).", "2558")
        return
    if ruc_problem(carrier.ruc):
        problems.add("transportista.ruc", f"El RUC «{carrier.ruc}» del campo «transportista.ruc» no es válido: "
                     f"{ruc_problem(carrier.ruc)}.", "2561")
    elif carrier.ruc == issuer:
        problems.add("transportista.ruc", "En transporte público el transportista no puede ser el remitente: use "
                     "transporte privado (02) si lleva usted mismo los bienes.", "2560")
    if not carrier.razon_social:
        problems.add("transportista.razon_social", "El campo «transportista.razon_social» es obligatorio.", "2563")
    _check_mtc(problems, carrier)


def _check_mtc(problems: pv.Problems, carrier: GuiaTransportista | None) -> None:
    if carrier is None or not carrier.registro_mtc:
        problems.add("transportista.registro_mtc", "Indique el número de registro MTC del transportista "
                     "(«transportista.registro_mtc»).", "4391")
    elif not MTC.match(carrier.registro_mtc):
        problems.add("transportista.registro_mtc", f"El registro MTC «{carrier.registro_mtc}» del campo "
                     "«transportista.registro_mtc» debe tener solo letras y dígitos, sin guiones.", "4392")


def _check_vehicles_and_drivers(problems: pv.Problems, request: GuiaRemisionRequest, tuc: bool = False) -> None:
    if not request.vehiculos:
        problems.add("vehiculos", "Indique al menos un vehículo (su placa) en «vehiculos».", "2566")
    elif len(request.vehiculos) > 1 + MAX_SECONDARY_VEHICLES:
        problems.add("vehiculos", "Una guía lleva un vehículo principal y a lo más dos secundarios.", "3355")
    for index, vehicle in enumerate(request.vehiculos):
        if not PLATE.match(vehicle.placa):
            problems.add(f"vehiculos[{index}].placa", f"La placa «{vehicle.placa}» del campo «vehiculos[{index}].placa» "
                         "debe tener de 6 a 8 letras o dígitos, sin guion (p. ej. ABC123).", "2567")
        if tuc and (vehicle.tuc is None or not TUC.match(vehicle.tuc)):
            problems.add(f"vehiculos[{index}].tuc", f"Indique en «vehiculos[{index}].tuc» la tarjeta única de "
                         "circulación o el certificado de habilitación del vehículo (10 a 15 letras o dígitos).",
                         "4399")
    if not request.conductores:
        problems.add("conductores", "Indique al menos un conductor en «conductores».", "3357")
    elif len(request.conductores) > 1 + MAX_SECONDARY_DRIVERS:
        problems.add("conductores", "Una guía lleva un conductor principal y a lo más dos secundarios.", "3358")
    for index, driver in enumerate(request.conductores):
        if not driver.licencia:
            problems.add(f"conductores[{index}].licencia", f"El campo «conductores[{index}].licencia» es "
                         "obligatorio.", "2572")
        elif not LICENCE.match(driver.licencia):
            problems.add(f"conductores[{index}].licencia", f"La licencia «{driver.licencia}» del campo "
                         f"«conductores[{index}].licencia» debe tener de 9 a 10 letras o dígitos.", "2573")


def _check_related(problems: pv.Problems, request: GuiaRemisionRequest, issuer: str) -> None:
    for index, doc in enumerate(request.documentos_relacionados):
        field = f"documentos_relacionados[{index}]"
        if doc.tipo not in TRANSPORT_DOCUMENTS or doc.tipo == GUIA_TRANSPORTISTA:
            problems.add(f"{field}.tipo", f"El tipo «{doc.tipo}» del campo «{field}.tipo» no es un documento que una "
                         f"guía pueda citar (catálogo 61: {', '.join(sorted(TRANSPORT_DOCUMENTS))}).", "2692")
            continue
        pattern = _related_pattern(doc.tipo, request.motivo_traslado)
        if pattern is not None and not pattern.match(doc.numero):
            problems.add(f"{field}.numero", f"El número «{doc.numero}» del campo «{field}.numero» no tiene la forma "
                         f"de un documento de tipo {doc.tipo} ({TRANSPORT_DOCUMENTS[doc.tipo]}).", "3441")
        if doc.tipo in CUSTOMS_DOCUMENTS and request.motivo_traslado not in MOTIVES_OF_CUSTOMS:
            problems.add(f"{field}.tipo", "Una DAM o declaración simplificada solo se cita con los motivos 08 "
                         "(importación) y 09 (exportación).", "3445")
        _check_related_issuer(problems, request, doc, field, issuer)


def _check_related_issuer(problems: pv.Problems, request: GuiaRemisionRequest, doc: GuiaDocumentoRelacionado,
                          field: str, issuer: str) -> None:
    """Who issued a related sale document, as SUNAT's 3381 and 3442 read it for the guía's motive."""
    expected = _related_issuer(request, doc.tipo, issuer)
    if expected is None or (doc.emisor_ruc or expected[0]) == expected[0]:
        return
    problems.add(f"{field}.emisor_ruc", f"El documento {doc.numero} (campo «{field}.emisor_ruc») debe ser emitido "
                 f"por {expected[1]} (RUC {expected[0]}) con el motivo {request.motivo_traslado}.", expected[2])


def _related_issuer(request: GuiaRemisionRequest, tipo: str, issuer: str) -> tuple[str, str, str] | None:
    """(RUC, who, SUNAT's code) of whoever must have issued a related document of type `tipo`; None: anyone."""
    motive = request.motivo_traslado
    if tipo == GUIA_REMITENTE or (motive in SALE_MOTIVES and tipo in SALE_DOCUMENTS):
        return issuer, "el remitente", "3381"
    if motive == MOTIVO_DEVOLUCION and tipo in SALE_DOCUMENTS:
        return request.destinatario.numero_documento, "el destinatario", "3381"
    if motive in MOTIVES_WITH_SUPPLIER and tipo in SALE_DOCUMENTS and request.proveedor is not None:
        return request.proveedor.numero_documento, "el proveedor", "3442"
    return None


def _related_pattern(tipo: str, motive: str | None) -> re.Pattern[str] | None:
    if tipo in CUSTOMS_DOCUMENTS:
        regime = CUSTOMS_REGIMES.get((motive or "", tipo), "[0-9]{2}")
        return re.compile(rf"^[0-9]{{3}}-[0-9]{{4}}-{regime}-[0-9]{{1,6}}$")
    return RELATED_NUMBERS.get(tipo)


def _check_common(problems: pv.Problems, request: GuiaRemisionRequest, kind: DocumentType, fecha: date) -> None:
    if not kind.numbering.accepts(request.serie, request.numero):
        problems.add("serie", f"La serie-número «{request.serie}-{request.numero}» no es de una {kind.name.lower()}: "
                     f"use {kind.numbering.example[0]} y tres letras o dígitos (p. ej. {kind.numbering.example}).",
                     "1001")
    if request.fecha_inicio_traslado < fecha:
        problems.add("fecha_inicio_traslado", f"La fecha de inicio del traslado ({request.fecha_inicio_traslado}) no "
                     f"puede ser anterior a la fecha de emisión ({fecha}).", "3343")
    if request.peso_bruto <= 0 or request.unidad_peso not in WEIGHT_UNITS:
        problems.add("peso_bruto", f"El peso bruto debe ser mayor que cero, en KGM (kilogramos) o TNE (toneladas): "
                     f"se recibió {request.peso_bruto} {request.unidad_peso}.", "2523")
    _check_party(problems, "destinatario", request.destinatario)
    _check_address(problems, "partida", request.partida, "3363")
    _check_address(problems, "llegada", request.llegada, "3368")
    if not request.items:
        problems.add("items", "Una guía lleva al menos un bien en «items».", "2994")
    for index, item in enumerate(request.items):
        if item.cantidad <= 0:
            problems.add(f"items[{index}].cantidad", f"La cantidad del campo «items[{index}].cantidad» debe ser mayor "
                         "que cero.", "2580")
        if item.unidad is not None and _unit(item.unidad) is None:
            problems.add(f"items[{index}].unidad", f"La unidad «{item.unidad}» del campo «items[{index}].unidad» no "
                         "está en el catálogo 03 de SUNAT.", "2883")


def _unit(typed: str | None) -> str | None:
    if typed is None:
        return "NIU"
    found = unit_code(typed)
    return found if found in UNITS_ACCEPTED else None


def _check_remitente(problems: pv.Problems, request: GuiaRemisionRequest, issuer: str) -> None:
    _check_motive(problems, request, issuer)
    _check_transport(problems, request, issuer)
    _check_related(problems, request, issuer)
    if request.motivo_traslado in MOTIVES_WITH_SUPPLIER:
        if request.proveedor is None:
            problems.add("proveedor", f"Con el motivo {request.motivo_traslado} indique el «proveedor» de los bienes.",
                         "4375")
        else:
            _check_party(problems, "proveedor", request.proveedor)


def _check_transportista(problems: pv.Problems, request: GuiaRemisionRequest, issuer: str) -> None:
    if request.remitente is None:
        problems.add("remitente", "Una guía de transportista indica quién envía los bienes en «remitente».", "3383")
    else:
        _check_party(problems, "remitente", request.remitente)
        if request.remitente.numero_documento == issuer:
            problems.add("remitente.numero_documento", "El remitente no puede ser el mismo transportista que emite "
                         "la guía.", "2560")
    if request.pagador_flete is None:
        problems.add("pagador_flete", "Indique quién paga el flete en «pagador_flete»: remitente, subcontratador o "
                     "tercero.", "4388")
    elif request.pagador_flete == "tercero" and request.pagador is None:
        problems.add("pagador", "Si un tercero paga el flete, indíquelo en «pagador».", "4401")
    elif request.pagador is not None:
        _check_party(problems, "pagador", request.pagador)
    _check_mtc(problems, request.transportista)
    _check_vehicles_and_drivers(problems, request, tuc=True)
    for field in ("motivo_traslado", "modalidad_transporte"):
        if getattr(request, field):
            problems.add(field, f"El campo «{field}» es de la guía de remitente; la de transportista no lo lleva.")


# ---------------------------------------------------------------- the build

def build(request: GuiaRemisionRequest, company_of: CompanyOf, name_of: NameOf, checks: bool = True) -> Despatch:
    """The guía of `request`, or one 400 listing every problem (with SUNAT's code where it has one)."""
    kind = GUIA_REMITENTE_TYPE if request.tipo == GUIA_REMITENTE else GUIA_TRANSPORTISTA_TYPE
    company = company_of(request.emisor.ruc)
    problems = pv.Problems()
    if company is None:
        problems.add("emisor.ruc", f"No hay una empresa emisora con RUC «{request.emisor.ruc}»: regístrela primero.",
                     "1034")
        problems.raise_if_any()
    now = clock.now().astimezone(clock.PERU)
    fecha = request.fecha_emision or now.date()
    hora = (request.hora_emision or now.time()).replace(microsecond=0, tzinfo=None)
    if checks:
        _check_common(problems, request, kind, fecha)
        check = _check_remitente if request.tipo == GUIA_REMITENTE else _check_transportista
        check(problems, request, company.ruc)
        problems.raise_if_any()
    return _despatch(request, company, fecha, hora)


def _party(party: GuiaParte) -> Party:
    return Party(party.tipo_documento, party.numero_documento, party.razon_social)


def _address(address: GuiaDireccion, issuer: str) -> Address:
    return Address(address.ubigeo, address.direccion, address.ruc or issuer if address.codigo_establecimiento else None,
                   address.codigo_establecimiento)


def _indicators(request: GuiaRemisionRequest) -> list[str]:
    found = []
    if request.vehiculo_m1_l:
        found.append(INDICATOR_M1L)
    if request.motivo_traslado in MOTIVES_OF_CUSTOMS:
        found.append(INDICATOR_TOTAL_DAM)
    if request.pagador_flete:
        found.append(FREIGHT_PAYERS[request.pagador_flete])
    return found


def _related(request: GuiaRemisionRequest, doc: GuiaDocumentoRelacionado, issuer: str) -> Related:
    """A related document; a sale document's issuer is, unless given, whoever the motive says issued it."""
    if doc.tipo not in ISSUED_DOCUMENTS:
        return Related(doc.tipo, doc.numero, None)
    expected = _related_issuer(request, doc.tipo, issuer) if request.tipo == GUIA_REMITENTE else None
    return Related(doc.tipo, doc.numero, doc.emisor_ruc or (expected[0] if expected else issuer))


def _despatch(request: GuiaRemisionRequest, company: Any, fecha: date, hora: time) -> Despatch:
    issuer = company.ruc
    carrier = request.transportista
    port = request.puerto
    return Despatch(
        tipo=request.tipo, serie=request.serie, numero=request.numero, emisor_ruc=issuer,
        emisor_nombre=company.razon_social, receptor=_party(request.destinatario), fecha=fecha, hora=hora,
        fecha_inicio=request.fecha_inicio_traslado, peso_bruto=request.peso_bruto, unidad_peso=request.unidad_peso,
        partida=_address(request.partida, issuer), llegada=_address(request.llegada, issuer),
        lines=[DespatchLine(item.descripcion, item.cantidad, _unit(item.unidad) or "NIU", item.codigo)
               for item in request.items],
        motivo=request.motivo_traslado, descripcion_motivo=request.descripcion_motivo,
        modalidad=request.modalidad_transporte, observacion=request.observaciones,
        remitente=_party(request.remitente) if request.remitente else None,
        transportista=Carrier(carrier.ruc, carrier.razon_social, carrier.registro_mtc) if carrier else None,
        vehiculos=[Vehicle(vehicle.placa, vehicle.tuc) for vehicle in request.vehiculos],
        conductores=[Driver(driver.tipo_documento, driver.numero_documento, driver.nombres, driver.apellidos,
                            driver.licencia) for driver in request.conductores],
        relacionados=[_related(request, doc, issuer) for doc in request.documentos_relacionados],
        proveedor=_party(request.proveedor) if request.proveedor else None,
        pagador=_party(request.pagador) if request.pagador else None,
        indicadores=_indicators(request), bultos=request.numero_bultos,
        contenedores=[Container(box.numero, box.precinto) for box in request.contenedores],
        puerto=Port(AIRPORT if port.tipo == "aeropuerto" else PORT, port.codigo, port.nombre) if port else None)


class SendGre:
    """SUNAT's GRE REST platform, the sender of guías: the channel of the SUNAT client factory's guías
    (app.core.invoicing.gre_clients.GreClients, wired by the engine)."""

    def channel(self, sunat: ClientFactory, environment: str, ruc: str) -> Channel:
        gre = getattr(sunat, "gre", None)
        if gre is None:
            raise not_configured("Este Yupana no puede enviar guías de remisión a SUNAT.")
        channel: Channel = gre.channel(environment, ruc)
        return channel


SEND_GRE = SendGre()
IDENTITY = Identity("DespatchAdvice", DESPATCH_ADVICE, type_code="cbc:DespatchAdviceTypeCode")


def _numbering(letter: str) -> Numbering:
    return Numbering(re.compile(rf"^{letter}[A-Z0-9]{{3}}$"), f"{letter}001", letter)


GUIA_REMITENTE_TYPE = DocumentType(
    code=GUIA_REMITENTE, name=DOCUMENT_TYPES[GUIA_REMITENTE], identity=IDENTITY, numbering=_numbering("T"),
    build=build, render=render, request=GuiaRemisionRequest, sender=SEND_GRE,
    sheet="commons/xsl/ValidaExprRegGreRemitente-2.0.1.xsl")
GUIA_TRANSPORTISTA_TYPE = DocumentType(
    code=GUIA_TRANSPORTISTA, name=DOCUMENT_TYPES[GUIA_TRANSPORTISTA], identity=IDENTITY, numbering=_numbering("V"),
    build=build, render=render, request=GuiaRemisionRequest, sender=SEND_GRE,
    sheet="commons/xsl/ValidaExprRegGreTransportista-2.0.1.xsl")
