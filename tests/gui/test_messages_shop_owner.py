"""Mensajes in a shop owner's words (issue 32, item 4): WhatsApp «conectado», «número»; the technical names only under
«Avanzado»; a 9-digit mobile accepted as Clientes accepts it; Lima's time; a reply box; no emoji box before an
attachment (real widgets, real listener, real gateway sandbox)."""

from __future__ import annotations

import time
from datetime import datetime

import pytest
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QTableWidget,
    QTabWidget,
    QWidget,
)

from app.core.platform.clock import PERU
from app.gui.messages import MessagesPage
from tests.helpers.gui import open_widget, wait_idle

# What a shop owner should not meet outside «Avanzado» (issue 32, Why item 4).
TECHNICAL = ("webhook", "pasarela", "apikey", "evolution", "docs/", "msg_", "instancia", "suscripci", "http")


@pytest.fixture
def page(qtbot, context, messaging_engine):
    widget = open_widget(qtbot, context, MessagesPage, show=True)
    qtbot.waitUntil(lambda: widget.send_instance.count() == 1, timeout=5000)
    return widget


def texts_shown(page: QWidget) -> list[str]:
    """Every text a person can see on the page, tab by tab: labels, buttons, box titles, choices, placeholders,
    tab names, the visible columns' headers and cells, list items and their tooltips."""
    found: list[str] = []
    tabs: QTabWidget = page.tabs
    for index in range(tabs.count()):
        if not tabs.isTabVisible(index):
            continue
        found.append(tabs.tabText(index))
        tabs.setCurrentIndex(index)
        for widget in page.findChildren(QWidget):
            if not widget.isVisibleTo(page):
                continue
            found.append(widget.toolTip())
            if isinstance(widget, (QLabel, QAbstractButton)):
                found.append(widget.text())
            elif isinstance(widget, QGroupBox):
                found.append(widget.title())
            elif isinstance(widget, QComboBox):
                found += [widget.itemText(i) for i in range(widget.count())]
            elif isinstance(widget, QLineEdit):
                found += [widget.text(), widget.placeholderText()]
            elif isinstance(widget, QTableWidget):
                for column in range(widget.columnCount()):
                    if widget.isColumnHidden(column):
                        continue
                    header = widget.horizontalHeaderItem(column)
                    found.append(header.text() if header else "")
                    found += [widget.item(r, column).text() for r in range(widget.rowCount())
                              if widget.item(r, column) is not None]
            elif isinstance(widget, QListWidget):
                found += [t for i in range(widget.count()) for t in (widget.item(i).text(), widget.item(i).toolTip())]
    tabs.setCurrentIndex(0)
    return [text for text in found if text]


def technical(texts: list[str]) -> list[str]:
    return [text for text in texts if any(word in text.lower() for word in TECHNICAL)]


def test_a_shop_owner_reads_whatsapp_words_and_the_technical_ones_wait_under_avanzado(qtbot, page, context, gateway):
    gateway.emit("message.received", "demo", sender="+51987000777", body="¿Tiene factura?", name="Carmen Flores")
    page.to.setText("987444555")
    page.text.setPlainText("Hola Carmen")
    page.send_button.click()
    gateway.wait_sent(1)
    wait_idle(qtbot, context.workers)
    qtbot.waitUntil(lambda: page.thread_list.count() >= 1 and page.conversations.count() == 2, timeout=5000)
    page.instance_table.selectRow(0)
    page.test_button.click()
    wait_idle(qtbot, context.workers)
    qtbot.waitUntil(lambda: page.instance_state_text("demo") == "conectado", timeout=5000)

    shown = texts_shown(page)
    assert technical(shown) == []
    assert page.status_label.text() == "WhatsApp conectado."
    assert "Número:" in shown and "WhatsApp «demo»: conectado." in shown
    assert page.listener_label.isHidden() and not page.tabs.isTabVisible(page.subscriptions_index)

    page.advanced.setChecked(True)  # the technician's view: gateway, listener, subscriptions, message ids
    wait_idle(qtbot, context.workers)
    advanced = technical(texts_shown(page))
    assert any("Receptor de webhooks" in text for text in advanced)
    assert "Evolution API" in advanced and "Suscripciones" in advanced
    qtbot.waitUntil(lambda: any("msg_" in page.thread_list.item(i).toolTip()
                                for i in range(page.thread_list.count())), timeout=5000)


def test_a_peruvian_mobile_without_51_is_sent_as_clientes_saves_it(qtbot, page, context, gateway, messaging_engine):
    """987654321 was refused in «Enviar» and accepted in Clientes: now one normaliser answers for both."""
    page.to.setText("987 654 321")
    page.text.setPlainText("Su boleta está lista")
    page.send_button.click()
    assert gateway.wait_sent(1)[0]["number"] == "+51987654321"
    wait_idle(qtbot, context.workers)
    assert page.errors.visible() == {}
    assert "+51987654321" in page.banner.text.text() and page.to.text() == "+51987654321"
    saved = messaging_engine.catalog.save_customer({"tipo_documento": "1", "numero": "45678912", "nombre": "Ana",
                                                    "whatsapp": "987 654 321"}, None)
    assert saved.whatsapp == "+51987654321"
    page.to.setText("98765432")  # eight digits: explained under the field, as Clientes explains it
    page.send_button.click()
    wait_idle(qtbot, context.workers)
    assert "98765432" in page.errors.visible()["to"] and len(gateway.sent) == 1


