"""The builder of a sale document (facturas, boletas and their notes), pure: the contract's request, the issuer's
profile and a way to name a customer by RUC become a complete UBL 2.1 document (app.core.invoicing.ubl renders it).
Lines, taxes, totals and legend are computed in Decimal; every problem of a request is reported in one 400 with
SUNAT's code where it has one (docs/vouchers.md).

One pipeline for the four types; what differs is each type's `SaleRules` (invoice.py, credit_note.py,
debit_note.py): the voucher a note modifies and its reason, the customer's rules, the operation type, the global
discount, the payment terms, the detracción and the boleta's threshold. The order of the checks is the order of the
problems in the answer, the same for every type.

`preview` computes the amounts only (the lines, `_totals`, the detracción's amount: the functions `build` calls), for
a request still being typed: the voucher form's totals (preview.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date, time
from decimal import Decimal
from typing import TYPE_CHECKING

from app.core.contract import Detraccion, GenerarXmlRequest, Item
from app.core.errors import invalid
from app.core.invoicing import prevalidation as pv
from app.core.invoicing import sunat_codes, ubl
from app.core.invoicing.amounts import IGV_RATE, ZERO, amount_in_words, money
from app.core.invoicing.documents import guest_lines, parties, spot_lines
from app.core.invoicing.documents import lines as sale_lines
from app.core.invoicing.documents.kind import SEND_BILL, CompanyOf, DocumentType, Identity, NameOf, Numbering
from app.core.invoicing.documents.preview import LineAmounts, TotalsPreview
from app.core.invoicing.sunat_catalogues import (
    CONTADO,
    CREDITO,
    DEPOSITO_EN_CUENTA,
    DOCUMENT_TYPES,
    EXPORTACION,
    FISE,
    GLOBAL_ALLOWANCES_OFFERED,
    GLOBAL_CHARGE,
    GLOBAL_CHARGE_KEEPING_BASE,
    GLOBAL_DISCOUNT_KEEPING_BASE,
    GRAVADO,
    IVAP,
    LINE_CHARGE_KEEPING_BASE,
    LINE_DISCOUNT_KEEPING_BASE,
    PERCEPCION_OPERATION,
    PERCEPCIONES,
    PREPAYMENT_DISCOUNTS,
    PREPAYMENT_VOUCHERS,
    RECARGO_AL_CONSUMO,
    RELATED_DOCUMENTS_OFFERED,
    RETENCION_RATE,
)
from app.core.platform import clock, ubigeo

if TYPE_CHECKING:
    from app.core.platform.companies import Company

Reference = tuple[str, str]  # (catalogue 01 type, "SERIE-NUMERO") of the voucher a note modifies
Reason = tuple[str, str]  # (catalogue 09/10 code, description) of a note
Payment = tuple[str | None, list[tuple[Decimal, date]]]  # (forma de pago, cuotas)
Subtotals = list[tuple[ubl.TaxScheme, Decimal, Decimal]]  # (scheme, taxable, tax)

SPOT_THRESHOLD = Decimal(sunat_codes.DETRACCION_THRESHOLD)
KEEPING_BASE_DISCOUNTS = frozenset({LINE_DISCOUNT_KEEPING_BASE, GLOBAL_DISCOUNT_KEEPING_BASE})  # AllowanceTotalAmount
KEEPING_BASE_CHARGES = frozenset({LINE_CHARGE_KEEPING_BASE, FISE, RECARGO_AL_CONSUMO, GLOBAL_CHARGE_KEEPING_BASE})


class SaleRules:
    """What one type of sale document decides in the pipeline. The defaults are a sale's (factura, boleta)."""

    code: str
    layout: ubl.UblLayout
    letter: str | None = None  # the serie's first letter; None: the modified voucher's (notes)
    takes_operation_type = True  # `tipo_operacion` (catalogue 51)
    takes_global_discount = True
    takes_detraccion = False

    def reference(self, request: GenerarXmlRequest, problems: pv.Problems
                  ) -> tuple[Reference | None, Reason | None, str | None]:
        """(the voucher it modifies, the reason, the serie's letter)."""
        return None, None, self.letter

    def valueless_lines_ok(self, request: GenerarXmlRequest) -> bool:
        return False

    def boleta_customer(self, request: GenerarXmlRequest) -> bool:
        """Whether the customer follows a boleta's rules (a document other than a RUC, or none up to S/ 700)."""
        return False

    def check_lines(self, request: GenerarXmlRequest, problems: pv.Problems, lines: list[ubl.Line],
                    total: Decimal) -> None:
        """What the type asks of its lines once the total is known."""

    def payment(self, request: GenerarXmlRequest, problems: pv.Problems, total: Decimal, fecha: date) -> Payment:
        return payment_terms(request, problems, total, fecha, None)

    def check_detraccion(self, request: GenerarXmlRequest, problems: pv.Problems, total: Decimal, moneda: str,
                         detraccion: ubl.Detraccion | None) -> None:
        """What the type asks when the request has no valid `detraccion`."""

    def check_customer_total(self, request: GenerarXmlRequest, problems: pv.Problems, receptor: ubl.Party,
                             moneda: str, total: Decimal) -> None:
        """What the type asks of its customer once the total is known."""


def document_type(rules: SaleRules, identity: Identity, numbering: Numbering, sheet: str) -> DocumentType:
    """The type whose documents this pipeline builds with `rules`: rendered by ubl, sent by sendBill, judged by
    SUNAT's `sheet`, with the totals' preview."""
    return DocumentType(
        code=rules.code, name=DOCUMENT_TYPES[rules.code], identity=identity, numbering=numbering,
        build=functools.partial(build, rules), render=ubl.render, sender=SEND_BILL, sheet=sheet,
        preview=functools.partial(preview, rules))


