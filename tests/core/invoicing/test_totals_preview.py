"""The totals' preview (issue 29): `engine.invoicing.preview_totals` answers, for a request that may still be being
typed, the amounts the builder builds it with — by the builder's own functions — and says what it cannot compute
yet instead of failing. The voucher form's panel shows it (tests/gui/test_voucher_content.py compares the panel
with the built XML)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app.core.contract import GenerarXmlRequest
from app.core.engine import Engine
from app.core.errors import YupanaError
from app.core.invoicing import ubl
from app.core.invoicing.builder import build_document, preview_totals
from app.core.platform import clock
from tests.helpers.golden import company_of, fixed_request
from tests.helpers.voucher_matrix import MATRIX, factura, item

ZERO = Decimal("0.00")


def built(request: dict) -> ubl.Document:
    return build_document(GenerarXmlRequest.model_validate(request), company_of, lambda ruc: None)


def assert_preview_is_the_build(request: dict) -> None:
    """Every amount of the preview is the built document's."""
    document, preview = built(request), preview_totals(request)
    assert preview.complete, preview.problems
    by_scheme = {scheme.code: (taxable, tax) for scheme, taxable, tax in document.subtotals}
    assert preview.gravadas == by_scheme.get(ubl.IGV.code, (ZERO, ZERO))[0]
    assert preview.exoneradas == by_scheme.get(ubl.EXO.code, (ZERO, ZERO))[0]
    assert preview.inafectas == by_scheme.get(ubl.INA.code, (ZERO, ZERO))[0]
    assert preview.exportacion == by_scheme.get(ubl.EXP.code, (ZERO, ZERO))[0]
    assert preview.gratuitas == by_scheme.get(ubl.GRA.code, (ZERO, ZERO))[0]
    payable = document.total if document.payable is None else document.payable  # as ubl writes PayableAmount
    assert (preview.igv, preview.icbper, preview.total) == (document.igv, document.icbper, payable)
    global_discount = document.descuento_global[0] if document.descuento_global else ZERO
    assert preview.descuento_global == global_discount
    assert preview.descuentos == global_discount + sum((line.descuento or ZERO for line in document.lines), ZERO)
    assert preview.detraccion == (document.detraccion.monto if document.detraccion else None)
    assert preview.anticipos == document.prepaid
    assert (preview.percepcion, preview.total_con_percepcion) == (
        (document.percepcion.monto, document.percepcion.total) if document.percepcion else (None, None))
    assert preview.retencion == (document.retencion[1] if document.retencion else None)
    assert [(line.valor_venta, line.igv, line.icbper) for line in preview.lines if line] == \
        [(line.valor_venta, line.igv, line.icbper) for line in document.lines]
    assert preview.moneda == document.moneda


@pytest.mark.parametrize(("name", "request_"), MATRIX, ids=[name for name, _ in MATRIX])
def test_every_voucher_of_the_matrix_previews_as_it_is_built(name, request_):
    # every type (01, 03, 07, 08), both currencies, exports, free lines, bags, discounts, detracciones
    assert_preview_is_the_build(fixed_request(request_))


LINE = st.tuples(st.decimals(Decimal("0.5"), Decimal("40"), places=1),
                 st.decimals(Decimal("0.50"), Decimal("900"), places=4),
                 st.sampled_from(["10", "10", "20", "30", "13", "21", "35"]), st.booleans(), st.booleans(),
                 st.decimals(Decimal("0"), Decimal("2"), places=2))


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(LINE, min_size=1, max_size=6), tipo=st.sampled_from(["01", "03"]),
       global_discount=st.one_of(st.just(ZERO), st.decimals(Decimal("0"), Decimal("20"), places=2)),
       with_igv=st.booleans(),
       moneda=st.sampled_from(["PEN", "USD"]), spot=st.booleans())
