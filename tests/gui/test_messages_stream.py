"""Mensajes: an Evolution instance set to receive its events by the stream (issue 30, item 2), from the instance
form (a choice, Spanish labels), and each stream's state shown as the engine tells it (StreamChanged through the
bridge's signal, nothing polled), against the gateway sandbox's Socket.IO stream (real widgets, real sandbox)."""

from __future__ import annotations

import pytest

from app.core.api import YupanaError
from app.core.messaging.gateways.evolution import STREAM_OFF
from app.gui.messages import MessagesPage
from tests.helpers.gui import open_widget, wait_idle


@pytest.fixture
def page(qtbot, context, messaging_engine):
    widget = open_widget(qtbot, context, MessagesPage)
    qtbot.waitUntil(lambda: widget.send_instance.count() == 1, timeout=5000)
    return widget


def fill_streaming_instance(page, gateway) -> None:
    key = gateway.create_instance("tienda")["hash"]
    page.instance_name.setText("tienda")
    page.gateway.setCurrentIndex(page.gateway.findData("evolution"))
    page.base_url.setText(gateway.base_url)
    page.fields["apikey"].setText(key)
    page.choices["events_via"].setCurrentIndex(page.choices["events_via"].findData("stream"))


def test_an_instance_set_to_stream_turns_its_stream_on_and_connects(qtbot, page, context, gateway, messaging_engine):
    assert page.field_labels["events_via"].text() == "Recepción de eventos:"
    fill_streaming_instance(page, gateway)
    page.save_instance_button.click()
    wait_idle(qtbot, context.workers)
    page.register_button.click()
    wait_idle(qtbot, context.workers)

    assert "por el stream (Socket.IO)" in page.banner.text.text()
    assert gateway.stream.answer("websocket/find", "tienda", {})[1]["enabled"] is True
    assert gateway.webhook_of("tienda") is None
    assert gateway.stream.wait_clients("/tienda", 1)  # the receiver runs: the saved instance's stream connects
    qtbot.waitUntil(lambda: (messaging_engine.messaging.stream_state("tienda") or None) is not None and
                    messaging_engine.messaging.stream_state("tienda").state == "connected", timeout=10000)


def test_a_server_without_the_stream_is_told_in_mensajes(qtbot, page, context, gateway):
    gateway.stream.enabled = False  # an Evolution without WEBSOCKET_ENABLED
    fill_streaming_instance(page, gateway)
    page.save_instance_button.click()
    wait_idle(qtbot, context.workers)
    page.register_button.click()
    wait_idle(qtbot, context.workers)

    told = page.instance_errors.visible()["instance"]  # the instance's error, under its name
    assert told == STREAM_OFF.format(base=gateway.base_url)
    assert "WEBSOCKET_ENABLED=true" in told


def test_events_via_is_a_choice_of_webhook_or_stream_in_spanish(qtbot, page, context, gateway):
    choice = page.choices["events_via"]
    assert "events_via" not in page.fields  # no free text
    assert [choice.itemData(i) for i in range(choice.count())] == ["webhook", "stream", "stream-global"]
    labels = [choice.itemText(i) for i in range(choice.count())]
    assert labels[0].startswith("Webhook: la pasarela envía") and labels[1].startswith("Stream: Yupana se conecta")
    assert choice.currentData() == "webhook"  # the default
    fill_streaming_instance(page, gateway)
    page.save_instance_button.click()
    wait_idle(qtbot, context.workers)
    [saved] = [i for i in context.engine.messaging.instances() if i.name == "tienda"]
    assert saved.options["events_via"] == "stream"
    choice.setCurrentIndex(0)
    page.instance_table.selectRow([i.name for i in page.instances].index("tienda"))  # the saved choice comes back
    assert choice.currentData() == "stream" and page.stream_state_text("demo") == "webhook"
    page.gateway.setCurrentIndex(page.gateway.findData("meta"))
    assert choice.isHidden()  # Evolution's option only


def test_each_streams_state_is_shown_as_it_changes(qtbot, page, context, gateway, messaging_engine):
    fill_streaming_instance(page, gateway)
    page.save_instance_button.click()
    wait_idle(qtbot, context.workers)
    page.register_button.click()
    wait_idle(qtbot, context.workers)
    qtbot.waitUntil(lambda: page.stream_state_text("tienda") == "stream conectado", timeout=10000)
    assert page.stream_state_text("demo") == "webhook"  # the sandbox's own instance receives by webhook
    assert page.instance_table.isColumnHidden(4)  # technical: under «Avanzado»
    page.advanced.setChecked(True)
    assert not page.instance_table.isColumnHidden(4)
    assert page.instance_table.horizontalHeaderItem(4).text() == "Recepción de eventos"

    gateway.stream.enabled = False  # Evolution restarted without its stream: the connection drops, retries fail
    gateway.stream.stop()
    qtbot.waitUntil(lambda: page.stream_state_text("tienda") == "stream reconectando…", timeout=10000)
    qtbot.waitUntil(lambda: bool(page.instance_table.item(
        [i.name for i in page.instances].index("tienda"), 4).toolTip()), timeout=10000)
    row = [i.name for i in page.instances].index("tienda")
    assert "WEBSOCKET_ENABLED=true" in page.instance_table.item(row, 4).toolTip()  # why, on the cell
    assert "La conexión de eventos de «tienda» no está activa" in page.status_label.text()

    gateway.stream.enabled = True
    qtbot.waitUntil(lambda: page.stream_state_text("tienda") == "stream conectado", timeout=15000)
    assert "conexión de eventos" not in page.status_label.text()

    messaging_engine.messaging.stop_listener()  # the receiver stops, and the streams with it
    qtbot.waitUntil(lambda: page.stream_state_text("tienda") == "stream desconectado", timeout=10000)


def test_a_page_opened_after_the_stream_connected_shows_it(qtbot, context, gateway, messaging_engine):
    key = gateway.create_instance("tienda")["hash"]
    messaging_engine.messaging.save_instance("tienda", "evolution", gateway.base_url, {"apikey": key},
                                             {"events_via": "stream"})
    messaging_engine.messaging.register_webhook("tienda")
    assert gateway.stream.wait_clients("/tienda", 1)
    qtbot.waitUntil(lambda: messaging_engine.messaging.stream_state("tienda").state == "connected", timeout=10000)
    late = open_widget(qtbot, context, MessagesPage)  # no event will come: the state is read once on opening
    qtbot.waitUntil(lambda: late.stream_state_text("tienda") == "stream conectado", timeout=5000)


def test_a_value_not_offered_is_refused_naming_the_field(messaging_engine, gateway):
    with pytest.raises(YupanaError) as refused:
        messaging_engine.messaging.save_instance("tienda", "evolution", gateway.base_url, {"apikey": "k"},
                                                 {"events_via": "socket"})
    assert refused.value.details[0].field == "events_via"
    assert "«socket» no es una opción de «Recepción de eventos»" in refused.value.message
