"""Consultas: lookups with a result card and field errors; the register import with progress."""

from __future__ import annotations

from app.gui.lookups import LookupsPage, progress_percent
from tests import test_gui_support as support
from tests.test_gui_support import wait_idle

context = support.context  # shared fixture


def open_page(qtbot, context) -> LookupsPage:
    page = LookupsPage(context)
    qtbot.addWidget(page)
    wait_idle(qtbot, context.workers)
    return page


def test_a_wrong_ruc_is_explained_under_the_field(qtbot, context):
    page = open_page(qtbot, context)
    page.number.setText("20100066604")  # wrong check digit
    page.search_button.click()
    assert not page.search_button.isEnabled()
    wait_idle(qtbot, context.workers)
    assert "dígito verificador" in page.errors.visible()["numero"]
    assert page.card.isHidden()
    assert page.search_button.isEnabled()


def test_progress_reports_in_any_shape():
    assert progress_percent(0.5) == 50
    assert progress_percent((30, 60)) == 50
    assert progress_percent({"done": 1, "total": 4}) == 25
    assert progress_percent(100) == 100
    assert progress_percent("?") is None
