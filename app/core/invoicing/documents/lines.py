"""The lines of a sale document (facturas, boletas and their notes), pure: each item becomes a `ubl.Line` with its
value, IGV, price, discount and bags, computed in Decimal and checked; every problem goes to the request's
`Problems`. The subtotals per tax scheme are summed here too (docs/vouchers.md)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import cast

from app.core.contract import GenerarXmlRequest, Item
from app.core.invoicing import prevalidation as pv
from app.core.invoicing import ubl
from app.core.invoicing.amounts import CENT, IGV_RATE, MAX_BAGS, ZERO, icbper_rate, money
from app.core.invoicing.catalog import prices
from app.core.invoicing.documents import guest_lines, spot_lines
from app.core.invoicing.sunat_catalogues import (
    ALLOWANCES_AND_CHARGES,
    EXPORTACION,
    GRAVADO,
    ISC_AL_VALOR,
    ISC_MONTO_FIJO,
    ISC_PRECIO_PUBLICO,
    ISC_SYSTEMS,
    IVAP,
    IVAP_PERCENT,
    LINE_ALLOWANCES_OFFERED,
    LINE_CHARGE,
    LINE_CHARGE_KEEPING_BASE,
    LINE_DISCOUNT_KEEPING_BASE,
    TAXED_AFFECTATIONS,
    UNIDAD,
)

PRICE_PLACES = Decimal("1E-10")
# A free line's TaxAmount carries its IGV, not charged; beside ICBPER, SUNAT's 3292 compares the line's TaxAmount
# with the charged taxes (1000, 7152…) within 1.00, so a free bag line may state at most this much IGV.
FREE_IGV_BESIDE_BAGS = Decimal("1.00")
IVAP_RATE = Decimal(IVAP_PERCENT) / 100

# Lines repeat: a shop sells the same products in the same quantities all day, and a batch of boletas is made of
# them. A line's values, checks and XML depend only on its item's fields, so a line that passed its checks is kept
# and reused as it is (ubl.Line also keeps its rendered XML). Equal Decimals (1 and 1.00) give the same line: amounts
# are written without trailing zeros. Bounded: emptied when full.
_LINE_CACHE_SIZE = 4096
_line_cache: dict[tuple, ubl.Line] = {}


def lines_of(request: GenerarXmlRequest, problems: pv.Problems, fecha: date, valueless_ok: bool
             ) -> tuple[list[ubl.Line], Decimal | None]:
    """The lines, and the tax per bag when a line has bags (None otherwise: a plain voucher does no bag work).
    `valueless_ok`: lines without value are accepted (a credit note of reason 13 has only such lines); otherwise
    they are refused (SUNAT's 3105)."""
    lines, bag_rate = item_lines(request.items, problems, fecha, valueless_ok, keep_places=False)
    return cast(list[ubl.Line], lines), bag_rate  # without the places of unbuilt items: no None


def item_lines(items: Sequence[Item | None], problems: pv.Problems, fecha: date, valueless_ok: bool,
               keep_places: bool = True) -> tuple[list[ubl.Line | None], Decimal | None]:
    """Each item's line, None for an item whose amounts cannot be computed (its problems are in `problems`; an item
    that is None was not readable, its problems were told when it was read), and the tax per bag when a line has
    bags. `keep_places=False` leaves those out instead (what the builder needs). The builder's lines (`lines_of`)
    and the totals' preview (sale.preview) are both these."""
    # Ten of these per ten-line voucher: checks take their fast path when all is fine, no helper calls.
    lines: list[ubl.Line | None] = []
    bag_rate: Decimal | None = None  # the tax per bag, looked up once, only when a line has bags
    for index, item in enumerate(items):
        if item is None:
            if keep_places:
                lines.append(None)
            continue
        rate = None
        if item.icbper:
            if bag_rate is None:
                bag_rate = icbper_rate(fecha.year, fecha.month, fecha.day) or ZERO
            rate = bag_rate  # lines of bags of different rates are different lines
        key = (item.descripcion, item.cantidad, item.precio_unitario, item.igv, item.codigo, item.unidad,
               item.tipo_afectacion_igv, rate, item.descuento, item.precio_con_igv,
               tuple((c.codigo, c.monto, c.base) for c in item.cargos_descuentos) if item.cargos_descuentos else None,
               (item.isc.sistema, item.isc.tasa, item.isc.monto, item.isc.precio_publico) if item.isc else None,
               tuple(item.transporte_carga.model_dump().values()) if item.transporte_carga else None,
               tuple(item.recurso_hidrobiologico.model_dump().values()) if item.recurso_hidrobiologico else None,
               tuple(item.huesped.model_dump().values()) if item.huesped else None)
        line = _line_cache.get(key)
        if line is None:
            before = len(problems.details)
            line = new_line(problems, index, item, rate, valueless_ok)
            if line is None:
                if keep_places:
                    lines.append(None)
                continue
            if len(problems.details) == before and line.valor_venta:  # only a line without problems, with value
                if len(_line_cache) >= _LINE_CACHE_SIZE:
                    _line_cache.clear()
                _line_cache[key] = line
        lines.append(line)
    return lines, bag_rate


def new_line(problems: pv.Problems, index: int, item: Item, bag_rate: Decimal | None,
             valueless_ok: bool = False) -> ubl.Line | None:
    """The line of `item`, or None when its amounts cannot be computed; problems go to `problems`. `bag_rate`:
    the tax per bag of a line of plastic bags (ZERO before ICBPER existed), None for any other line."""
    afectacion = item.tipo_afectacion_igv or GRAVADO
    unidad = item.unidad or UNIDAD
    cantidad = item.cantidad
    pv.check_line(problems, index, item.descripcion, item.codigo, unidad, afectacion)
    priced = _unit_value(problems, index, item, afectacion)
    if priced is None:
        return None
    valor_unitario, given_igv = priced
    if not pv.check_quantity_and_price(problems, index, cantidad, valor_unitario):
        return None
    valued = _valued(problems, index, item, afectacion, valor_unitario, valueless_ok)
    if valued is None:
        return None
    valor_venta, descuento, scheme, cargos, isc = valued
    taxed = valor_venta + (isc[3] if isc else ZERO)  # the ISC is inside the IGV base (SUNAT's 3272)
    igv = _line_igv(problems, index, taxed, afectacion, given_igv)
    if igv is None:
        return None
    precio = _unit_price(scheme, cantidad, valor_unitario, taxed, igv, descuento)
    if cargos:  # the price paid: value and taxes, less the discounts that keep the base, plus such charges (3270)
        precio = _price_with_allowances(scheme, cantidad, taxed, igv, cargos)
    line = ubl.Line(item.descripcion, cantidad, unidad, item.codigo, afectacion, valor_unitario, precio,
                    valor_venta, igv, scheme)
    line.descuento, line.cargos, line.isc = descuento or None, cargos, isc
    if item.transporte_carga or item.recurso_hidrobiologico:
        line.ruta, line.pesca = spot_lines.route(problems, index, item), spot_lines.catch(problems, index, item)
    if item.huesped:
        line.huesped = guest_lines.guest(problems, index, item)
    if bag_rate is not None:
        _bags(problems, index, line, bag_rate)
    return line


Valued = tuple[Decimal, Decimal | None, ubl.TaxScheme, tuple[tuple[str, Decimal, Decimal], ...],
               tuple[str, Decimal, Decimal, Decimal] | None]


def _valued(problems: pv.Problems, index: int, item: Item, afectacion: str, valor_unitario: Decimal,
            valueless_ok: bool) -> Valued | None:
    """(the line's value after its discount and with its 47 charges, the discount, the tax scheme, its other charges
    and discounts, its ISC), or None when the line cannot be valued (its problems said)."""
    gross = (item.cantidad * valor_unitario).quantize(CENT, ROUND_HALF_UP)
    discounted = _discounted(problems, index, item, gross)
    if discounted is None:
        return None
    valor_venta, descuento = discounted
    scheme = ubl.SCHEME_BY_AFFECTATION.get(afectacion, ubl.IGV)  # unknown codes are refused anyway
    if scheme is ubl.GRA and not _free_line(problems, index, item, valor_unitario):
        return None
    cargos = _allowances_and_charges(problems, index, item, gross) if item.cargos_descuentos else ()
    if cargos is None:
        return None
    valor_venta += sum((amount for code, amount, _ in cargos if code == LINE_CHARGE), ZERO)
    if not valor_venta and not valueless_ok:  # SUNAT wants a taxable amount above zero on every line (3105)
        problems.add(f"items[{index}].precio_unitario", f"La línea «items[{index}]» no tiene valor (cantidad × "
                     f"precio_unitario = 0.00): SUNAT rechaza una línea sin base imponible. Una entrega sin cobro es "
                     "una transferencia gratuita: use «tipo_afectacion_igv» 11 a 16, 21 o 31 a 37 con el valor "
                     "referencial en «precio_unitario».", "3105")
        return None
    isc = _isc(problems, index, item, afectacion, valor_venta) if item.isc is not None else None
    if item.isc is not None and isc is None:
        return None
    return valor_venta, descuento, scheme, cargos, isc


def _unit_value(problems: pv.Problems, index: int, item: Item, afectacion: str
                ) -> tuple[Decimal, Decimal | None] | None:
    """(the unit value without IGV, the IGV given or derived from a price with IGV), or None when the item's price
    cannot be read."""
    valor_unitario, given_igv = item.precio_unitario, item.igv
    if valor_unitario is None or item.precio_con_igv is not None:
        valor_unitario, derived_igv = _from_price_with_igv(problems, index, item, afectacion)
        if valor_unitario is None:
            return None
        if given_igv is None and item.descuento is None and ubl.SCHEME_BY_AFFECTATION.get(afectacion) is not ubl.GRA:
            given_igv = derived_igv  # a free line's IGV is computed on its reference value, never derived
    return valor_unitario, given_igv


def _discounted(problems: pv.Problems, index: int, item: Item, gross: Decimal
                ) -> tuple[Decimal, Decimal | None] | None:
    """(the line's value after its discount, the discount), or None when the discount cannot be applied."""
    descuento = item.descuento
    if descuento is None:
        return gross, None
    descuento = _line_discount(problems, index, descuento, gross)
    if descuento is None:
        return None
    return gross - descuento, descuento


def _line_igv(problems: pv.Problems, index: int, valor_venta: Decimal, afectacion: str,
              given_igv: Decimal | None) -> Decimal | None:
    """The line's IGV: 18 % of its value when taxed; an IGV given must match it within a cent (SUNAT's 3103)."""
    rate = IGV_RATE if afectacion in TAXED_AFFECTATIONS else IVAP_RATE if afectacion == IVAP else None
    igv = (valor_venta * rate).quantize(CENT, ROUND_HALF_UP) if rate is not None else ZERO
    if given_igv is None:
        return igv
    if not given_igv.is_finite() or abs(given_igv - igv) > CENT:
        problems.add(f"items[{index}].igv", f"El IGV del campo «items[{index}].igv» ({given_igv}) no "
                     f"corresponde al calculado ({igv}: {'4' if afectacion == IVAP else '18'} % de {valor_venta}).",
                     "3103")
        if not given_igv.is_finite():
            return None
    return money(given_igv)


def _unit_price(scheme: ubl.TaxScheme, cantidad: Decimal, valor_unitario: Decimal, valor_venta: Decimal,
                igv: Decimal, descuento: Decimal | None) -> Decimal:
    """The price a buyer pays per unit, after the discount (SUNAT's 3270 checks it against value, taxes and
    quantity)."""
    if scheme is ubl.IGV or scheme is ubl.IVAP_SCHEME:
        return ((valor_venta + igv) / cantidad).quantize(PRICE_PLACES)
    if scheme is ubl.GRA:  # the reference value per unit (PriceTypeCode 02), as given
        return valor_unitario
    # the line's value per unit: the unit value itself unless rounding to cents moved it (0.001 × 5 = 0.01)
    return (valor_unitario if descuento is None and valor_venta == cantidad * valor_unitario
            else (valor_venta / cantidad).quantize(PRICE_PLACES))


def _isc(problems: pv.Problems, index: int, item: Item, afectacion: str, valor_venta: Decimal
         ) -> tuple[str, Decimal, Decimal, Decimal] | None:
    """(system, taxable amount, percent, ISC) of a gravado line's ISC (catalogue 08): 01 `tasa` % of the line's
    value; 02 `monto` per unit (its percent stated as the share of the value it makes, SUNAT's 3108 checks
    TaxAmount against TaxableAmount × Percent); 03 `tasa` % of `precio_publico` × cantidad. Rounded half-up to cents."""
    spec = item.isc
    assert spec is not None
    prefix = f"items[{index}].isc"
    if afectacion != GRAVADO:
        problems.add(prefix, f"El campo «{prefix}» solo se admite en una línea gravada con IGV (afectación 10).")
        return None
    if spec.sistema not in ISC_SYSTEMS:
        problems.add(f"{prefix}.sistema", f"El campo «{prefix}.sistema» ({spec.sistema}) debe ser 01 (al valor), 02 "
                     "(monto fijo) o 03 (precio de venta al público), del catálogo 08.", "2041")
        return None
    needed = {ISC_AL_VALOR: ("tasa",), ISC_MONTO_FIJO: ("monto",),
              ISC_PRECIO_PUBLICO: ("tasa", "precio_publico")}[spec.sistema]
    for name in needed:
        value = getattr(spec, name)
        if value is None or not value.is_finite() or value <= 0 or value >= pv.AMOUNT_LIMIT:
            problems.add(f"{prefix}.{name}", f"El campo «{prefix}.{name}» es obligatorio en el sistema {spec.sistema} "
                         "del ISC y debe ser mayor que cero.", "3104")
            return None
    if spec.sistema == ISC_MONTO_FIJO:
        assert spec.monto is not None
        amount = money(item.cantidad * spec.monto)
        return spec.sistema, valor_venta, (amount * 100 / valor_venta).quantize(Decimal("0.00001")), amount
    assert spec.tasa is not None
    base = valor_venta if spec.sistema == ISC_AL_VALOR else money(item.cantidad * (spec.precio_publico or ZERO))
    return spec.sistema, base, spec.tasa, money(base * spec.tasa / 100)


def _price_with_allowances(scheme: ubl.TaxScheme, cantidad: Decimal, valor_venta: Decimal, igv: Decimal,
                           cargos: tuple[tuple[str, Decimal, Decimal], ...]) -> Decimal:
    """The unit price paid on a line with charges or discounts of catalogue 53 beside its value: SUNAT's 3270 takes
    it as (value + taxes − discounts 01 + charges 48) / quantity."""
    outside = sum((amount if code == LINE_CHARGE_KEEPING_BASE else -amount for code, amount, _ in cargos
                   if code != LINE_CHARGE), ZERO)
    taxes = igv if scheme is ubl.IGV or scheme is ubl.IVAP_SCHEME else ZERO
    return ((valor_venta + taxes + outside) / cantidad).quantize(PRICE_PLACES)


def _allowances_and_charges(problems: pv.Problems, index: int, item: Item, gross: Decimal
                            ) -> tuple[tuple[str, Decimal, Decimal], ...] | None:
    """The line's other charges and discounts of catalogue 53, as (code, amount, base): 01 (a discount that keeps
    the base), 47 (a charge that raises it), 48 (a charge that does not); None when one cannot be written. The base
    is the line's value before them (cantidad × precio_unitario) unless given."""
    prefix = f"items[{index}].cargos_descuentos"
    if ubl.SCHEME_BY_AFFECTATION.get(item.tipo_afectacion_igv or GRAVADO) is ubl.GRA:
        problems.add(prefix, f"El campo «{prefix}» no se admite en una transferencia gratuita (afectación "
                     f"{item.tipo_afectacion_igv}): no se cobra nada.")
        return None
    found: list[tuple[str, Decimal, Decimal]] = []
    for position, entry in enumerate(item.cargos_descuentos or ()):
        field_name = f"{prefix}[{position}]"
        checked = allowance_or_charge(problems, field_name, entry.codigo, entry.monto, entry.base, gross,
                                      LINE_ALLOWANCES_OFFERED)
        if checked is None:
            return None
        found.append(checked)
    keeping = sum((amount for code, amount, _ in found if code == LINE_DISCOUNT_KEEPING_BASE), ZERO)
    if keeping >= gross:
        problems.add(prefix, f"Los descuentos de código 01 del campo «{prefix}» ({keeping}) deben ser menores que el "
                     f"valor de la línea ({gross}).")
        return None
    return tuple(found)


def allowance_or_charge(problems: pv.Problems, field_name: str, codigo: str, monto: Decimal, base: Decimal | None,
                        default_base: Decimal, offered: tuple[str, ...]) -> tuple[str, Decimal, Decimal] | None:
    """(code, amount, base) of a charge or discount of catalogue 53 among `offered`, or None (its problem said):
    an amount in cents above zero (2955) and a base above zero (3053), `default_base` when not given."""
    if codigo not in offered:
        names = ", ".join(f"{code} ({ALLOWANCES_AND_CHARGES[code].lower()})" for code in offered)
        problems.add(f"{field_name}.codigo", f"El código «{codigo}» del campo «{field_name}.codigo» no es un cargo o "
                     f"descuento del catálogo 53 que se admita aquí: {names}.", "2954")
        return None
    if not monto.is_finite() or monto <= 0 or pv.decimals(monto) > 2 or monto >= pv.AMOUNT_LIMIT:
        problems.add(f"{field_name}.monto", f"El campo «{field_name}.monto» ({monto}) debe ser un monto sin IGV mayor "
                     "que cero, con hasta 2 decimales.", "2955")
        return None
    base = default_base if base is None else base
    if not base.is_finite() or base <= 0 or pv.decimals(base) > 2 or base >= pv.AMOUNT_LIMIT:
        problems.add(f"{field_name}.base", f"El campo «{field_name}.base» ({base}) debe ser un monto mayor que cero, "
                     "con hasta 2 decimales.", "3053")
        return None
    if monto / base >= 1000:  # SUNAT writes the factor with up to 3 integer digits (3052)
        problems.add(f"{field_name}.base", f"El campo «{field_name}.monto» ({monto}) es más de mil veces su base "
                     f"({base}).", "3052")
        return None
    return codigo, monto, base


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
    ICBPER is levied beside the line's IGV: a bag sold gravado (10), exonerado or inafecto (20, 30: a shop in the
    Amazonía sells exonerated and still owes the bag tax, issue 37), or given free (11-16, 21, 31-37). An export is
    refused (the tax is on bags handed over in Peru)."""
    field_name = f"items[{index}].icbper"
    if not rate:
        problems.add(field_name, f"El campo «{field_name}» no se admite: el ICBPER rige desde el 1 de agosto de "
                     "2019 y la fecha de emisión es anterior.")
        return
    if line.afectacion == EXPORTACION:
        problems.add(field_name, f"El campo «{field_name}» no se admite en una línea de exportación (afectación 40): "
                     "el ICBPER grava las bolsas entregadas en el país.")
        return
    if line.cantidad != line.cantidad.to_integral_value() or not 1 <= line.cantidad <= MAX_BAGS:
        problems.add(f"items[{index}].cantidad", f"En una línea de bolsas («{field_name}») el campo «items[{index}]."
                     f"cantidad» ({line.cantidad}) es el número de bolsas: un entero de 1 a {MAX_BAGS}.", "3236")
        return
    if line.scheme is ubl.GRA and line.igv > FREE_IGV_BESIDE_BAGS:
        problems.add(field_name, f"La línea gratuita de bolsas «items[{index}]» tiene un IGV referencial de "
                     f"{line.igv}: SUNAT rechaza (3292) una línea que junto al ICBPER declara más de "
                     f"{FREE_IGV_BESIDE_BAGS} de IGV no cobrado. Reparta las bolsas en varias líneas.", "3292")
        return
    line.bolsas = int(line.cantidad)
    line.icbper_rate = rate
    line.icbper = money(line.bolsas * rate)


def subtotals_of(lines: list[ubl.Line]) -> list[tuple[ubl.TaxScheme, Decimal, Decimal]]:
    """Each scheme's (taxable, tax). The voucher's IGV taxable amount is its lines' value without their ISC (SUNAT's
    3277 sums LineExtensionAmount), its tax the lines' IGV (on value plus ISC, 3272)."""
    sums: dict[str, tuple[Decimal, Decimal]] = {}
    for line in lines:
        taxable, tax = sums.get(line.scheme.code, (ZERO, ZERO))
        sums[line.scheme.code] = (taxable + line.valor_venta, tax + line.igv)
    return [(scheme, *sums[scheme.code]) for scheme in ubl.SCHEME_ORDER if scheme.code in sums]
