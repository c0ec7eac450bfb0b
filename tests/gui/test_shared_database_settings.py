"""Ajustes → «Base de datos compartida» (issue 34, item 7): «Probar la conexión» against the throwaway PostgreSQL, on a
worker, says in Spanish what stands in the way — the server out of reach, a wrong password (a role of its own with a
password, the desk's pgpass file holding another), a server too old, a database of another business, one of another
program, a schema newer than this Yupana — and says so when the desk can use the database."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from app.core.storage import schema
from app.core.storage.postgres import engine as postgres_engine
from app.core.storage.postgres.database import PostgresStorage
from app.gui.settings import SettingsPage
from tests.helpers.gui import open_widget, wait_idle

pytestmark = pytest.mark.postgres

TAB = "Base de datos compartida"


def _tested(qtbot, context, url: str) -> tuple[str, str]:
    """The address typed in the tab and «Probar la conexión» pressed: what it shows, and its colour."""
    page = open_widget(qtbot, context, SettingsPage)
    page.forms[TAB].set_value("database_url", url)
    box = page.shared_database
    box.test_button.click()
    assert box.result.text() == "Probando la conexión…" and not box.test_button.isEnabled()  # on a worker
    wait_idle(qtbot, context.workers)
    qtbot.waitUntil(lambda: box.result.text() != "Probando la conexión…", timeout=20_000)
    return box.result.text(), box.result.styleSheet()


def _run(url: str, *statements: tuple[str, tuple]) -> None:
    storage = PostgresStorage(url)
    try:
        for sql, params in statements:
            storage.conn().execute(sql, params)
    finally:
        storage.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens there once the socket is closed


def test_a_database_this_desk_can_use_is_said_in_green(qtbot, context, company, postgres_server):
    url = postgres_server.fresh_database()
    _run(url, ("INSERT INTO companies (ruc, razon_social, ubigeo, direccion) VALUES (?, ?, '150101', 'AV. LIMA 1')",
               (company.ruc, company.razon_social)))
    text, style = _tested(qtbot, context, url)
    assert text.startswith("Conexión correcta (PostgreSQL 1") and f"RUC {company.ruc}" in text, text
    assert "1b5e20" in style
    empty, _ = _tested(qtbot, context, postgres_server.empty_database())
    assert "La base de datos está vacía" in empty and "yupana db migrar postgresql://" in empty
    assert context.engine.admin.config_get("database_url") == ""  # a test saves nothing


def test_a_server_out_of_reach(qtbot, context):
    text, style = _tested(qtbot, context, f"postgresql://yupana@127.0.0.1:{_closed_port()}/tienda")
    assert text.startswith("No se pudo conectar con la base de datos compartida en 127.0.0.1:") and "b71c1c" in style
    assert text.endswith("y que PostgreSQL esté en marcha (Connection refused).")  # libpq's framing left out


def test_a_wrong_password(qtbot, context, postgres_server, tmp_path, monkeypatch):
    url = postgres_server.role_with_password("cajera", "clave-buena")
    port = url.split("@127.0.0.1:")[1].split("/")[0]
    pgpass = tmp_path / "pgpass.conf"
    pgpass.write_text(f"127.0.0.1:{port}:*:cajera:clave-mala\n", encoding="utf-8")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    text, _ = _tested(qtbot, context, url)
    assert text == (f"El servidor 127.0.0.1:{port} rechazó la contraseña del usuario «cajera»: corríjala en "
                    f"{postgres_engine.PGPASS}."), text
    monkeypatch.setenv("PGPASSFILE", str(Path(tmp_path / "ninguno")))
    assert "no tiene una guardada" in _tested(qtbot, context, url)[0]
    pgpass.write_text(f"127.0.0.1:{port}:*:cajera:clave-buena\n", encoding="utf-8")
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    assert _tested(qtbot, context, url)[0].startswith("Conexión correcta")  # the right one gets in


def test_a_server_too_old(qtbot, context, postgres_server, monkeypatch):
    # Fault injection: this test's PostgreSQL (15 or newer) made «too old» by asking for a version to come.
    monkeypatch.setattr(postgres_engine, "MIN_SERVER_VERSION", 990000)
    text, _ = _tested(qtbot, context, postgres_server.fresh_database())
    assert "demasiado antiguo: Yupana necesita PostgreSQL 99 o más nuevo" in text and text.startswith(
        "El servidor tiene PostgreSQL 1"), text


def test_a_database_of_another_business_or_program(qtbot, context, company, postgres_server):
    url = postgres_server.fresh_database()
    _run(url, ("INSERT INTO companies (ruc, razon_social, ubigeo, direccion) VALUES ('20131312955', "
               "'OTRA TIENDA S.A.C.', '150101', 'AV. LIMA 1')", ()))
    text, style = _tested(qtbot, context, url)
    assert "es de otro negocio: emite para OTRA TIENDA S.A.C. (RUC 20131312955), y este puesto para RUC " \
        f"{company.ruc}" in text and "b71c1c" in style, text
    other_program = postgres_server.empty_database()
    _run(other_program, ("CREATE TABLE facturas (id integer)", ()))
    assert "tiene tablas que no son de Yupana" in _tested(qtbot, context, other_program)[0]


def test_a_schema_newer_than_this_app(qtbot, context, postgres_server):
    url = postgres_server.fresh_database()
    _run(url, ("INSERT INTO schema_version (version, how, applied_at) VALUES (?, 'newer', 'x')",
               (schema.VERSION + 1,)))
    text, _ = _tested(qtbot, context, url)
    assert f"tiene el esquema {schema.VERSION + 1}, más nuevo que el que conoce esta versión de Yupana" in text, text


def test_this_desks_data_is_copied_from_the_tab_and_a_second_copy_is_refused(qtbot, context, engine, company,
                                                                            postgres_server, home):
    from app.core.storage.engines import open_shared_database
    from tests.helpers.voucher_matrix import factura, item

    certificado = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    generated = engine.invoicing.generate_xml(factura("F001", 7, [item("Arroz Costeño 5 kg", "2", "25.37")]))
    engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado})
    url = postgres_server.empty_database()
    page = open_widget(qtbot, context, SettingsPage)
    page.forms[TAB].set_value("database_url", url)
    box = page.shared_database

    def copied() -> str:
        box.move_button.click()
        qtbot.waitUntil(lambda: getattr(box, "move_box", None) is not None and box.move_box.isVisible())
        assert url in box.move_box.text() and "debe estar vacía" in box.move_box.text()
        box.move_box.button(box.move_box.StandardButton.Yes).click()
        qtbot.waitUntil(lambda: not box.result.text().startswith("Copiando"), timeout=30_000)
        wait_idle(qtbot, context.workers)
        return box.result.text()

    text = copied()
    assert text.startswith(f"Copiado a {url}: 1 comprobantes") and "F001 sigue en el 8" in text, text
    assert "Cierre Yupana y vuelva a abrirlo" in text
    assert engine.admin.config_get("database_url") == url == page.forms[TAB].value("database_url")
    shared = open_shared_database(url)
    try:
        assert shared.query("SELECT serie, numero FROM vouchers") == [{"serie": "F001", "numero": 7}]
    finally:
        shared.close()
    assert "ya se copió" in copied() and "b71c1c" in box.result.styleSheet()


@pytest.fixture
def stopped_cluster(home):
    """A server of this test's own holding the schema, named by the desk's puesto.json, stopped (the app opening
    before it)."""
    from app.core.platform.settings import DeskSettings
    from tests.helpers.postgres import cluster_with_schema

    with cluster_with_schema() as server:
        DeskSettings(home).put("database_url", server.url)
        server.stop()
        yield server


def test_the_app_opening_with_the_server_down_waits_saying_so_then_opens(qtbot, stopped_cluster, home):
    from PySide6.QtWidgets import QDialog

    from app.gui.shared_database import DatabaseWait
    from app.gui.workers import Workers

    workers = Workers()
    dialog = DatabaseWait(home, "primer aviso", workers)
    qtbot.addWidget(dialog)
    dialog.show()
    where = f"127.0.0.1:{stopped_cluster.port}"
    qtbot.waitUntil(lambda: where in dialog.message.text(), timeout=30_000)  # said by the worker, not the GUI thread
    assert dialog.message.text().startswith("No se pudo conectar con la base de datos compartida")
    assert dialog.status.text().startswith("Se vuelve a intentar en")
    stopped_cluster.start()
    qtbot.waitUntil(lambda: dialog.engine is not None, timeout=60_000)
    assert dialog.result() == QDialog.DialogCode.Accepted and dialog.failure is None
    dialog.wait_finished()
    assert workers.wait()
    assert dialog.engine is not None
    try:
        assert dialog.engine.admin.config_get("database_url") == stopped_cluster.url
        assert dialog.engine.admin.companies() == []
    finally:
        dialog.engine.close()


def test_leaving_while_the_server_is_down_opens_nothing(qtbot, stopped_cluster, home):
    from app.gui.shared_database import DatabaseWait
    from app.gui.workers import Workers

    workers = Workers()
    dialog = DatabaseWait(home, "primer aviso", workers)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: "127.0.0.1" in dialog.message.text(), timeout=30_000)
    dialog.reject()  # «Salir»
    dialog.wait_finished()
    assert workers.wait()
    assert dialog.engine is None and dialog.failure is None


def window_waiting_for_the_database(qtbot, home, server: str):
    """The app's own start (the window first, the engine opened on a worker) meeting the shared database off: the
    window and its waiting dialog, once the dialog names `server`."""
    from app.gui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.open_engine_when_painted(str(home))
    window.show()
    qtbot.waitUntil(lambda: window.database_wait is not None, timeout=60_000)
    dialog = window.database_wait
    qtbot.waitUntil(lambda: server in dialog.message.text(), timeout=30_000)
    return window, dialog


def test_the_app_s_start_with_the_server_down_waits_in_a_dialog_then_attaches_the_engine(qtbot, stopped_cluster, home):
    """The app's own start (the window first, the engine opened on a worker, issue 33) meets the shared database off:
    the waiting dialog names the server instead of the window's failure text, and once the server answers the
    engine it opened is the window's."""
    window, dialog = window_waiting_for_the_database(qtbot, home, f"127.0.0.1:{stopped_cluster.port}")
    assert not window.attached and window.open_error is None
    stopped_cluster.start()
    qtbot.waitUntil(lambda: window.attached, timeout=60_000)
    try:
        assert window.engine.admin.config_get("database_url") == stopped_cluster.url
        assert window.database_wait is None and window.isVisible()
    finally:
        window.close()
        window.workers.wait(15_000)
        window.engine.close()


