"""Consultas against the real registry: import a small padrón with the progress bar reaching 100 %,
then look a RUC up and see its card; the assistant fills the company from a RUC."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.core.engine import Engine
from app.gui.lookups import LookupsPage
from tests import test_gui_support as support
from tests.conftest import SHARED
from tests.test_gui_support import wait_idle

if not hasattr(Engine, "import_padron"):
    pytest.skip("the padrón import comes with the registry work", allow_module_level=True)

context = support.context  # shared fixture


@pytest.fixture
def padron(tmp_path):
    """A synthetic register in SUNAT's layout; returns (path, first line's fields)."""
    path = tmp_path / "padron_reducido_ruc.zip"
    made = subprocess.run([sys.executable, str(SHARED / "tools" / "make_padron.py"), "3000", str(path), "--seed", "7"],
                          capture_output=True, text=True, check=True)
    first = made.stderr.splitlines()[0].split("|")
    return path, first


def test_import_register_reaches_100_then_lookup_shows_the_card(qtbot, context, padron):
    path, first = padron
    page = LookupsPage(context)
    qtbot.addWidget(page)
    wait_idle(qtbot, context.workers)
    seen = []
    page.progress.valueChanged.connect(seen.append)
    page.import_register(str(path))
    assert page.cancel_button.isEnabled() and not page.import_button.isEnabled()
    wait_idle(qtbot, context.workers, timeout=60_000)
    assert page.progress.value() == 100 and seen and seen[-1] == 100
    assert page.banner.tone == "success", page.banner.text.text()
    assert "Padrón cargado" in page.register_status.text()
    assert not page.cancel_button.isEnabled() and page.import_button.isEnabled()
    page.kind.setCurrentText("RUC")
    page.number.setText(first[0])
    page.search_button.click()
    wait_idle(qtbot, context.workers)
    assert page.card.isVisible() or not page.card.isHidden()
    assert page.card.values.get("ruc") == first[0]
    assert page.card.values.get("razon_social") == first[1]