@dataclass
class Totals:
    valor_venta: Decimal
    igv: Decimal
    icbper: Decimal
    total: Decimal  # valor_venta + igv + icbper
    subtotals: Subtotals
    descuento_global: tuple[Decimal, Decimal] | None  # (the discount, the base it was taken from)
    gratuitas: bool
    # The voucher's other charges and discounts (catalogue 53: 03, 45, 46, 49, 50) as (code, amount, base).
    cargos: list[tuple[str, Decimal, Decimal]] = field(default_factory=list)
    descuentos_fuera: Decimal = ZERO  # cbc:AllowanceTotalAmount: the discounts that keep the base (01, 03)
    cargos_fuera: Decimal = ZERO  # cbc:ChargeTotalAmount: the charges that do not raise it (45, 46, 48, 50)
    redondeo: Decimal | None = None  # cbc:PayableRoundingAmount
    payable: Decimal = ZERO  # total − descuentos_fuera + cargos_fuera − anticipos + redondeo (set by _totals)
    # The advances deducted: (catalogue 12 type, "SERIE-NUMERO", paid with IGV, catalogue 53 code, value, base).
    anticipos: list[tuple[str, str, Decimal, str, Decimal, Decimal]] = field(default_factory=list)
    prepaid: Decimal = ZERO  # cbc:PrepaidAmount
    isc: tuple[Decimal, Decimal] | None = None  # (taxable, ISC) of the lines' ISC (scheme 2000)


def build(rules: SaleRules, request: GenerarXmlRequest, company_of: CompanyOf, name_of: NameOf,
          checks: bool = True) -> ubl.Document:
    """Compute the whole voucher from the request; raise one 400 listing every problem found. `company_of` gives
    the issuer's profile by RUC (None: not registered), `name_of` a customer's name by RUC (None: unknown).

    `checks=False` (tests only) keeps only what is needed to render, so SUNAT's own sheets can be
    asked what they say about a voucher Yupana would have refused.
    """
    problems = pv.Problems()
    company = parties.issuer(company_of, problems, request.emisor.ruc)
    reference, motivo, letter = rules.reference(request, problems)
    pv.check_serie_numero(problems, request.tipo, request.serie, request.numero, letter)
    moneda = _currency_and_items(request, problems)
    fecha, hora = when(request)
    lines, bag_rate = sale_lines.lines_of(request, problems, fecha, rules.valueless_lines_ok(request))
    exportacion = _exportacion(lines, problems)
    _ivap_alone(lines, problems)
    _bags_in_soles(request, problems, moneda, bag_rate)
    tipo_operacion = _operation_type(rules, request, problems, exportacion, lines)
    receptor = parties.customer(name_of, request, problems,
                                None if exportacion and tipo_operacion not in sunat_codes.EXPORTS_TO_NON_RESIDENTS
                                else exportacion, rules.boleta_customer(request))
    totals = _totals(rules, request, problems, lines, bag_rate)
    rules.check_lines(request, problems, lines, totals.payable)
    retencion = _retention(rules, request, problems, totals.payable) if request.retencion is not None else None
    forma_pago, cuotas = rules.payment(request, problems, totals.payable - (retencion[1] if retencion else ZERO),
                                       fecha)
    percepcion = (_perception(rules, request, problems, totals.payable, moneda, forma_pago, tipo_operacion)
                  if request.percepcion is not None else None)
    detraccion = _spot(rules, request, problems, totals.payable, moneda) if request.detraccion is not None else None
    rules.check_detraccion(request, problems, totals.payable, moneda, detraccion)
    if request.tipo_operacion in spot_lines.SPOT_OPERATIONS and request.detraccion is None:
        problems.add("detraccion", f"El tipo de operación {request.tipo_operacion} (sujeta a detracción) necesita el "
                     "campo «detraccion» (código, cuenta del Banco de la Nación).", "3127")
    spot_lines.check_operation(request, problems, tipo_operacion)
    guest_lines.check_operation(request, problems, tipo_operacion)
    guias, orden_compra = _references(request, problems) if request.guias or request.orden_compra else ([], None)
    more = (_sale_details(rules, request, problems, fecha)
            if request.fecha_vencimiento or request.lugar_entrega or request.documentos_relacionados
            or request.medio_pago else None)
    rules.check_customer_total(request, problems, receptor, moneda, totals.payable)
    if checks:
        problems.raise_if_any()
    if company is None:
        raise invalid("emisor.ruc", f"No hay una empresa emisora con RUC «{request.emisor.ruc}».")
    document = _document(rules, request, company, fecha, hora, moneda, tipo_operacion, receptor, lines, totals)
    document.detraccion, document.guias, document.orden_compra = detraccion, guias, orden_compra
    document.forma_pago, document.cuotas, document.referencia, document.motivo = forma_pago, cuotas, reference, motivo
    if more is not None:
        document.vencimiento, document.entrega, document.relacionados, document.medio_pago = more
    document.percepcion, document.retencion = percepcion, retencion
    return document


def _perception(rules: SaleRules, request: GenerarXmlRequest, problems: pv.Problems, payable: Decimal, moneda: str,
                forma_pago: str | None, tipo_operacion: str) -> ubl.Percepcion | None:
    """The IGV perceived (catalogue 53 51-53) on a sale al contado of operation 2001: its rate of the payable amount
    in soles (SUNAT's 2792, 2788: PEN; a USD voucher needs `tipo_cambio`), stated beside the payable amount."""
    spec = request.percepcion
    assert spec is not None
    if not rules.takes_global_discount:
        problems.add("percepcion", "El campo «percepcion» solo se admite en facturas y boletas.")
        return None
    if tipo_operacion != PERCEPCION_OPERATION:
        problems.add("percepcion", f"El campo «percepcion» va con el tipo de operación 2001, no con {tipo_operacion}.",
                     "3308")
        return None
    if forma_pago == CREDITO:
        problems.add("percepcion", "El campo «percepcion» no se admite en una venta al Credito: SUNAT rechaza la "
                     "percepción declarada en el comprobante (se cobra con cada pago, en el comprobante de percepción).",
                     "3330")
        return None
    entry = PERCEPCIONES.get(spec.codigo)
    if entry is None:
        problems.add("percepcion.codigo", f"El código «{spec.codigo}» del campo «percepcion.codigo» debe ser 51 (venta "
                     "interna, 2 %), 52 (combustible, 1 %) o 53 (agente de percepción, 0.5 %).", "2954")
        return None
    porcentaje = _rate(problems, "percepcion.porcentaje", spec.porcentaje, Decimal(entry[1]))
    rate = Decimal(1) if moneda == "PEN" else request.tipo_cambio
    if rate is None or not (rate.is_finite() and rate > 0 and pv.decimals(rate) <= 3):
        problems.add("tipo_cambio", "El campo «tipo_cambio» (soles por dólar, hasta 3 decimales) es obligatorio en un "
                     "comprobante en dólares con percepción: SUNAT la recibe en soles.", "2792")
        return None
    if porcentaje is None:
        return None
    base = money(payable * rate)
    amount = money(base * porcentaje / PERCENT)
    if not amount:
        problems.add("percepcion", f"La percepción del {porcentaje} % de S/ {base} redondea a 0.00: SUNAT rechaza una "
                     "percepción sin monto (2968); quite el campo «percepcion».", "2968")
        return None
    return ubl.Percepcion(spec.codigo, porcentaje / PERCENT, amount, base, base + amount)


