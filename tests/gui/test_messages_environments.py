"""Mensajes follows the environment in use: a sandbox instance and its inbox go when beta is chosen and come back."""

from __future__ import annotations

from app.sandbox.gateway import DEMO_INSTANCE
from tests.helpers.gui import open_widget


def test_mensajes_shows_the_chosen_environments_instances_and_inbox(qtbot, context, messaging_engine, gateway):
    from app.gui.messages import MessagesPage

    page = open_widget(qtbot, context, MessagesPage)
    assert gateway.emit("message.received", DEMO_INSTANCE, body="Hola sandbox") == [200]
    qtbot.waitUntil(lambda: page.send_instance.count() == 1 and page.conversations.count() == 1, timeout=5000)
    messaging_engine.admin.config_set("environment", "beta")
    qtbot.waitUntil(lambda: page.send_instance.count() == 0 and page.conversations.count() == 0, timeout=5000)
    assert page.instance_table.rowCount() == 0
    messaging_engine.admin.config_set("environment", "sandbox")
    qtbot.waitUntil(lambda: page.send_instance.count() == 1 and page.conversations.count() == 1, timeout=5000)
