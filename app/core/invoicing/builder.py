"""The voucher builder, pure: the contract's request, the issuer's profile and a way to name a customer by RUC
become a complete UBL 2.1 document (app.core.invoicing.ubl renders it). Lines, taxes, totals and legend are
computed here in Decimal; every problem of a request is reported in one 400 with SUNAT's code where it has one.
It knows nothing of storage or the engine (docs/vouchers.md)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, time
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from app.core.contract import (
    GenerarXmlRequest,
    Item,
    parse_model,
    repaired_for_checks,
    translate_validation_error,
)
from app.core.errors import YupanaError, invalid, invalid_many
from app.core.invoicing import prevalidation as pv
from app.core.invoicing import sunat_codes, ubl
from app.core.invoicing.amounts import CENT, IGV_RATE, MAX_BAGS, ZERO, amount_in_words, icbper_rate, money
from app.core.invoicing.catalog import prices
from app.core.platform import clock

if TYPE_CHECKING:  # the builder takes a profile; it never opens the store of them
    from app.core.platform.companies import Company

PRICE_PLACES = Decimal("1E-10")

CompanyOf = Callable[[str], "Company | None"]  # the issuer's profile by RUC
NameOf = Callable[[str], str | None]  # a customer's name by RUC (the registry), None when unknown


def _name_of(name_of: NameOf, ruc: str) -> str | None:
    try:
        name = name_of(ruc)
    except YupanaError:
        return None
    return (name or "").strip() or None


def _issuer(company_of: CompanyOf, problems: pv.Problems, ruc: str) -> Company | None:
    problem = pv.ruc_problem(ruc)
    if problem:
        problems.add("emisor.ruc", f"El RUC «{ruc}» del campo «emisor.ruc» no es válido: {problem}.")
        return None
    company = company_of(ruc)
    if company is None:
        problems.add("emisor.ruc", f"No hay una empresa emisora con RUC «{ruc}» (campo «emisor.ruc»). "
                     "Regístrela con `yupana company set`.")
    return company


def _customer(name_of: NameOf, request: GenerarXmlRequest, problems: pv.Problems, exportacion: bool | None
              ) -> ubl.Party:
    """The customer as catalogue 06 type, number, name and address, checked against the voucher type.
    `exportacion`: True (a customer without RUC), False (with RUC on a factura), None (either: an export of
    services SUNAT accepts to a domiciled customer)."""
    party = _customer_identity(name_of, request, problems, exportacion)
    direccion = request.receptor.direccion
    if direccion:
        pv.check_address(problems, "receptor.direccion", direccion)
        party.direccion = direccion
    return party


def _customer_identity(name_of: NameOf, request: GenerarXmlRequest, problems: pv.Problems,
                       exportacion: bool | None) -> ubl.Party:
    """The customer as catalogue 06 type, number and name, checked against the voucher type."""
    receptor = request.receptor
    pv.check_characters(problems, "receptor.razon_social", receptor.razon_social)
    pv.check_characters(problems, "receptor.numero_documento", receptor.numero_documento)
    pv.check_characters(problems, "receptor.ruc", receptor.ruc)
    tipo = request.tipo if request.tipo in ("01", "03") else (
        request.documento_referencia.tipo if request.documento_referencia else "01")
    boleta = tipo == "03"
    tipo_doc = receptor.tipo_documento or ("6" if receptor.ruc else None)
    numero = receptor.ruc if tipo_doc == "6" and receptor.ruc else (receptor.numero_documento or "")
    name = receptor.razon_social or ""
    if tipo_doc is None:
        if not boleta:
            problems.add("receptor.ruc", "El campo «receptor.ruc» es obligatorio en una factura y sus notas.", "2014")
            return ubl.Party("6", "-", name or "-")
        return ubl.Party("0", "-", name or "CLIENTES VARIOS")
    if tipo_doc not in pv.DOCUMENT_TYPES:
        problems.add("receptor.tipo_documento", f"El tipo de documento «{tipo_doc}» del campo "
                     "«receptor.tipo_documento» no es válido: use 1 (DNI), 4 (CE), 6 (RUC), 7 (pasaporte), "
                     "A (cédula diplomática) o 0 (sin documento).", "2800")
        return ubl.Party("0", "-", name or "-")
    if not boleta and exportacion is not None and (tipo_doc != "6") != exportacion:
        detail = ("una exportación se emite a un cliente no domiciliado (sin RUC)" if exportacion
                  else "una factura y sus notas se emiten a un RUC (tipo 6)")
        problems.add("receptor.tipo_documento", f"El campo «receptor.tipo_documento» no es válido: {detail}.", "2800")
    if tipo_doc == "6":
        pv.check_customer_ruc(problems, numero, "receptor.ruc" if receptor.ruc else "receptor.numero_documento")
        if not name and not problems.details:
            name = _name_of(name_of, numero) or ""
            if not name:
                problems.add("receptor.razon_social", f"No se pudo obtener la razón social del RUC «{numero}»: "
                             "indique el campo «receptor.razon_social».", "2021")
        return ubl.Party("6", numero, name or "-")
    if tipo_doc == "0":
        numero = numero or "-"
    elif not numero:
        problems.add("receptor.numero_documento", "El campo «receptor.numero_documento» es obligatorio para el "
                     f"tipo de documento {tipo_doc}.", "2014")
    pv.check_identity(problems, tipo_doc, numero, boleta)
    if not name:
        if tipo_doc == "0":
            name = "CLIENTES VARIOS"
        else:
            problems.add("receptor.razon_social", "El campo «receptor.razon_social» (nombre del cliente) es "
                         f"obligatorio para el tipo de documento {tipo_doc}.", "2021")
    return ubl.Party(tipo_doc, numero or "-", name or "-")


# Lines repeat: a shop sells the same products in the same quantities all day, and a batch of boletas is made of
# them. A line's values, checks and XML depend only on its item's fields, so a line that passed its checks is kept
# and reused as it is (ubl.Line also keeps its rendered XML). Equal Decimals (1 and 1.00) give the same line: amounts
# are written without trailing zeros. Bounded: emptied when full.
_LINE_CACHE_SIZE = 4096
_line_cache: dict[tuple, ubl.Line] = {}


def _lines(request: GenerarXmlRequest, problems: pv.Problems, fecha: date
           ) -> tuple[list[ubl.Line], Decimal | None]:
    """The lines, and the tax per bag when a line has bags (None otherwise: a plain voucher does no bag work)."""
    # Ten of these per ten-line voucher: checks take their fast path when all is fine, no helper calls.
    lines = []
    bag_rate: Decimal | None = None  # the tax per bag, looked up once, only when a line has bags
    # Lines without value are refused (SUNAT's 3105), but a credit note of reason 13 has only such lines.
    valueless_ok = request.tipo == "07" and request.codigo_motivo == pv.INSTALMENTS_REASON
    for index, item in enumerate(request.items):
        rate = None
        if item.icbper:
            if bag_rate is None:
                bag_rate = icbper_rate(fecha.year, fecha.month, fecha.day) or ZERO
            rate = bag_rate  # lines of bags of different rates are different lines
        key = (item.descripcion, item.cantidad, item.precio_unitario, item.igv, item.codigo, item.unidad,
               item.tipo_afectacion_igv, rate, item.descuento, item.precio_con_igv)
        line = _line_cache.get(key)
        if line is None:
            before = len(problems.details)
            line = _new_line(problems, index, item, rate, valueless_ok)
            if line is None:
                continue
            if len(problems.details) == before and line.valor_venta:  # only a line without problems, with value
                if len(_line_cache) >= _LINE_CACHE_SIZE:
                    _line_cache.clear()
                _line_cache[key] = line
        lines.append(line)
    return lines, bag_rate


def _new_line(problems: pv.Problems, index: int, item: Item, bag_rate: Decimal | None,
              valueless_ok: bool = False) -> ubl.Line | None:
    """The line of `item`, or None when its amounts cannot be computed; problems go to `problems`. `bag_rate`:
    the tax per bag of a line of plastic bags (ZERO before ICBPER existed), None for any other line."""
    afectacion = item.tipo_afectacion_igv or "10"
    unidad = item.unidad or "NIU"
    cantidad, valor_unitario, given_igv = item.cantidad, item.precio_unitario, item.igv
    pv.check_line(problems, index, item.descripcion, item.codigo, unidad, afectacion)
    if valor_unitario is None or item.precio_con_igv is not None:
        valor_unitario, derived_igv = _from_price_with_igv(problems, index, item, afectacion)
        if valor_unitario is None:
            return None
        if given_igv is None and item.descuento is None and ubl.SCHEME_BY_AFFECTATION.get(afectacion) is not ubl.GRA:
            given_igv = derived_igv  # a free line's IGV is computed on its reference value, never derived
    if not pv.check_quantity_and_price(problems, index, cantidad, valor_unitario):
        return None
    valor_venta = (cantidad * valor_unitario).quantize(CENT, ROUND_HALF_UP)
    descuento = item.descuento
    if descuento is not None:
        descuento = _line_discount(problems, index, descuento, valor_venta)
        if descuento is None:
            return None
        valor_venta -= descuento
    scheme = ubl.SCHEME_BY_AFFECTATION.get(afectacion, ubl.IGV)  # unknown codes are refused anyway
    if scheme is ubl.GRA and not _free_line(problems, index, item, valor_unitario):
        return None
    if not valor_venta and not valueless_ok:  # SUNAT wants a taxable amount above zero on every line (3105)
        problems.add(f"items[{index}].precio_unitario", f"La línea «items[{index}]» no tiene valor (cantidad × "
                     f"precio_unitario = 0.00): SUNAT rechaza una línea sin base imponible. Una entrega sin cobro es "
                     "una transferencia gratuita: use «tipo_afectacion_igv» 11 a 16, 21 o 31 a 37 con el valor "
                     "referencial en «precio_unitario».", "3105")
        return None
    igv = (valor_venta * IGV_RATE).quantize(CENT, ROUND_HALF_UP) if afectacion in ubl.TAXED_AFFECTATIONS else ZERO
    if given_igv is not None:
        if not given_igv.is_finite() or abs(given_igv - igv) > CENT:
            problems.add(f"items[{index}].igv", f"El IGV del campo «items[{index}].igv» ({given_igv}) no "
                         f"corresponde al calculado ({igv}: 18 % de {valor_venta}).", "3103")
            if not given_igv.is_finite():
                return None
        igv = money(given_igv)
    # The price a buyer pays per unit, after the discount (SUNAT's 3270 checks it against value, taxes and quantity).
    if scheme is ubl.IGV:
        precio = ((valor_venta + igv) / cantidad).quantize(PRICE_PLACES)
    elif scheme is ubl.GRA:  # the reference value per unit (PriceTypeCode 02), as given
        precio = valor_unitario
    else:  # the line's value per unit: the unit value itself unless rounding to cents moved it (0.001 × 5 = 0.01)
        precio = (valor_unitario if descuento is None and valor_venta == cantidad * valor_unitario
                  else (valor_venta / cantidad).quantize(PRICE_PLACES))
    line = ubl.Line(item.descripcion, cantidad, unidad, item.codigo, afectacion, valor_unitario, precio,
                    valor_venta, igv, scheme)
    if descuento:
        line.descuento = descuento
    if bag_rate is not None:
        _bags(problems, index, line, bag_rate)
    return line


def _from_price_with_igv(problems: pv.Problems, index: int, item: Item, afectacion: str
                         ) -> tuple[Decimal | None, Decimal | None]:
    """(precio_unitario, igv to use or None) of an item priced by `precio_unitario` xor `precio_con_igv`; with
    `precio_con_igv`, the value without IGV that makes the line cost round_half_up(cantidad × precio_con_igv, 2)
    (app.core.invoicing.catalog.prices, docs/catalog.md). (None, None) when the item has both or neither."""
    prefix = f"items[{index}]"
    precio = item.precio_con_igv
    if precio is None:
        problems.add(f"{prefix}.precio_unitario", f"Falta el precio del ítem {index + 1}: indique "
                     f"«{prefix}.precio_unitario» (valor unitario sin IGV) o «{prefix}.precio_con_igv» (con IGV).")
        return None, None
    if item.precio_unitario is not None:
        problems.add(f"{prefix}.precio_con_igv", f"El ítem {index + 1} trae «{prefix}.precio_unitario» "
                     f"({item.precio_unitario}) y «{prefix}.precio_con_igv» ({precio}): indique solo uno de los dos.")
        return None, None
    if not precio.is_finite() or precio < 0 or precio >= pv.AMOUNT_LIMIT:
        problems.add(f"{prefix}.precio_con_igv", f"El campo «{prefix}.precio_con_igv» ({precio}) debe ser un número "
                     "no negativo, con hasta 12 enteros y 10 decimales.", "2369")
        return None, None
    cantidad = item.cantidad
    if not cantidad.is_finite() or not 0 < cantidad < pv.AMOUNT_LIMIT:
        return precio, None  # the quantity's own problem is said by check_quantity_and_price
    try:
        line = prices.from_price_with_igv(precio, cantidad, prices.rate_for(afectacion))
    except ValueError:  # no unit value of 10 decimals gives the line (quantities of 10⁸ and more)
        problems.add(f"{prefix}.precio_con_igv", f"No hay un valor unitario sin IGV de hasta 10 decimales para "
                     f"{cantidad} unidades a {precio} con IGV: envíe «{prefix}.precio_unitario».", "2369")
        return None, None
    return line.precio_unitario, line.igv


def _free_line(problems: pv.Problems, index: int, item: Item, valor_unitario: Decimal) -> bool:
    """A free transfer (catalogue 07 11-16, 21, 31-37): `precio_unitario` is the reference value, above zero
    (SUNAT's 2416: a free line states its value); nothing is charged, so there is nothing to discount."""
    ok = True
    if valor_unitario <= 0:
        problems.add(f"items[{index}].precio_unitario", f"En una transferencia gratuita (afectación "
                     f"{item.tipo_afectacion_igv}) el campo «items[{index}].precio_unitario» es el valor referencial "
                     "unitario y debe ser mayor que cero.", "2417")
        ok = False
    if item.descuento:
        problems.add(f"items[{index}].descuento", f"El campo «items[{index}].descuento» no se admite en una "
                     f"transferencia gratuita (afectación {item.tipo_afectacion_igv}): no se cobra nada que descontar.")
        ok = False
    return ok


def _line_discount(problems: pv.Problems, index: int, descuento: Decimal, gross: Decimal) -> Decimal | None:
    """The line's discount (0 is none), or None when it cannot be applied: it must be an amount in cents below the
    line's value before it (cantidad × precio_unitario)."""
    field_name = f"items[{index}].descuento"
    if not descuento.is_finite() or descuento < 0 or pv.decimals(descuento) > 2:
        problems.add(field_name, f"El campo «{field_name}» ({descuento}) debe ser un monto sin IGV no negativo, con "
                     "hasta 2 decimales.", "2955")
        return None
    if descuento > gross:
        problems.add(field_name, f"El descuento del campo «{field_name}» ({descuento}) es mayor que el valor de la "
                     f"línea ({gross}: cantidad × precio_unitario).")
        return None
    if descuento and descuento == gross:  # SUNAT wants a taxable amount above zero on every line
        problems.add(field_name, f"El descuento del campo «{field_name}» ({descuento}) deja la línea sin valor: "
                     "una entrega sin cobro es una transferencia gratuita, no un descuento.", "3105")
        return None
    return descuento


def _bags(problems: pv.Problems, index: int, line: ubl.Line, rate: Decimal) -> None:
    """A line of plastic bags: one bag per unit, so a whole quantity of up to 5 digits (SUNAT's 2892 and 3236);
    ICBPER is levied beside the line's IGV: a bag sold is gravado (10), or given free (11-16, 21, 31-37). Bags on a
    paid exonerado or inafecto line (20, 30) are refused: that is a product line marked by mistake (issue 17);
    an export is refused too (the tax is on bags handed over in Peru)."""
    field_name = f"items[{index}].icbper"
    if not rate:
        problems.add(field_name, f"El campo «{field_name}» no se admite: el ICBPER rige desde el 1 de agosto de "
                     "2019 y la fecha de emisión es anterior.")
        return
    if line.afectacion in ("20", "30"):
        kind = "exonerada" if line.afectacion == "20" else "inafecta"
        problems.add(field_name, f"El campo «{field_name}» (bolsas de plástico) no se admite en una línea {kind} "
                     f"(tipo_afectacion_igv {line.afectacion}): las bolsas se venden gravadas con IGV (10) o se "
                     "entregan gratis; ponga las bolsas en una línea propia.")
        return
    if line.afectacion == "40":
        problems.add(field_name, f"El campo «{field_name}» no se admite en una línea de exportación (afectación 40): "
                     "el ICBPER grava las bolsas entregadas en el país.")
        return
    if line.cantidad != line.cantidad.to_integral_value() or not 1 <= line.cantidad <= MAX_BAGS:
        problems.add(f"items[{index}].cantidad", f"En una línea de bolsas («{field_name}») el campo «items[{index}]."
                     f"cantidad» ({line.cantidad}) es el número de bolsas: un entero de 1 a {MAX_BAGS}.", "3236")
        return
    line.bolsas = int(line.cantidad)
    line.icbper_rate = rate
    line.icbper = money(line.bolsas * rate)


def _subtotals(lines: list[ubl.Line]) -> list[tuple[ubl.TaxScheme, Decimal, Decimal]]:
    sums: dict[str, tuple[Decimal, Decimal]] = {}
    for line in lines:
        taxable, tax = sums.get(line.scheme.code, (ZERO, ZERO))
        sums[line.scheme.code] = (taxable + line.valor_venta, tax + line.igv)
    return [(scheme, *sums[scheme.code]) for scheme in ubl.SCHEME_ORDER if scheme.code in sums]


def _global_discount(request: GenerarXmlRequest, problems: pv.Problems,
                     subtotals: list[tuple[ubl.TaxScheme, Decimal, Decimal]]) -> Decimal | None:
    """The global discount (catalogue 53 code 02): it reduces the IGV base, so it needs gravado lines and must stay
    below their value; invoices only (a note corrects a voucher's lines)."""
    descuento = request.descuento_global
    field_name = "descuento_global"
    if descuento is None:
        return None
    if request.tipo not in ("01", "03"):
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


def _payment(request: GenerarXmlRequest, problems: pv.Problems, total: Decimal, fecha: date
             ) -> tuple[str | None, list[tuple[Decimal, date]]]:
    forma = request.forma_pago
    if request.tipo not in ("01", "03"):
        if request.tipo == "07" and request.codigo_motivo == pv.INSTALMENTS_REASON:
            if forma is None or forma.tipo != "Credito" or not forma.cuotas:
                problems.add("forma_pago.cuotas", "Una nota de crédito de motivo 13 (ajuste de montos y/o fechas de "
                             "pago) lleva las cuotas corregidas en «forma_pago» (tipo Credito y «forma_pago.cuotas»).",
                             "3257")
                return None, []
            total = Decimal("Infinity")  # the note itself is of 0: the instalments are the factura's, corrected
        else:
            return None, []
    if forma is None:
        return ("Contado" if request.tipo == "01" else None), []
    if forma.tipo == "Contado":
        if forma.cuotas:
            problems.add("forma_pago.cuotas", "El campo «forma_pago.cuotas» solo se admite con pago al Credito.",
                         "3252")
        return "Contado", []
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
    return "Credito", cuotas


ACCOUNT_PATTERN = re.compile(r"^[0-9][0-9-]{6,18}[0-9]$")  # a bank account: 8 to 20 digits and hyphens
PERCENT = Decimal(100)


def _spot(request: GenerarXmlRequest, problems: pv.Problems, total: Decimal, moneda: str) -> ubl.Detraccion | None:
    """The detracción (SPOT) of a factura: catalogue 54 code, its rate (the catalogue's by default), the Banco de
    la Nación account and the catalogue 59 means; the amount is in PEN (a USD factura needs `tipo_cambio`)."""
    spot = request.detraccion
    assert spot is not None
    ok = True
    if request.tipo != "01":
        problems.add("detraccion", "El campo «detraccion» solo se admite en facturas (tipo 01).")
        ok = False
    entry = sunat_codes.DETRACCIONES.get(spot.codigo)
    if entry is None:
        problems.add("detraccion.codigo", f"El código «{spot.codigo}» del campo «detraccion.codigo» no está en el "
                     "catálogo 54 de SUNAT (p. ej. 022 otros servicios empresariales, 037 demás servicios).", "3033")
        ok = False
    porcentaje = spot.porcentaje if spot.porcentaje is not None else Decimal(entry[1]) if entry else None
    if porcentaje is not None and not (porcentaje.is_finite() and 0 < porcentaje < PERCENT
                                       and pv.decimals(porcentaje) <= 2):
        problems.add("detraccion.porcentaje", f"El campo «detraccion.porcentaje» ({porcentaje}) debe ser mayor que 0 "
                     "y menor que 100, con hasta 2 decimales.", "3062")
        ok = False
    if not ACCOUNT_PATTERN.match(spot.cuenta):
        problems.add("detraccion.cuenta", f"El campo «detraccion.cuenta» («{spot.cuenta}») debe ser la cuenta de "
                     "detracciones del Banco de la Nación: de 8 a 20 dígitos (se admiten guiones).", "3034")
        ok = False
    medio = spot.medio_pago or "001"
    if medio not in sunat_codes.MEDIOS_DE_PAGO:
        problems.add("detraccion.medio_pago", f"El código «{medio}» del campo «detraccion.medio_pago» no está en el "
                     "catálogo 59 de SUNAT (p. ej. 001 depósito en cuenta, 003 transferencia de fondos).")
        ok = False
    rate = Decimal(1)
    if moneda != "PEN":
        tipo_cambio = request.tipo_cambio
        if tipo_cambio is None or not (tipo_cambio.is_finite() and tipo_cambio > 0 and pv.decimals(tipo_cambio) <= 3):
            problems.add("tipo_cambio", "El campo «tipo_cambio» (soles por dólar, hasta 3 decimales) es obligatorio "
                         "en una factura en dólares con detracción: SUNAT recibe el monto de la detracción en soles.",
                         "3208")
            ok = False
        else:
            rate = tipo_cambio
    if not ok or porcentaje is None:
        return None
    return ubl.Detraccion(spot.codigo, porcentaje, money(total * rate * porcentaje / PERCENT), spot.cuenta, medio)


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


def _operation(request: GenerarXmlRequest, problems: pv.Problems, exportacion: bool,
               lines: list[ubl.Line]) -> str:
    """The operation type (catalogue 51): `tipo_operacion` when given, checked against the lines and the
    detracción; otherwise inferred (0200 when every line is an export, 1001 with a detracción, else 0101)."""
    inferred = (sunat_codes.EXPORT_OF_GOODS if exportacion else
                sunat_codes.DETRACCION_OPERATION if request.detraccion is not None else sunat_codes.DOMESTIC_SALE)
    code = request.tipo_operacion
    if code is None or code == inferred:
        return inferred
    field_name = "tipo_operacion"
    if request.tipo not in pv.SERIE_LETTER:
        problems.add(field_name, "El campo «tipo_operacion» solo se admite en facturas y boletas (una nota sigue al "
                     "comprobante que modifica).")
    elif code not in sunat_codes.OPERATION_TYPES:
        offered = ", ".join(sunat_codes.OPERATION_TYPES)
        problems.add(field_name, f"El tipo de operación «{code}» del campo «tipo_operacion» no está entre los que "
                     f"Yupana emite (catálogo 51): {offered}.", "3206")
    elif code.startswith("02") and lines and not exportacion:
        index = next(i for i, line in enumerate(lines) if line.afectacion != "40")
        problems.add(f"items[{index}].tipo_afectacion_igv", f"El campo «items[{index}].tipo_afectacion_igv» debe ser "
                     f"40: una exportación (campo «tipo_operacion» {code}) lleva solo líneas de afectación 40.", "2642")
    elif code.startswith("02"):
        return code
    elif exportacion:
        problems.add(field_name, f"El campo «tipo_operacion» ({code}) no corresponde a líneas de exportación "
                     "(afectación 40): use 0200 (bienes) o 0201 a 0208 (servicios).", "3100")
    elif code == sunat_codes.DETRACCION_OPERATION:
        return code  # without `detraccion`: refused by the caller (3127)
    else:
        problems.add(field_name, f"El campo «tipo_operacion» ({code}) no corresponde a una factura con detracción: "
                     "use 1001 o quite el campo.", "3128")
    return inferred


SPOT_THRESHOLD = Decimal(sunat_codes.DETRACCION_THRESHOLD)


def _spot_missing(request: GenerarXmlRequest, problems: pv.Problems, total: Decimal, moneda: str) -> None:
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


def _note_reference(request: GenerarXmlRequest, problems: pv.Problems
                    ) -> tuple[tuple[str, str] | None, tuple[str, str] | None, str | None]:
    """(reference, reason, serie letter) of a note; for invoices (None, None, letter of the type)."""
    if request.tipo in pv.SERIE_LETTER:
        return None, None, pv.SERIE_LETTER[request.tipo]
    ref = request.documento_referencia
    reasons = pv.CREDIT_REASONS if request.tipo == "07" else pv.DEBIT_REASONS
    letter = None
    reference = None
    if ref is None:
        problems.add("documento_referencia", "El campo «documento_referencia» (comprobante que modifica la nota) "
                     "es obligatorio.", "2128")
    elif ref.tipo not in pv.SERIE_LETTER:
        problems.add("documento_referencia.tipo", "El campo «documento_referencia.tipo» debe ser 01 (factura) o "
                     "03 (boleta).", "2116" if request.tipo == "07" else "2204")
    else:
        letter = pv.SERIE_LETTER[ref.tipo]
        if not (pv.SERIE_PATTERN.match(ref.serie) and ref.serie[0] == letter and 1 <= ref.numero <= pv.MAX_NUMERO):
            problems.add("documento_referencia.serie", f"«documento_referencia» ({ref.serie}-{ref.numero}) no es "
                         f"una serie-número válida de tipo {ref.tipo}.", "2117" if request.tipo == "07" else "2205")
        reference = (ref.tipo, f"{ref.serie}-{ref.numero}")
    code = request.codigo_motivo
    if code == pv.IVAP_REASON:
        problems.add("codigo_motivo", "El motivo 12 del campo «codigo_motivo» (ajustes afectos al IVAP) corrige "
                     "líneas con IVAP (afectación 17), que Yupana no emite.", "2172")
    elif code not in reasons:
        catalogue = "09" if request.tipo == "07" else "10"
        problems.add("codigo_motivo", f"El campo «codigo_motivo» debe ser un código del catálogo {catalogue}: "
                     f"{', '.join(reasons)}.", "2172")
        if not code:
            return reference, None, letter
    if code == pv.INSTALMENTS_REASON and ref is not None and ref.tipo != "01":
        problems.add("documento_referencia.tipo", f"El campo «documento_referencia.tipo» ({ref.tipo}) debe ser 01: "
                     "una nota de crédito de motivo 13 (ajuste de montos y/o fechas de pago) solo modifica una factura.",
                     "3259")
    description = request.descripcion_motivo or reasons.get(code or "", "-")
    pv.check_text(problems, "descripcion_motivo", description, pv.MAX_REASON, "2135")
    if "\n" in description or "\r" in description:
        problems.add("descripcion_motivo", "El campo «descripcion_motivo» debe ser una sola línea.", "2135")
    return reference, (code, description), letter


def _note_lines(request: GenerarXmlRequest, problems: pv.Problems, lines: list[ubl.Line], total: Decimal) -> None:
    """Reason 11 adjusts an export: every line of affectation 40 (SUNAT's 3107). A credit note of reason 13 corrects
    the instalments only: its lines and total are 0 (3315)."""
    if request.codigo_motivo == pv.EXPORT_REASON:
        for index, line in enumerate(lines):
            if line.afectacion != "40":
                problems.add(f"items[{index}].tipo_afectacion_igv", f"El campo «items[{index}].tipo_afectacion_igv» "
                             "debe ser 40: el motivo 11 ajusta una operación de exportación.", "3107")
                return
    elif request.tipo == "07" and total:
        for index, item in enumerate(request.items):
            if item.precio_unitario:
                problems.add(f"items[{index}].precio_unitario", f"El campo «items[{index}].precio_unitario» debe ser 0 "
                             "en una nota de crédito de motivo 13: corrige las cuotas, no acredita un monto.", "3315")
                return


def _when(request: GenerarXmlRequest) -> tuple[date, time]:
    now = clock.now().astimezone(clock.PERU)
    return request.fecha_emision or now.date(), (request.hora_emision or now.time()).replace(microsecond=0,
                                                                                               tzinfo=None)


def build_document(request: GenerarXmlRequest, company_of: CompanyOf, name_of: NameOf,
                   checks: bool = True) -> ubl.Document:
    """Compute the whole voucher from the request; raise one 400 listing every problem found. `company_of` gives
    the issuer's profile by RUC (None: not registered), `name_of` a customer's name by RUC (None: unknown).

    `checks=False` (tests only) keeps only what is needed to render, so SUNAT's own sheets can be
    asked what they say about a voucher Yupana would have refused.
    """
    problems = pv.Problems()
    if request.tipo not in ubl.LAYOUT:
        raise invalid("tipo", f"El campo «tipo» ({request.tipo}) debe ser 01 (factura), 03 (boleta), "
                      "07 (nota de crédito) u 08 (nota de débito).", "1003")
    company = _issuer(company_of, problems, request.emisor.ruc)
    reference, motivo, letter = _note_reference(request, problems)
    pv.check_serie_numero(problems, request.tipo, request.serie, request.numero, letter)
    moneda = (request.moneda or "PEN").upper()
    if moneda not in pv.CURRENCIES:
        problems.add("moneda", f"El campo «moneda» ({moneda}) debe ser PEN o USD.", "3088")
    if not request.items:
        problems.add("items", "El campo «items» debe tener al menos una línea.", "2023")
    fecha, hora = _when(request)
    lines, bag_rate = _lines(request, problems, fecha)
    exportacion = bool(lines) and all(line.afectacion == "40" for line in lines)
    if not exportacion and any(line.afectacion == "40" for line in lines):
        index = next(i for i, line in enumerate(lines) if line.afectacion == "40")
        problems.add(f"items[{index}].tipo_afectacion_igv", "Una exportación (afectación 40) no se mezcla con "
                     "ventas internas en un mismo comprobante.", "2642")
    if moneda != "PEN" and bag_rate is not None:
        index = next(i for i, item in enumerate(request.items) if item.icbper)
        problems.add(f"items[{index}].icbper", f"El campo «items[{index}].icbper» (bolsas de plástico) solo se admite "
                     "en comprobantes en soles (PEN): el ICBPER es un monto fijo en soles por bolsa.")
    if request.tipo_operacion is None:  # a plain voucher: inferred, no checks
        tipo_operacion = (sunat_codes.EXPORT_OF_GOODS if exportacion else sunat_codes.DETRACCION_OPERATION
                          if request.detraccion is not None else sunat_codes.DOMESTIC_SALE)
    else:
        tipo_operacion = _operation(request, problems, exportacion, lines)
    receptor = _customer(name_of, request, problems,
                         None if exportacion and tipo_operacion not in sunat_codes.EXPORTS_TO_NON_RESIDENTS
                         else exportacion)
    valor_venta = sum((line.valor_venta for line in lines), ZERO)
    igv = sum((line.igv for line in lines), ZERO)
    subtotals = _subtotals(lines)
    descuento_global: tuple[Decimal, Decimal] | None = None  # (the discount, the base it was taken from)
    if request.descuento_global:
        discount = _global_discount(request, problems, subtotals)
        if discount:  # the gravado base and its IGV are recomputed after the discount (SUNAT's 3280, 4290)
            _, before, igv_before = subtotals[0]
            base = before - discount
            igv_after = money(base * IGV_RATE)
            subtotals[0] = (ubl.IGV, base, igv_after)
            igv += igv_after - igv_before
            valor_venta -= discount
            descuento_global = (discount, base + discount)
    gratuitas = bool(subtotals) and subtotals[-1][0] is ubl.GRA
    if gratuitas:  # free lines: their value and IGV are stated in the 9996 subtotal, never charged
        _, free_value, free_igv = subtotals[-1]
        valor_venta -= free_value
        igv -= free_igv
    icbper = ZERO if bag_rate is None else sum((line.icbper for line in lines), ZERO)
    total = valor_venta + igv + icbper
    if request.tipo in ("07", "08") and request.codigo_motivo in (pv.EXPORT_REASON, pv.INSTALMENTS_REASON):
        _note_lines(request, problems, lines, total)
    forma_pago, cuotas = _payment(request, problems, total, fecha)
    detraccion = _spot(request, problems, total, moneda) if request.detraccion is not None else None
    if (detraccion is None and request.tipo == "01" and (total > SPOT_THRESHOLD or moneda != "PEN")
            and request.detraccion is None):
        _spot_missing(request, problems, total, moneda)
    if request.tipo_operacion == sunat_codes.DETRACCION_OPERATION and request.detraccion is None:
        problems.add("detraccion", "El tipo de operación 1001 (sujeta a detracción) necesita el campo «detraccion» "
                     "(código, cuenta del Banco de la Nación).", "3127")
    guias, orden_compra = _references(request, problems) if request.guias or request.orden_compra else ([], None)
    if (request.tipo == "03" and receptor.tipo_documento == "0" and moneda == "PEN"
            and total > pv.BOLETA_ID_THRESHOLD):
        problems.add("receptor.numero_documento", "Una boleta de más de S/ 700.00 debe identificar al cliente "
                     "(«receptor.tipo_documento» y «receptor.numero_documento»).", "2396")
    if checks:
        problems.raise_if_any()
    if company is None:
        raise invalid("emisor.ruc", f"No hay una empresa emisora con RUC «{request.emisor.ruc}».")
    place = company.place
    return ubl.Document(
        tipo=request.tipo, serie=request.serie, numero=request.numero, fecha=fecha, hora=hora, moneda=moneda,
        tipo_operacion=tipo_operacion, emisor_ruc=company.ruc,
        emisor_nombre=company.razon_social, emisor_comercial=company.nombre_comercial,
        emisor_ubigeo=company.ubigeo, emisor_direccion=company.direccion,
        emisor_departamento=place.departamento.upper() if place else "-",
        emisor_provincia=place.provincia.upper() if place else "-",
        emisor_distrito=place.distrito.upper() if place else "-", emisor_establecimiento=company.codigo_establecimiento,
        receptor=receptor, lines=lines, subtotals=subtotals, valor_venta=valor_venta, igv=igv, total=total,
        icbper=icbper, descuento_global=descuento_global, leyenda=amount_in_words(total, moneda), gratuitas=gratuitas, detraccion=detraccion, guias=guias, orden_compra=orden_compra, forma_pago=forma_pago, cuotas=cuotas, referencia=reference,
        motivo=motivo)


# ---------------------------------------------------------------- every problem in one answer

def parse_request(payload: Any, company_of: CompanyOf, name_of: NameOf) -> GenerarXmlRequest:
    """Operation 1's request; a request with type errors also gets its content problems in the same
    answer (a client fixes its request once), found on a copy with stand-ins for the broken fields."""
    if not isinstance(payload, dict):
        return parse_model(GenerarXmlRequest, payload)
    try:
        return GenerarXmlRequest.model_validate(payload)
    except ValidationError as exc:
        raise _every_problem(payload, exc, company_of, name_of) from None


def _every_problem(payload: dict, exc: ValidationError, company_of: CompanyOf, name_of: NameOf) -> YupanaError:
    typed = translate_validation_error(exc)
    repaired = repaired_for_checks(GenerarXmlRequest, payload, exc)
    if repaired is None:
        return typed
    request, replaced = repaired
    assert isinstance(request, GenerarXmlRequest)  # repaired as the model it was asked for
    try:
        build_document(request, company_of, name_of)
    except YupanaError as content:
        more = [d for d in content.details if not _depends_on(d.field or "", replaced)]
        return invalid_many(typed.details + more) if more else typed
    return typed


def _depends_on(field: str, replaced: list[str]) -> bool:
    """Whether a content problem may come from a stand-in: the same field, what is computed from it (the
    line's IGV, the cuotas against the total, the boleta threshold), or inside a replaced object."""
    for path in replaced:
        if field == path or field.startswith((path + ".", path + "[")):
            return True
        line = re.match(r"^(items\[\d+\])\.", path)
        if line and field in (line.group(1), line.group(1) + ".igv"):
            return True
        if path.startswith("items") and field.startswith(("forma_pago", "receptor.numero_documento")):
            return True
        if path.startswith("forma_pago.cuotas") and field == "forma_pago.cuotas":
            return True
    return False
