"""Issue 19 in the windows: «Precios incluyen IGV» (company default, per-voucher switch); the «Clientes» and
«Productos» sections; completion of customers and lines in the voucher form."""

from __future__ import annotations

from decimal import Decimal

from lxml import etree

from app.core.invoicing import namespaces as ns
from app.gui.voucher_form import VoucherForm
from tests.helpers.base import ISSUER_RUC
from tests.helpers.gui import open_widget, wait_idle

D = Decimal


def open_form(qtbot, context) -> VoucherForm:
    return open_widget(qtbot, context, VoucherForm, show=True)


def _payable(xml: str) -> Decimal:
    root = etree.fromstring(xml.encode("utf-8"))
    return D(root.findtext(f"{{{ns.CAC}}}LegalMonetaryTotal/{{{ns.CBC}}}PayableAmount"))


# ---------------------------------------------------------------- «Precios incluyen IGV»

def test_the_company_default_turns_the_switch_on_and_the_totals_are_the_prices_typed(qtbot, context, company,
                                                                                         engine):
    assert engine.company_prices_include_igv(ISSUER_RUC) is False
    engine.set_company_prices_include_igv(ISSUER_RUC, True)
    form = open_form(qtbot, context)
    assert form.prices_with_igv.isChecked()
    assert form.items.horizontalHeaderItem(2).text() == "Precio unitario (con IGV)"
    form.fill_example("20601030013", "CLIENTE S.A.C.", [("Gaseosa 500 ml", "3", "2.50", "10"),
                                                         ("Caramelo", "1", "0.03", "10"),
                                                         ("Libro", "1", "5", "20")])
    assert form.total_labels["total"].text() == "S/ 12.53"  # 3 × 2.50 + 0.03 + 5, as typed
    assert form.total_labels["gravadas"].text() == "S/ 6.39" and form.total_labels["igv"].text() == "S/ 1.14"
    request = form.request()
    assert [set(item) & {"precio_unitario", "precio_con_igv"} for item in request["items"]] == [{"precio_con_igv"}] * 3
    generated = engine.generar_xml(request)
    assert _payable(generated.xml) == D("12.53")  # the engine charges what the form showed
    # Switched off for this voucher: the same column is values without IGV again
    form.prices_with_igv.setChecked(False)
    assert form.items.horizontalHeaderItem(2).text() == "Valor unitario (sin IGV)"
    assert form.total_labels["total"].text() == "S/ 13.89"  # (7.50 + 0.03) × 1.18 + 5
    assert "precio_unitario" in form.request()["items"][0]


def test_without_the_company_default_the_form_takes_values_without_igv(qtbot, context, company):
    form = open_form(qtbot, context)
    assert not form.prices_with_igv.isChecked()
    assert form.items.horizontalHeaderItem(2).text() == "Valor unitario (sin IGV)"


def test_a_bad_price_with_igv_is_marked_naming_the_price(qtbot, context, company, engine):
    engine.set_company_prices_include_igv(ISSUER_RUC, True)
    form = open_form(qtbot, context)
    form.fill_example("20601030013", "CLIENTE S.A.C.", [("Arroz", "1", "dos", "10")])
    form.emit_button.click()
    assert "precio unitario debe ser un número (con IGV)" in form.items.item(0, 2).toolTip()


def test_ajustes_saves_the_company_default(qtbot, context, engine, company):
    from app.gui.company_form import CompanyForm
    from app.gui.widgets import MessageBanner

    banner = MessageBanner()
    form = CompanyForm(context, banner)
    qtbot.addWidget(form)
    qtbot.addWidget(banner)
    form.reload_companies()
    qtbot.waitUntil(lambda: form.ruc.text() == company.ruc)
    wait_idle(qtbot, context.workers)
    assert not form.prices_with_igv.isChecked()
    form.prices_with_igv.setChecked(True)
    form.save()
    wait_idle(qtbot, context.workers)
    assert engine.company_prices_include_igv(company.ruc) is True
    form.clear()
    assert not form.prices_with_igv.isChecked()
    form.fill(engine.company(company.ruc))
    wait_idle(qtbot, context.workers)
    assert form.prices_with_igv.isChecked()
