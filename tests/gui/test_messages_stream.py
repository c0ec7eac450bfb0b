"""Mensajes: an Evolution instance set to receive its events by the stream (issue 30, item 2), from the instance
form, against the gateway sandbox's Socket.IO stream (real widgets, real sandbox)."""

from __future__ import annotations

import pytest

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
    page.fields["events_via"].setText("stream")


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
