"""Consultas: lookups with a result card and field errors; the register import with progress."""

from __future__ import annotations

from app.gui.lookups import LookupsPage
from app.gui.widgets import progress_percent
from tests.helpers.gui import open_widget, wait_idle


def open_page(qtbot, context) -> LookupsPage:
    return open_widget(qtbot, context, LookupsPage)


def test_a_wrong_ruc_is_explained_under_the_field(qtbot, context):
    page = open_page(qtbot, context)
    page.number.setText("20100066604")  # wrong check digit
    page.search_button.click()
    assert not page.search_button.isEnabled()
    wait_idle(qtbot, context.workers)
    assert "dígito verificador" in page.errors.visible()["numero"]
    assert page.card.isHidden()
    assert page.search_button.isEnabled()


def test_progress_is_done_over_total():
    assert progress_percent((30, 60)) == 50
    assert progress_percent((1, 4)) == 25
    assert progress_percent((60, 60)) == 100
    assert progress_percent((3, None)) is None and progress_percent((0, 0)) is None


def test_result_card_copies_a_field_and_everything(qtbot):
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QToolButton

    from app.gui.lookups import LABELS
    from app.gui.widgets import ResultCard

    card = ResultCard()
    qtbot.addWidget(card)
    card.show_record({"ruc": "20100066603", "razon_social": "COMERCIAL YUPANA S.A.C.", "estado": None}, LABELS)
    assert list(card.values) == ["ruc", "razon_social"]  # empty fields are left out
    card.findChildren(QToolButton)[1].click()
    assert QGuiApplication.clipboard().text() == "COMERCIAL YUPANA S.A.C."
    card.copy_all.click()
    assert QGuiApplication.clipboard().text() == "RUC: 20100066603\nRazón social: COMERCIAL YUPANA S.A.C."
