"""Issue 37, item b, in «Nuevo comprobante»: each line's «Unidad» offers every code of SUNAT's catalogue 03 as the
product editor does (tests/gui/test_units_completion.py: the shop's units with their Spanish names first, then
SUNAT's code and description), completes on any part of the label, follows the product chosen, is kept in the
draft, and a factura of sacos, rollos and pies made in the form is accepted by the SUNAT sandbox."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QComboBox

from app.gui.products import UNIT_CHOICES, save_product
from app.gui.voucher_form import UNIT, VoucherForm
from tests.helpers.gui import complete_unit, open_widget, wait_idle
from tests.helpers.voucher_matrix import CUSTOMER_RUC

popup_notices = pytest.mark.qt_log_ignore("This plugin does not support (raise|grabbing the keyboard)")


def unit_box(form: VoucherForm, row: int) -> QComboBox:
    box = form.items.cellWidget(row, UNIT)
    assert isinstance(box, QComboBox)
    return box


def choose(form: VoucherForm, row: int, code: str) -> None:
    box = unit_box(form, row)
    box.setCurrentIndex(box.findText(dict(UNIT_CHOICES)[code]))  # as a person picks it from the list


def test_every_code_of_catalogue_03_is_offered_on_a_line_as_in_the_product_editor(qtbot, context, company):
    form = open_widget(qtbot, context, VoucherForm, show=True)
    box = unit_box(form, 0)
    offered = [box.itemText(index) for index in range(box.count())]
    assert offered == [label for _, label in UNIT_CHOICES]  # the same labels, in the same order
    assert box.currentText() == "NIU — unidad" and form.line_unit(0) == "NIU" and box.isEditable()
    assert form.items.horizontalHeader().visualIndex(UNIT) == 2  # seen right after «Cantidad»
    assert form.items.horizontalHeaderItem(UNIT).text() == "Unidad"
    for code, label in (("SA", "SA — saco"), ("RO", "RO — rollo"), ("FOT", "FOT — pie")):
        box.setCurrentIndex(box.findText(label))
        assert form.line_unit(0) == code


@popup_notices
def test_typing_part_of_a_unit_on_a_line_completes_it(qtbot, context, company):
    form = open_widget(qtbot, context, VoucherForm, show=True)
    form.fill_example(CUSTOMER_RUC, "FERRETERÍA EL PERNO S.A.C.", [("Alambre negro N.° 16", "3", "85", "10")])
    complete_unit(qtbot, unit_box(form, 0), "rollo", "RO — rollo")
    qtbot.waitUntil(lambda: form.line_unit(0) == "RO")
    assert form.request()["items"][0]["unidad"] == "RO"


def test_a_product_brings_its_unit_and_the_draft_keeps_the_units(qtbot, context, company, engine):
    cement = save_product(engine, {"codigo": "CEM-1", "descripcion": "Cemento Portland tipo I", "precio": "24.50",
                                   "unidad": "SA", "tipo_afectacion_igv": "10", "precio_incluye_igv": False})
    form = open_widget(qtbot, context, VoucherForm, show=True)
    row = form.add_product(cement)
    assert form.line_unit(row) == "SA" and unit_box(form, row).currentText() == "SA — saco"
    second = form.add_line("Listón de madera tornillo", "120", "2.35")
    choose(form, second, "FOT")
    content = form.draft_content()
    assert [line["unidad"] for line in content["items"]] == ["SA", "FOT"]
    again = open_widget(qtbot, context, VoucherForm, show=True)
    again.load_draft(content)
    assert [again.line_unit(row) for row in range(again.items.rowCount())] == ["SA", "FOT"]


def test_a_factura_of_sacos_rollos_and_pies_made_in_the_form_is_accepted(qtbot, context, sunat):
    form = open_widget(qtbot, context, VoucherForm, show=True)
    form.fill_example(CUSTOMER_RUC, "FERRETERÍA EL PERNO S.A.C.", [("Cemento Portland tipo I", "40", "24.50", "10"),
                                                                   ("Alambre negro N.° 16", "3", "85", "10"),
                                                                   ("Listón de madera tornillo", "120", "2.35", "10")])
    for row, code in enumerate(("SA", "RO", "FOT")):
        choose(form, row, code)
    assert [line["unidad"] for line in form.request()["items"]] == ["SA", "RO", "FOT"]
    form.emit_button.click()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert form.outcome is not None and form.outcome.estado == "aceptado", (form.outcome, form.banner.text.text())
    name = form.outcome.nombre_archivo.removesuffix(".xml")
    detail = context.engine.invoicing.voucher(context.engine.invoicing.find_voucher(name.split("-", 2)[2], tipo="01"))
    assert detail is not None and detail.xml_firmado
    signed = detail.xml_firmado
    for code in ("SA", "RO", "FOT"):
        assert f'unitCode="{code}"' in signed
