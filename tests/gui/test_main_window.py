"""The main window: navigation, status bar, first-run assistant, crash dialog, responsiveness."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox, QPushButton

from app.gui.main_window import SECTIONS, MainWindow
from app.gui.messages import MessagesPage
from tests.helpers.gui import wait_idle


def test_every_section_opens_a_page(window, qtbot):
    assert [window.navigation.item(i).text() for i in range(window.navigation.count())] == SECTIONS
    for name in SECTIONS:
        page = window.show_section(name)
        assert window.pages.currentWidget() is page
    wait_idle(qtbot, window.workers)
    assert isinstance(window.page("Mensajes"), MessagesPage)


def test_status_bar_shows_environment_in_distinct_colours(window, engine, qtbot):
    seen = {}
    for environment, label in [("sandbox", "SANDBOX"), ("beta", "BETA"), ("produccion", "PRODUCCIÓN")]:
        engine.admin.config_set("environment", environment)  # the settings event refreshes the bar
        qtbot.waitUntil(lambda label=label: window.environment_label.text().strip() == label)
        seen[label] = window.environment_label.colour
    assert len(set(seen.values())) == 3
    assert window.listener_label.text().startswith("WhatsApp: ")  # a shop owner's words; the address as tooltip
    assert "http" not in window.listener_label.text() and "Receptor de webhooks" in window.listener_label.toolTip()
    assert window.pending_label.text().startswith("Envíos pendientes:")


def test_first_run_opens_the_assistant(engine, qtbot):
    main = MainWindow(engine)
    qtbot.addWidget(main)
    main.show()
    qtbot.waitUntil(lambda: main.assistant is not None and main.assistant.isVisible())
    assert main.first_run is True
    main.assistant.close()
    wait_idle(qtbot, main.workers)
    main.close()


def test_no_assistant_once_a_company_exists(window, qtbot):
    assert window.first_run is False
    assert window.assistant is None


def test_unexpected_exception_opens_crash_dialog_with_log_path(window, engine, qtbot, monkeypatch):
    from app.gui.crash import install_excepthook

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    install_excepthook(window, engine.admin.log_file())
    try:
        raise RuntimeError("fallo de prueba")
    except RuntimeError:
        sys.excepthook(*sys.exc_info())
    box = window.crash
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert str(engine.admin.log_file()) in box.informativeText()
    assert "fallo de prueba" in box.detailedText()
    assert window.isVisible()  # the app keeps running
    box.close()


def test_unexpected_error_in_a_background_job_opens_crash_dialog(window, qtbot):
    window.workers.run(window, lambda: 1 / 0)
    qtbot.waitUntil(lambda: window.crash is not None and window.crash.isVisible())
    assert "ZeroDivisionError" in window.crash.detailedText()
    window.crash.close()


class _SlowHandler(BaseHTTPRequestHandler):
    release: threading.Event

    def do_GET(self):  # noqa: N802 - http.server's name
        self.release.wait(10)
        body = b'{"success": true}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_event_loop_keeps_turning_while_a_slow_answer_is_pending(window, qtbot):
    release = threading.Event()
    handler = type("Handler", (_SlowHandler,), {"release": release})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        ticks = []
        timer = QTimer()
        timer.setInterval(10)
        timer.timeout.connect(lambda: ticks.append(1))
        timer.start()
        button = QPushButton("Consultar", window)
        answers = []
        window.workers.run(window, lambda: httpx.get(url, timeout=15).json(), done=answers.append, busy=[button])
        qtbot.waitUntil(lambda: len(ticks) >= 20, timeout=5000)  # ~200 ms of a turning loop, answer still pending
        assert answers == [] and not button.isEnabled()
        release.set()
        qtbot.waitUntil(lambda: bool(answers), timeout=5000)
        assert answers == [{"success": True}] and button.isEnabled()
        timer.stop()
    finally:
        release.set()
        server.shutdown()
        server.server_close()


def test_start_opens_the_window_and_shutdown_closes_cleanly(home, qtbot, monkeypatch):
    from app.gui.app import shutdown, start

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    from app.core.engine import Engine

    with Engine(home) as first:  # the listener `start` opens (and the API, if chosen) on ports the OS picks
        first.admin.config_set("listener_port", "0")
        first.admin.config_set("api_port", "0")
    main = start(str(home))
    qtbot.waitExposed(main)
    assert isinstance(main, MainWindow) and main.isVisible()
    assert sys.excepthook is not sys.__excepthook__  # the crash dialog hook is in place
    qtbot.waitUntil(lambda: main.attached, timeout=30_000)  # the engine, opened on a worker, is attached
    qtbot.waitUntil(lambda: main.assistant is not None)  # a new data folder: the assistant opens
    main.assistant.close()
    engine = main.engine
    shutdown(main)
    assert not main.isVisible() and main.workers.pool.activeThreadCount() == 0
    try:
        engine.admin.config_get("environment")
    except Exception:  # noqa: BLE001 - any refusal shows the engine was closed
        closed = True
    else:
        closed = False
    assert closed


# ---------------------------------------------------------------- the window first, its engine later (issue 33)


def test_the_window_shows_its_frame_before_the_engine_and_is_usable_once_attached(engine, company, qtbot):
    main = MainWindow(first_run=False)
    qtbot.addWidget(main)
    main.show()
    qtbot.waitExposed(main)
    assert main.pages.currentWidget() is main.opening and main.opening.text() == "Abriendo sus datos…"
    assert not main.navigation.isEnabled() and main.built == {}
    main.refresh_status()  # nothing to read yet: no error, no worker
    assert main.workers.running == 0
    main.attach_engine(engine)
    assert main.navigation.isEnabled() and main.navigation.currentRow() == 0
    assert main.pages.currentWidget() is main.built["Comprobantes"]
    qtbot.waitUntil(lambda: main.pending_label.text() == "Envíos pendientes: 0")  # the status bar read the engine
    assert isinstance(main.show_section("Mensajes"), MessagesPage)
    wait_idle(qtbot, main.workers)
    main.close()


def test_the_app_s_start_opens_the_engine_on_a_worker_after_the_first_paint(home, qtbot):
    main = MainWindow(first_run=False)
    qtbot.addWidget(main)
    opened = []
    main.start_services = opened.append  # what the app starts beside the engine, once attached
    main.open_engine_when_painted(str(home))
    assert main.workers.running == 0  # nothing opened before the window has painted
    main.show()
    qtbot.waitUntil(lambda: main.attached, timeout=30_000)
    assert main.painted and opened == [main]
    assert main.engine.admin.database_file().parent == home
    qtbot.waitUntil(lambda: main.pending_label.text() == "Envíos pendientes: 0")
    wait_idle(qtbot, main.workers)
    main.close()
    main.engine.close()


def test_a_window_never_painted_opens_its_engine_all_the_same(home, qtbot):
    """A window that gets no paint (started minimised, which the offscreen platform paints anyway: here, not shown)
    still opens its engine, once the fallback finds it not exposed."""
    main = MainWindow(first_run=False)
    qtbot.addWidget(main)
    main.open_engine_when_painted(str(home))
    qtbot.waitUntil(lambda: main.attached, timeout=30_000)
    assert not main.painted and main.engine.admin.database_file().parent == home
    wait_idle(qtbot, main.workers)
    main.close()
    main.engine.close()


def test_a_folder_the_engine_cannot_open_is_said_in_the_window_in_spanish(home, qtbot):
    import sqlite3

    from app.core.engine import Engine

    with Engine(home) as first:
        database = first.admin.database_file()
    with sqlite3.connect(database) as conn:  # a newer Yupana wrote this folder
        conn.execute("INSERT INTO schema_version (version, how, applied_at) VALUES (9999, 'futuro', '2030-01-01')")
    conn.close()
    main = MainWindow(first_run=False)
    qtbot.addWidget(main)
    main.open_engine_when_painted(str(home))
    main.show()
    qtbot.waitUntil(lambda: main.open_error is not None, timeout=30_000)
    assert not main.attached and main.crash is None and main.isVisible()
    text = main.opening.text()
    assert text.startswith("No se pudieron abrir sus datos.")
    assert "esquema 9999, más nuevo" in text and "actualice Yupana" in text
    main.close()


def test_an_unhandled_engine_error_opens_a_non_blocking_dialog_with_details(window, qtbot):
    from PySide6.QtCore import QObject

    from app.core.errors import invalid

    owner = QObject()  # no banner of its own
    window.workers.run(owner, lambda: (_ for _ in ()).throw(invalid("serie", "La serie «X» no es válida.")))
    qtbot.waitUntil(lambda: getattr(window, "error_box", None) is not None and window.error_box.isVisible())
    assert window.error_box.text() == "La serie «X» no es válida."
    assert "serie" in window.error_box.detailedText()
    assert not window.error_box.isModal()
    window.error_box.close()


def test_the_local_api_starts_with_the_app_when_the_setting_says_so(window, engine):
    import httpx

    assert window.start_api_if_chosen() is None  # off by default
    engine.admin.config_set("api_port", "0")  # a port from the OS: the app itself may be open on this machine
    engine.admin.config_set("api_autostart", "si")
    base_url = window.start_api_if_chosen()  # what the app runs on a worker at start-up
    health = httpx.get(base_url + "/api/v1/health", timeout=10)
    assert health.status_code == 200 and health.json()["success"] is True
    assert window.start_api_if_chosen() == base_url  # once per process


def test_main_window_opens(qtbot, engine):
    from app.gui.main_window import MainWindow

    window = MainWindow(engine)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.isVisible()
    assert "Yupana" in window.windowTitle()


def test_the_status_bar_says_whether_whatsapp_messages_arrive_in_a_shop_owners_words():
    import socket

    from app.core.api import ListenerState
    from app.gui.main_window import listener_words

    with socket.socket() as probe:  # a port the OS gives, as the listener's would be
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    assert listener_words(ListenerState("running", url)) == \
        ("WhatsApp: recibiendo mensajes", f"Receptor de webhooks en {url}")
    assert listener_words(ListenerState("running", url, exposed=True))[0] == \
        "WhatsApp: recibiendo mensajes (abierto a la red)"
    assert listener_words(ListenerState("error", error="puerto ocupado")) == \
        ("WhatsApp: no se pueden recibir mensajes", "Receptor de webhooks con error: puerto ocupado")
    assert listener_words(ListenerState("stopped"))[0] == "WhatsApp: sin recibir mensajes"


def test_a_window_closed_while_its_engine_opens_does_not_attach_it(home, qtbot, monkeypatch):
    import pytest

    from app.gui import main_window
    from app.gui.app import shutdown

    opened, really_open = [], main_window.open_engine  # the engine the worker opens (the real one), to see it closed

    def open_engine(home):
        opened.append(really_open(home))
        return opened[-1]

    monkeypatch.setattr(main_window, "open_engine", open_engine)
    main = MainWindow(first_run=False)
    qtbot.addWidget(main)
    main.open_engine_when_painted(str(home))
    main.show()
    qtbot.waitUntil(lambda: main.workers.running == 1)  # the worker is importing and opening the engine
    shutdown(main)  # waits for the worker, then hands the engine back to be closed
    assert not main.attached and not main.isVisible() and main.workers.running == 0
    assert main.pages.currentWidget() is main.opening
    with pytest.raises(RuntimeError, match="storage is closed"):  # closed, not left open with nobody to close it
        opened[0].admin.companies()
