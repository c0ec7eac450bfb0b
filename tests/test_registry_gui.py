"""The «Consultas» page: a real offscreen widget importing a padrón with its progress bar, then a lookup."""

from __future__ import annotations

import pytest
from padron_files import make_padron

from app.gui.registry_page import RegistryPage


@pytest.fixture
def page(qtbot, engine):
    widget = RegistryPage(engine)
    qtbot.addWidget(widget)
    return widget


def test_import_fills_the_progress_bar_and_a_lookup_shows_the_record(qtbot, page, tmp_path):
    path = tmp_path / "padron_reducido_ruc.zip"
    known = make_padron(500, path, bad=5)
    assert "No hay padrón" in page.padron_label.text()
    with qtbot.waitSignal(page.signals.imported, timeout=30_000) as imported:
        page.start_import(str(path))
    assert imported.args[0]["rows_loaded"] == 495 and imported.args[0]["rows_skipped"] == 5
    assert page.progress.value() == 1000
    assert "495" in page.padron_label.text() and page.import_button.isEnabled()
    page.kind.setCurrentText("RUC")
    page.number.setText(known[0][0])
    with qtbot.waitSignal(page.signals.looked_up, timeout=10_000):
        page.lookup_button.click()
    shown = [page.result_form.itemAt(i).widget().text() for i in range(page.result_form.count())
             if page.result_form.itemAt(i).widget() is not None]
    assert known[0][1] in shown


def test_a_bad_number_shows_the_reason(qtbot, page):
    page.kind.setCurrentText("Placa")
    page.number.setText("XX")
    with qtbot.waitSignal(page.signals.looked_up, timeout=10_000):
        page.lookup_button.click()
    assert "no es válida" in page.result.text()


def test_a_wrong_file_is_explained_and_nothing_changes(qtbot, page, tmp_path):
    wrong = tmp_path / "otro.txt"
    wrong.write_text("a|b|c\n", encoding="latin-1")
    with qtbot.waitSignal(page.signals.imported, timeout=10_000):
        page.start_import(str(wrong))
    assert "no es el padrón" in page.padron_label.text()