def _retention(rules: SaleRules, request: GenerarXmlRequest, problems: pv.Problems, payable: Decimal
               ) -> tuple[Decimal, Decimal, Decimal] | None:
    """(factor, amount, base) of the IGV retention (catalogue 53 code 62) a factura states when its customer is a
    retention agent: the rate (3 % by default) of the payable amount, which it does not change (the pending amount of
    a sale al Crédito does: the instalments add up to at most the payable amount less it)."""
    spec = request.retencion
    assert spec is not None
    if not rules.takes_detraccion:
        problems.add("retencion", "El campo «retencion» solo se admite en facturas (el agente de retención es una "
                     "empresa con RUC).", "3262")
        return None
    porcentaje = _rate(problems, "retencion.porcentaje", spec.porcentaje, Decimal(RETENCION_RATE))
    if porcentaje is None:
        return None
    amount = money(payable * porcentaje / PERCENT)
    if not amount:
        problems.add("retencion", f"La retención del {porcentaje} % de {payable} redondea a 0.00: SUNAT rechaza una "
                     "retención sin monto (2968); quite el campo «retencion».", "2968")
        return None
    return porcentaje / PERCENT, amount, payable


def _rate(problems: pv.Problems, field_name: str, given: Decimal | None, default: Decimal) -> Decimal | None:
    """A rate in percent: above 0 and below 100 with up to 3 decimals (SUNAT's factor has 5, 3025)."""
    porcentaje = default if given is None else given
    if not (porcentaje.is_finite() and 0 < porcentaje < PERCENT and pv.decimals(porcentaje) <= 3):
        problems.add(field_name, f"El campo «{field_name}» ({porcentaje}) debe ser mayor que 0 y menor que 100, con "
                     "hasta 3 decimales.", "3025")
        return None
    return porcentaje


SaleDetails = tuple[date | None, tuple[str, str | None] | None, list[tuple[str, str]], str | None]
RELATED_NUMBER = re.compile(r"^[^\s]{1,30}$")  # SUNAT's 4010: up to 30 characters without spaces


def _sale_details(rules: SaleRules, request: GenerarXmlRequest, problems: pv.Problems, fecha: date) -> SaleDetails:
    """(due date, place of delivery, other related documents, means of payment) of a factura or boleta."""
    if not rules.layout.invoice:
        problems.add("fecha_vencimiento" if request.fecha_vencimiento else "lugar_entrega" if request.lugar_entrega
                     else "documentos_relacionados" if request.documentos_relacionados else "medio_pago",
                     "Los campos «fecha_vencimiento», «lugar_entrega», «documentos_relacionados» y «medio_pago» solo "
                     "se admiten en facturas y boletas.")
        return None, None, [], None
    vencimiento = request.fecha_vencimiento
    if vencimiento is not None and vencimiento < fecha:
        problems.add("fecha_vencimiento", f"El campo «fecha_vencimiento» ({vencimiento}) no puede ser anterior a la "
                     f"fecha de emisión ({fecha}).")
    entrega = None
    if request.lugar_entrega is not None:
        lugar = request.lugar_entrega
        pv.check_address(problems, "lugar_entrega.direccion", lugar.direccion)
        if lugar.ubigeo is not None and ubigeo.lookup(lugar.ubigeo) is None:
            problems.add("lugar_entrega.ubigeo", f"El ubigeo «{lugar.ubigeo}» del campo «lugar_entrega.ubigeo» no está "
                         "en el catálogo 13 de SUNAT (INEI, seis dígitos: p. ej. 150101).", "4231")
        entrega = (lugar.direccion, lugar.ubigeo)
    relacionados: list[tuple[str, str]] = []
    for index, doc in enumerate(request.documentos_relacionados or ()):
        field_name = f"documentos_relacionados[{index}]"
        if doc.tipo not in RELATED_DOCUMENTS_OFFERED:
            problems.add(f"{field_name}.tipo", f"El tipo «{doc.tipo}» del campo «{field_name}.tipo» debe ser del catálogo "
                         f"12 de SUNAT: {', '.join(RELATED_DOCUMENTS_OFFERED)} (los anticipos van aparte).", "4009")
        elif not RELATED_NUMBER.match(doc.numero) or pv.INVALID_XML_CHARS.search(doc.numero):
            problems.add(f"{field_name}.numero", f"El número «{doc.numero}» del campo «{field_name}.numero» debe tener "
                         "de 1 a 30 caracteres sin espacios.", "4010")
        elif (doc.tipo, doc.numero) in relacionados:
            problems.add(field_name, f"El documento «{doc.tipo} {doc.numero}» del campo «{field_name}» está repetido.",
                         "2365")
        else:
            relacionados.append((doc.tipo, doc.numero))
    medio = request.medio_pago
    if medio is not None and medio not in sunat_codes.MEDIOS_DE_PAGO:
        problems.add("medio_pago", f"El código «{medio}» del campo «medio_pago» no está en el catálogo 59 de SUNAT "
                     "(p. ej. 009 efectivo, 005 tarjeta de débito, 006 tarjeta de crédito).", "3174")
    return vencimiento, entrega, relacionados, medio