def test_random_vouchers_preview_as_they_are_built(lines, tipo, global_discount, with_igv, moneda, spot):
    items = []
    for cantidad, precio, afectacion, bolsas, discounted, descuento in lines:
        free = afectacion in ("13", "21", "35")
        line = {"descripcion": "Línea", "cantidad": cantidad, "tipo_afectacion_igv": afectacion,
                "precio_con_igv" if with_igv and not free else "precio_unitario": precio}
        if discounted and not free and descuento:
            line["descuento"] = descuento
        if bolsas and afectacion == "10" and moneda == "PEN":
            line["icbper"] = True
            line["cantidad"] = cantidad.to_integral_value() or Decimal(1)
        items.append(line)
    extra: dict = {"moneda": moneda, "fecha_emision": clock.today()}
    if global_discount:
        extra["descuento_global"] = global_discount
    if moneda == "USD":
        extra["tipo_cambio"] = Decimal("3.745")
    if spot and tipo == "01":
        extra["detraccion"] = {"codigo": "037", "cuenta": "00-000-123456"}
    request = factura("F001", 1, items, **extra)
    if tipo == "03":
        request = {**request, "tipo": "03", "serie": "B001", "receptor": {"tipo_documento": "1",
                                                                          "numero_documento": "46027896",
                                                                          "razon_social": "ROSA QUISPE"}}
    try:
        built(request)
    except YupanaError:
        assume(False)  # a mix the builder refuses (a discount as large as the base…): the preview says why instead
    assert_preview_is_the_build(request)


def test_each_piece_of_the_arithmetic():
    request = factura("F001", 1, [item("Servicio", "1", "100", descuento=Decimal("10")),
                                  item("Bolsa", "3", "1", icbper=True), item("Regalo", "1", "50", "21")],
                      fecha_emision=date(2025, 5, 2), descuento_global=Decimal("5"),
                      detraccion={"codigo": "037", "porcentaje": Decimal("10"), "cuenta": "00-000-123456"})
    preview = preview_totals(request)
    assert preview.gravadas == Decimal("88.00") and preview.igv == Decimal("15.84")  # 18 % of 93 − 5
    assert preview.icbper == Decimal("1.50") and preview.gratuitas == Decimal("50.00")  # 3 bags at S/ 0.50
    assert preview.descuentos == Decimal("15.00") and preview.descuento_global == Decimal("5.00")
    assert preview.total == Decimal("105.34") and preview.detraccion == Decimal("10.53")
    assert [line.gratuita for line in preview.lines if line] == [False, False, True]
    assert preview.lines[2] is not None and preview.lines[2].igv == ZERO  # exonerado: no IGV even stated
    assert preview.complete


def test_a_request_being_typed_gives_what_can_be_computed_and_says_the_rest():
    preview = preview_totals({"tipo": "01", "fecha_emision": "2026-01-15", "descuento_global": "diez", "items": [
        {"descripcion": "Arroz", "cantidad": "2", "precio_unitario": "10"},
        {"descripcion": "Azúcar", "cantidad": "dos", "precio_unitario": "4"},  # not a number yet
        {"descripcion": "Aceite", "cantidad": "1"},  # no price yet
        {"descripcion": "", "cantidad": "1", "precio_unitario": "3"},  # no description: the amounts still count
        {"descripcion": "Fideos", "cantidad": "1", "precio_unitario": "3", "descuento": "5"},  # more than the line
        {"descripcion": "Gaseosa", "cantidad": "0", "precio_unitario": "3"}]})
    assert [line.valor_venta if line else None for line in preview.lines] == \
        [Decimal("20.00"), None, None, Decimal("3.00"), None, None]
    assert preview.gravadas == Decimal("23.00") and preview.igv == Decimal("4.14")
    assert preview.total == Decimal("27.14") and preview.descuento_global == ZERO  # «diez» is not applied
    fields = [problem.field for problem in preview.problems]
    assert {"descuento_global", "items[1].cantidad", "items[2].precio_unitario", "items[3].descripcion",
            "items[4].descuento", "items[5].cantidad"} <= set(fields)
    assert not preview.complete