@pytest.fixture
def utc_machine(monkeypatch):
    """A PC whose zone is UTC (as the tested Debian was): Lima's time must not come from the PC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_inbox_times_are_limas(qtbot, utc_machine, page, messaging_engine):
    messaging_engine.messaging.send({"instance": "demo", "to": "+51987444555", "message": "Hola"})
    qtbot.waitUntil(lambda: page.thread_list.count() == 1, timeout=5000)
    stamp = messaging_engine.messaging.messages("demo", "+51987444555")[0].timestamp
    lima = datetime.fromtimestamp(stamp, PERU).strftime("%d/%m %H:%M:%S")
    utc = datetime.fromtimestamp(stamp).strftime("%d/%m %H:%M:%S")
    assert lima != utc
    assert f"({lima})" in page.thread_list.item(0).text() and utc not in page.thread_list.item(0).text()


def test_the_inbox_has_a_reply_box_that_sends_on_a_worker(qtbot, page, context, gateway):
    gateway.emit("message.received", "demo", sender="+51987000777", body="¿Tiene factura?", name="Carmen Flores")
    qtbot.waitUntil(lambda: page.conversations.count() == 1 and page.reply_button.isEnabled(), timeout=5000)
    page.reply_text.setText("Sí, se la envío ahora")
    started = time.perf_counter()
    page.reply_button.click()
    assert time.perf_counter() - started < 0.5
    assert not page.reply_button.isEnabled() and context.workers.running >= 1  # the GUI thread did not send it
    sent = gateway.wait_sent(1)[0]
    assert sent["number"] == "+51987000777" and sent["text"] == "Sí, se la envío ahora"
    wait_idle(qtbot, context.workers)
    assert page.reply_text.text() == "" and page.reply_button.isEnabled()
    qtbot.waitUntil(lambda: any("Sí, se la envío ahora" in t for t in page.thread_texts()), timeout=5000)


def test_no_reply_without_a_conversation(qtbot, context, engine):
    page = open_widget(qtbot, context, MessagesPage)
    assert not page.reply_button.isEnabled() and "Elija una conversación" in page.reply_text.placeholderText()
    assert "no está configurado" in page.status_label.text()


def test_an_attachment_is_named_in_words_with_a_file_icon(qtbot, page, context, gateway, tmp_path):
    pdf = tmp_path / "20100066603-01-F001-9.pdf"
    pdf.write_bytes(b"%PDF-1.4\n%%EOF\n")
    page.to.setText("+51987444555")
    page.text.setPlainText("Su factura")
    page.set_attachment(str(pdf))
    page.send_button.click()
    gateway.wait_sent(1)
    qtbot.waitUntil(lambda: any(pdf.name in t for t in page.thread_texts()), timeout=5000)
    item = next(page.thread_list.item(i) for i in range(page.thread_list.count()) if pdf.name in
                page.thread_list.item(i).text())
    assert f"Adjunto: {pdf.name}" in item.text() and not item.icon().isNull()
    assert all(ord(char) < 0x2000 or char in "✓…" for char in item.text())  # no emoji the font may lack


def test_sending_a_voucher_takes_the_same_number_and_names_no_gateway(qtbot, context, engine, company, gateway):
    """«Enviar por WhatsApp» of a voucher: «demo», not «demo (evolution)»; 987654321 as in Mensajes and Clientes."""
    from tests.gui.test_pdf import open_detail
    from tests.helpers.voucher_matrix import MATRIX

    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    request = next(request for name, request in MATRIX if name == "factura-credito")
    engine.invoicing.sign({"xml": engine.invoicing.generate_xml(request).xml, "certificado_id": certificado_id})
    engine.admin.config_set("listener_port", "0")
    engine.messaging.start_listener()
    gateway.configure(engine)
    detail = open_detail(qtbot, context, engine.invoicing.find_voucher("F001-9", tipo="01"))
    dialog = detail.send_by_whatsapp()
    qtbot.waitUntil(lambda: dialog.send_button.isEnabled(), timeout=10_000)
    assert [dialog.instance.itemText(i) for i in range(dialog.instance.count())] == ["demo"]
    dialog.number.setText("987 654 321")
    dialog.send_button.click()
    qtbot.waitUntil(lambda: dialog.sent is not None, timeout=15_000)
    assert gateway.wait_sent(1)[0]["number"] == "+51987654321" and dialog.sent.to == "+51987654321"


def test_a_changed_listener_port_is_told_in_words_and_in_full_under_avanzado(qtbot, page, context, gateway,
                                                                           messaging_engine):
    """Issue 30, item 6: the port changed (here in Ajustes): the shop owner reads that something must be changed by
    hand without technical words; Avanzado and the status bar's tooltip carry the notice (Meta, the tunnel)."""
    import socket

    from app.gui.main_window import listener_words

    with socket.socket() as probe:  # a port the OS says is free, as the user would type one
        probe.bind(("127.0.0.1", 0))
        chosen = probe.getsockname()[1]
    context.workers.run(page, messaging_engine.admin.config_set, "listener_port", str(chosen))
    wait_idle(qtbot, context.workers)
    qtbot.waitUntil(lambda: "puerto" in page.status_label.text(), timeout=5000)
    assert technical([page.status_label.text()]) == [] and "a mano" in page.status_label.text()
    assert gateway.webhook_of("demo").startswith(f"http://127.0.0.1:{chosen}/")
    page.advanced.setChecked(True)
    wait_idle(qtbot, context.workers)
    qtbot.waitUntil(lambda: f"cambió al puerto {chosen}" in page.listener_label.text(), timeout=5000)
    assert "Meta" in page.listener_label.text() and "túnel" in page.listener_label.text()
    words, tooltip = listener_words(messaging_engine.messaging.listener_state())
    assert words == "WhatsApp: recibiendo mensajes · cambió de puerto" and f"puerto {chosen}" in tooltip
