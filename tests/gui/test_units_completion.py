"""Issue 37, item b, in the windows: the product editor's unit offers every code of SUNAT's catalogue 03 — the units
shops use with their Spanish names first, then SUNAT's code with the description of its catalogue — and completes on
any part of the label; the product saved carries the code."""

from __future__ import annotations

import pytest

from app.core.api import sunat_catalogues
from app.gui.products import UNIT_CHOICES
from tests.core.invoicing.test_sunat_catalogues import CATALOGUES
from tests.gui.test_catalog_gui import _products_page, popup_notices
from tests.helpers import shared
from tests.helpers.gui import complete_unit


def test_every_code_of_catalogue_03_is_offered_curated_names_first():
    shared.require()
    codes = [code for code, _ in UNIT_CHOICES]
    # SUNAT's own file, read here (not the bundled copy): every code of it is offered, once.
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    sunat = {c.get("id").strip() for c in etree.parse(str(CATALOGUES / "cat_03.xml"), parser).getroot().iter("c")}
    sunat.discard("Code")
    assert set(codes) == sunat and len(codes) == len(set(codes))
    labels = dict(UNIT_CHOICES)
    curated = list(sunat_catalogues.UNITS)
    assert codes[:len(curated)] == curated  # the shop's units first, in the order shops use them
    assert labels["SA"] == "SA — saco" and labels["FOT"] == "FOT — pie" and labels["NIU"] == "NIU — unidad"
    assert labels["X1"] == "X1 — Gunter's chain"  # a unit shops do not use: SUNAT's code and its description


@popup_notices
@pytest.mark.gui
def test_typing_part_of_a_unit_completes_it_and_the_product_keeps_the_code(qtbot, context, company, engine):
    page = _products_page(qtbot, context)
    page.new_button.click()
    editor = page.editor
    editor.inputs["codigo"].setText("CEM-1")
    editor.inputs["descripcion"].setText("Cemento Portland tipo I")
    editor.inputs["precio"].setText("28.90")
    unit = editor.inputs["unidad"]
    assert unit.isEditable() and unit.currentData() == "NIU"
    complete_unit(qtbot, unit, "saco", "SA — saco")
    qtbot.waitUntil(lambda: unit.currentData() == "SA")
    editor.save_button.click()
    qtbot.waitUntil(lambda: page.editor is None)
    assert engine._products.by_code("CEM-1").unidad == "SA"
