"""A PC with no system keyring: the passphrase dialog opens the keys before anything needs them."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from app.core.engine import Engine
from app.core.platform.secrets import LOCKED, NEW_PASSPHRASE, UNLOCKED
from app.gui.app import application
from app.gui.main_window import MainWindow
from app.gui.passphrase import PassphraseDialog
from tests.gui.test_assistant import fill_company
from tests.helpers.base import ISSUER_RUC
from tests.helpers.gui import wait_idle

PASSPHRASE = "mi bodega en Surquillo"


@pytest.fixture
def no_keyring(monkeypatch):
    """Like a fresh Debian desktop: no keyring, no YUPANA_PASSPHRASE."""
    monkeypatch.delenv("YUPANA_PASSPHRASE", raising=False)
    monkeypatch.setenv("YUPANA_KEYRING", "0")


def open_main(qtbot, engine) -> MainWindow:
    main = MainWindow(engine)
    qtbot.addWidget(main)
    main.show()
    qtbot.waitUntil(lambda: main.passphrase_dialog is not None and main.passphrase_dialog.isVisible())
    return main


def close_main(qtbot, main) -> None:
    if main.assistant is not None:
        main.assistant.close()
    wait_idle(qtbot, main.workers)
    main.close()


def test_first_start_sets_a_passphrase_then_the_assistant_completes_a_sandbox_setup(no_keyring, home, qtbot):
    engine = Engine(home)
    try:
        assert engine.admin.secret_state() == NEW_PASSPHRASE
        main = open_main(qtbot, engine)
        dialog: PassphraseDialog = main.passphrase_dialog
        assert dialog.new and dialog.windowTitle() == "Crear la frase secreta"
        assert main.assistant is None  # nothing that needs a key starts before the keys are open

        dialog.passphrase.setText("corta")
        dialog.confirmation.setText("corta")
        dialog.submit()
        assert "muy corta" in dialog.banner.text.text()
        dialog.passphrase.setText(PASSPHRASE)
        dialog.confirmation.setText(PASSPHRASE + "x")
        dialog.submit()
        assert "no coinciden" in dialog.banner.text.text()
        assert engine.admin.secret_state() == NEW_PASSPHRASE

        dialog.confirmation.setText(PASSPHRASE)
        dialog.submit()
        qtbot.waitUntil(lambda: dialog.unlocked)
        assert not dialog.isVisible()
        assert engine.admin.secret_state() == UNLOCKED

        qtbot.waitUntil(lambda: main.assistant is not None and main.assistant.isVisible(), timeout=15_000)
        assistant = main.assistant
        fill_company(assistant)
        assistant.next()
        assistant.next()
        assistant.accept()
        qtbot.waitUntil(lambda: assistant.completed, timeout=20_000)
        assert "Certificado de prueba creado." in assistant.result_lines
        assert engine.invoicing.default_certificate(ISSUER_RUC).es_prueba
        close_main(qtbot, main)
    finally:
        engine.close()


def test_next_start_asks_once_and_a_wrong_passphrase_gets_a_spanish_message(no_keyring, home, qtbot):
    with Engine(home) as first:
        first.admin.unlock_secrets(PASSPHRASE)
        first.invoicing.create_test_certificate(ISSUER_RUC)
    engine = Engine(home)
    try:
        assert engine.admin.secret_state() == LOCKED
        main = open_main(qtbot, engine)
        dialog = main.passphrase_dialog
        assert not dialog.new and dialog.confirmation.isHidden()
        dialog.passphrase.setText("otra frase cualquiera")
        dialog.submit()
        qtbot.waitUntil(lambda: dialog.banner.isVisible())
        assert "La frase secreta no es correcta" in dialog.banner.text.text()
        assert engine.admin.secret_state() == LOCKED
        dialog.passphrase.setText(PASSPHRASE)
        dialog.submit()
        qtbot.waitUntil(lambda: dialog.unlocked)
        assert [c.ruc for c in engine.invoicing.certificates()] == [ISSUER_RUC]  # the saved key opens again
        close_main(qtbot, main)
    finally:
        engine.close()


def test_leaving_the_dialog_closes_yupana(no_keyring, engine, qtbot):
    main = open_main(qtbot, engine)
    main.passphrase_dialog.reject()
    qtbot.waitUntil(lambda: not main.isVisible())
    wait_idle(qtbot, main.workers)


def test_qt_standard_buttons_speak_spanish(qtbot):
    application()
    box = QMessageBox(QMessageBox.Icon.Warning, "Yupana", "Algo pasó", QMessageBox.StandardButton.Ok)
    qtbot.addWidget(box)
    box.setDetailedText("detalles")
    box.show()
    texts = {button.text().replace("&", "") for button in box.buttons()}
    assert "OK" not in texts and "Show Details..." not in texts
    assert "Aceptar" in texts and any(text.startswith("Mostrar") for text in texts), texts
