"""The printed guía de remisión (A4), the guías' own layout (`printing.layout_for`): read from its signed
DespatchAdvice, laid out with the printed voucher's marks (app.core.invoicing.printing.layout), so the PDF writer and
the windows' painter draw it as they draw a voucher. It lives here rather than as the guía type's
`DocumentType.printed` because the printing package reads vouchers through the document registry: a layout in
documents/ importing it would close an import circle.

Its QR is not built from the XML, as a voucher's is: it encodes the link SUNAT returns in the guía's CDR
(cbc:DocumentDescription), which the engine hands in as `Issuer.sunat_link`. A guía SUNAT has not accepted yet prints
without a QR and says «pendiente de SUNAT».
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from app.core.invoicing.namespaces import CAC, CBC, DS
from app.core.invoicing.printing.layout import (
    A4_H,
    A4_MARGIN,
    A4_W,
    GREY,
    Box,
    Issuer,
    Page,
    Sheet,
    a4_page_footers,
    a4_qr_footer,
    stamp_band,
    title_box,
    wrap,
)
from app.core.invoicing.sunat_catalogues import (
    GUIA_REMITENTE,
    GUIA_TRANSPORTISTA,
    IDENTITY_PRINTED,
    TRANSFER_MOTIVES,
    TRANSPORT_DOCUMENTS,
    TRANSPORT_MODES,
    printed_title,
)
from app.core.platform import formatting as fmt

NS = {"cac": CAC, "cbc": CBC, "ds": DS}
GUIA_TYPES = frozenset({GUIA_REMITENTE, GUIA_TRANSPORTISTA})
PENDING = "pendiente de SUNAT"
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False)


@dataclass(frozen=True)
class PrintedLine:
    numero: str
    codigo: str
    descripcion: str
    cantidad: str
    unidad: str


@dataclass
class PrintedGuia:
    """What the printed guía says, read from its XML."""

    tipo: str
    serie_numero: str
    emisor_ruc: str
    emisor_nombre: str
    fecha: str
    hora: str
    digest_value: str
    details: list[tuple[str, str]] = field(default_factory=list)  # (label, value) under the header
    lines: list[PrintedLine] = field(default_factory=list)

    @property
    def title(self) -> str:
        return printed_title(self.tipo)


def _text(node: Any, path: str) -> str:
    return (node.findtext(path, namespaces=NS) or "").strip() if node is not None else ""


def _party(node: Any) -> str:
    """«NAME — RUC 20…» of a cac:Party-like element."""
    if node is None:
        return ""
    scheme = node.find(".//cac:PartyIdentification/cbc:ID", NS)
    number = (scheme.text or "").strip() if scheme is not None else ""
    label = IDENTITY_PRINTED.get(scheme.get("schemeID", "") if scheme is not None else "", "DOC.")
    name = _text(node, ".//cbc:RegistrationName")
    return f"{name} — {label} {number}" if number else name


def _address(node: Any) -> str:
    if node is None:
        return ""
    establishment = _text(node, "cbc:AddressTypeCode")
    text = f"{_text(node, 'cac:AddressLine/cbc:Line')} (ubigeo {_text(node, 'cbc:ID')})"
    return f"{text}, establecimiento {establishment}" if establishment else text


def _drivers(stage: Any) -> list[str]:
    found = []
    for driver in stage.findall("cac:DriverPerson", NS) if stage is not None else []:
        number = driver.find("cbc:ID", NS)
        label = IDENTITY_PRINTED.get(number.get("schemeID", ""), "DOC.") if number is not None else "DOC."
        found.append(f"{_text(driver, 'cbc:FirstName')} {_text(driver, 'cbc:FamilyName')}, {label} "
                     f"{_text(driver, 'cbc:ID')}, licencia {_text(driver, 'cac:IdentityDocumentReference/cbc:ID')} "
                     f"({_text(driver, 'cbc:JobTitle').lower() or 'principal'})")
    return found


def _vehicles(shipment: Any) -> list[str]:
    equipment = shipment.find("cac:TransportHandlingUnit/cac:TransportEquipment", NS)
    if equipment is None:
        return []
    found = [f"{_text(equipment, 'cbc:ID')} (principal)"]
    found += [f"{_text(other, 'cbc:ID')} (secundario)"
              for other in equipment.findall("cac:AttachedTransportEquipment", NS)]
    return found


def _related(root: Any) -> list[str]:
    found = []
    for reference in root.findall("cac:AdditionalDocumentReference", NS):
        kind = _text(reference, "cbc:DocumentTypeCode")
        issuer = _text(reference, "cac:IssuerParty/cac:PartyIdentification/cbc:ID")
        found.append(f"{TRANSPORT_DOCUMENTS.get(kind, kind)} {_text(reference, 'cbc:ID')}"
                     + (f" (RUC {issuer})" if issuer else ""))
    return found


def _transport(shipment: Any, stage: Any) -> list[tuple[str, str]]:
    rows = []
    mode = _text(stage, "cbc:TransportModeCode")
    if mode:
        rows.append(("Modalidad de transporte", f"{mode} - {TRANSPORT_MODES.get(mode, mode)}"))
    rows.append(("Inicio del traslado", fmt.day(_text(stage, "cac:TransitPeriod/cbc:StartDate"))))
    carrier = stage.find("cac:CarrierParty", NS) if stage is not None else None
    if carrier is not None:
        name = _party(carrier)
        mtc = _text(carrier, "cac:PartyLegalEntity/cbc:CompanyID")
        rows.append(("Transportista", ", ".join(part for part in (name, f"registro MTC {mtc}" if mtc else "")
                                                  if part)))
    vehicles, drivers = _vehicles(shipment), _drivers(stage)
    if vehicles:
        rows.append(("Vehículos", "; ".join(vehicles)))
    if drivers:
        rows.append(("Conductores", "; ".join(drivers)))
    return rows


def _shipment_details(root: Any) -> list[tuple[str, str]]:
    shipment = root.find("cac:Shipment", NS)
    stage = shipment.find("cac:ShipmentStage", NS)
    rows = []
    motive = _text(shipment, "cbc:HandlingCode")
    if motive:
        described = _text(shipment, "cbc:HandlingInstructions")
        rows.append(("Motivo del traslado", f"{motive} - {TRANSFER_MOTIVES.get(motive, motive)}"
                     + (f" ({described})" if described else "")))
    weight = shipment.find("cbc:GrossWeightMeasure", NS)
    if weight is not None:
        rows.append(("Peso bruto total", f"{(weight.text or '').strip()} {weight.get('unitCode', '')}"))
    packages = _text(shipment, "cbc:TotalTransportHandlingUnitQuantity")
    if packages:
        rows.append(("Bultos", packages))
    rows += _transport(shipment, stage)
    delivery = shipment.find("cac:Delivery", NS)
    rows.append(("Punto de partida", _address(delivery.find("cac:Despatch/cac:DespatchAddress", NS))))
    rows.append(("Punto de llegada", _address(delivery.find("cac:DeliveryAddress", NS))))
    return rows


def parse(xml_firmado: bytes | str) -> PrintedGuia:
    """What a signed guía says on paper (its XML parsed without network or entities)."""
    data = xml_firmado.encode("utf-8") if isinstance(xml_firmado, str) else xml_firmado
    root = etree.fromstring(data, _PARSER)
    tipo = _text(root, "cbc:DespatchAdviceTypeCode")
    supplier = root.find("cac:DespatchSupplierParty/cac:Party", NS)
    guia = PrintedGuia(tipo=tipo, serie_numero=_text(root, "cbc:ID"),
                       emisor_ruc=_text(supplier, "cac:PartyIdentification/cbc:ID"),
                       emisor_nombre=_text(supplier, "cac:PartyLegalEntity/cbc:RegistrationName"),
                       fecha=_text(root, "cbc:IssueDate"), hora=_text(root, "cbc:IssueTime"),
                       digest_value=_text(root, ".//ds:DigestValue"))
    rows = [("Destinatario", _party(root.find("cac:DeliveryCustomerParty/cac:Party", NS))),
            ("Fecha de emisión", f"{fmt.day(guia.fecha)}  {guia.hora[:5]}".strip())]
    if tipo == GUIA_TRANSPORTISTA:
        rows.append(("Remitente", _party(root.find(".//cac:Delivery/cac:Despatch/cac:DespatchParty", NS))))
    for label, path in (("Proveedor", "cac:SellerSupplierParty/cac:Party"),
                        ("Pagador del flete", "cac:OriginatorCustomerParty/cac:Party")):
        party = root.find(path, NS)
        if party is not None:
            rows.append((label, _party(party)))
    rows += _shipment_details(root)
    related = _related(root)
    if related:
        rows.append(("Documentos relacionados", "; ".join(related)))
    note = _text(root, "cbc:Note")
    if note:
        rows.append(("Observaciones", note))
    guia.details = rows
    guia.lines = [PrintedLine(_text(line, "cbc:ID"), _text(line, "cac:Item/cac:SellersItemIdentification/cbc:ID"),
                              _text(line, "cac:Item/cbc:Description"), _text(line, "cbc:DeliveredQuantity"),
                              line.find("cbc:DeliveredQuantity", NS).get("unitCode", ""))
                  for line in root.findall("cac:DespatchLine", NS)]
    return guia


# ------------------------------------------------------------------------------------------------ A4

COLUMNS = [("N°", 10.0, "R"), ("Código", 24.0, "L"), ("Descripción", 0.0, "L"), ("Cantidad", 26.0, "R"),
           ("Unidad", 18.0, "L")]


def print_guia(xml_firmado: bytes | str, formato: str, issuer: Issuer | None) -> tuple[list[Page], str]:
    """The guía's pages (always A4: a guía travels with the goods on a full page) and its title."""
    issuer = issuer or Issuer()
    guia = parse(xml_firmado)
    sheet = Sheet(A4_W, A4_H, A4_MARGIN)
    _header(sheet, guia)
    stamp_band(sheet, sheet.margin, sheet.right - sheet.margin, issuer, 28, 11)
    label_w = 44.0
    for label, value in guia.details:
        sheet.ensure(5)
        sheet.text(sheet.margin, f"{label}:", 9, True)
        sheet.paragraph(sheet.margin + label_w, value or "-", sheet.right - sheet.margin - label_w, 9)
    sheet.y += 3
    _lines(sheet, guia)
    _footer(sheet, guia, issuer)
    pages = sheet.finish(0)
    a4_page_footers(sheet, pages, issuer)
    return pages, f"{guia.title} {guia.serie_numero}"