def _document(rules: SaleRules, request: GenerarXmlRequest, company: Company, fecha: date, hora: time, moneda: str,
              tipo_operacion: str, receptor: ubl.Party, lines: list[ubl.Line], totals: Totals) -> ubl.Document:
    place = company.place
    return ubl.Document(
        tipo=request.tipo, serie=request.serie, numero=request.numero, fecha=fecha, hora=hora, moneda=moneda,
        tipo_operacion=tipo_operacion, emisor_ruc=company.ruc,
        emisor_nombre=company.razon_social, emisor_comercial=company.nombre_comercial,
        emisor_ubigeo=company.ubigeo, emisor_direccion=company.direccion,
        emisor_departamento=place.departamento.upper() if place else "-",
        emisor_provincia=place.provincia.upper() if place else "-",
        emisor_distrito=place.distrito.upper() if place else "-", emisor_establecimiento=company.codigo_establecimiento,
        receptor=receptor, layout=rules.layout, lines=lines, subtotals=totals.subtotals,
        valor_venta=totals.valor_venta, igv=totals.igv, total=totals.total, icbper=totals.icbper,
        descuento_global=totals.descuento_global, leyenda=amount_in_words(totals.payable, moneda),
        gratuitas=totals.gratuitas, cargos=totals.cargos, descuentos_fuera=totals.descuentos_fuera,
        cargos_fuera=totals.cargos_fuera, redondeo=totals.redondeo, payable=totals.payable,
        anticipos=totals.anticipos, prepaid=totals.prepaid, isc=totals.isc)


def preview(rules: SaleRules, request: GenerarXmlRequest, items: Sequence[Item | None] | None = None
            ) -> TotalsPreview:
    """The amounts `build` computes for `request`, by the same functions (the lines, `_totals`, the detracción's
    amount), without the checks that do not bear on them (issuer, customer, numbering, references, payment terms)
    and without raising: what is found on the way comes with the answer. `items`: the request's items, None where
    an item of a partial request could not be read (app.core.invoicing.documents.preview)."""
    problems = pv.Problems()
    fecha, _ = when(request)
    moneda = (request.moneda or "PEN").upper()
    each, bag_rate = sale_lines.item_lines(request.items if items is None else items, problems, fecha,
                                           rules.valueless_lines_ok(request))
    lines = [line for line in each if line is not None]
    totals = _totals(rules, request, problems, lines, bag_rate)
    detraccion = None
    if request.detraccion is not None and rules.takes_detraccion:
        _, porcentaje = _spot_percentage(problems, request.detraccion)
        rate = _spot_exchange_rate(request, problems, moneda)
        detraccion = None if porcentaje is None or rate is None else spot_amount(totals.payable, rate, porcentaje)
    found = _previewed(moneda, each, totals, detraccion, problems)
    unseen = pv.Problems()  # the payment terms and operation type are checked when it is built, not here
    percepcion = (_perception(rules, request, unseen, totals.payable, moneda, None, PERCEPCION_OPERATION)
                  if request.percepcion is not None else None)
    retencion = _retention(rules, request, unseen, totals.payable) if request.retencion is not None else None
    return replace(found, anticipos=totals.prepaid, percepcion=percepcion.monto if percepcion else None,
                   total_con_percepcion=percepcion.total if percepcion else None,
                   retencion=retencion[1] if retencion else None)


def _previewed(moneda: str, each: list[ubl.Line | None], totals: Totals, detraccion: Decimal | None,
               problems: pv.Problems) -> TotalsPreview:
    by_scheme = {scheme.code: taxable for scheme, taxable, _ in totals.subtotals}
    discount = totals.descuento_global[0] if totals.descuento_global else ZERO
    amounts = tuple(None if line is None else LineAmounts(line.valor_venta, line.igv, line.icbper,
                                                          line.descuento or ZERO, line.scheme is ubl.GRA)
                    for line in each)
    return TotalsPreview(
        moneda=moneda, gravadas=by_scheme.get(ubl.IGV.code, ZERO), exoneradas=by_scheme.get(ubl.EXO.code, ZERO),
        inafectas=by_scheme.get(ubl.INA.code, ZERO), exportacion=by_scheme.get(ubl.EXP.code, ZERO),
        gratuitas=by_scheme.get(ubl.GRA.code, ZERO),
        descuentos=sum((line.descuento for line in amounts if line is not None), discount),
        descuento_global=discount, igv=totals.igv, icbper=totals.icbper, total=totals.payable, detraccion=detraccion,
        lines=amounts, problems=tuple(problems.details))


def when(request: GenerarXmlRequest) -> tuple[date, time]:
    now = clock.now().astimezone(clock.PERU)
    return request.fecha_emision or now.date(), (request.hora_emision or now.time()).replace(microsecond=0,
                                                                                               tzinfo=None)


def _currency_and_items(request: GenerarXmlRequest, problems: pv.Problems) -> str:
    moneda = (request.moneda or "PEN").upper()
    if moneda not in pv.CURRENCIES:
        problems.add("moneda", f"El campo «moneda» ({moneda}) debe ser PEN o USD.", "3088")
    if not request.items:
        problems.add("items", "El campo «items» debe tener al menos una línea.", "2023")
    return moneda


def _exportacion(lines: list[ubl.Line], problems: pv.Problems) -> bool:
    """Whether every line is an export (affectation 40); an export mixed with sales in the country is refused."""
    exportacion = bool(lines) and all(line.afectacion == EXPORTACION for line in lines)
    if not exportacion and any(line.afectacion == EXPORTACION for line in lines):
        index = next(i for i, line in enumerate(lines) if line.afectacion == EXPORTACION)
        problems.add(f"items[{index}].tipo_afectacion_igv", "Una exportación (afectación 40) no se mezcla con "
                     "ventas internas en un mismo comprobante.", "2642")
    return exportacion


def _ivap_alone(lines: list[ubl.Line], problems: pv.Problems) -> None:
    """IVAP lines (affectation 17, rice pilado) do not share a voucher with lines of another affectation (SUNAT's
    2644)."""
    if any(line.afectacion == IVAP for line in lines) and not all(line.afectacion == IVAP for line in lines):
        index = next(i for i, line in enumerate(lines) if line.afectacion != IVAP)
        problems.add(f"items[{index}].tipo_afectacion_igv", "Una venta afecta al IVAP (afectación 17, arroz pilado) no "
                     "se mezcla con líneas de otra afectación en un mismo comprobante.", "2644")


