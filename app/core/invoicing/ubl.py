"""UBL 2.1 text of SUNAT vouchers (factura, boleta, notas de crédito y débito), built as text.

Built from precomputed fragments rather than an lxml tree: generation must cost a small fraction
of an RSA signature (docs/vouchers.md). Every user text goes through `esc` (element content) or
`esc_attr` (attribute values); amounts arrive already rounded. The document leaves an empty
`ext:ExtensionContent` for the signature and a `cac:Signature` block whose id is SIGNATURE_ID (the
signer's `ds:Signature/@Id`).

The text after the XML declaration is already in canonical form (inclusive C14N 1.0): namespaces
declared once on the root in canonical order, at most one attribute per element, explicit end tags,
and C14N's escaping. So the enveloped-signature digest is the hash of those bytes as they are, and
the signer never parses its own documents (docs/signing.md, tests/core/invoicing/test_ubl_canonical.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, time
from decimal import Decimal
from functools import cached_property

from app.core.invoicing.amounts import plain
from app.core.invoicing.namespaces import CAC, CBC, DS, EXT, document_namespace
from app.core.invoicing.sunat_catalogues import (
    AMOUNT_IN_WORDS,
    CHARGES,
    CONTADO,
    CREDITO,
    DAYS_UNIT,
    EXONERADO,
    EXPORTACION,
    FREE_AFFECTATIONS,
    FREE_TRANSFER,
    FREIGHT_REFERENCE_VALUES,
    GLOBAL_DISCOUNT,
    GRAVADO,
    GUIA_REMITENTE,
    INAFECTO,
    ITEM_PROPERTIES,
    ITINERANT_SALE,
    IVAP,
    IVAP_NOTICE,
    IVAP_PERCENT,
    LEGENDS,
    LINE_CHARGE,
    LINE_DISCOUNT,
    PERCEPCION_NOTICE,
    PRICE_WITH_IGV,
    REFERENCE_VALUE,
    RETENCION_IGV,
    TAXED_AFFECTATIONS,
)
from app.core.invoicing.sunat_codes import DETRACCION_LEGEND

SIGNATURE_ID = "SignatureSP"

# The prefixes in canonical order (C14N sorts namespace declarations by prefix).
NS = f'xmlns:cac="{CAC}" xmlns:cbc="{CBC}" xmlns:ds="{DS}" xmlns:ext="{EXT}"'



@dataclass(frozen=True)
class UblLayout:
    """How one type of voucher is written in UBL 2.1: its root, line, quantity and monetary total elements, and
    whether it is an invoice (cbc:InvoiceTypeCode, the detracción, payment terms and the global discount). Each
    document type declares its own (app/core/invoicing/documents/)."""

    root: str
    line: str
    quantity: str
    total: str
    invoice: bool = False


@dataclass(frozen=True)
class TaxScheme:
    """Catalogue 05 entry used for one IGV affectation (catalogue 07)."""

    code: str
    name: str
    type_code: str

    @cached_property
    def xml(self) -> str:
        return (f"<cac:TaxScheme><cbc:ID>{self.code}</cbc:ID><cbc:Name>{self.name}</cbc:Name>"
                f"<cbc:TaxTypeCode>{self.type_code}</cbc:TaxTypeCode></cac:TaxScheme>")


IGV = TaxScheme("1000", "IGV", "VAT")
EXO = TaxScheme("9997", "EXO", "VAT")
INA = TaxScheme("9998", "INA", "FRE")
EXP = TaxScheme("9995", "EXP", "FRE")
GRA = TaxScheme("9996", "GRA", "FRE")  # free transfers (gratuitas): the reference value, nothing charged
ISC = TaxScheme("2000", "ISC", "EXC")  # the selective consumption tax, beside the IGV and inside its base
ICBPER = TaxScheme("7152", "ICBPER", "OTH")  # the plastic bag tax, per bag, beside the line's IGV scheme
IVAP_SCHEME = TaxScheme("1016", "IVAP", "VAT")  # rice pilado (affectation 17), 4 %
SCHEME_BY_AFFECTATION = {GRAVADO: IGV, EXONERADO: EXO, INAFECTO: INA, EXPORTACION: EXP, IVAP: IVAP_SCHEME,
                         **{code: GRA for code in FREE_AFFECTATIONS}}
SCHEME_ORDER = (IGV, IVAP_SCHEME, EXO, INA, EXP, GRA)  # GRA last: the builder takes the free subtotal off the end

FREE_LEGEND = LEGENDS[FREE_TRANSFER]  # catalogue 52, code 1002

FACTOR_PLACES = Decimal("0.00001")
DESPATCH_ADVICE = GUIA_REMITENTE  # catalogue 01: guía de remisión remitente

# The XML declaration, then the canonical document: its C14N is the text after this prefix.
XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
EMPTY_EXTENSION_CONTENT = "<ext:ExtensionContent></ext:ExtensionContent>"

# C14N 1.0 escaping: element content escapes & < > and CR; attribute values & < " TAB LF CR.
_NEEDS_TEXT_ESCAPE = re.compile("[&<>\r]")
_NEEDS_ATTRIBUTE_ESCAPE = re.compile('[&<"\t\n\r]')


def esc(text: str) -> str:
    """Escape text for element content, exactly as C14N writes it."""
    # Most texts need nothing, and a search is cheap; chained replaces are ~5 times cheaper than translate.
    if not _NEEDS_TEXT_ESCAPE.search(text):
        return text
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#xD;")


def esc_attr(text: str) -> str:
    """Escape an attribute value (always written between double quotes), exactly as C14N writes it."""
    if not _NEEDS_ATTRIBUTE_ESCAPE.search(text):
        return text
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;").replace("\t", "&#x9;")
            .replace("\n", "&#xA;").replace("\r", "&#xD;"))


@dataclass(frozen=True)
class FreightRoute:
    """Road freight under the detracción (operation 1004): the line's cac:Delivery (SUNAT's 3116-3126)."""

    origen_ubigeo: str
    origen_direccion: str
    destino_ubigeo: str
    destino_direccion: str
    detalle: str  # cac:Despatch/cbc:Instructions
    valores: tuple[Decimal, Decimal, Decimal]  # reference values 01 (service), 02 (effective load), 03 (useful load)


@dataclass(frozen=True)
class Catch:
    """Hydrobiological goods under the detracción (operation 1002): catalogue 55 properties 3001-3006."""

    matricula: str
    embarcacion: str
    especie: str
    lugar: str
    fecha: date
    cantidad: Decimal


@dataclass(frozen=True)
class Guest:
    """The foreign guest of an export of hospedaje (0202: every field) or a paquete turístico (0205: the first
    four), written as catalogue 55 properties 4000-4009."""

    nombre: str
    tipo_documento: str
    numero_documento: str
    pais_pasaporte: str
    pais_residencia: str | None = None
    fecha_ingreso_pais: date | None = None
    fecha_ingreso: date | None = None
    fecha_salida: date | None = None
    fecha_consumo: date | None = None


@dataclass(slots=True)
class Line:
    descripcion: str
    cantidad: Decimal
    unidad: str
    codigo: str | None
    afectacion: str
    valor_unitario: Decimal  # without IGV, as given
    precio_unitario: Decimal  # with IGV (PricingReference, catalogue 16 code 01)
    valor_venta: Decimal  # cantidad × valor_unitario, rounded
    igv: Decimal
    scheme: TaxScheme = None  # type: ignore[assignment]  # set in __post_init__ from the affectation when not given
    bolsas: int = 0  # plastic bags on the line (ICBPER), 0 for any other line
    icbper_rate: Decimal | None = None  # the tax per bag
    icbper: Decimal = Decimal("0.00")  # bolsas × icbper_rate
    descuento: Decimal | None = None  # a discount that reduces the base (code 00): valor_venta is after it
    # Other charges and discounts of catalogue 53 (01, 47, 48) as (code, amount, base): valor_venta includes a 47
    cargos: tuple[tuple[str, Decimal, Decimal], ...] = ()
    isc: tuple[str, Decimal, Decimal, Decimal] | None = None  # (catalogue 08 system, taxable, percent, ISC)
    ruta: FreightRoute | None = None  # a freight line of operation 1004
    pesca: Catch | None = None  # a hydrobiological line of operation 1002
    huesped: Guest | None = None  # the guest of an export of hospedaje (0202) or paquete turístico (0205)
    # The line's XML after its ID, for one (currency, element): a line is immutable and may be reused by many
    # vouchers (app.core.invoicing.builder keeps repeated lines), so it is written once.
    rendered: tuple[str, str, str] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.scheme is None:
            self.scheme = SCHEME_BY_AFFECTATION.get(self.afectacion, IGV)  # unknown codes are refused anyway


@dataclass
class Party:
    tipo_documento: str  # catalogue 06
    numero_documento: str
    nombre: str
    direccion: str | None = None  # cac:RegistrationAddress/cac:AddressLine/cbc:Line, when given


@dataclass(frozen=True)
class Detraccion:
    codigo: str  # catalogue 54
    porcentaje: Decimal
    monto: Decimal  # in PEN, whatever the voucher's currency
    cuenta: str
    medio_pago: str  # catalogue 59


@dataclass(frozen=True)
class Percepcion:
    codigo: str  # catalogue 53: 51, 52, 53
    factor: Decimal  # the rate as a share (0.02)
    monto: Decimal  # in PEN
    base: Decimal  # the payable amount, in PEN
    total: Decimal  # base + monto: what the customer pays with the percepción (PaymentTerms «Percepcion»)


@dataclass
class Document:
    """Everything the XML says, already computed and checked."""

    tipo: str
    serie: str
    numero: int
    fecha: date
    hora: time
    moneda: str
    tipo_operacion: str  # catalogue 51 (invoices only)
    emisor_ruc: str
    emisor_nombre: str
    emisor_comercial: str | None
    emisor_ubigeo: str
    emisor_direccion: str
    emisor_departamento: str
    emisor_provincia: str
    emisor_distrito: str
    emisor_establecimiento: str
    receptor: Party
    layout: UblLayout  # how its type is written (the document type's)
    lines: list[Line]
    subtotals: list[tuple[TaxScheme, Decimal, Decimal]]  # (scheme, taxable, tax)
    valor_venta: Decimal
    igv: Decimal
    total: Decimal  # valor_venta + igv + icbper
    leyenda: str
    gratuitas: bool = False  # a free line: legend 1002 (its value and IGV are the 9996 subtotal, not charged)
    icbper: Decimal = Decimal("0.00")  # the plastic bag tax of all lines (scheme 7152)
    descuento_global: tuple[Decimal, Decimal] | None = None  # (amount, gravado base before it), code 02
    detraccion: Detraccion | None = None  # the SPOT: PaymentMeans and PaymentTerms «Detraccion», legend 2006
    guias: list[str] = field(default_factory=list)  # despatch advices "SERIE-NUMERO" (catalogue 01 type 09)
    orden_compra: str | None = None  # cac:OrderReference
    forma_pago: str | None = None  # "Contado" or "Credito" (invoices)
    cuotas: list[tuple[Decimal, date]] = field(default_factory=list)
    referencia: tuple[str, str] | None = None  # (catalogue 01 type, "SERIE-NUMERO") for notes
    cargos: list[tuple[str, Decimal, Decimal]] = field(default_factory=list)  # other global charges/discounts (53)
    descuentos_fuera: Decimal = Decimal("0.00")  # cbc:AllowanceTotalAmount (01, 03)
    cargos_fuera: Decimal = Decimal("0.00")  # cbc:ChargeTotalAmount (45, 46, 48, 50)
    redondeo: Decimal | None = None  # cbc:PayableRoundingAmount
    payable: Decimal | None = None  # cbc:PayableAmount; None: the total
    vencimiento: date | None = None  # cbc:DueDate given by the request (else the last instalment's)
    entrega: tuple[str, str | None] | None = None  # (address line, ubigeo) of cac:Delivery/cac:DeliveryLocation
    relacionados: list[tuple[str, str]] = field(default_factory=list)  # (catalogue 12 type, number)
    medio_pago: str | None = None  # catalogue 59 (cac:PaymentMeans/cbc:PaymentMeansCode)
    percepcion: Percepcion | None = None  # operation 2001: AllowanceCharge 51-53 and PaymentTerms «Percepcion»
    retencion: tuple[Decimal, Decimal, Decimal] | None = None  # (factor, amount, base): AllowanceCharge 62
    # Advances deducted: (catalogue 12 type, "SERIE-NUMERO", paid with IGV, catalogue 53 code, value, base).
    anticipos: list[tuple[str, str, Decimal, str, Decimal, Decimal]] = field(default_factory=list)
    prepaid: Decimal = Decimal("0.00")  # cbc:PrepaidAmount
    isc: tuple[Decimal, Decimal] | None = None  # (taxable, ISC): the voucher's 2000 subtotal
    motivo: tuple[str, str] | None = None  # (catalogue 09/10 code, description) for notes


def _amount(tag: str, value: Decimal, currency: str) -> str:
    return f'<cbc:{tag} currencyID="{esc_attr(currency)}">{value:.2f}</cbc:{tag}>'


def _header(doc: Document, root: str, invoice: bool) -> str:
    parts = [
        XML_DECLARATION,
        f'<{root} xmlns="{document_namespace(root)}" {NS}>',
        f"<ext:UBLExtensions><ext:UBLExtension>{EMPTY_EXTENSION_CONTENT}</ext:UBLExtension></ext:UBLExtensions>",
        "<cbc:UBLVersionID>2.1</cbc:UBLVersionID><cbc:CustomizationID>2.0</cbc:CustomizationID>",
        f"<cbc:ID>{esc(doc.serie)}-{doc.numero}</cbc:ID>",
        f"<cbc:IssueDate>{doc.fecha.isoformat()}</cbc:IssueDate>",
        f"<cbc:IssueTime>{doc.hora.isoformat(timespec='seconds')}</cbc:IssueTime>",
    ]
    if invoice:
        if doc.vencimiento is not None:
            parts.append(f"<cbc:DueDate>{doc.vencimiento.isoformat()}</cbc:DueDate>")
        elif doc.forma_pago == CREDITO and doc.cuotas:
            parts.append(f"<cbc:DueDate>{max(d for _, d in doc.cuotas).isoformat()}</cbc:DueDate>")
        parts.append(f'<cbc:InvoiceTypeCode listID="{doc.tipo_operacion}">{esc(doc.tipo)}</cbc:InvoiceTypeCode>')
    parts.append(f'<cbc:Note languageLocaleID="{AMOUNT_IN_WORDS}">{esc(doc.leyenda)}</cbc:Note>')
    if doc.detraccion:
        parts.append(f'<cbc:Note languageLocaleID="{DETRACCION_LEGEND[0]}">{DETRACCION_LEGEND[1]}</cbc:Note>')
    if doc.percepcion:
        parts.append(f'<cbc:Note languageLocaleID="{PERCEPCION_NOTICE}">{LEGENDS[PERCEPCION_NOTICE]}</cbc:Note>')
    if doc.gratuitas:
        parts.append(f'<cbc:Note languageLocaleID="{FREE_TRANSFER}">{FREE_LEGEND}</cbc:Note>')
    if doc.entrega:
        parts.append(f'<cbc:Note languageLocaleID="{ITINERANT_SALE}">{LEGENDS[ITINERANT_SALE]}</cbc:Note>')
    if any(line.scheme is IVAP_SCHEME for line in doc.lines):
        parts.append(f'<cbc:Note languageLocaleID="{IVAP_NOTICE}">{LEGENDS[IVAP_NOTICE]}</cbc:Note>')
    parts.append(f"<cbc:DocumentCurrencyCode>{esc(doc.moneda)}</cbc:DocumentCurrencyCode>")
    if doc.motivo and doc.referencia:
        code, reason = doc.motivo
        parts.append(f"<cac:DiscrepancyResponse><cbc:ReferenceID>{esc(doc.referencia[1])}</cbc:ReferenceID>"
                     f"<cbc:ResponseCode>{esc(code)}</cbc:ResponseCode>"
                     f"<cbc:Description>{esc(reason)}</cbc:Description></cac:DiscrepancyResponse>")
    if doc.orden_compra:  # UBL 2.1's order: OrderReference, BillingReference, DespatchDocumentReference
        parts.append(f"<cac:OrderReference><cbc:ID>{esc(doc.orden_compra)}</cbc:ID></cac:OrderReference>")
    if doc.motivo and doc.referencia:
        parts.append(f"<cac:BillingReference><cac:InvoiceDocumentReference><cbc:ID>{esc(doc.referencia[1])}</cbc:ID>"
                     f"<cbc:DocumentTypeCode>{esc(doc.referencia[0])}</cbc:DocumentTypeCode>"
                     "</cac:InvoiceDocumentReference></cac:BillingReference>")
    for guia in doc.guias:
        parts.append(f"<cac:DespatchDocumentReference><cbc:ID>{esc(guia)}</cbc:ID>"
                     f"<cbc:DocumentTypeCode>{DESPATCH_ADVICE}</cbc:DocumentTypeCode></cac:DespatchDocumentReference>")
    for position, (tipo, numero, *_) in enumerate(doc.anticipos, start=1):  # each tied to its PrepaidPayment
        parts.append(f"<cac:AdditionalDocumentReference><cbc:ID>{esc(numero)}</cbc:ID>"
                     f"<cbc:DocumentTypeCode>{tipo}</cbc:DocumentTypeCode>"
                     f"<cbc:DocumentStatusCode>{position}</cbc:DocumentStatusCode><cac:IssuerParty>"
                     f'<cac:PartyIdentification><cbc:ID schemeID="6">{doc.emisor_ruc}</cbc:ID></cac:PartyIdentification>'
                     "</cac:IssuerParty></cac:AdditionalDocumentReference>")
    for tipo, numero in doc.relacionados:
        parts.append(f"<cac:AdditionalDocumentReference><cbc:ID>{esc(numero)}</cbc:ID>"
                     f"<cbc:DocumentTypeCode>{tipo}</cbc:DocumentTypeCode></cac:AdditionalDocumentReference>")
    return "".join(parts)


def _signature(doc: Document) -> str:
    return signature_block(doc.emisor_ruc, doc.emisor_nombre)


def signature_block(ruc: str, name: str) -> str:
    """The cac:Signature a UBL document names its signer in (the ds:Signature's id, the issuer's RUC and name)."""
    return (f"<cac:Signature><cbc:ID>{SIGNATURE_ID}</cbc:ID><cac:SignatoryParty><cac:PartyIdentification>"
            f"<cbc:ID>{ruc}</cbc:ID></cac:PartyIdentification><cac:PartyName>"
            f"<cbc:Name>{esc(name)}</cbc:Name></cac:PartyName></cac:SignatoryParty>"
            "<cac:DigitalSignatureAttachment><cac:ExternalReference>"
            f"<cbc:URI>#{SIGNATURE_ID}</cbc:URI></cac:ExternalReference></cac:DigitalSignatureAttachment>"
            "</cac:Signature>")


def _parties(doc: Document) -> str:
    trade_name = (f"<cac:PartyName><cbc:Name>{esc(doc.emisor_comercial)}</cbc:Name></cac:PartyName>"
                  if doc.emisor_comercial else "")
    supplier = (
        "<cac:AccountingSupplierParty><cac:Party>"
        f'<cac:PartyIdentification><cbc:ID schemeID="6">{doc.emisor_ruc}</cbc:ID></cac:PartyIdentification>'
        f"{trade_name}<cac:PartyLegalEntity><cbc:RegistrationName>{esc(doc.emisor_nombre)}</cbc:RegistrationName>"
        f"<cac:RegistrationAddress><cbc:ID>{doc.emisor_ubigeo}</cbc:ID>"
        f"<cbc:AddressTypeCode>{doc.emisor_establecimiento}</cbc:AddressTypeCode>"
        f"<cbc:CityName>{esc(doc.emisor_provincia)}</cbc:CityName>"
        f"<cbc:CountrySubentity>{esc(doc.emisor_departamento)}</cbc:CountrySubentity>"
        f"<cbc:District>{esc(doc.emisor_distrito)}</cbc:District>"
        f"<cac:AddressLine><cbc:Line>{esc(doc.emisor_direccion)}</cbc:Line></cac:AddressLine>"
        "<cac:Country><cbc:IdentificationCode>PE</cbc:IdentificationCode></cac:Country>"
        "</cac:RegistrationAddress></cac:PartyLegalEntity></cac:Party></cac:AccountingSupplierParty>"
    )
    address = (f"<cac:RegistrationAddress><cac:AddressLine><cbc:Line>{esc(doc.receptor.direccion)}</cbc:Line>"
               "</cac:AddressLine></cac:RegistrationAddress>" if doc.receptor.direccion else "")
    customer = (
        "<cac:AccountingCustomerParty><cac:Party><cac:PartyIdentification>"
        f'<cbc:ID schemeID="{esc_attr(doc.receptor.tipo_documento)}">{esc(doc.receptor.numero_documento)}</cbc:ID>'
        "</cac:PartyIdentification><cac:PartyLegalEntity>"
        f"<cbc:RegistrationName>{esc(doc.receptor.nombre)}</cbc:RegistrationName>{address}"
        "</cac:PartyLegalEntity></cac:Party></cac:AccountingCustomerParty>"
    )
    return supplier + customer


def _detraccion(doc: Document) -> str:
    """The SPOT: the Banco de la Nación account (PaymentMeans, catalogue 59 means) and the code, rate and amount in
    PEN (PaymentTerms), both with ID «Detraccion» (SUNAT's 3034, 3127, 3208)."""
    spot = doc.detraccion
    if spot is None:
        return ""
    return (f"<cac:PaymentMeans><cbc:ID>Detraccion</cbc:ID><cbc:PaymentMeansCode>{spot.medio_pago}</cbc:PaymentMeansCode>"
            f"<cac:PayeeFinancialAccount><cbc:ID>{esc(spot.cuenta)}</cbc:ID></cac:PayeeFinancialAccount>"
            f"</cac:PaymentMeans><cac:PaymentTerms><cbc:ID>Detraccion</cbc:ID>"
            f"<cbc:PaymentMeansID>{spot.codigo}</cbc:PaymentMeansID>"
            f"<cbc:PaymentPercent>{plain(spot.porcentaje)}</cbc:PaymentPercent>"
            f"{_amount('Amount', spot.monto, 'PEN')}</cac:PaymentTerms>")


def _delivery_and_means(doc: Document) -> str:
    """The place of delivery (cac:Delivery, after the parties) and how the customer pays (cac:PaymentMeans with
    its catalogue 59 code, before the detracción's), as UBL 2.1 orders them."""
    parts = []
    if doc.entrega:
        line, ubigeo = doc.entrega
        parts.append("<cac:Delivery><cac:DeliveryLocation><cac:Address>"
                     + (f"<cbc:ID>{ubigeo}</cbc:ID>" if ubigeo else "")
                     + f"<cac:AddressLine><cbc:Line>{esc(line)}</cbc:Line></cac:AddressLine>"
                     "<cac:Country><cbc:IdentificationCode>PE</cbc:IdentificationCode></cac:Country>"
                     "</cac:Address></cac:DeliveryLocation></cac:Delivery>")
    if doc.medio_pago:
        parts.append(f"<cac:PaymentMeans><cbc:PaymentMeansCode>{doc.medio_pago}</cbc:PaymentMeansCode>"
                     "</cac:PaymentMeans>")
    return "".join(parts)


def _perception_and_retention(doc: Document, cur: str) -> str:
    """The percepción (a charge, in PEN: SUNAT's 2788, 2792) and the retención (a discount of 62, in the voucher's
    currency), each with its factor written as the rate's share, as SUNAT's format asks (3025)."""
    parts = []
    if doc.percepcion:
        spot = doc.percepcion
        parts.append("<cac:AllowanceCharge><cbc:ChargeIndicator>true</cbc:ChargeIndicator>"
                     f"<cbc:AllowanceChargeReasonCode>{spot.codigo}</cbc:AllowanceChargeReasonCode>"
                     f"<cbc:MultiplierFactorNumeric>{plain(spot.factor)}</cbc:MultiplierFactorNumeric>"
                     f"{_amount('Amount', spot.monto, 'PEN')}{_amount('BaseAmount', spot.base, 'PEN')}"
                     "</cac:AllowanceCharge>")
    if doc.retencion:
        factor, amount, base = doc.retencion
        parts.append("<cac:AllowanceCharge><cbc:ChargeIndicator>false</cbc:ChargeIndicator>"
                     f"<cbc:AllowanceChargeReasonCode>{RETENCION_IGV}</cbc:AllowanceChargeReasonCode>"
                     f"<cbc:MultiplierFactorNumeric>{plain(factor)}</cbc:MultiplierFactorNumeric>"
                     f"{_amount('Amount', amount, cur)}{_amount('BaseAmount', base, cur)}</cac:AllowanceCharge>")
    return "".join(parts)


def _payment_terms(doc: Document) -> str:
    if doc.forma_pago is None:
        return ""
    if doc.forma_pago == CONTADO:
        return "<cac:PaymentTerms><cbc:ID>FormaPago</cbc:ID><cbc:PaymentMeansID>Contado</cbc:PaymentMeansID></cac:PaymentTerms>"
    pending = sum((amount for amount, _ in doc.cuotas), Decimal(0))
    parts = ["<cac:PaymentTerms><cbc:ID>FormaPago</cbc:ID><cbc:PaymentMeansID>Credito</cbc:PaymentMeansID>",
             _amount("Amount", pending, doc.moneda), "</cac:PaymentTerms>"]
    for index, (amount, due) in enumerate(doc.cuotas, start=1):
        parts.append(f"<cac:PaymentTerms><cbc:ID>FormaPago</cbc:ID><cbc:PaymentMeansID>Cuota{index:03d}</cbc:PaymentMeansID>"
                     f"{_amount('Amount', amount, doc.moneda)}<cbc:PaymentDueDate>{due.isoformat()}</cbc:PaymentDueDate>"
                     "</cac:PaymentTerms>")
    return "".join(parts)


def _tax_total(doc: Document) -> str:
    cur = doc.moneda
    taxes = doc.igv + doc.icbper + (doc.isc[1] if doc.isc else 0)
    parts = ["<cac:TaxTotal>", _amount("TaxAmount", taxes, cur)]
    if doc.isc:
        parts.append(f"<cac:TaxSubtotal>{_amount('TaxableAmount', doc.isc[0], cur)}{_amount('TaxAmount', doc.isc[1], cur)}"
                     f"<cac:TaxCategory>{ISC.xml}</cac:TaxCategory></cac:TaxSubtotal>")
    for scheme, taxable, tax in doc.subtotals:
        parts.append(f"<cac:TaxSubtotal>{_amount('TaxableAmount', taxable, cur)}{_amount('TaxAmount', tax, cur)}"
                     f"<cac:TaxCategory>{scheme.xml}</cac:TaxCategory></cac:TaxSubtotal>")
    if doc.icbper:  # a per-unit tax: no taxable amount (SUNAT's sheets skip 3003 for 7152)
        parts.append(f"<cac:TaxSubtotal>{_amount('TaxAmount', doc.icbper, cur)}"
                     f"<cac:TaxCategory>{ICBPER.xml}</cac:TaxCategory></cac:TaxSubtotal>")
    parts.append("</cac:TaxTotal>")
    return "".join(parts)


def _monetary_total(doc: Document, element: str) -> str:
    """UBL 2.1's order: LineExtension, TaxInclusive, AllowanceTotal, ChargeTotal, PayableRounding, Payable."""
    cur = doc.moneda
    outside = ((_amount("AllowanceTotalAmount", doc.descuentos_fuera, cur) if doc.descuentos_fuera else "")
               + (_amount("ChargeTotalAmount", doc.cargos_fuera, cur) if doc.cargos_fuera else "")
               + (_amount("PrepaidAmount", doc.prepaid, cur) if doc.prepaid else "")
               + (_amount("PayableRoundingAmount", doc.redondeo, cur) if doc.redondeo is not None else ""))
    payable = doc.total if doc.payable is None else doc.payable
    return (f"<cac:{element}>{_amount('LineExtensionAmount', doc.valor_venta, cur)}"
            f"{_amount('TaxInclusiveAmount', doc.total, cur)}{outside}{_amount('PayableAmount', payable, cur)}"
            f"</cac:{element}>")


def _tax_category(afectacion: str, scheme: TaxScheme) -> str:
    percent = "18" if afectacion in TAXED_AFFECTATIONS else IVAP_PERCENT if afectacion == IVAP else "0"
    return (f"<cac:TaxCategory><cbc:Percent>{percent}</cbc:Percent>"
            f"<cbc:TaxExemptionReasonCode>{esc(afectacion)}</cbc:TaxExemptionReasonCode>{scheme.xml}"
            "</cac:TaxCategory>")


# A line's TaxCategory for each affectation and scheme, written once when first needed (not at import: a table built
# then would keep what _tax_category wrote before a test, or mutmut, changed it).
_tax_categories: dict[tuple[str, str], str] = {}


def tax_category(afectacion: str, scheme: TaxScheme) -> str:
    key = (afectacion, scheme.code)
    category = _tax_categories.get(key)
    if category is None:
        category = _tax_categories[key] = _tax_category(afectacion, scheme)
    return category


def _line(index: int, line: Line, cur: str, element: str, quantity_tag: str) -> str:
    rendered = line.rendered
    if rendered is None or rendered[0] != cur or rendered[1] != element:
        rendered = line.rendered = (cur, element, _line_body(line, cur, element, quantity_tag))
    return f"<cac:{element}><cbc:ID>{index}</cbc:ID>{rendered[2]}"


def _line_body(line: Line, cur: str, element: str, quantity_tag: str) -> str:
    """A line's XML after its ID. One f-string per line, each amount formatted once. Line amounts are rounded
    to cents (exponent -2), so str() writes them with two decimals, as the schema wants."""
    value = str(line.valor_venta)
    tax = str(line.igv)
    category = tax_category(line.afectacion, line.scheme)
    code = (f"<cac:SellersItemIdentification><cbc:ID>{esc(line.codigo)}</cbc:ID></cac:SellersItemIdentification>"
            if line.codigo else "")
    if line.bolsas or line.descuento or line.scheme is GRA or line.cargos or line.isc or line.ruta or line.pesca or line.huesped:
        return _rich_line_body(line, cur, element, quantity_tag, value, tax, category, code)
    return (
        f'<cbc:{quantity_tag} unitCode="{esc_attr(line.unidad)}">{plain(line.cantidad)}</cbc:{quantity_tag}>'
        f'<cbc:LineExtensionAmount currencyID="{cur}">{value}</cbc:LineExtensionAmount>'
        f'<cac:PricingReference><cac:AlternativeConditionPrice><cbc:PriceAmount currencyID="{cur}">'
        f"{plain(line.precio_unitario)}</cbc:PriceAmount><cbc:PriceTypeCode>{PRICE_WITH_IGV}</cbc:PriceTypeCode>"
        "</cac:AlternativeConditionPrice></cac:PricingReference>"
        f'<cac:TaxTotal><cbc:TaxAmount currencyID="{cur}">{tax}</cbc:TaxAmount><cac:TaxSubtotal>'
        f'<cbc:TaxableAmount currencyID="{cur}">{value}</cbc:TaxableAmount>'
        f'<cbc:TaxAmount currencyID="{cur}">{tax}</cbc:TaxAmount>{category}</cac:TaxSubtotal></cac:TaxTotal>'
        f"<cac:Item><cbc:Description>{esc(line.descripcion)}</cbc:Description>{code}</cac:Item>"
        f'<cac:Price><cbc:PriceAmount currencyID="{cur}">{plain(line.valor_unitario)}</cbc:PriceAmount></cac:Price>'
        f"</cac:{element}>"
    )


def _discount(amount: Decimal, base: Decimal, cur: str, reason: str) -> str:
    """A discount (cac:AllowanceCharge, ChargeIndicator false) of catalogue 53 `reason`, with its factor of the
    base rounded to 5 decimals as SUNAT's format allows (3052); a charge (45-50) has ChargeIndicator true."""
    factor = (amount / base).quantize(FACTOR_PLACES) if base else Decimal(0)
    indicator = "true" if reason in CHARGES else "false"
    return (f"<cac:AllowanceCharge><cbc:ChargeIndicator>{indicator}</cbc:ChargeIndicator>"
            f"<cbc:AllowanceChargeReasonCode>{reason}</cbc:AllowanceChargeReasonCode>"
            f"<cbc:MultiplierFactorNumeric>{factor}</cbc:MultiplierFactorNumeric>"
            f"{_amount('Amount', amount, cur)}{_amount('BaseAmount', base, cur)}</cac:AllowanceCharge>")


def _address(tag: str, ubigeo: str, line: str) -> str:
    return (f'<cac:{tag}><cbc:ID schemeAgencyName="PE:INEI" schemeName="Ubigeos">{esc(ubigeo)}</cbc:ID>'
            f"<cac:AddressLine><cbc:Line>{esc(line)}</cbc:Line></cac:AddressLine></cac:{tag}>")


def _freight(route: FreightRoute | None, cur: str) -> str:
    """The line's cac:Delivery of road freight: destination, trip detail and origin, then the three reference
    values (DeliveryTerms 01, 02, 03), as SUNAT's guide for operation 1004 places them."""
    if route is None:
        return ""
    terms = "".join(f"<cac:DeliveryTerms><cbc:ID>{code}</cbc:ID>{_amount('Amount', amount, cur)}</cac:DeliveryTerms>"
                    for code, amount in zip(FREIGHT_REFERENCE_VALUES, route.valores, strict=True))
    return (f"<cac:Delivery><cac:DeliveryLocation>"
            f"{_address('Address', route.destino_ubigeo, route.destino_direccion)}</cac:DeliveryLocation>"
            f"<cac:Despatch><cbc:Instructions>{esc(route.detalle)}</cbc:Instructions>"
            f"{_address('DespatchAddress', route.origen_ubigeo, route.origen_direccion)}</cac:Despatch>"
            f"{terms}</cac:Delivery>")


def _property(code: str, name: str, value: str) -> str:
    return (f"<cac:AdditionalItemProperty><cbc:Name>{esc(name)}</cbc:Name>"
            f'<cbc:NameCode listAgencyName="PE:SUNAT" listName="Propiedad del item" '
            f'listURI="urn:pe:gob:sunat:cpe:see:gem:catalogos:catalogo55">{code}</cbc:NameCode>{value}'
            "</cac:AdditionalItemProperty>")


def _catch(catch: Catch | None, unit: str) -> str:
    """The catalogue 55 properties 3001-3006 of a hydrobiological line (SUNAT's 3063, 3130-3135)."""
    if catch is None:
        return ""
    texts = (("3001", catch.matricula), ("3002", catch.embarcacion), ("3003", catch.especie), ("3004", catch.lugar))
    return ("".join(_text_property(code, text) for code, text in texts) + _dated("3005", catch.fecha)
            + _property("3006", ITEM_PROPERTIES["3006"],
                        f'<cbc:ValueQuantity unitCode="{esc_attr(unit)}">{plain(catch.cantidad)}</cbc:ValueQuantity>'))


def _text_property(code: str, text: str) -> str:
    return _property(code, ITEM_PROPERTIES[code], f"<cbc:Value>{esc(text)}</cbc:Value>")


def _dated(code: str, when: date) -> str:
    return _property(code, ITEM_PROPERTIES[code], f"<cac:UsabilityPeriod><cbc:StartDate>{when.isoformat()}"
                     "</cbc:StartDate></cac:UsabilityPeriod>")


def _guest(guest: Guest | None) -> str:
    """The catalogue 55 properties of a guest: 4000 and 4007-4009 always (SUNAT's 3136-3139), and for hospedaje
    4001-4006 (3140-3145), the days of stay (4005) counted from the dates."""
    if guest is None:
        return ""
    texts = [("4000", guest.pais_pasaporte), ("4007", guest.nombre), ("4008", guest.tipo_documento),
             ("4009", guest.numero_documento)]
    if guest.pais_residencia:
        texts.append(("4001", guest.pais_residencia))
    out = "".join(_text_property(code, text) for code, text in texts)
    dates = (("4002", guest.fecha_ingreso_pais), ("4003", guest.fecha_ingreso), ("4004", guest.fecha_salida),
             ("4006", guest.fecha_consumo))
    out += "".join(_dated(code, when) for code, when in dates if when is not None)
    if guest.fecha_ingreso and guest.fecha_salida:
        days = (guest.fecha_salida - guest.fecha_ingreso).days
        out += _property("4005", ITEM_PROPERTIES["4005"], f'<cac:UsabilityPeriod><cbc:DurationMeasure unitCode="{DAYS_UNIT}">'
                         f"{days}</cbc:DurationMeasure></cac:UsabilityPeriod>")
    return out


def _rich_line_body(line: Line, cur: str, element: str, quantity_tag: str, value: str, tax: str, category: str,
                    code: str) -> str:
    """A line with a discount, bags or given free. A free line (scheme 9996) states its reference unit value as
    PricingReference of type 02 and a charged price of 0 in cac:Price; its value and tax are the reference
    value's (SUNAT's 2416, 3224). A discount (code 00) sits between PricingReference and TaxTotal, its base
    the quantity times the unit value; the line's value is after it. Plastic bags: the IGV subtotal, then
    ICBPER's (scheme 7152) with the number of bags (cbc:BaseUnitMeasure, NIU, equal to the quantity: 3236, 4320)
    and the tax per bag (cbc:PerUnitAmount); the line's TaxAmount is both taxes."""
    gross = line.valor_venta + (line.descuento or 0) - sum(amount for code, amount, _ in line.cargos
                                                           if code == LINE_CHARGE)
    discount = (_discount(line.descuento, gross, cur, LINE_DISCOUNT) if line.descuento else "")
    discount += "".join(_discount(amount, base, cur, code) for code, amount, base in line.cargos)
    bags = (f'<cac:TaxSubtotal><cbc:TaxAmount currencyID="{cur}">{line.icbper}</cbc:TaxAmount>'
            f'<cbc:BaseUnitMeasure unitCode="NIU">{line.bolsas}</cbc:BaseUnitMeasure><cac:TaxCategory>'
            f'<cbc:PerUnitAmount currencyID="{cur}">{line.icbper_rate}</cbc:PerUnitAmount>{ICBPER.xml}'
            "</cac:TaxCategory></cac:TaxSubtotal>" if line.bolsas else "")
    isc = ""
    if line.isc:
        system, isc_base, percent, isc_amount = line.isc
        isc = (f'<cac:TaxSubtotal><cbc:TaxableAmount currencyID="{cur}">{isc_base}</cbc:TaxableAmount>'
               f'<cbc:TaxAmount currencyID="{cur}">{isc_amount}</cbc:TaxAmount><cac:TaxCategory>'
               f"<cbc:Percent>{plain(percent)}</cbc:Percent><cbc:TierRange>{system}</cbc:TierRange>{ISC.xml}"
               "</cac:TaxCategory></cac:TaxSubtotal>")
        value_igv = str(line.valor_venta + isc_amount)  # the IGV base includes the ISC (SUNAT's 3272)
    else:
        value_igv = value
    free = line.scheme is GRA
    # The line's TaxAmount: its taxes (IGV, ICBPER). A free line states its free IGV there as SUNAT's guide does,
    # with bags or without (issue 37); SUNAT's 3292 allows it beside ICBPER within 1.00 (the builder holds to it).
    line_tax = line.igv + line.icbper + (line.isc[3] if line.isc else 0)
    return (
        f'<cbc:{quantity_tag} unitCode="{esc_attr(line.unidad)}">{plain(line.cantidad)}</cbc:{quantity_tag}>'
        f'<cbc:LineExtensionAmount currencyID="{cur}">{value}</cbc:LineExtensionAmount>'
        f'<cac:PricingReference><cac:AlternativeConditionPrice><cbc:PriceAmount currencyID="{cur}">'
        f"{plain(line.precio_unitario)}</cbc:PriceAmount>"
        f"<cbc:PriceTypeCode>{REFERENCE_VALUE if free else PRICE_WITH_IGV}</cbc:PriceTypeCode>"
        f"</cac:AlternativeConditionPrice></cac:PricingReference>{_freight(line.ruta, cur)}{discount}"
        f'<cac:TaxTotal><cbc:TaxAmount currencyID="{cur}">{line_tax}</cbc:TaxAmount>{isc}<cac:TaxSubtotal>'
        f'<cbc:TaxableAmount currencyID="{cur}">{value_igv}</cbc:TaxableAmount>'
        f'<cbc:TaxAmount currencyID="{cur}">{tax}</cbc:TaxAmount>{category}</cac:TaxSubtotal>{bags}</cac:TaxTotal>'
        f"<cac:Item><cbc:Description>{esc(line.descripcion)}</cbc:Description>{code}"
        f"{_catch(line.pesca, line.unidad)}{_guest(line.huesped)}</cac:Item>"
        f'<cac:Price><cbc:PriceAmount currencyID="{cur}">{"0" if free else plain(line.valor_unitario)}'
        f"</cbc:PriceAmount></cac:Price></cac:{element}>"
    )


def render(doc: Document) -> str:
    """The voucher's UBL 2.1 XML text, unsigned."""
    layout = doc.layout
    root, line_element, quantity_tag, total_element = layout.root, layout.line, layout.quantity, layout.total
    cur = esc_attr(doc.moneda)
    body = [_header(doc, root, layout.invoice), _signature(doc), _parties(doc)]
    if layout.invoice:
        body.append(_delivery_and_means(doc))
        if doc.detraccion:
            body.append(_detraccion(doc))
        if doc.percepcion:
            body.append(f"<cac:PaymentTerms><cbc:ID>Percepcion</cbc:ID>{_amount('Amount', doc.percepcion.total, 'PEN')}"
                        "</cac:PaymentTerms>")
        body.append(_payment_terms(doc))
        body.extend(f"<cac:PrepaidPayment><cbc:ID>{position}</cbc:ID>{_amount('PaidAmount', paid, cur)}"
                    "</cac:PrepaidPayment>" for position, (_, _, paid, *_) in enumerate(doc.anticipos, start=1))
        if doc.descuento_global:
            body.append(_discount(*doc.descuento_global, cur, GLOBAL_DISCOUNT))
        body.extend(_discount(value, base, cur, code) for _, _, _, code, value, base in doc.anticipos)
        body.extend(_discount(amount, base, cur, code) for code, amount, base in doc.cargos)
        body.append(_perception_and_retention(doc, cur))
    elif doc.forma_pago:  # a credit note of reason 13: the corrected instalments
        body.append(_payment_terms(doc))
    body.append(_tax_total(doc))
    body.append(_monetary_total(doc, total_element))
    body.extend(_line(i, line, cur, line_element, quantity_tag) for i, line in enumerate(doc.lines, start=1))
    body.append(f"</{root}>")
    return "".join(body)
