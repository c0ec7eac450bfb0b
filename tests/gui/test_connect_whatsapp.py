"""«Conectar WhatsApp» (issue 30, item 3): against the gateway sandbox on 127.0.0.1 (app/sandbox/gateway_pairing.py,
Evolution's answers as its source writes them, tag 2.3.6; Meta's errors in the shape of its «Graph API → Error
handling» guide), the dialog shows the QR Evolution gives — read back from the screen with zbarimg — follows it when
it is renewed, and shows «Conectado» once the phone «scans»; the instance's token is kept; refusals are Spanish and
under the field they are about. Real widgets offscreen, real worker threads, no sleeps."""

from __future__ import annotations

import subprocess

import pytest

from app.gui.connect_whatsapp import CONNECTED, ConnectWhatsAppDialog
from app.gui.messages import MessagesPage
from app.sandbox.gateway import GLOBAL_APIKEY
from app.sandbox.gateway_pairing import META_PHONE_NUMBER_ID, META_TOKEN
from tests.helpers.gui import open_widget, wait_idle

QUICK_POLL_MS = 20  # the dialog's 2 s between looks, shortened: the test waits on what it shows, never on time


@pytest.fixture
def dialog(qtbot, context, gateway):
    shown = ConnectWhatsAppDialog(context)
    qtbot.addWidget(shown)
    shown.poll_timer.setInterval(QUICK_POLL_MS)
    shown.show()
    yield shown
    shown.reject()
    wait_idle(qtbot, context.workers)


