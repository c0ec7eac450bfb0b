"""The UBL 2.1 DespatchAdvice text of a guía de remisión electrónica (GRE 2.0), remitente (09) or transportista (31).

Written as text, like app.core.invoicing.ubl: canonical (inclusive C14N 1.0) after the XML declaration, so it is
signed without being parsed, and without any whitespace between elements. That matters beyond taste: two of SUNAT's
remitente rules read the root element's first text node (../shared/sunat/README.md, «GRE notes»), so an indented
guía with public transport draws observation 4165. Element order follows the UBL 2.1 schema; what SUNAT's GRE sheets
ask beyond it (cbc:IssueTime, plates without hyphens, the indicators in cbc:SpecialInstructions) is the builder's
(app.core.invoicing.documents.guia).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, time
from decimal import Decimal

from app.core.invoicing.amounts import plain
from app.core.invoicing.namespaces import DESPATCH_ADVICE
from app.core.invoicing.sunat_catalogues import AIRPORT, GUIA_TRANSPORTISTA, TRANSPORT_DOCUMENTS
from app.core.invoicing.ubl import (
    EMPTY_EXTENSION_CONTENT,
    NS,
    XML_DECLARATION,
    Party,
    esc,
    esc_attr,
    signature_block,
)

ROOT = "DespatchAdvice"
SHIPMENT_ID = "SUNAT_Envio"
PRINCIPAL, SECUNDARIO = "Principal", "Secundario"  # a driver's cbc:JobTitle, as SUNAT's sheets read it


@dataclass(frozen=True)
class Address:
    ubigeo: str
    direccion: str
    ruc: str | None = None  # the establishment's RUC (cbc:AddressTypeCode/@listID), with its code
    codigo: str | None = None  # the establishment's code (SUNAT's annex of establishments)


@dataclass(frozen=True)
class Carrier:
    ruc: str | None
    razon_social: str | None
    registro_mtc: str | None


@dataclass(frozen=True)
class Vehicle:
    placa: str
    tuc: str | None = None  # the MTC's tarjeta única de circulación or certificate of the vehicle


@dataclass(frozen=True)
class Driver:
    tipo_documento: str
    numero_documento: str
    nombres: str
    apellidos: str
    licencia: str


@dataclass(frozen=True)
class Related:
    tipo: str  # catalogue 61
    numero: str
    emisor_ruc: str | None


@dataclass(frozen=True)
class Container:
    numero: str
    precinto: str


@dataclass(frozen=True)
class Port:
    tipo: str  # PORT (catalogue 63) or AIRPORT (64)
    codigo: str
    nombre: str


@dataclass(frozen=True)
class DespatchLine:
    descripcion: str
    cantidad: Decimal
    unidad: str
    codigo: str | None


@dataclass
class Despatch:
    """A guía as its XML says it: what the engine reads of a built document (documents.kind.Built) and the rest."""

    tipo: str
    serie: str
    numero: int
    emisor_ruc: str
    emisor_nombre: str
    receptor: Party  # the destinatario
    fecha: date
    hora: time
    fecha_inicio: date
    peso_bruto: Decimal
    unidad_peso: str
    partida: Address
    llegada: Address
    lines: list[DespatchLine]
    motivo: str | None = None  # catalogue 20 (remitente only)
    descripcion_motivo: str | None = None
    modalidad: str | None = None  # catalogue 18 (remitente only)
    observacion: str | None = None
    remitente: Party | None = None  # transportista only: who sends the goods
    proveedor: Party | None = None  # compra, recojo: cac:SellerSupplierParty
    pagador: Party | None = None  # transportista, a third party paying the freight: cac:OriginatorCustomerParty
    transportista: Carrier | None = None
    vehiculos: list[Vehicle] = field(default_factory=list)
    conductores: list[Driver] = field(default_factory=list)
    relacionados: list[Related] = field(default_factory=list)
    indicadores: list[str] = field(default_factory=list)  # cbc:SpecialInstructions
    bultos: int | None = None
    contenedores: list[Container] = field(default_factory=list)
    puerto: Port | None = None
    moneda: str = "PEN"  # a guía moves goods, not money: the store's columns get PEN and 0.00
    total: Decimal = Decimal("0.00")


def _party_id(party: Party) -> str:
    return (f'<cac:PartyIdentification><cbc:ID schemeID="{esc_attr(party.tipo_documento)}">'
            f"{esc(party.numero_documento)}</cbc:ID></cac:PartyIdentification>")


def _party(party: Party) -> str:
    return (f"<cac:Party>{_party_id(party)}<cac:PartyLegalEntity><cbc:RegistrationName>{esc(party.nombre)}"
            "</cbc:RegistrationName></cac:PartyLegalEntity></cac:Party>")


def _header(doc: Despatch) -> str:
    note = f"<cbc:Note>{esc(doc.observacion)}</cbc:Note>" if doc.observacion else ""
    return (f'{XML_DECLARATION}<{ROOT} xmlns="{DESPATCH_ADVICE}" {NS}>'
            f"<ext:UBLExtensions><ext:UBLExtension>{EMPTY_EXTENSION_CONTENT}</ext:UBLExtension></ext:UBLExtensions>"
            "<cbc:UBLVersionID>2.1</cbc:UBLVersionID><cbc:CustomizationID>2.0</cbc:CustomizationID>"
            f"<cbc:ID>{esc(doc.serie)}-{doc.numero}</cbc:ID><cbc:IssueDate>{doc.fecha.isoformat()}</cbc:IssueDate>"
            f"<cbc:IssueTime>{doc.hora.isoformat(timespec='seconds')}</cbc:IssueTime>"
            f"<cbc:DespatchAdviceTypeCode>{doc.tipo}</cbc:DespatchAdviceTypeCode>{note}")


def _related(related: Related) -> str:
    issuer = (f'<cac:IssuerParty><cac:PartyIdentification><cbc:ID schemeID="6">{esc(related.emisor_ruc)}</cbc:ID>'
              "</cac:PartyIdentification></cac:IssuerParty>" if related.emisor_ruc else "")
    return (f"<cac:AdditionalDocumentReference><cbc:ID>{esc(related.numero)}</cbc:ID>"
            f"<cbc:DocumentTypeCode>{esc(related.tipo)}</cbc:DocumentTypeCode>"
            f"<cbc:DocumentType>{esc(TRANSPORT_DOCUMENTS.get(related.tipo, related.tipo))}</cbc:DocumentType>"
            f"{issuer}</cac:AdditionalDocumentReference>")


def _parties(doc: Despatch) -> str:
    supplier = Party("6", doc.emisor_ruc, doc.emisor_nombre)
    seller = f"<cac:SellerSupplierParty>{_party(doc.proveedor)}</cac:SellerSupplierParty>" if doc.proveedor else ""
    payer = f"<cac:OriginatorCustomerParty>{_party(doc.pagador)}</cac:OriginatorCustomerParty>" if doc.pagador else ""
    return (f"<cac:DespatchSupplierParty>{_party(supplier)}</cac:DespatchSupplierParty>"
            f"<cac:DeliveryCustomerParty>{_party(doc.receptor)}</cac:DeliveryCustomerParty>{seller}{payer}")


def _address(element: str, address: Address) -> str:
    establishment = (f'<cbc:AddressTypeCode listID="{esc_attr(address.ruc or "")}">{esc(address.codigo)}'
                     "</cbc:AddressTypeCode>" if address.codigo else "")
    return (f"<cac:{element}><cbc:ID>{esc(address.ubigeo)}</cbc:ID>{establishment}"
            f"<cac:AddressLine><cbc:Line>{esc(address.direccion)}</cbc:Line></cac:AddressLine></cac:{element}>")


def _carrier(doc: Despatch) -> str:
    carrier = doc.transportista
    if carrier is None:
        return ""
    mtc = f"<cbc:CompanyID>{esc(carrier.registro_mtc)}</cbc:CompanyID>" if carrier.registro_mtc else ""
    if doc.tipo == GUIA_TRANSPORTISTA:  # the issuer carries: only its MTC registration
        return f"<cac:CarrierParty><cac:PartyLegalEntity>{mtc}</cac:PartyLegalEntity></cac:CarrierParty>" if mtc else ""
    return (f'<cac:CarrierParty><cac:PartyIdentification><cbc:ID schemeID="6">{esc(carrier.ruc or "")}</cbc:ID>'
            f"</cac:PartyIdentification><cac:PartyLegalEntity><cbc:RegistrationName>{esc(carrier.razon_social or '')}"
            f"</cbc:RegistrationName>{mtc}</cac:PartyLegalEntity></cac:CarrierParty>")


def _driver(driver: Driver, role: str) -> str:
    return (f'<cac:DriverPerson><cbc:ID schemeID="{esc_attr(driver.tipo_documento)}">{esc(driver.numero_documento)}'
            f"</cbc:ID><cbc:FirstName>{esc(driver.nombres)}</cbc:FirstName>"
            f"<cbc:FamilyName>{esc(driver.apellidos)}</cbc:FamilyName><cbc:JobTitle>{role}</cbc:JobTitle>"
            f"<cac:IdentityDocumentReference><cbc:ID>{esc(driver.licencia)}</cbc:ID></cac:IdentityDocumentReference>"
            "</cac:DriverPerson>")


def _stage(doc: Despatch) -> str:
    mode = f"<cbc:TransportModeCode>{doc.modalidad}</cbc:TransportModeCode>" if doc.modalidad else ""
    drivers = "".join(_driver(driver, PRINCIPAL if index == 0 else SECUNDARIO)
                      for index, driver in enumerate(doc.conductores))
    return (f"<cac:ShipmentStage>{mode}<cac:TransitPeriod><cbc:StartDate>{doc.fecha_inicio.isoformat()}"
            f"</cbc:StartDate></cac:TransitPeriod>{_carrier(doc)}{drivers}</cac:ShipmentStage>")


def _delivery(doc: Despatch) -> str:
    sender = (f"<cac:DespatchParty>{_party_id(doc.remitente)}<cac:PartyLegalEntity><cbc:RegistrationName>"
              f"{esc(doc.remitente.nombre)}</cbc:RegistrationName></cac:PartyLegalEntity></cac:DespatchParty>"
              if doc.remitente else "")
    return (f"<cac:Delivery>{_address('DeliveryAddress', doc.llegada)}<cac:Despatch>"
            f"{_address('DespatchAddress', doc.partida)}{sender}</cac:Despatch></cac:Delivery>")


def _vehicle(vehicle: Vehicle, element: str) -> str:
    tuc = (f"<cac:ApplicableTransportMeans><cbc:RegistrationNationalityID>{esc(vehicle.tuc)}"
           "</cbc:RegistrationNationalityID></cac:ApplicableTransportMeans>" if vehicle.tuc else "")
    return f"<cac:{element}><cbc:ID>{esc(vehicle.placa)}</cbc:ID>{tuc}"


def _handling_unit(doc: Despatch) -> str:
    """The vehicles (the first is the principal one, the others cac:AttachedTransportEquipment) and the
    containers with their seals (importación / exportación)."""
    if not doc.vehiculos and not doc.contenedores:
        return ""
    parts = ["<cac:TransportHandlingUnit>"]
    if doc.vehiculos:
        principal, *others = doc.vehiculos
        parts.append(_vehicle(principal, "TransportEquipment"))
        parts.extend(_vehicle(other, "AttachedTransportEquipment") + "</cac:AttachedTransportEquipment>"
                     for other in others)
        parts.append("</cac:TransportEquipment>")
    parts.extend(f"<cac:Package><cbc:ID>{esc(box.numero)}</cbc:ID><cbc:TraceID>{esc(box.precinto)}</cbc:TraceID>"
                 "</cac:Package>" for box in doc.contenedores)
    parts.append("</cac:TransportHandlingUnit>")
    return "".join(parts)


def _port(doc: Despatch) -> str:
    port = doc.puerto
    if port is None:
        return ""
    scheme = "Aeropuertos" if port.tipo == AIRPORT else "Puertos"
    return (f'<cac:FirstArrivalPortLocation><cbc:ID schemeName="{scheme}">{esc(port.codigo)}</cbc:ID>'
            f"<cbc:LocationTypeCode>{port.tipo}</cbc:LocationTypeCode><cbc:Name>{esc(port.nombre)}</cbc:Name>"
            "</cac:FirstArrivalPortLocation>")


def _shipment(doc: Despatch) -> str:
    motive = f"<cbc:HandlingCode>{doc.motivo}</cbc:HandlingCode>" if doc.motivo else ""
    if doc.descripcion_motivo:
        motive += f"<cbc:HandlingInstructions>{esc(doc.descripcion_motivo)}</cbc:HandlingInstructions>"
    packages = (f"<cbc:TotalTransportHandlingUnitQuantity>{doc.bultos}</cbc:TotalTransportHandlingUnitQuantity>"
                if doc.bultos is not None else "")
    indicators = "".join(f"<cbc:SpecialInstructions>{text}</cbc:SpecialInstructions>" for text in doc.indicadores)
    return (f"<cac:Shipment><cbc:ID>{SHIPMENT_ID}</cbc:ID>{motive}"
            f'<cbc:GrossWeightMeasure unitCode="{doc.unidad_peso}">{plain(doc.peso_bruto)}</cbc:GrossWeightMeasure>'
            f"{packages}{indicators}{_stage(doc)}{_delivery(doc)}{_handling_unit(doc)}{_port(doc)}</cac:Shipment>")


def _line(index: int, line: DespatchLine) -> str:
    code = (f"<cac:SellersItemIdentification><cbc:ID>{esc(line.codigo)}</cbc:ID></cac:SellersItemIdentification>"
            if line.codigo else "")
    return (f'<cac:DespatchLine><cbc:ID>{index}</cbc:ID><cbc:DeliveredQuantity unitCode="{esc_attr(line.unidad)}">'
            f"{plain(line.cantidad)}</cbc:DeliveredQuantity><cac:OrderLineReference><cbc:LineID>{index}</cbc:LineID>"
            f"</cac:OrderLineReference><cac:Item><cbc:Description>{esc(line.descripcion)}</cbc:Description>{code}"
            "</cac:Item></cac:DespatchLine>")


def render(doc: Despatch) -> str:
    """The guía's UBL 2.1 XML text, unsigned and canonical."""
    return "".join((_header(doc), *(_related(related) for related in doc.relacionados),
                    signature_block(doc.emisor_ruc, doc.emisor_nombre), _parties(doc), _shipment(doc),
                    *(_line(index, line) for index, line in enumerate(doc.lines, start=1)), f"</{ROOT}>"))
