"""Fixtures shared by the GUI tests (imported by each tests/test_gui_*.py): real engine, real widgets."""

from __future__ import annotations

import pytest


def wait_idle(qtbot, workers, timeout: int = 10_000) -> None:
    """Wait until every background job has delivered its outcome to the GUI thread."""
    qtbot.waitUntil(lambda: workers.running == 0, timeout=timeout)


def open_widget(qtbot, context, cls, *, show: bool = False):
    """A real page or form of the app on the shared context, once its first background loads are in."""
    widget = cls(context)
    qtbot.addWidget(widget)
    if show:
        widget.show()
    wait_idle(qtbot, context.workers)
    return widget


@pytest.fixture
def sunat(context, company, engine):
    """Modo sandbox as the GUI starts it, plus a test certificate for the issuer; the SUNAT sandbox."""
    context.sandboxes.start()
    engine.create_test_certificate(company.ruc)
    return context.sandboxes.running["sunat"]


@pytest.fixture
def context(qtbot, engine):
    from app.gui.bridge import EngineEvents
    from app.gui.context import Context
    from app.gui.sandbox_mode import SandboxMode
    from app.gui.workers import Workers

    workers = Workers()
    ctx = Context(engine, workers, EngineEvents(engine), SandboxMode(engine))
    yield ctx
    workers.wait()
    ctx.events.stop()


@pytest.fixture
def window(qtbot, engine, company):
    from app.gui.main_window import MainWindow

    main = MainWindow(engine, first_run=False)
    qtbot.addWidget(main)
    main.show()
    wait_idle(qtbot, main.workers)
    yield main
    main.close()


def test_support_fixtures_give_a_running_window(window, qtbot):
    assert window.isVisible()
    assert window.snapshot["companies"] == 1
