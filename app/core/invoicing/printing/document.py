"""What the printed voucher shows, read from the signed UBL XML (the source of truth, never the request).

Parsed with lxml without network, DTDs or entity expansion, after a size check. Only what the page
shows is read; amounts stay Decimal as written in the XML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation

from lxml import etree

from app.core.errors import invalid
from app.core.invoicing.amounts import ZERO
from app.core.invoicing.namespaces import CAC, CBC, DS
from app.core.invoicing.sunat_catalogues import (
    CONTADO,
    CREDITO,
    IDENTITY_PRINTED,
    NOTES,
    PREPAYMENT_VOUCHERS,
    SALES,
    printed_title,
)
from app.core.invoicing.ubl_identity import document_type

NS = {"cac": CAC, "cbc": CBC, "ds": DS}
MAX_XML_BYTES = 5 * 1024 * 1024  # a 1,000-line signed voucher is well under 1 MiB

# Catalogue 01: the vouchers this page prints (another document type brings its own layout), and their titles.
TITLES = {code: printed_title(code) for code in (*SALES, *NOTES)}
# Catalogue 06, as the printed voucher names the customer's document.
DOCUMENT_LABELS = IDENTITY_PRINTED
# Catalogue 05 codes of the tax subtotals, in the order the totals are printed.
GRAVADAS, EXONERADAS, INAFECTAS, EXPORTACION, GRATUITAS, ISC, ICBPER, OTROS = (
    "1000", "9997", "9998", "9995", "9996", "2000", "7152", "9999")

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False)


FREE_PRICE = "02"  # catalogue 16: the reference value of a free line (01: the unit price with taxes)


@dataclass(frozen=True)
class Line:
    cantidad: Decimal
    unidad: str
    codigo: str
    descripcion: str
    valor_unitario: Decimal  # without IGV
    precio_unitario: Decimal  # with IGV (PricingReference 01), or the unit value when absent
    valor_venta: Decimal  # LineExtensionAmount: after the line's discounts; a free line's reference value
    impuestos: Decimal = ZERO  # the line's taxes in its price: IGV, ISC and others (not ICBPER, not a free line's)
    icbper: Decimal = ZERO
    descuento: Decimal = ZERO  # the line's discounts (AllowanceCharge false), without taxes
    cargo: Decimal = ZERO  # the line's charges (AllowanceCharge true), without taxes
    tipo_precio: str = "01"  # catalogue 16 code of the PricingReference
    afectacion: str = ""  # catalogue 07

    @property
    def gratuito(self) -> bool:
        """A free transfer: nothing is charged, the line's value is a reference value."""
        return self.tipo_precio == FREE_PRICE


@dataclass(frozen=True)
class Cuota:
    numero: int
    monto: Decimal
    vencimiento: date


@dataclass(frozen=True)
class Detraccion:
    codigo: str
    porcentaje: Decimal
    monto: Decimal  # in soles, whatever the voucher's currency
    cuenta: str


