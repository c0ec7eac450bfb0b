"""Mensajes: sending reaches the gateway sandbox, the sandbox's events appear by themselves, the GUI
thread never waits on the network (real widgets, real listener, real sandbox)."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from PySide6.QtCore import QTimer

from app.gui.messages import READ_COLOUR, MessagesPage
from tests.helpers.gui import open_widget, wait_idle


@pytest.fixture
def page(qtbot, context, messaging_engine):
    widget = open_widget(qtbot, context, MessagesPage)
    qtbot.waitUntil(lambda: widget.send_instance.count() == 1, timeout=5000)
    return widget


def emit_elsewhere(gateway, *args, **kwargs) -> threading.Thread:
    """The gateway posts from its own thread, as a remote gateway would."""
    thread = threading.Thread(target=gateway.emit, args=args, kwargs=kwargs)
    thread.start()
    return thread


def test_sending_from_mensajes_reaches_the_gateway_sandbox(qtbot, page, context, gateway):
    page.to.setText("+51 987 444 555")
    page.text.setPlainText("Su boleta B001-7 está lista")
    page.send_button.click()
    assert gateway.wait_sent(1)[0]["text"] == "Su boleta B001-7 está lista"
    wait_idle(qtbot, context.workers)
    assert "+51987444555" in page.banner.text.text()
    qtbot.waitUntil(lambda: any("B001-7" in t and "✓" in t for t in page.thread_texts()), timeout=5000)


def test_a_voucher_file_is_sent_as_an_attachment(qtbot, page, context, gateway, tmp_path):
    xml = tmp_path / "20100066603-01-F001-9.xml"
    xml.write_text("<Invoice/>")
    page.to.setText("+51987444555")
    page.text.setPlainText("Su factura en XML")
    page.set_attachment(str(xml))
    page.send_button.click()
    sent = gateway.wait_sent(1)[0]
    assert sent["fileName"] == xml.name and sent["mediatype"] == "document"
    wait_idle(qtbot, context.workers)
    assert page.attachment_label.text() == "Sin adjunto"


def test_a_bad_number_is_explained_under_the_field(qtbot, page, context, gateway):
    page.to.setText("87444555")  # a 9-digit mobile gets +51 (test_messages_shop_owner.py); this is no number
    page.text.setPlainText("Hola")
    page.send_button.click()
    wait_idle(qtbot, context.workers)
    assert "código de país" in page.errors.visible()["to"]
    assert gateway.sent == []


def test_an_event_from_the_sandbox_appears_in_the_inbox_with_no_user_action(qtbot, page, gateway):
    emit_elsewhere(gateway, "message.received", "demo", sender="+51987000777", body="¿Tiene factura electrónica?",
                   name="Carmen Flores").join(10)
    qtbot.waitUntil(lambda: page.conversations.count() == 1, timeout=5000)
    assert "Carmen Flores" in page.conversations.item(0).text()
    qtbot.waitUntil(lambda: any("¿Tiene factura electrónica?" in t for t in page.thread_texts()), timeout=5000)


def test_delivered_and_read_show_as_ticks_and_colour(qtbot, page, context, gateway, messaging_engine):
    messaging_engine.messaging.send({"instance": "demo", "to": "+51987444555", "message": "Hola"})
    qtbot.waitUntil(lambda: any(t.endswith("✓:\nHola") for t in page.thread_texts()), timeout=5000)
    emit_elsewhere(gateway, "message.delivered", "demo").join(10)
    qtbot.waitUntil(lambda: any("✓✓" in t for t in page.thread_texts()), timeout=5000)
    emit_elsewhere(gateway, "message.read", "demo").join(10)
    qtbot.waitUntil(lambda: page.thread_list.item(0).foreground().color().name() == READ_COLOUR, timeout=5000)


def test_the_instance_state_follows_the_gateway(qtbot, page, gateway):
    emit_elsewhere(gateway, "instance.disconnected", "demo").join(10)
    qtbot.waitUntil(lambda: page.instance_state_text("demo") == "desconectado", timeout=5000)
    emit_elsewhere(gateway, "instance.connected", "demo").join(10)
    qtbot.waitUntil(lambda: page.instance_state_text("demo") == "conectado", timeout=5000)
    assert "activo en http://127.0.0.1:" in page.listener_label.text()


def test_the_gui_thread_never_waits_on_the_network(qtbot, context, engine):
    """A gateway that accepts the connection and never answers: the window keeps painting meanwhile."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        engine.admin.config_set("messaging_timeout_s", "2")
        engine.messaging.save_instance("lenta", "evolution", f"http://127.0.0.1:{silent.getsockname()[1]}",
                                       {"apikey": "k"})
        page = open_widget(qtbot, context, MessagesPage)
        qtbot.waitUntil(lambda: page.send_instance.count() == 1, timeout=5000)
        page.to.setText("+51987444555")
        page.text.setPlainText("Hola")
        started = time.perf_counter()
        page.send_button.click()
        assert time.perf_counter() - started < 0.5
        assert not page.send_button.isEnabled() and context.workers.running >= 1
        pending_at_tick: list[int] = []  # a timer on the GUI thread only ticks if that thread is free
        timer = QTimer()
        timer.setInterval(20)
        timer.timeout.connect(lambda: pending_at_tick.append(context.workers.running))
        timer.start()
        qtbot.waitUntil(lambda: len(pending_at_tick) >= 10, timeout=1500)
        timer.stop()
        assert all(running >= 1 for running in pending_at_tick)  # every tick came while the send was waiting
        wait_idle(qtbot, context.workers)
        assert "no respondió a tiempo" in page.banner.text.text()
        assert page.send_button.isEnabled()
    finally:
        silent.close()


