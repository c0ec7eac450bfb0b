"""Fixtures shared by the GUI tests (imported by each tests/test_gui_*.py): real engine, real widgets."""

from __future__ import annotations

import pytest


def wait_idle(qtbot, workers, timeout: int = 10_000) -> None:
    """Wait until every background job has delivered its outcome to the GUI thread."""
    qtbot.waitUntil(lambda: workers.running == 0, timeout=timeout)


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