def _bags_in_soles(request: GenerarXmlRequest, problems: pv.Problems, moneda: str, bag_rate: Decimal | None) -> None:
    if moneda != "PEN" and bag_rate is not None:
        index = next(i for i, item in enumerate(request.items) if item.icbper)
        problems.add(f"items[{index}].icbper", f"El campo «items[{index}].icbper» (bolsas de plástico) solo se admite "
                     "en comprobantes en soles (PEN): el ICBPER es un monto fijo en soles por bolsa.")


def _totals(rules: SaleRules, request: GenerarXmlRequest, problems: pv.Problems, lines: list[ubl.Line],
            bag_rate: Decimal | None) -> Totals:
    valor_venta = sum((line.valor_venta for line in lines), ZERO)
    igv = sum((line.igv for line in lines), ZERO)
    subtotals = sale_lines.subtotals_of(lines)
    discount = _global_discount(rules, request, problems, subtotals) if request.descuento_global else None
    cargos = (_global_allowances(rules, request, problems, subtotals, valor_venta) if request.cargos_descuentos
              else [])
    descuento_global, value_change, igv_change = _base_changes(subtotals, lines, discount, cargos)
    valor_venta += value_change
    igv += igv_change
    gratuitas = bool(subtotals) and subtotals[-1][0] is ubl.GRA
    if gratuitas:  # free lines: their value and IGV are stated in the 9996 subtotal, never charged
        _, free_value, free_igv = subtotals[-1]
        valor_venta -= free_value
        igv -= free_igv
    icbper = ZERO if bag_rate is None else sum((line.icbper for line in lines), ZERO)
    isc = [line.isc for line in lines if line.isc]
    isc_total = sum((entry[3] for entry in isc), ZERO)
    total = valor_venta + igv + icbper + isc_total
    totals = Totals(valor_venta, igv, icbper, total, subtotals, descuento_global, gratuitas, payable=total)
    if isc:
        totals.isc = (sum((entry[1] for entry in isc), ZERO), isc_total)
    if request.anticipos:
        _prepayments(rules, request, problems, totals, _isc_inside(lines))
    if cargos or request.redondeo is not None or any(line.cargos for line in lines) or totals.prepaid:
        _outside_the_base(rules, request, problems, lines, cargos, totals)
    return totals


def _base_changes(subtotals: Subtotals, lines: list[ubl.Line], discount: Decimal | None,
                  cargos: list[tuple[str, Decimal, Decimal]]
                  ) -> tuple[tuple[Decimal, Decimal] | None, Decimal, Decimal]:
    """The global discount (02) and charges (49) inside the gravado base: the base and its IGV are recomputed after
    them (SUNAT's 3280, 4290). Answers (the discount and the base it was taken from, the change of the voucher's
    value, the change of its IGV); the IGV subtotal is updated in place."""
    raised = sum((amount for code, amount, _ in cargos if code == GLOBAL_CHARGE), ZERO)
    if not discount and not raised:
        return None, ZERO, ZERO
    _, before, igv_before = subtotals[0]
    base = before - (discount or ZERO) + raised
    igv_after = money((base + _isc_inside(lines)) * IGV_RATE)  # the lines' ISC stays inside the IGV base
    subtotals[0] = (ubl.IGV, base, igv_after)
    return ((discount, before) if discount else None), base - before, igv_after - igv_before


def _isc_inside(lines: list[ubl.Line]) -> Decimal:
    """The lines' ISC: inside the IGV base when the IGV is recomputed on the voucher's base."""
    return sum((line.isc[3] for line in lines if line.isc), ZERO)


def _prepayments(rules: SaleRules, request: GenerarXmlRequest, problems: pv.Problems, totals: Totals,
                 isc_inside: Decimal) -> None:
    """The advances deducted in the final voucher (SUNAT's guide): each advance voucher named
    (AdditionalDocumentReference 02/03 with the issuer's RUC) and paid (PrepaidPayment, with IGV); its value without
    IGV is a discount of catalogue 53 04 (gravado: it lowers the IGV base, whose IGV is recomputed), 05 or 06 on
    the scheme's value; TaxInclusiveAmount stays the whole sale's and PrepaidAmount sums what was paid (3280)."""
    if not rules.takes_global_discount:
        problems.add("anticipos", "El campo «anticipos» solo se admite en facturas y boletas.")
        return
    values = {scheme.code: taxable for scheme, taxable, _ in totals.subtotals}
    deducted: dict[str, Decimal] = {}
    for index, advance in enumerate(request.anticipos or ()):
        field_name = f"anticipos[{index}]"
        letter = PREPAYMENT_VOUCHERS.get(advance.tipo)
        afectacion = advance.tipo_afectacion_igv or GRAVADO
        code = PREPAYMENT_DISCOUNTS.get(afectacion)
        if letter is None:
            problems.add(f"{field_name}.tipo", f"El campo «{field_name}.tipo» debe ser 02 (factura emitida por "
                         "anticipos) o 03 (boleta emitida por anticipos).", "3216")
            continue
        if not (pv.modifiable_serie(advance.serie, letter) and 1 <= advance.numero <= pv.MAX_NUMERO):
            problems.add(f"{field_name}.serie", f"«{field_name}» ({advance.serie}-{advance.numero}) no es una "
                         f"serie-número de tipo {advance.tipo}: serie {letter}001 o de 4 dígitos.", "2521")
            continue
        if code is None:
            problems.add(f"{field_name}.tipo_afectacion_igv", f"El campo «{field_name}.tipo_afectacion_igv» debe ser "
                         "10 (gravado), 20 (exonerado) o 30 (inafecto).", "2040")
            continue
        monto = advance.monto
        if not monto.is_finite() or monto <= 0 or pv.decimals(monto) > 2:
            problems.add(f"{field_name}.monto", f"El campo «{field_name}.monto» ({monto}) debe ser el monto pagado por "
                         "adelantado, con IGV, mayor que cero y con hasta 2 decimales.", "2503")
            continue
        value = money(monto / (1 + IGV_RATE)) if afectacion == GRAVADO else monto
        scheme = ubl.SCHEME_BY_AFFECTATION[afectacion]
        base = values.get(scheme.code, ZERO)
        if value + deducted.get(scheme.code, ZERO) > base:
            problems.add(f"{field_name}.monto", f"El anticipo «{field_name}» ({value} sin IGV) supera el valor de las "
                         f"líneas de afectación {afectacion} ({base}) del comprobante.")
            continue
        deducted[scheme.code] = deducted.get(scheme.code, ZERO) + value
        totals.anticipos.append((advance.tipo, f"{advance.serie}-{advance.numero}", monto, code, value, base))
    totals.prepaid = sum((entry[2] for entry in totals.anticipos), ZERO)
    # Each scheme's subtotal is its lines' value less its advances (SUNAT's 3275, 3274); the IGV stated is on the
    # gravado base after them, while TaxInclusiveAmount keeps the whole sale's.
    for position, (scheme, before, tax_before) in enumerate(totals.subtotals):
        advanced = deducted.get(scheme.code, ZERO)
        if advanced:
            tax_after = money((before - advanced + isc_inside) * IGV_RATE) if scheme is ubl.IGV else tax_before
            totals.subtotals[position] = (scheme, before - advanced, tax_after)
            totals.igv += tax_after - tax_before