@dataclass
class PrintedVoucher:
    tipo: str
    serie: str
    numero: str
    fecha: date
    hora: str
    moneda: str
    emisor_ruc: str
    emisor_nombre: str
    emisor_comercial: str
    emisor_direccion: str
    emisor_lugar: str  # «LIMA - LIMA - LIMA» (district, province, department)
    receptor_tipo: str
    receptor_numero: str
    receptor_nombre: str
    lines: list[Line]
    taxable: dict[str, Decimal]  # catalogue 05 code → taxable amount
    taxes: dict[str, Decimal]  # catalogue 05 code → tax amount
    descuentos: Decimal
    total: Decimal
    leyenda: str  # legend 1000, the amount in words
    digest_value: str
    forma_pago: str = ""  # «Contado», «Credito» or empty
    pendiente: Decimal | None = None
    cuotas: list[Cuota] = field(default_factory=list)
    referencia_tipo: str = ""
    referencia: str = ""  # «F001-1» for notes
    motivo_codigo: str = ""
    motivo: str = ""
    receptor_direccion: str = ""  # the customer's address, when the voucher carries it
    cargos: Decimal = ZERO  # ChargeTotalAmount: charges that are not part of the taxable base
    anticipos: Decimal = ZERO  # PrepaidAmount
    # Each advance deducted (issue 37): the advance voucher's serie-número and what was paid with it, as SUNAT's
    # printed voucher names them (cac:PrepaidPayment tied to its cac:AdditionalDocumentReference).
    anticipos_pagados: list[tuple[str, Decimal]] = field(default_factory=list)
    redondeo: Decimal = ZERO  # PayableRoundingAmount
    descuento_global: Decimal = ZERO  # the voucher's global discount on the base (AllowanceCharge 02), without taxes
    # Stated beside the total, never in it (issue 37): (rate in percent, amount) of the percepción (51-53, in soles,
    # with the total the customer pays including it) and of the retención of the IGV (62).
    percepcion: tuple[Decimal, Decimal, Decimal] | None = None
    retencion: tuple[Decimal, Decimal] | None = None
    # The SPOT (detracción): its catalogue 54 code, rate in percent, amount in soles and the seller's account at the
    # Banco de la Nación, from cac:PaymentTerms and cac:PaymentMeans «Detraccion».
    detraccion: Detraccion | None = None
    # The legends of catalogue 52 other than 1000 (the amount in words, `leyenda`), (code, text) in the XML's order:
    # 2006 the detracción, 1002 a free transfer, 2007 IVAP, 2005 itinerant sale…
    leyendas: list[tuple[str, str]] = field(default_factory=list)

    @property
    def title(self) -> str:
        return TITLES.get(self.tipo, f"COMPROBANTE ELECTRÓNICO {self.tipo}")

    @property
    def serie_numero(self) -> str:
        return f"{self.serie}-{self.numero}"

    @property
    def igv(self) -> Decimal:
        return self.taxes.get(GRAVADAS, ZERO)

    def qr_text(self) -> str:
        """SUNAT's QR: RUC|TIPO|SERIE|NUMERO|IGV|TOTAL|FECHA|TIPO DOC CLIENTE|NUM DOC CLIENTE|HASH|"""
        fields = [self.emisor_ruc, self.tipo, self.serie, self.numero, f"{self.igv:.2f}", f"{self.total:.2f}",
                  self.fecha.isoformat(), self.receptor_tipo, self.receptor_numero, self.digest_value]
        return "|".join(fields) + "|"


def _text(node: etree._Element | None, path: str) -> str:
    found = node.find(path, NS) if node is not None else None
    return (found.text or "").strip() if found is not None else ""


def _amount(node: etree._Element | None, path: str) -> Decimal:
    """The amount at `path`, 0 when the XML has none."""
    amount = _optional_amount(node, path)
    return ZERO if amount is None else amount


def _optional_amount(node: etree._Element | None, path: str) -> Decimal | None:
    text = _text(node, path) if node is not None else ""
    return _decimal(text) if text else None


def _decimal(text: str) -> Decimal:
    try:
        return Decimal(text.strip())
    except InvalidOperation:
        raise invalid("xml_firmado", f"El importe «{text.strip()}» del XML no es un número.") from None


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise invalid("xml_firmado", f"La fecha «{text}» del XML no es una fecha (AAAA-MM-DD).") from None


