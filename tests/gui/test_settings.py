"""Ajustes: settings saved with errors next to their field, company profiles, SOL, data folder and log."""

from __future__ import annotations

from app.gui.settings import SettingsPage
from tests.helpers.base import ISSUER_RUC
from tests.helpers.gui import open_widget, wait_idle


def open_page(qtbot, context) -> SettingsPage:
    return open_widget(qtbot, context, SettingsPage)


def test_settings_are_loaded_and_saved(qtbot, context, engine):
    page = open_page(qtbot, context)
    form = page.forms["Entorno"]
    assert form.value("environment") == "sandbox"
    form.set_value("environment", "beta")
    form.save_button.click()
    qtbot.waitUntil(lambda: getattr(form, "environment_box", None) is not None)  # asked first: tests/gui/test_environments.py
    form.environment_box.button(form.environment_box.StandardButton.Yes).click()
    wait_idle(qtbot, context.workers)
    sunat = page.forms["SUNAT"]
    sunat.fields["sunat_timeout_s"].setText("45")
    sunat.save_button.click()
    wait_idle(qtbot, context.workers)
    assert engine.admin.config_get("environment") == "beta"
    assert engine.admin.config_get("sunat_timeout_s") == "45"
    assert page.banner.tone == "success"


def test_a_wrong_value_is_shown_next_to_its_field_with_its_label(qtbot, context, engine):
    page = open_page(qtbot, context)
    form = page.forms["SUNAT"]
    assert form.advanced.isHidden()
    form.fields["sunat_timeout_s"].setText("mucho")
    form.fields["sunat_url_beta"].setText("ftp://x")
    form.save_button.click()
    wait_idle(qtbot, context.workers)
    shown = form.errors.visible()
    assert "«Espera máxima de SUNAT (segundos)»" in shown["sunat_timeout_s"] and "entero" in shown["sunat_timeout_s"]
    assert "sunat_timeout_s" not in shown["sunat_timeout_s"]
    assert "http" in shown["sunat_url_beta"]
    assert not form.advanced.isHidden()  # the problem was behind «Avanzado»: it opens by itself
    assert engine.admin.config_get("sunat_timeout_s") == "30"
    assert form.save_button.isEnabled()


def test_settings_speak_a_shop_owners_language(qtbot, context):
    """Labels, not setting names; addresses and time-outs behind «Avanzado»."""
    from PySide6.QtWidgets import QLabel

    from app.core.platform.settings import SETTINGS

    page = open_page(qtbot, context)
    texts = {label.text() for label in page.findChildren(QLabel)}
    for key, setting in SETTINGS.items():
        assert setting.label and f"{key}:" not in texts, key
        form = next(f for f in page.forms.values() if key in f.fields)
        assert form.advanced.isAncestorOf(form.fields[key]) == setting.advanced, key
    basic = page.forms["Entorno"]
    assert basic.advanced_button.isHidden()  # nothing advanced there: no button
    sunat = page.forms["SUNAT"]
    sunat.advanced_button.click()
    assert not sunat.advanced.isHidden()


def test_every_setting_has_a_place(qtbot, context):
    from app.core.platform.settings import SETTINGS

    page = open_page(qtbot, context)
    placed = {key for form in page.forms.values() for key in form.fields}
    assert placed == set(SETTINGS)


def test_company_profile_saved_and_errors_by_field(qtbot, context, engine):
    page = open_page(qtbot, context)
    form = page.company_form
    form.ruc.setText(ISSUER_RUC)
    form.inputs["razon_social"].setText("BODEGA LA ESQUINA S.A.C.")
    form.inputs["direccion"].setText("JR. DE LA UNIÓN 456")
    form.inputs["ubigeo"].setText("999999")
    form.save_button.click()
    wait_idle(qtbot, context.workers)
    assert "ubigeo" in form.errors.visible()["ubigeo"]
    assert engine.admin.company(ISSUER_RUC) is None
    form.inputs["ubigeo"].setText("150101")
    form.save_button.click()
    wait_idle(qtbot, context.workers)
    assert engine.admin.company(ISSUER_RUC).razon_social == "BODEGA LA ESQUINA S.A.C."
    assert form.list.count() == 1
    assert page.sol_company.currentData() == ISSUER_RUC


def test_sol_password_is_masked(qtbot, context):
    from PySide6.QtWidgets import QLineEdit

    page = open_page(qtbot, context)
    assert page.sol_password.echoMode() == QLineEdit.EchoMode.Password
    assert page.token_value.echoMode() == QLineEdit.EchoMode.Password


def test_log_viewer_shows_the_log(qtbot, context, engine):
    import logging

    logging.getLogger("app.test").warning("línea de prueba del registro")
    page = open_page(qtbot, context)
    page.log_refresh.click()
    wait_idle(qtbot, context.workers)
    assert "línea de prueba del registro" in page.log_view.toPlainText()


def test_each_setting_lives_in_its_groups_tab():
    from app.gui.settings import keys_by_tab

    tabs = keys_by_tab(["environment", "sunat_rules_dir", "sunat_timeout_s", "registry_yupana_url", "api_port"])
    assert list(tabs) == ["Entorno", "SUNAT", "Consultas", "API local"]
    assert tabs["SUNAT"] == ["sunat_rules_dir", "sunat_timeout_s"]
    assert tabs["Consultas"] == ["registry_yupana_url"]


def test_the_local_api_token_is_shown_on_request_and_rotated_after_confirmation(qtbot, context, engine):
    from PySide6.QtWidgets import QLineEdit, QMessageBox

    page = open_page(qtbot, context)
    assert page.api_token.text() == ""  # nothing read or shown until asked
    page.api_token_show.click()
    wait_idle(qtbot, context.workers)
    first = engine.admin.api_token()
    assert page.api_token.text() == first and page.api_token.echoMode() == QLineEdit.EchoMode.Normal
    page.api_token_show.click()
    assert page.api_token.text() == ""
    page.api_token_new.click()
    page.confirm_box.button(QMessageBox.StandardButton.No).click()
    wait_idle(qtbot, context.workers)
    assert engine.admin.api_token() == first
    page.api_token_new.click()
    page.confirm_box.button(QMessageBox.StandardButton.Yes).click()
    wait_idle(qtbot, context.workers)
    second = engine.admin.api_token()
    assert second != first and page.api_token.text() == second
    assert engine.admin.api_token_matches(second) and not engine.admin.api_token_matches(first)
    assert page.banner.tone == "success"