def _outside_the_base(rules: SaleRules, request: GenerarXmlRequest, problems: pv.Problems, lines: list[ubl.Line],
                      cargos: list[tuple[str, Decimal, Decimal]], totals: Totals) -> None:
    """The charges and discounts that keep the IGV base and the rounding: they change the payable amount only
    (SUNAT's 3280: PayableAmount = TaxInclusiveAmount − AllowanceTotalAmount + ChargeTotalAmount −
    PrepaidAmount + PayableRoundingAmount; 3300 and 3301 sum the first two from the lines' 01/48 and the voucher's
    03/45/46/50)."""
    every = [*cargos, *(entry for line in lines for entry in line.cargos)]
    totals.cargos = cargos
    totals.descuentos_fuera = sum((amount for code, amount, _ in every if code in KEEPING_BASE_DISCOUNTS), ZERO)
    totals.cargos_fuera = sum((amount for code, amount, _ in every if code in KEEPING_BASE_CHARGES), ZERO)
    totals.redondeo = _rounding(rules, request, problems)
    totals.payable = (totals.total - totals.descuentos_fuera + totals.cargos_fuera - totals.prepaid
                      + (totals.redondeo or ZERO))
    if totals.payable < 0:
        problems.add("anticipos" if totals.prepaid else "cargos_descuentos",
                     f"Los descuentos que no afectan la base ({totals.descuentos_fuera}, campo «cargos_descuentos») y "
                     f"los anticipos ({totals.prepaid}, campo «anticipos») dejan el importe total a pagar en negativo "
                     f"({totals.payable}).", "3280")


def _rounding(rules: SaleRules, request: GenerarXmlRequest, problems: pv.Problems) -> Decimal | None:
    redondeo = request.redondeo
    if redondeo is None:
        return None
    if not rules.takes_global_discount:
        problems.add("redondeo", "El campo «redondeo» solo se admite en facturas y boletas.")
        return None
    if not redondeo.is_finite() or not -1 <= redondeo <= 1 or pv.decimals(redondeo) > 2:
        problems.add("redondeo", f"El campo «redondeo» ({redondeo}) debe estar entre -1.00 y 1.00, con hasta 2 "
                     "decimales.", "3303")
        return None
    return redondeo


def _global_allowances(rules: SaleRules, request: GenerarXmlRequest, problems: pv.Problems, subtotals: Subtotals,
                       valor_venta: Decimal) -> list[tuple[str, Decimal, Decimal]]:
    """The voucher's other charges and discounts of catalogue 53 (03, 45, 46, 49, 50) as (code, amount, base). A
    charge that raises the base (49) needs gravado lines, whose value is its base; the others are a share of the
    voucher's value. Facturas and boletas only."""
    if not rules.takes_global_discount:
        problems.add("cargos_descuentos", "El campo «cargos_descuentos» solo se admite en facturas y boletas.")
        return []
    gravado = subtotals[0][1] if subtotals and subtotals[0][0] is ubl.IGV else None
    found = []
    for index, entry in enumerate(request.cargos_descuentos or ()):
        field_name = f"cargos_descuentos[{index}]"
        if entry.codigo == GLOBAL_CHARGE and gravado is None:
            problems.add(f"{field_name}.codigo", f"El cargo de código 49 del campo «{field_name}» aumenta la base "
                         "gravada con IGV: el comprobante necesita líneas gravadas (afectación 10).")
            continue
        default_base = gravado if entry.codigo == GLOBAL_CHARGE and gravado is not None else valor_venta
        checked = sale_lines.allowance_or_charge(problems, field_name, entry.codigo, entry.monto, entry.base,
                                                 default_base, GLOBAL_ALLOWANCES_OFFERED)
        if checked is not None:
            found.append(checked)
    return found


def _global_discount(rules: SaleRules, request: GenerarXmlRequest, problems: pv.Problems,
                     subtotals: Subtotals) -> Decimal | None:
    """The global discount (catalogue 53 code 02): it reduces the IGV base, so it needs gravado lines and must stay
    below their value; invoices only (a note corrects a voucher's lines)."""
    descuento = request.descuento_global
    field_name = "descuento_global"
    if descuento is None:
        return None
    if not rules.takes_global_discount:
        problems.add(field_name, "El campo «descuento_global» solo se admite en facturas y boletas.")
        return None
    if not descuento.is_finite() or descuento < 0 or pv.decimals(descuento) > 2:
        problems.add(field_name, f"El campo «descuento_global» ({descuento}) debe ser un monto sin IGV no negativo, "
                     "con hasta 2 decimales.", "2955")
        return None
    base = subtotals[0][1] if subtotals and subtotals[0][0] is ubl.IGV else ZERO
    if descuento >= base:
        problems.add(field_name, f"El campo «descuento_global» ({descuento}) reduce la base gravada con IGV y debe ser "
                     f"menor que ella ({base}: el valor de las líneas gravadas).")
        return None
    return descuento


