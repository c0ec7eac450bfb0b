"""Issue 16, point 2 in the windows: a change of environment is confirmed after saying what changes; beta and
production show a banner across the main window; leaving the sandbox stops it and takes its addresses away."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from app.gui.settings import SettingsPage
from tests.helpers.base import ISSUER_RUC
from tests.helpers.gui import open_widget, wait_idle


def pending_in(engine, environment: str, numero: int) -> None:
    with engine._storage.write() as conn:
        conn.execute("INSERT INTO sunat_submissions (environment, ambiente, ruc, tipo, serie, numero, file_name, xml,"
                     " next_attempt_at) VALUES (?, 'beta', ?, '01', 'F001', ?, 'f', x'00', 1e12)",
                     (environment, ISSUER_RUC, str(numero)))


def answer(qtbot, owner, button: QMessageBox.StandardButton) -> str:
    """Wait for the confirmation of `owner`, answer it, and return what it said."""
    qtbot.waitUntil(lambda: getattr(owner, "environment_box", None) is not None and owner.environment_box.isVisible())
    box = owner.environment_box
    text = box.text()
    box.button(button).click()
    owner.environment_box = None
    return text


def test_changing_the_environment_in_ajustes_says_what_changes_and_waits_for_yes(qtbot, context, engine):
    pending_in(engine, "sandbox", 1)
    pending_in(engine, "sandbox", 2)
    page = open_widget(qtbot, context, SettingsPage)
    form = page.forms["Entorno"]
    form.set_value("environment", "beta")
    form.save_button.click()
    text = answer(qtbot, form, QMessageBox.StandardButton.No)
    assert "servidor de pruebas de SUNAT" in text  # where vouchers go
    assert "2 envíos pendientes de SANDBOX esperan: no se envían a BETA" in text
    assert "numeración" in text
    wait_idle(qtbot, context.workers)
    assert engine.admin.config_get("environment") == "sandbox"  # «No»: nothing changed
    form.save_button.click()
    answer(qtbot, form, QMessageBox.StandardButton.Yes)
    wait_idle(qtbot, context.workers)
    assert engine.admin.config_get("environment") == "beta" and page.banner.tone == "success"


def test_production_is_announced_as_real(qtbot, context, engine):
    engine.admin.config_set("environment", "beta")
    page = open_widget(qtbot, context, SettingsPage)
    form = page.forms["Entorno"]
    form.set_value("environment", "produccion")
    form.save_button.click()
    text = answer(qtbot, form, QMessageBox.StandardButton.Yes)
    assert "comprobantes reales" in text and "clave SOL" in text
    wait_idle(qtbot, context.workers)
    assert engine.admin.config_get("environment") == "produccion"


def test_beta_and_production_show_a_banner_across_the_main_window(window, engine, qtbot):
    assert window.environment_banner.isHidden()  # sandbox: the status bar's badge is enough
    engine.admin.config_set("environment", "beta")
    qtbot.waitUntil(lambda: window.environment_banner.isVisible())
    assert "SUNAT BETA" in window.environment_banner.text()
    assert "#e65100" in window.environment_banner.styleSheet()
    engine.admin.config_set("environment", "produccion")
    qtbot.waitUntil(lambda: "PRODUCCIÓN" in window.environment_banner.text())
    assert window.environment_banner.isVisible() and "reales" in window.environment_banner.text()
    engine.admin.config_set("environment", "sandbox")
    qtbot.waitUntil(lambda: window.environment_banner.isHidden())


def test_leaving_the_sandbox_stops_it_and_its_addresses_go(window, engine, qtbot):
    sandboxes = window.context.sandboxes
    window.workers.run(window, window.start_sandbox_if_chosen)  # as app.gui.app does once the window is up
    qtbot.waitUntil(lambda: "sunat" in sandboxes.running, timeout=10_000)
    assert engine._sandbox_endpoints.get("sunat_url_beta")
    engine.admin.config_set("environment", "beta")
    qtbot.waitUntil(lambda: not sandboxes.running, timeout=10_000)
    assert engine._sandbox_endpoints.all() == {}
    assert "127.0.0.1" not in engine.admin.config_get("sunat_url_beta")
    engine.admin.config_set("environment", "sandbox")
    qtbot.waitUntil(lambda: "sunat" in sandboxes.running, timeout=10_000)
    assert engine._sandbox_endpoints.get("sunat_url_beta") == sandboxes.running["sunat"].bill_url


def test_the_assistant_asks_before_leaving_the_sandbox(qtbot, context, engine):
    from tests.gui.test_assistant import filled_assistant

    assistant = filled_assistant(qtbot, context)
    assistant.next()
    assistant.next()
    assistant.environment_page.buttons["beta"].setChecked(True)
    assistant.accept()
    text = answer(qtbot, assistant, QMessageBox.StandardButton.No)
    assert "«SUNAT beta (pruebas con SUNAT)»" in text and "servidores de prueba dejan de usarse" in text
    wait_idle(qtbot, context.workers)
    assert not assistant.completed and engine.admin.company(ISSUER_RUC) is None  # «No»: nothing saved yet
    assistant.accept()
    answer(qtbot, assistant, QMessageBox.StandardButton.Yes)
    qtbot.waitUntil(lambda: assistant.completed, timeout=15_000)
    assert engine.admin.config_get("environment") == "beta" and not context.sandboxes.running
    assert any("SUNAT beta" in line for line in assistant.result_lines)


def test_the_voucher_list_is_the_current_environments(qtbot, context, engine, company):
    from app.gui.vouchers import VouchersPage
    from tests.helpers.voucher_matrix import factura, item

    engine.invoicing.generate_xml(factura("F001", 1, [item("Servicio", "1", "100")]))
    page = open_widget(qtbot, context, VouchersPage)
    qtbot.waitUntil(lambda: page.model.rowCount() == 1)
    engine.admin.config_set("environment", "beta")  # the settings event reloads the list
    qtbot.waitUntil(lambda: page.model.rowCount() == 0)
    assert engine.invoicing.next_number(company.ruc, "01", "F001") == 1  # beta's own series
    engine.admin.config_set("environment", "sandbox")
    qtbot.waitUntil(lambda: page.model.rowCount() == 1)
