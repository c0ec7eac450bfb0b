"""Fixtures of the GUI tests: a real engine, real widgets, the sandboxes as «Modo sandbox» starts them."""

from __future__ import annotations

import gc

import pytest

from app.gui.collector import collect_if_due
from tests.helpers.gui import wait_idle


@pytest.fixture(autouse=True)
def _garbage_collected_on_the_main_thread():
    """Automatic collection may start on a worker thread and free a cycle holding a Qt object there,
    which crashes Qt (the app itself uses app.gui.collector for the same reason). In GUI tests, cycles are
    collected between tests, on the main thread."""
    gc.disable()
    yield
    gc.disable()  # a test of the collector turns it back on
    collect_if_due()


@pytest.fixture
def sunat(context, company, engine):
    """Modo sandbox as the GUI starts it, plus a test certificate for the issuer; the SUNAT sandbox."""
    context.sandboxes.start()
    engine.invoicing.create_test_certificate(company.ruc)
    return context.sandboxes.running["sunat"]


@pytest.fixture
def context(qtbot, engine):
    from app.gui.bridge import EngineEvents
    from app.gui.context import Context
    from app.gui.workers import Workers
    from app.sandbox.mode import SandboxMode

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


@pytest.fixture
def voiding(sunat, engine):
    """The SUNAT sandbox answering summaries' tickets at once, and the engine's ticket poller asking often (SUNAT's
    default backoff starts at 5 s): for «Anular» and «Resúmenes y bajas»."""
    engine.admin.config_set("sunat_retry_base_s", "0.05")
    engine.admin.config_set("sunat_retry_max_s", "0.2")
    sunat.summaries.configure(delay_s=0, pending_polls=0)
    return sunat