def payment_terms(request: GenerarXmlRequest, problems: pv.Problems, total: Decimal, fecha: date,
                  without: str | None) -> Payment:
    """The payment terms of `request.forma_pago` (`without`: the forma de pago when there is none): al contado, or
    al crédito in instalments due after the issue date whose sum is at most `total` (an infinite total: no bound)."""
    forma = request.forma_pago
    if forma is None:
        return without, []
    if forma.tipo == CONTADO:
        if forma.cuotas:
            problems.add("forma_pago.cuotas", "El campo «forma_pago.cuotas» solo se admite con pago al Credito.",
                         "3252")
        return CONTADO, []
    if not forma.cuotas:
        problems.add("forma_pago.cuotas", "Una venta al Credito necesita al menos una cuota en «forma_pago.cuotas».",
                     "3249")
    cuotas = []
    for index, cuota in enumerate(forma.cuotas):
        if not cuota.monto.is_finite() or cuota.monto <= 0 or pv.decimals(cuota.monto) > 2:
            problems.add(f"forma_pago.cuotas[{index}].monto", f"El campo «forma_pago.cuotas[{index}].monto» debe ser "
                         "mayor que cero, con hasta 2 decimales.", "3253")
        if cuota.fecha_vencimiento <= fecha:
            problems.add(f"forma_pago.cuotas[{index}].fecha_vencimiento", f"El campo «forma_pago.cuotas[{index}]."
                         "fecha_vencimiento» debe ser posterior a la fecha de emisión.", "3267")
        cuotas.append((cuota.monto, cuota.fecha_vencimiento))
    pending = sum((amount for amount, _ in cuotas), ZERO)
    if pending > total and total.is_finite():
        problems.add("forma_pago.cuotas", f"La suma de «forma_pago.cuotas» ({pending}) supera el importe total "
                     f"({total}).", "3265")
    return CREDITO, cuotas


ACCOUNT_PATTERN = re.compile(r"^[0-9][0-9-]{6,18}[0-9]$")  # a bank account: 8 to 20 digits and hyphens
PERCENT = Decimal(100)


def _spot(rules: SaleRules, request: GenerarXmlRequest, problems: pv.Problems, total: Decimal,
          moneda: str) -> ubl.Detraccion | None:
    """The detracción (SPOT) of a factura: catalogue 54 code, its rate (the catalogue's by default), the Banco de
    la Nación account and the catalogue 59 means; the amount is in PEN (a USD factura needs `tipo_cambio`)."""
    spot = request.detraccion
    assert spot is not None
    ok = True
    if not rules.takes_detraccion:
        problems.add("detraccion", "El campo «detraccion» solo se admite en facturas (tipo 01).")
        ok = False
    known, porcentaje = _spot_percentage(problems, spot)
    ok = ok and known
    if not ACCOUNT_PATTERN.match(spot.cuenta):
        problems.add("detraccion.cuenta", f"El campo «detraccion.cuenta» («{spot.cuenta}») debe ser la cuenta de "
                     "detracciones del Banco de la Nación: de 8 a 20 dígitos (se admiten guiones).", "3034")
        ok = False
    medio = spot.medio_pago or DEPOSITO_EN_CUENTA
    if medio not in sunat_codes.MEDIOS_DE_PAGO:
        problems.add("detraccion.medio_pago", f"El código «{medio}» del campo «detraccion.medio_pago» no está en el "
                     "catálogo 59 de SUNAT (p. ej. 001 depósito en cuenta, 003 transferencia de fondos).")
        ok = False
    rate = _spot_exchange_rate(request, problems, moneda)
    if rate is None or not ok or porcentaje is None:
        return None
    return ubl.Detraccion(spot.codigo, porcentaje, spot_amount(total, rate, porcentaje), spot.cuenta, medio)


def spot_amount(total: Decimal, rate: Decimal, porcentaje: Decimal) -> Decimal:
    """The detracción's amount in soles: its rate of the payable total at `rate` soles per unit of the currency."""
    return money(total * rate * porcentaje / PERCENT)


def _spot_percentage(problems: pv.Problems, spot: Detraccion) -> tuple[bool, Decimal | None]:
    """(whether the code is in catalogue 54, the rate: the one given or the catalogue's; None when not valid)."""
    entry = sunat_codes.DETRACCIONES.get(spot.codigo)
    if entry is None:
        problems.add("detraccion.codigo", f"El código «{spot.codigo}» del campo «detraccion.codigo» no está en el "
                     "catálogo 54 de SUNAT (p. ej. 022 otros servicios empresariales, 037 demás servicios).", "3033")
    porcentaje = spot.porcentaje if spot.porcentaje is not None else Decimal(entry[1]) if entry else None
    if porcentaje is not None and not (porcentaje.is_finite() and 0 < porcentaje < PERCENT
                                       and pv.decimals(porcentaje) <= 2):
        problems.add("detraccion.porcentaje", f"El campo «detraccion.porcentaje» ({porcentaje}) debe ser mayor que 0 "
                     "y menor que 100, con hasta 2 decimales.", "3062")
        return entry is not None, None
    return entry is not None, porcentaje


def _spot_exchange_rate(request: GenerarXmlRequest, problems: pv.Problems, moneda: str) -> Decimal | None:
    """Soles per unit of the voucher's currency for the detracción's amount (SUNAT receives it in PEN)."""
    if moneda == "PEN":
        return Decimal(1)
    tipo_cambio = request.tipo_cambio
    if tipo_cambio is None or not (tipo_cambio.is_finite() and tipo_cambio > 0 and pv.decimals(tipo_cambio) <= 3):
        problems.add("tipo_cambio", "El campo «tipo_cambio» (soles por dólar, hasta 3 decimales) es obligatorio "
                     "en una factura en dólares con detracción: SUNAT recibe el monto de la detracción en soles.",
                     "3208")
        return None
    return tipo_cambio


