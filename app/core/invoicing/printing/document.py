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
from app.core.invoicing.namespaces import CAC, CBC, DS
from app.core.invoicing.ubl_identity import document_type

NS = {"cac": CAC, "cbc": CBC, "ds": DS}
MAX_XML_BYTES = 5 * 1024 * 1024  # a 1,000-line signed voucher is well under 1 MiB

TITLES = {"01": "FACTURA ELECTRÓNICA", "03": "BOLETA DE VENTA ELECTRÓNICA", "07": "NOTA DE CRÉDITO ELECTRÓNICA",
          "08": "NOTA DE DÉBITO ELECTRÓNICA"}
# Catalogue 06, as the printed voucher names the customer's document.
DOCUMENT_LABELS = {"0": "DOC.", "1": "DNI", "4": "C.E.", "6": "RUC", "7": "PASAPORTE", "A": "CÉD. DIPL."}
# Catalogue 05 codes of the tax subtotals, in the order the totals are printed.
GRAVADAS, EXONERADAS, INAFECTAS, EXPORTACION, GRATUITAS, ISC, ICBPER, OTROS = (
    "1000", "9997", "9998", "9995", "9996", "2000", "7152", "9999")
ZERO = Decimal("0.00")

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False)


@dataclass(frozen=True)
class Line:
    cantidad: Decimal
    unidad: str
    codigo: str
    descripcion: str
    valor_unitario: Decimal  # without IGV
    precio_unitario: Decimal  # with IGV (PricingReference 01), or the unit value when absent
    valor_venta: Decimal


@dataclass(frozen=True)
class Cuota:
    numero: int
    monto: Decimal
    vencimiento: date


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


def _text(node: etree._Element, path: str) -> str:
    found = node.find(path, NS)
    return (found.text or "").strip() if found is not None else ""


def _amount(node: etree._Element | None, path: str) -> Decimal:
    """The amount at `path`, 0 when the XML has none."""
    amount = _optional_amount(node, path)
    return ZERO if amount is None else amount


def _optional_amount(node: etree._Element | None, path: str) -> Decimal | None:
    text = _text(node, path)
    if not text:
        return None
    try:
        return Decimal(text)
    except InvalidOperation:
        raise invalid("xml_firmado", f"El importe «{text}» del XML no es un número.") from None


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise invalid("xml_firmado", f"La fecha «{text}» del XML no es una fecha (AAAA-MM-DD).") from None


