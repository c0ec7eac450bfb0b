"""Consultas against the real registry: the padrón import (progress to 100 %, cancel), lookups through
the registry sandbox (result card; the loop keeps turning on a slow answer), the assistant's RUC fill."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import QTimer

from app.gui.assistant import SetupAssistant
from app.gui.lookups import LookupsPage
from tests.helpers.gui import wait_idle
from tests.helpers.padron_files import make_padron


@pytest.fixture
def page(qtbot, context) -> LookupsPage:
    widget = LookupsPage(context)
    qtbot.addWidget(widget)
    wait_idle(qtbot, context.workers)
    return widget


@pytest.fixture
def registry(context):
    """Modo sandbox as the GUI starts it; returns the registry sandbox."""
    context.sandboxes.start()
    return context.sandboxes.running["registry"]


def test_import_register_reaches_100_then_lookup_shows_the_card(qtbot, context, page, tmp_path):
    first = make_padron(3000, tmp_path / "padron_reducido_ruc.zip", bad=5)[0]
    assert "Todavía no se cargó" in page.register_status.text()
    seen = []
    page.progress.valueChanged.connect(seen.append)
    page.import_register(str(tmp_path / "padron_reducido_ruc.zip"))
    assert page.cancel_button.isEnabled() and not page.import_button.isEnabled()
    wait_idle(qtbot, context.workers, timeout=60_000)
    assert page.progress.value() == 100 and seen[-1] == 100
    assert page.banner.tone == "success", page.banner.text.text()
    assert "se omitieron 5 líneas dañadas" in page.banner.text.text()
    assert "Padrón cargado" in page.register_status.text() and "2 995" in page.register_status.text()
    assert not page.cancel_button.isEnabled() and page.import_button.isEnabled()
    page.kind.setCurrentText("RUC")
    page.number.setText(first[0])
    page.search_button.click()
    wait_idle(qtbot, context.workers)
    assert not page.card.isHidden()
    assert page.card.values["ruc"] == first[0] and page.card.values["razon_social"] == first[1]


def test_cancelled_import_keeps_the_previous_state(qtbot, context, page, engine, tmp_path, monkeypatch):
    make_padron(3000, tmp_path / "padron.zip")
    # A small file is read in milliseconds: hold the real import at its first progress report until the
    # user has pressed Cancelar, then until the window has stopped it, so the test does not race the worker.
    cancel_pressed = threading.Event()
    real_import = engine._padron.import_file

    def held_import(path, progress=None, cancel=None, parallel=None):
        def report(*args):
            assert cancel_pressed.wait(10), "Cancelar was never pressed"
            if progress is not None:
                progress(*args)
            deadline = time.monotonic() + 10
            while cancel is not None and not cancel():
                assert time.monotonic() < deadline, "the window never stopped the import"
                time.sleep(0.01)
        return real_import(path, progress=report, cancel=cancel, parallel=parallel)

    monkeypatch.setattr(engine._padron, "import_file", held_import)
    page.import_register(str(tmp_path / "padron.zip"))
    page.cancel_import()
    cancel_pressed.set()
    wait_idle(qtbot, context.workers, timeout=60_000)
    assert "cancelada" in page.banner.text.text()
    assert engine.lookups.padron_status().loaded is False
    assert "Todavía no se cargó" in page.register_status.text()


def test_lookup_through_the_sandbox_and_a_bad_plate(qtbot, context, page, registry):
    ruc, record = next(iter(registry.records["ruc"].items()))
    page.kind.setCurrentText("RUC")
    page.number.setText(ruc)
    page.search_button.click()
    wait_idle(qtbot, context.workers)
    assert page.card.values["razon_social"] == record["razon_social"]
    page.kind.setCurrentText("Placa")
    page.number.setText("XX")
    page.search_button.click()
    wait_idle(qtbot, context.workers)
    assert page.card.isHidden()
    assert "no es válida" in (page.errors.visible().get("numero") or page.banner.text.text())


def test_event_loop_turns_while_the_registry_sandbox_is_slow(qtbot, context, page, registry):
    ruc, record = next(iter(registry.records["ruc"].items()))
    registry.slow_seconds = 30.0  # held until released below
    registry.fail_next("slow")
    ticks = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()
    page.kind.setCurrentText("RUC")
    page.number.setText(ruc)
    page.search_button.click()
    try:
        qtbot.waitUntil(registry.slow_received.is_set, timeout=10_000)  # the lookup is at the provider, held
        start = len(ticks)
        qtbot.waitUntil(lambda: len(ticks) >= start + 20, timeout=5000)  # the loop turns while it is pending
        assert not page.search_button.isEnabled() and page.card.isHidden()
    finally:
        registry.release()
    wait_idle(qtbot, context.workers, timeout=15_000)
    timer.stop()
    assert page.card.values.get("razon_social") == record["razon_social"]


def test_assistant_fills_the_company_from_the_ruc(qtbot, context, registry, engine):
    ruc, record = next(iter(registry.records["ruc"].items()))
    assistant = SetupAssistant(context)
    qtbot.addWidget(assistant)
    assistant.show()
    wait_idle(qtbot, context.workers)
    form = assistant.company_page.form
    form.ruc.setText(ruc)
    form.lookup_button.click()
    wait_idle(qtbot, context.workers)
    assert form.inputs["razon_social"].text() == record["razon_social"]
    assert form.inputs["direccion"].text() == record["direccion"]
    assert len(form.inputs["ubigeo"].text()) == 6
    assistant.next()
    assistant.next()
    assistant.accept()
    qtbot.waitUntil(lambda: assistant.completed, timeout=15_000)
    assert engine.admin.company(ruc).razon_social == record["razon_social"]


def test_a_wrong_file_is_explained_and_nothing_changes(qtbot, context, page, engine, tmp_path):
    wrong = tmp_path / "otro.txt"
    wrong.write_text("a|b|c\n", encoding="latin-1")
    page.import_register(str(wrong))
    wait_idle(qtbot, context.workers)
    assert page.banner.tone == "error" and "padrón" in page.banner.text.text()
    assert engine.lookups.padron_status().loaded is False
    assert page.import_button.isEnabled() and not page.cancel_button.isEnabled()