def spot_missing(request: GenerarXmlRequest, problems: pv.Problems, total: Decimal, moneda: str) -> None:
    """A factura above S/ 700 with a line marked as subject to the detracción (`items[].codigo_detraccion`) and no
    `detraccion` is refused: SUNAT's sheets would accept it, but it is legally wrong (no operation type 1001, no
    legend 2006, no Banco de la Nación account). Lines are looked at only for a factura above 700 soles or in dollars
    (where a marked line needs `tipo_cambio` to tell)."""
    index = 0
    for item in request.items:  # a loop, not a generator: this runs for every factura above 700
        codigo = item.codigo_detraccion
        if codigo:
            break
        index += 1
    else:
        return
    field_name = f"items[{index}].codigo_detraccion"
    if codigo not in sunat_codes.DETRACCIONES:
        problems.add(field_name, f"El código «{codigo}» del campo «{field_name}» no está en el catálogo 54 de SUNAT.",
                     "3033")
        return
    if moneda != "PEN":
        if request.tipo_cambio is None or not request.tipo_cambio.is_finite() or request.tipo_cambio <= 0:
            problems.add("tipo_cambio", f"La línea «{field_name}» está sujeta a detracción: indique «tipo_cambio» "
                         "(soles por dólar) para saber si la factura supera S/ 700.00.", "3208")
            return
        if total * request.tipo_cambio <= SPOT_THRESHOLD:
            return
    problems.add("detraccion", f"La factura supera S/ 700.00 y la línea «{field_name}» ({codigo}, "
                 f"{sunat_codes.DETRACCIONES[codigo][0]}) está sujeta a detracción: indique el campo «detraccion» "
                 "(código, cuenta del Banco de la Nación).", "3127")


GUIA_PATTERN = re.compile(r"^(T[A-Z0-9]{3}|[0-9]{4}|EG[0-9]{2}|G[0-9]{3})-[0-9]{1,8}$")  # SUNAT's 4006
MAX_ORDER = 20  # SUNAT's 4233: a purchase order of up to 20 characters without spaces


def _references(request: GenerarXmlRequest, problems: pv.Problems) -> tuple[list[str], str | None]:
    """The despatch advices (guías de remisión) and the purchase order the voucher refers to."""
    guias: list[str] = []
    for index, guia in enumerate(request.guias or ()):
        text = f"{guia.serie}-{guia.numero}"
        if not GUIA_PATTERN.match(text):
            problems.add(f"guias[{index}].serie", f"La guía «{text}» del campo «guias[{index}]» no es una serie-número "
                         "de guía de remisión válida (serie T001, EG01, G001 o 0001 y número de 1 a 8 dígitos).", "4006")
        elif text in guias:
            problems.add(f"guias[{index}]", f"La guía «{text}» del campo «guias[{index}]» está repetida.", "2364")
        else:
            guias.append(text)
    orden = request.orden_compra
    if orden is not None and (not 1 <= len(orden) <= MAX_ORDER or re.search(r"\s", orden)
                              or pv.INVALID_XML_CHARS.search(orden)):
        problems.add("orden_compra", f"El campo «orden_compra» («{orden}») debe tener de 1 a {MAX_ORDER} caracteres "
                     "sin espacios.", "4233")
    return guias, orden or None


def _inferred_operation(request: GenerarXmlRequest, exportacion: bool) -> str:
    """The operation type of a plain voucher: 0200 when every line is an export, 1001 with a detracción, else 0101."""
    return (sunat_codes.EXPORT_OF_GOODS if exportacion else spot_lines.inferred_operation(request)
            if request.detraccion is not None else PERCEPCION_OPERATION if request.percepcion is not None
            else sunat_codes.DOMESTIC_SALE)


def _operation_type(rules: SaleRules, request: GenerarXmlRequest, problems: pv.Problems, exportacion: bool,
                    lines: list[ubl.Line]) -> str:
    """The operation type (catalogue 51): `tipo_operacion` when given, checked against the lines and the
    detracción; otherwise inferred (0200 when every line is an export, 1001 with a detracción, else 0101)."""
    inferred = _inferred_operation(request, exportacion)
    code = request.tipo_operacion
    if code is None or code == inferred:
        return inferred
    field_name = "tipo_operacion"
    if not rules.takes_operation_type:
        problems.add(field_name, "El campo «tipo_operacion» solo se admite en facturas y boletas (una nota sigue al "
                     "comprobante que modifica).")
    elif code not in sunat_codes.OPERATION_TYPES:
        offered = ", ".join(sunat_codes.OPERATION_TYPES)
        problems.add(field_name, f"El tipo de operación «{code}» del campo «tipo_operacion» no está entre los que "
                     f"Yupana emite (catálogo 51): {offered}.", "3206")
    elif code.startswith("02") and lines and not exportacion:
        index = next(i for i, line in enumerate(lines) if line.afectacion != EXPORTACION)
        problems.add(f"items[{index}].tipo_afectacion_igv", f"El campo «items[{index}].tipo_afectacion_igv» debe ser "
                     f"40: una exportación (campo «tipo_operacion» {code}) lleva solo líneas de afectación 40.", "2642")
    elif code.startswith("02"):
        return code
    elif exportacion:
        problems.add(field_name, f"El campo «tipo_operacion» ({code}) no corresponde a líneas de exportación "
                     "(afectación 40): use 0200 (bienes) o 0201 a 0208 (servicios).", "3100")
    elif code in spot_lines.SPOT_OPERATIONS and request.detraccion is not None:
        spot_lines.operation_mismatch(request, problems, code, inferred)
    elif code in spot_lines.SPOT_OPERATIONS:
        return code  # without `detraccion`: refused by the caller (3127)
    elif code == PERCEPCION_OPERATION:
        problems.add("percepcion", "El tipo de operación 2001 (sujeta a percepción) necesita el campo «percepcion» "
                     "(código 51, 52 o 53 del catálogo 53).", "3093")
    else:
        problems.add(field_name, f"El campo «tipo_operacion» ({code}) no corresponde a una factura con detracción: "
                     "use 1001 o quite el campo.", "3128")
    return inferred