def on_screen_qr(dialog, folder) -> str:
    """The QR the dialog shows, saved as a PNG and decoded by zbarimg (what a phone's camera would read)."""
    path = folder / f"qr-{dialog.shown_code[-12:].replace('/', '_')}.png"
    assert dialog.qr_label.pixmap().save(str(path), "PNG")
    done = subprocess.run(["zbarimg", "--raw", "-q", str(path)], capture_output=True, text=True, timeout=30,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.rstrip("\n")


def fill(dialog, gateway, name: str, *, key: str = "", token: str = "", number: str = "") -> None:
    dialog.base_url.setText(gateway.base_url)
    dialog.instance.setText(name)
    dialog.global_key.setText(key)
    dialog.instance_token.setText(token)
    dialog.number.setText(number)


def test_mensajes_opens_it(qtbot, context, gateway):
    page = open_widget(qtbot, context, MessagesPage)
    assert page.connect_whatsapp_button.text() == "Conectar WhatsApp"
    page.connect_whatsapp_button.click()
    opened = page.findChild(ConnectWhatsAppDialog)
    assert opened is not None and opened.isVisible() and opened.windowTitle() == "Conectar WhatsApp"
    opened.reject()
    wait_idle(qtbot, context.workers)


def test_the_form_says_which_case_applies(dialog):
    assert "clave global" in dialog.case_label.text() and "token" in dialog.case_label.text()
    dialog.instance.setText("tienda")
    dialog.instance_token.setText("abc")
    assert "conectará la instancia «tienda» que ya existe" in dialog.case_label.text()
    dialog.global_key.setText("clave")
    assert "creará en el servidor la instancia «tienda»" in dialog.case_label.text()
    assert dialog.connect_button.text() == "Crear y conectar"


def test_the_global_key_creates_the_instance_shows_its_qr_then_conectado(qtbot, dialog, context, gateway, tmp_path):
    fill(dialog, gateway, "tienda", key=GLOBAL_APIKEY)
    dialog.connect_button.click()
    qtbot.waitUntil(lambda: bool(dialog.shown_code), timeout=10_000)
    first = gateway.pairing.current_qr("tienda")["code"]
    assert on_screen_qr(dialog, tmp_path) == first
    assert dialog.global_key.text() == ""  # not left in the form
    assert "«tienda» creada en el servidor" in dialog.case_label.text()
    token = context.engine.messaging._service.config("tienda").credentials["apikey"]
    assert token == gateway.apikey("tienda") != GLOBAL_APIKEY  # the instance's token, kept (encrypted)
    renewed = gateway.pairing.renew_qr("tienda")["code"]  # Baileys shows a new QR after ~20 s
    qtbot.waitUntil(lambda: dialog.shown_code == renewed, timeout=10_000)
    assert on_screen_qr(dialog, tmp_path) == renewed != first
    assert dialog.state_label.text() != CONNECTED
    gateway.pairing.scan("tienda")  # the phone scans it
    qtbot.waitUntil(lambda: dialog.state_label.text() == CONNECTED, timeout=10_000)
    assert dialog.state_label.text() == "Conectado"
    assert dialog.qr_label.pixmap().isNull()
    wait_idle(qtbot, context.workers)
    assert not dialog.poll_timer.isActive()
    assert [(i.name, i.state) for i in context.engine.messaging.instances()] == [("tienda", "open")]


def test_an_instance_token_connects_an_existing_instance_with_its_pairing_code(qtbot, dialog, gateway, tmp_path):
    gateway.create_instance("caja", state="close")
    fill(dialog, gateway, "caja", token=gateway.apikey("caja"), number="987654321")
    dialog.connect_button.click()
    qtbot.waitUntil(lambda: bool(dialog.shown_code), timeout=10_000)
    shown = gateway.pairing.current_qr("caja")
    assert on_screen_qr(dialog, tmp_path) == shown["code"]
    assert shown["pairingCode"] in dialog.pairing_code_label.text()
    gateway.pairing.scan("caja")
    qtbot.waitUntil(lambda: dialog.state_label.text() == CONNECTED, timeout=10_000)


def test_a_wrong_global_key_is_explained_under_it(qtbot, dialog, context, gateway):
    fill(dialog, gateway, "tienda", key="no-es-la-clave")
    dialog.connect_button.click()
    wait_idle(qtbot, context.workers)
    shown = dialog.errors.visible()
    assert list(shown) == ["global_key"]
    assert "no aceptó la clave global" in shown["global_key"] and gateway.base_url in shown["global_key"]
    assert dialog.qr_label.pixmap().isNull() and not dialog.poll_timer.isActive()
    assert context.engine.messaging.instances() == [] and gateway.instances == {}


def test_an_unknown_instance_is_explained_under_its_name(qtbot, dialog, context, gateway):
    fill(dialog, gateway, "nadie", token="un-token")
    dialog.connect_button.click()
    wait_idle(qtbot, context.workers)
    assert "no tiene la instancia «nadie»" in dialog.errors.visible()["instance"]


def meta_form(dialog, gateway, token: str, number_id: str = META_PHONE_NUMBER_ID) -> None:
    dialog.tabs.setCurrentIndex(1)
    dialog.meta_name.setText("meta")
    dialog.meta_url.setText(gateway.base_url + "/v21.0")
    dialog.meta_token.setText(token)
    dialog.meta_number_id.setText(number_id)
    dialog.meta_secret.setText("app-secret")
    dialog.meta_verify.setText("verificar")


def test_meta_connection_test_passes_with_the_right_token_and_saves(qtbot, dialog, context, gateway):
    meta_form(dialog, gateway, META_TOKEN)
    dialog.meta_test_button.click()
    wait_idle(qtbot, context.workers)
    assert "Conexión correcta" in dialog.meta_result.text() and "+51 987 654 321" in dialog.meta_result.text()
    assert dialog.meta_errors.visible() == {}
    dialog.meta_save_button.click()
    wait_idle(qtbot, context.workers)
    saved = context.engine.messaging.instances()
    assert [(i.name, i.gateway, i.options) for i in saved] == [("meta", "meta",
                                                                 {"phone_number_id": META_PHONE_NUMBER_ID})]
    assert dialog.meta_token.text() == ""
    assert "guardada" in dialog.banner.text.text()


def test_meta_wrong_token_is_a_spanish_error_under_the_token(qtbot, dialog, context, gateway):
    meta_form(dialog, gateway, "EAAG-vencido")
    dialog.meta_test_button.click()
    wait_idle(qtbot, context.workers)
    shown = dialog.meta_errors.visible()
    assert list(shown) == ["token"]
    assert "Meta no aceptó el token de acceso que escribió" in shown["token"] and "190" in shown["token"]
    assert dialog.meta_result.text() == ""
    dialog.meta_save_button.click()  # nothing is saved with a token Meta refuses
    wait_idle(qtbot, context.workers)
    assert context.engine.messaging.instances() == []


def test_meta_unknown_phone_number_id_names_what_was_typed(qtbot, dialog, context, gateway):
    meta_form(dialog, gateway, META_TOKEN, "999888777")
    dialog.meta_test_button.click()
    wait_idle(qtbot, context.workers)
    assert "«999888777»" in dialog.meta_errors.visible()["phone_number_id"]