def _header(sheet: Sheet, guia: PrintedGuia) -> None:
    m, box_w = sheet.margin, 70.0
    box_x = sheet.right - box_w
    sheet.paragraph(m, guia.emisor_nombre, box_x - 4 - m, 12, True)
    issuer_bottom = sheet.y
    title_box(sheet, box_x, box_w, (guia.emisor_ruc, guia.title, guia.serie_numero))
    sheet.y = max(issuer_bottom, sheet.y) + 5


def _column_widths(sheet: Sheet) -> list[float]:
    fixed = sum(width for _, width, _ in COLUMNS)
    return [width or (sheet.right - sheet.margin - fixed) for _, width, _ in COLUMNS]


def _table_header(sheet: Sheet) -> None:
    widths = _column_widths(sheet)
    sheet.page.marks.append(Box(sheet.margin, sheet.y, sheet.right - sheet.margin, 6, GREY, 0))
    x = sheet.margin
    for (title, _, align), width in zip(COLUMNS, widths, strict=True):
        sheet.text(x + 1, title, 8.5, True, align, width - 2, baseline=sheet.y + 4.2)
        x += width
    sheet.y += 7


def _lines(sheet: Sheet, guia: PrintedGuia) -> None:
    widths = _column_widths(sheet)
    _table_header(sheet)
    for line in guia.lines:
        described = wrap(line.descripcion, widths[2] - 2, 8.5)
        if sheet.ensure(4.2 * len(described) + 1):
            _table_header(sheet)
        top = sheet.y
        x = sheet.margin
        for (_, _, align), width, value in zip(COLUMNS, widths, (line.numero, line.codigo, "", line.cantidad,
                                                                 line.unidad), strict=True):
            if value:
                sheet.text(x + 1, value, 8.5, False, align, width - 2)
            x += width
        for text in described:
            sheet.text(sheet.margin + widths[0] + widths[1] + 1, text, 8.5)
            sheet.y += 4.2
        sheet.y = max(sheet.y, top + 4.2) + 0.8
    sheet.rule(width=0.3)
    sheet.y += 3


def _footer(sheet: Sheet, guia: PrintedGuia, issuer: Issuer) -> None:
    link = issuer.sunat_link
    legend = f"Representación impresa de la {guia.title}."
    if not link:
        sheet.ensure(20)
        sheet.rule(width=0.3)
        sheet.y += 2
        sheet.paragraph(sheet.margin, legend, sheet.right - sheet.margin, 9.5, True)
        sheet.paragraph(sheet.margin, f"Código hash: {guia.digest_value or '-'}", sheet.right - sheet.margin, 9)
        sheet.paragraph(sheet.margin, f"Guía {PENDING}: el código QR se imprime cuando SUNAT la acepte.",
                        sheet.right - sheet.margin, 10, True)
        return
    x, bottom = a4_qr_footer(sheet, link)
    width = sheet.right - x
    sheet.paragraph(x, legend, width, 9.5, True)
    sheet.paragraph(x, f"Código hash: {guia.digest_value or '-'}", width, 9)
    sheet.paragraph(x, f"Consulte la guía en SUNAT: {link}", width, 8)
    sheet.y = max(sheet.y, bottom)