def test_leaving_during_a_connection_attempt_never_freezes_the_window(qtbot, stopped_cluster, home, monkeypatch):
    """«Salir» while a connection attempt is under way (a server that drops packets answers nothing until the
    connect time-out, up to 10 s): the window leaves the screen at once and its events keep running; it closes when
    the attempt ends. Fault injection: the attempt under way is one that waits for the test."""
    import threading

    from PySide6.QtCore import QTimer

    from app.gui import shared_database

    attempt_may_end, attempt_ended = threading.Event(), threading.Event()

    def slow_attempt(job, _home):
        job.report(("No se pudo conectar con la base de datos compartida en 127.0.0.1:5432.", 1.0))
        attempt_may_end.wait(5)  # on the old code the window's thread waits here for it: 5 s, not a minute
        attempt_ended.set()

    monkeypatch.setattr(shared_database, "_open_waiting", slow_attempt)
    window, dialog = window_waiting_for_the_database(qtbot, home, "127.0.0.1:5432")
    dialog.reject()  # «Salir»
    ticked: list[bool] = []
    QTimer.singleShot(0, lambda: ticked.append(attempt_ended.is_set()))
    qtbot.waitUntil(lambda: bool(ticked), timeout=10_000)
    assert ticked == [False]  # the window's events ran while the attempt was still under way
    assert not window.isVisible() and window.database_wait is dialog
    attempt_may_end.set()
    qtbot.waitUntil(lambda: window.database_wait is None, timeout=10_000)
    assert not window.attached and not window.isVisible()
    window.workers.wait(15_000)