def parse(xml: bytes | str) -> PrintedVoucher:
    """The printed voucher's data from a signed UBL 2.1 voucher; a 400 when the XML is not one."""
    root = _root(xml)
    tipo = document_type(root)
    if tipo not in TITLES:
        raise invalid("xml_firmado", "El XML no es una factura, boleta ni nota de crédito o débito.")
    serie, _, numero = _text(root, "cbc:ID").partition("-")
    supplier = root.find("cac:AccountingSupplierParty/cac:Party", NS)
    customer = root.find("cac:AccountingCustomerParty/cac:Party", NS)
    if supplier is None or customer is None or not numero:
        raise invalid("xml_firmado", "Al XML le falta el emisor, el cliente o la serie-número.")
    direccion, lugar = _supplier_address(supplier)
    receptor_tipo, receptor_numero = _customer_document(customer)
    # Read before the totals are looked for: a bad subtotal amount is reported before a missing total.
    taxable, taxes = _tax_subtotals(root)
    totals = _monetary_total(root)
    voucher = PrintedVoucher(
        tipo=tipo, serie=serie, numero=numero, fecha=_date(_text(root, "cbc:IssueDate")),
        hora=_text(root, "cbc:IssueTime"), moneda=_text(root, "cbc:DocumentCurrencyCode") or "PEN",
        emisor_ruc=_text(supplier, "cac:PartyIdentification/cbc:ID"),
        emisor_nombre=_text(supplier, "cac:PartyLegalEntity/cbc:RegistrationName"),
        emisor_comercial=_text(supplier, "cac:PartyName/cbc:Name"),
        emisor_direccion=direccion, emisor_lugar=lugar,
        receptor_tipo=receptor_tipo, receptor_numero=receptor_numero,
        receptor_nombre=_text(customer, "cac:PartyLegalEntity/cbc:RegistrationName"),
        lines=_lines(root),
        taxable=taxable, taxes=taxes, descuentos=_amount(totals, "cbc:AllowanceTotalAmount"),
        total=_amount(totals, "cbc:PayableAmount"),
        leyenda=_legend(root),
        digest_value=_text(root, ".//ds:SignedInfo/ds:Reference/ds:DigestValue"),
        referencia=_text(root, "cac:BillingReference/cac:InvoiceDocumentReference/cbc:ID"),
        referencia_tipo=_text(root, "cac:BillingReference/cac:InvoiceDocumentReference/cbc:DocumentTypeCode"),
        motivo_codigo=_text(root, "cac:DiscrepancyResponse/cbc:ResponseCode"),
        motivo=_text(root, "cac:DiscrepancyResponse/cbc:Description"),
        receptor_direccion=_customer_address(customer),
        cargos=_amount(totals, "cbc:ChargeTotalAmount"), anticipos=_amount(totals, "cbc:PrepaidAmount"),
        redondeo=_amount(totals, "cbc:PayableRoundingAmount"),
        descuento_global=_allowances(root.xpath("cac:AllowanceCharge[cbc:AllowanceChargeReasonCode='02']",
                                                namespaces=NS))[0])
    voucher.percepcion, voucher.retencion = _perception(root), _retention(root)
    voucher.anticipos_pagados = _advances(root)
    voucher.detraccion = _spot(root)
    voucher.leyendas = [(note.get("languageLocaleID") or "", (note.text or "").strip())
                        for note in root.iterfind("cbc:Note", NS)
                        if note.get("languageLocaleID") not in (None, "1000") and (note.text or "").strip()]
    _payment(root, voucher)
    return voucher