def test_a_global_discount_the_builder_refuses_is_not_applied_and_is_said():
    preview = preview_totals(factura("F001", 1, [item("Arroz", "1", "10")], descuento_global=Decimal("10")))
    assert preview.gravadas == Decimal("10.00") and preview.descuento_global == ZERO
    assert [problem.field for problem in preview.problems] == ["descuento_global"]
    note = preview_totals({"tipo": "07", "items": [item("Arroz", "1", "10")], "descuento_global": Decimal("1")})
    assert note.gravadas == Decimal("10.00")  # a note takes no global discount: said, not applied
    assert [problem.field for problem in note.problems] == ["descuento_global"]


def test_nothing_typed_yet_is_a_voucher_of_zero():
    for request in ({"tipo": "03"}, {"tipo": "03", "items": []}, {"tipo": "03", "items": "nada"}):
        preview = preview_totals(request)
        assert preview.total == ZERO and preview.lines == () and preview.detraccion is None


def test_the_detraccion_waits_for_its_rate_and_the_exchange_rate():
    lines = [item("Servicio de soporte", "1", "1000")]
    spot = {"codigo": "037", "cuenta": ""}  # the account is still being typed: the amount is known already
    assert preview_totals(factura("F001", 1, lines, detraccion=spot)).detraccion == Decimal("141.60")
    in_dollars = factura("F001", 1, lines, moneda="USD", detraccion=spot)
    assert preview_totals(in_dollars).detraccion is None  # no exchange rate yet
    assert preview_totals({**in_dollars, "tipo_cambio": "3.75"}).detraccion == Decimal("531.00")
    bad_rate = preview_totals(factura("F001", 1, lines, detraccion={**spot, "porcentaje": "120"}))
    assert bad_rate.detraccion is None and [p.field for p in bad_rate.problems] == ["detraccion.porcentaje"]
    boleta = preview_totals({**factura("F001", 1, lines, detraccion=spot), "tipo": "03"})
    assert boleta.detraccion is None  # only a factura takes one


def test_a_request_whose_type_cannot_be_told_is_refused_as_the_builder_refuses_it():
    with pytest.raises(YupanaError) as unknown:
        preview_totals({"tipo": "99", "items": []})
    assert unknown.value.details[0].field == "tipo" and unknown.value.details[0].sunat_code == "1003"
    with pytest.raises(YupanaError) as missing:
        preview_totals({"items": []})
    assert missing.value.details[0].field == "tipo"
    with pytest.raises(YupanaError) as not_an_object:
        preview_totals([{"tipo": "01"}])
    assert not_an_object.value.message == "La solicitud debe ser un objeto JSON ({...})."


def test_the_engine_preview_reads_nothing_stored(tmp_path):
    with Engine(tmp_path / "home") as engine:
        pass
    with pytest.raises(RuntimeError):
        engine.invoicing.vouchers()  # the storage is closed: anything that reads it fails
    preview = engine.invoicing.preview_totals({"tipo": "03", "items": [
        {"descripcion": "Menú", "cantidad": "2", "precio_con_igv": "15.00"}]})
    assert preview.total == Decimal("30.00") and preview.igv == Decimal("4.58")


@pytest.mark.parametrize("terms", [
    {"anticipos": [{"tipo": "02", "serie": "F001", "numero": 90, "monto": Decimal("236.00")}]},
    {"percepcion": {"codigo": "51"}},
    {"percepcion": {"codigo": "53", "porcentaje": Decimal("0.5")}},
    {"retencion": {}, "anticipos": [{"tipo": "02", "serie": "F001", "numero": 90, "monto": Decimal("118.00")}]},
], ids=["anticipo", "percepcion-51", "percepcion-53", "retencion-con-anticipo"])
def test_the_preview_of_the_sale_terms_is_the_build(terms):
    """Issue 37's terms the form offers (anticipos, percepción, retención) preview as they are built."""
    assert_preview_is_the_build(factura("F001", 91, [item("Juego de comedor de cedro", "1", "1000")], **terms))