def parse(xml: bytes | str) -> PrintedVoucher:
    """The printed voucher's data from a signed UBL 2.1 voucher; a 400 when the XML is not one."""
    data = xml.encode("utf-8") if isinstance(xml, str) else xml
    if len(data) > MAX_XML_BYTES:
        raise invalid("xml_firmado", f"El XML supera el tamaño máximo de {MAX_XML_BYTES // (1024 * 1024)} MiB.")
    try:
        root = etree.fromstring(data, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise invalid("xml_firmado", f"El XML del comprobante no se puede leer: {exc}.") from None
    tipo = document_type(root)
    if tipo not in TITLES:
        raise invalid("xml_firmado", "El XML no es una factura, boleta ni nota de crédito o débito.")
    serie, _, numero = _text(root, "cbc:ID").partition("-")
    supplier = root.find("cac:AccountingSupplierParty/cac:Party", NS)
    customer = root.find("cac:AccountingCustomerParty/cac:Party", NS)
    if supplier is None or customer is None or not numero:
        raise invalid("xml_firmado", "Al XML le falta el emisor, el cliente o la serie-número.")
    address = supplier.find("cac:PartyLegalEntity/cac:RegistrationAddress", NS)
    place = [] if address is None else [_text(address, tag) for tag in ("cbc:District", "cbc:CityName",
                                                                          "cbc:CountrySubentity")]
    customer_id = customer.find("cac:PartyIdentification/cbc:ID", NS)
    taxable: dict[str, Decimal] = {}
    taxes: dict[str, Decimal] = {}
    for subtotal in root.iterfind("cac:TaxTotal/cac:TaxSubtotal", NS):
        code = _text(subtotal, "cac:TaxCategory/cac:TaxScheme/cbc:ID")
        taxable[code] = taxable.get(code, ZERO) + _amount(subtotal, "cbc:TaxableAmount")
        taxes[code] = taxes.get(code, ZERO) + _amount(subtotal, "cbc:TaxAmount")
    totals = root.find("cac:LegalMonetaryTotal", NS)
    if totals is None:
        totals = root.find("cac:RequestedMonetaryTotal", NS)
    if totals is None:
        raise invalid("xml_firmado", "Al XML le falta el importe total.")
    voucher = PrintedVoucher(
        tipo=tipo, serie=serie, numero=numero, fecha=_date(_text(root, "cbc:IssueDate")),
        hora=_text(root, "cbc:IssueTime"), moneda=_text(root, "cbc:DocumentCurrencyCode") or "PEN",
        emisor_ruc=_text(supplier, "cac:PartyIdentification/cbc:ID"),
        emisor_nombre=_text(supplier, "cac:PartyLegalEntity/cbc:RegistrationName"),
        emisor_comercial=_text(supplier, "cac:PartyName/cbc:Name"),
        emisor_direccion="" if address is None else _text(address, "cac:AddressLine/cbc:Line"),
        emisor_lugar=" - ".join(part for part in place if part and part != "-"),
        receptor_tipo=customer_id.get("schemeID", "") if customer_id is not None else "",
        receptor_numero=(customer_id.text or "").strip() if customer_id is not None else "",
        receptor_nombre=_text(customer, "cac:PartyLegalEntity/cbc:RegistrationName"),
        lines=[_line(node) for node in root if etree.QName(node).localname.endswith("Line")
               and etree.QName(node).namespace == CAC],
        taxable=taxable, taxes=taxes, descuentos=_amount(totals, "cbc:AllowanceTotalAmount"),
        total=_amount(totals, "cbc:PayableAmount"),
        leyenda=next((note.text or "" for note in root.iterfind("cbc:Note", NS)
                      if note.get("languageLocaleID") == "1000"), ""),
        digest_value=_text(root, ".//ds:SignedInfo/ds:Reference/ds:DigestValue"),
        referencia=_text(root, "cac:BillingReference/cac:InvoiceDocumentReference/cbc:ID"),
        referencia_tipo=_text(root, "cac:BillingReference/cac:InvoiceDocumentReference/cbc:DocumentTypeCode"),
        motivo_codigo=_text(root, "cac:DiscrepancyResponse/cbc:ResponseCode"),
        motivo=_text(root, "cac:DiscrepancyResponse/cbc:Description"))
    _payment(root, voucher)
    return voucher


def _line(node: etree._Element) -> Line:
    quantity = next((child for child in node if etree.QName(child).localname.endswith("Quantity")), None)
    valor_unitario = _amount(node, "cac:Price/cbc:PriceAmount")
    precio = _optional_amount(node, "cac:PricingReference/cac:AlternativeConditionPrice/cbc:PriceAmount")
    return Line(cantidad=Decimal((quantity.text or "0").strip()) if quantity is not None else Decimal(0),
                unidad=quantity.get("unitCode", "") if quantity is not None else "",
                codigo=_text(node, "cac:Item/cac:SellersItemIdentification/cbc:ID"),
                descripcion=" ".join(_text(node, "cac:Item/cbc:Description").split()),
                valor_unitario=valor_unitario, precio_unitario=precio if precio is not None else valor_unitario,
                valor_venta=_amount(node, "cbc:LineExtensionAmount"))


def _payment(root: etree._Element, voucher: PrintedVoucher) -> None:
    for terms in root.iterfind("cac:PaymentTerms", NS):
        if _text(terms, "cbc:ID") != "FormaPago":
            continue
        means = _text(terms, "cbc:PaymentMeansID")
        if means in ("Contado", "Credito"):
            voucher.forma_pago = means
            voucher.pendiente = _optional_amount(terms, "cbc:Amount")
        elif means.startswith("Cuota") and means[5:].isdigit():
            voucher.cuotas.append(Cuota(int(means[5:]), _amount(terms, "cbc:Amount"),
                                        _date(_text(terms, "cbc:PaymentDueDate"))))