def _root(xml: bytes | str) -> etree._Element:
    """The XML's root element; the size is checked before parsing (the parser neither fetches nor expands)."""
    data = xml.encode("utf-8") if isinstance(xml, str) else xml
    if len(data) > MAX_XML_BYTES:
        raise invalid("xml_firmado", f"El XML supera el tamaño máximo de {MAX_XML_BYTES // (1024 * 1024)} MiB.")
    try:
        return etree.fromstring(data, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise invalid("xml_firmado", f"El XML del comprobante no se puede leer: {exc}.") from None


def _supplier_address(supplier: etree._Element) -> tuple[str, str]:
    """(address line, «district - province - department»): parts left empty or «-» are not printed."""
    address = supplier.find("cac:PartyLegalEntity/cac:RegistrationAddress", NS)
    if address is None:
        return "", ""
    place = [_text(address, tag) for tag in ("cbc:District", "cbc:CityName", "cbc:CountrySubentity")]
    return _text(address, "cac:AddressLine/cbc:Line"), " - ".join(part for part in place if part and part != "-")


def _customer_address(customer: etree._Element) -> str:
    """The customer's address line, with its district - province - department when the voucher has them."""
    address = customer.find("cac:PartyLegalEntity/cac:RegistrationAddress", NS)
    if address is None:
        return ""
    line = _text(address, "cac:AddressLine/cbc:Line")
    place = [_text(address, tag) for tag in ("cbc:District", "cbc:CityName", "cbc:CountrySubentity")]
    place = [part for part in place if part and part != "-" and part not in line]
    return " - ".join([line, *place] if line else place)


def _allowances(elements: list[etree._Element]) -> tuple[Decimal, Decimal]:
    """(discounts, charges) of AllowanceCharge elements, without taxes."""
    discounts = charges = ZERO
    for element in elements:
        amount = _amount(element, "cbc:Amount")
        if _text(element, "cbc:ChargeIndicator").lower() == "true":
            charges += amount
        else:
            discounts += amount
    return discounts, charges


def _rate_and_amount(root: etree._Element, codes: tuple[str, ...]) -> tuple[Decimal, Decimal, Decimal] | None:
    """(rate in percent, amount, base) of the root AllowanceCharge of one of `codes`, or None."""
    for element in root.findall("cac:AllowanceCharge", NS):
        if _text(element, "cbc:AllowanceChargeReasonCode") in codes:
            factor = _optional_amount(element, "cbc:MultiplierFactorNumeric") or ZERO
            return (factor * 100).normalize(), _amount(element, "cbc:Amount"), _amount(element, "cbc:BaseAmount")
    return None


def _advances(root: etree._Element) -> list[tuple[str, Decimal]]:
    """(advance voucher, amount paid) of each cac:PrepaidPayment, named by the AdditionalDocumentReference of type
    02 or 03 whose DocumentStatusCode is its ID."""
    vouchers = {_text(ref, "cbc:DocumentStatusCode"): _text(ref, "cbc:ID")
                for ref in root.findall("cac:AdditionalDocumentReference", NS)
                if _text(ref, "cbc:DocumentTypeCode") in PREPAYMENT_VOUCHERS}
    return [(vouchers.get(_text(paid, "cbc:ID"), ""), _amount(paid, "cbc:PaidAmount"))
            for paid in root.findall("cac:PrepaidPayment", NS)]


def _spot(root: etree._Element) -> Detraccion | None:
    """The detracción's code, rate, amount (PEN) and account, or None when the voucher has none."""
    terms = next((t for t in root.iterfind("cac:PaymentTerms", NS) if _text(t, "cbc:ID") == "Detraccion"), None)
    if terms is None:
        return None
    means = next((m for m in root.iterfind("cac:PaymentMeans", NS) if _text(m, "cbc:ID") == "Detraccion"), None)
    return Detraccion(_text(terms, "cbc:PaymentMeansID"), _optional_amount(terms, "cbc:PaymentPercent") or ZERO,
                      _amount(terms, "cbc:Amount"),
                      _text(means, "cac:PayeeFinancialAccount/cbc:ID") if means is not None else "")


PERCEPTIONS = ("51", "52", "53")


def _perception(root: etree._Element) -> tuple[Decimal, Decimal, Decimal] | None:
    """(rate, percepción, total with it) in soles, from its AllowanceCharge (51-53)."""
    found = _rate_and_amount(root, PERCEPTIONS)
    return None if found is None else (found[0], found[1], found[2] + found[1])


def _retention(root: etree._Element) -> tuple[Decimal, Decimal] | None:
    found = _rate_and_amount(root, ("62",))
    return None if found is None else (found[0], found[1])


def _customer_document(customer: etree._Element) -> tuple[str, str]:
    """(catalogue 06 type, number) of the customer's document: the type is the ID's schemeID attribute."""
    customer_id = customer.find("cac:PartyIdentification/cbc:ID", NS)
    if customer_id is None:
        return "", ""
    return customer_id.get("schemeID", ""), (customer_id.text or "").strip()


def _tax_subtotals(root: etree._Element) -> tuple[dict[str, Decimal], dict[str, Decimal]]:
    """(taxable, taxes) per catalogue 05 code, summed: a code may appear in several subtotals."""
    taxable: dict[str, Decimal] = {}
    taxes: dict[str, Decimal] = {}
    for subtotal in root.iterfind("cac:TaxTotal/cac:TaxSubtotal", NS):
        code = _text(subtotal, "cac:TaxCategory/cac:TaxScheme/cbc:ID")
        taxable[code] = taxable.get(code, ZERO) + _amount(subtotal, "cbc:TaxableAmount")
        taxes[code] = taxes.get(code, ZERO) + _amount(subtotal, "cbc:TaxAmount")
    return taxable, taxes


def _monetary_total(root: etree._Element) -> etree._Element:
    """The totals element: LegalMonetaryTotal, or RequestedMonetaryTotal as a debit note names it."""
    totals = root.find("cac:LegalMonetaryTotal", NS)
    if totals is None:
        totals = root.find("cac:RequestedMonetaryTotal", NS)
    if totals is None:
        raise invalid("xml_firmado", "Al XML le falta el importe total.")
    return totals


def _lines(root: etree._Element) -> list[Line]:
    """The voucher's lines, in order: InvoiceLine, CreditNoteLine or DebitNoteLine, whichever the type has."""
    return [_line(node) for node in root if etree.QName(node).localname.endswith("Line")
            and etree.QName(node).namespace == CAC]


def _legend(root: etree._Element) -> str:
    """Legend 1000 (the total in words), empty when the XML has none."""
    return next((note.text or "" for note in root.iterfind("cbc:Note", NS)
                 if note.get("languageLocaleID") == "1000"), "")


_CAC, _CBC = f"{{{CAC}}}", f"{{{CBC}}}"


def _line(node: etree._Element) -> Line:
    """One line, its children read in one pass (a voucher may have a thousand lines)."""
    quantity = valor_venta = price = reference = item = None
    allowances: list[etree._Element] = []
    taxes: dict[str, Decimal] = {}
    afectacion = ""
    for child in node:
        tag = child.tag
        if tag == _CBC + "LineExtensionAmount":
            valor_venta = child
        elif tag == _CAC + "PricingReference":
            reference = _reference(child)
        elif tag == _CAC + "AllowanceCharge":
            allowances.append(child)
        elif tag == _CAC + "TaxTotal":
            afectacion = _line_taxes(child, taxes) or afectacion
        elif tag == _CAC + "Item":
            item = child
        elif tag == _CAC + "Price":
            price = child
        elif isinstance(tag, str) and tag.endswith("Quantity"):
            quantity = child
    valor_unitario = _amount(price, "cbc:PriceAmount")
    precio, tipo_precio = reference or (None, "01")
    descuento, cargo = _allowances(allowances)
    return Line(cantidad=_quantity(quantity), unidad=quantity.get("unitCode", "") if quantity is not None else "",
                codigo=_text(item, "cac:SellersItemIdentification/cbc:ID"),
                descripcion=" ".join(_text(item, "cbc:Description").split()),
                valor_unitario=valor_unitario, precio_unitario=precio if precio is not None else valor_unitario,
                valor_venta=_decimal(valor_venta.text) if valor_venta is not None and valor_venta.text else ZERO,
                impuestos=sum((amount for code, amount in taxes.items() if code not in (ICBPER, GRATUITAS)), ZERO),
                icbper=taxes.get(ICBPER, ZERO), descuento=descuento, cargo=cargo,
                tipo_precio=tipo_precio, afectacion=afectacion)


def _quantity(quantity: etree._Element | None) -> Decimal:
    text = (quantity.text or "0").strip() if quantity is not None else "0"
    try:
        return Decimal(text)
    except InvalidOperation:
        raise invalid("xml_firmado", f"La cantidad «{text}» del XML no es un número.") from None


def _reference(pricing: etree._Element) -> tuple[Decimal | None, str]:
    """(price, catalogue 16 type) of a line's PricingReference."""
    price, kind = None, "01"
    for condition in pricing:
        if condition.tag == _CAC + "AlternativeConditionPrice":
            for part in condition:
                if part.tag == _CBC + "PriceAmount" and part.text:
                    price = _decimal(part.text)
                elif part.tag == _CBC + "PriceTypeCode" and part.text:
                    kind = part.text.strip()
            break
    return price, kind


def _line_taxes(total: etree._Element, taxes: dict[str, Decimal]) -> str:
    """Add a line's TaxTotal to `taxes` (by catalogue 05 code); its catalogue 07 affectation, if it names one. Read
    child by child: a path search per amount would cost more than the rest of the line."""
    afectacion = ""
    for subtotal in total:
        if subtotal.tag != _CAC + "TaxSubtotal":
            continue
        amount, code = ZERO, ""
        for part in subtotal:
            if part.tag == _CBC + "TaxAmount" and part.text:
                amount = _decimal(part.text)
            elif part.tag == _CAC + "TaxCategory":
                for entry in part:
                    if entry.tag == _CBC + "TaxExemptionReasonCode":
                        afectacion = afectacion or (entry.text or "").strip()
                    elif entry.tag == _CAC + "TaxScheme":
                        code = _text(entry, "cbc:ID")
        taxes[code] = taxes.get(code, ZERO) + amount
    return afectacion


def _payment(root: etree._Element, voucher: PrintedVoucher) -> None:
    for terms in root.iterfind("cac:PaymentTerms", NS):
        if _text(terms, "cbc:ID") != "FormaPago":
            continue
        means = _text(terms, "cbc:PaymentMeansID")
        if means in (CONTADO, CREDITO):
            voucher.forma_pago = means
            voucher.pendiente = _optional_amount(terms, "cbc:Amount")
        elif means.startswith("Cuota") and means[5:].isdigit():
            voucher.cuotas.append(Cuota(int(means[5:]), _amount(terms, "cbc:Amount"),
                                        _date(_text(terms, "cbc:PaymentDueDate"))))