def test_subscriptions_show_their_delivery_state_and_resend(qtbot, page, context, messaging_engine, gateway):
    from tests.helpers.messaging_support import Subscriber

    down = Subscriber(status=503)
    down.start()
    try:
        messaging_engine.messaging.subscribe({"instance": "demo", "url": down.url, "events": ["message.received"]})
        emit_elsewhere(gateway, "message.received", "demo").join(10)
        down.wait(1)
        qtbot.waitUntil(lambda: page.subscription_table.rowCount() == 1 and "pendiente"
                        in page.subscription_table.item(0, 4).text(), timeout=5000)
        assert "HTTP 503" in page.subscription_table.item(0, 5).text()
        down.status = 200
        page.subscription_table.selectRow(0)
        page.resend_button.click()
        down.wait(2)
        qtbot.waitUntil(lambda: page.subscription_table.item(0, 4).text() == "al día", timeout=5000)
    finally:
        down.stop()


def test_ajustes_mensajeria_tests_the_listener_address(qtbot, context, messaging_engine):
    from app.gui.settings import SettingsPage

    settings = open_widget(qtbot, context, SettingsPage)
    assert "listener_host" in settings.forms["Mensajería"].fields
    settings.reach_button.click()
    wait_idle(qtbot, context.workers)
    assert settings.banner.tone == "warning" and "solo desde este equipo" in settings.banner.text.text()


def test_an_instance_is_created_and_its_connection_tested_from_the_window(qtbot, page, context, gateway,
                                                                           messaging_engine):
    key = gateway.create_instance("tienda")["hash"]
    page.instance_name.setText("tienda")
    page.gateway.setCurrentIndex(page.gateway.findData("evolution"))
    page.base_url.setText(gateway.base_url)
    page.fields["apikey"].setText(key)
    page.save_instance_button.click()
    wait_idle(qtbot, context.workers)
    qtbot.waitUntil(lambda: page.instance_state_text("tienda") == "sin probar", timeout=5000)
    assert page.fields["apikey"].text() == ""  # the key is not left in the field
    page.test_button.click()
    wait_idle(qtbot, context.workers)
    assert "conectado" in page.banner.text.text()
    qtbot.waitUntil(lambda: page.instance_state_text("tienda") == "conectado", timeout=5000)
    assert messaging_engine._messaging.config("tienda").credentials["apikey"] == key
    assert page.fields["phone_number_id"].isHidden() and not page.fields["remote_name"].isHidden()  # Meta's only for Meta
    page.gateway.setCurrentIndex(page.gateway.findData("meta"))
    assert not page.fields["phone_number_id"].isHidden() and page.fields["remote_name"].isHidden()
    page.gateway.setCurrentIndex(page.gateway.findData("evolution"))
    page.base_url.setText("gateway.local")
    page.save_instance_button.click()
    wait_idle(qtbot, context.workers)
    assert "http://" in page.instance_errors.visible()["base_url"]


def test_the_instance_form_is_built_from_the_gateway_registry(qtbot, context, messaging_engine):
    """Each registered gateway is a choice with its label; its credentials and options are the fields shown, with its
    labels, secrets hidden; what is saved is what its description names. A gateway registered here only (a plug-in)
    gets its fields like the built-in ones."""
    from PySide6.QtWidgets import QLineEdit

    from app.core.messaging.gateways import Gateway, GatewayField, registry

    class Carrier(Gateway):
        kind = "paloma"
        label = "Paloma mensajera"
        address_hint = "http://palomar.local"
        credentials = (GatewayField("anillo", "Anillo de la paloma", secret=True, required=True),)
        options = (GatewayField("palomar", "Palomar", required=True, hint="el de la tienda"),)
        listener_path = "/webhooks/paloma/{name}"

    with registry.registered(Carrier):
        page = open_widget(qtbot, context, MessagesPage)
    labels = [page.gateway.itemText(i) for i in range(page.gateway.count())]
    assert labels == ["Evolution API", "WhatsApp Cloud API (Meta)", "Otro Yupana", "Paloma mensajera"]

    def shown() -> dict[str, str]:
        return {key: page.field_labels[key].text() for key, field in page.fields.items() if not field.isHidden()}

    page.gateway.setCurrentIndex(page.gateway.findData("meta"))
    assert shown() == {"token": "Token de acceso:", "app_secret": "App secret (Meta):",
                       "verify_token": "Token de verificación (Meta):", "phone_number_id": "phone_number_id (Meta):"}
    assert page.fields["app_secret"].echoMode() == QLineEdit.EchoMode.Password
    assert page.fields["verify_token"].echoMode() == QLineEdit.EchoMode.Normal
    page.gateway.setCurrentIndex(page.gateway.findData("yupana"))
    assert shown() == {"token": "Token (Bearer):", "remote_name": "Nombre en la pasarela:"}  # not its webhook secret
    page.gateway.setCurrentIndex(page.gateway.findData("paloma"))
    assert shown() == {"anillo": "Anillo de la paloma:", "palomar": "Palomar:"}
    assert page.base_url.placeholderText() == "http://palomar.local"
    assert page.fields["palomar"].placeholderText() == "el de la tienda"
    page.instance_name.setText("mensajera")
    page.base_url.setText("http://palomar.local")
    page.fields["anillo"].setText("plata")
    page.fields["palomar"].setText("  norte ")
    assert page._instance_values() == ("mensajera", "paloma", "http://palomar.local", {"anillo": "plata"},
                                       {"palomar": "norte"})
    page.gateway.setCurrentIndex(page.gateway.findData("evolution"))
    page.fields["apikey"].setText("k")
    page.fields["remote_name"].setText(" ")
    # An empty optional option is not sent; one offered as a list always has a value (its first by default).
    assert page._instance_values()[3:] == ({"apikey": "k"}, {"events_via": "webhook"})
