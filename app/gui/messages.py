"""Mensajes: WhatsApp for a shop owner (the conversations with a reply box, a send form, whether WhatsApp is
connected), and under «Avanzado» the technical parts: the gateways and their instances, the webhook listener and
the subscriptions of operation 5.

Everything that touches a gateway or the database runs on the worker pool; the listener's events
reach this page through the engine's bus (app.gui.bridge), so the inbox and the instances' states
update by themselves. Numbers are normalised as Clientes does (app.core.api.normalise_whatsapp: a 9-digit Peruvian
mobile gets +51); times are Lima's (clock.PERU), as on the vouchers.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.api import (
    CONTRACT_EVENTS,
    STREAM_CONNECTED,
    STREAM_CONNECTING,
    STREAM_STOPPED,
    STREAM_WAITING,
    VIA_WEBHOOK,
    clock,
    events,
    invalid,
    normalise_whatsapp,
)

from .context import Context
from .dialogs import choose_path
from .widgets import FieldErrors, MessageBanner, form_tab, heading

if TYPE_CHECKING:
    from app.core.api import (
        ChatSendResult,
        Conversation,
        Engine,
        Event,
        GatewayDescription,
        GatewayField,
        Instance,
        ListenerState,
        Message,
        StreamState,
        Subscription,
    )

SENT, DELIVERED, READ = "sent", "delivered", "read"  # a message's status (docs/messaging.md)
TICKS = {SENT: "✓", DELIVERED: "✓✓", READ: "✓✓"}
READ_COLOUR = "#1e88e5"
GREEN, ORANGE, RED, GREY = "#2e7d32", "#e65100", "#c62828", "#777"
STATES = {"open": ("conectado", GREEN), "close": ("desconectado", RED),
          "connecting": ("conectando…", ORANGE), "unknown": ("sin probar", GREY)}
STATE_COLUMN, EVENTS_COLUMN = 3, 4  # the instance table's WhatsApp state and how its events arrive
# The instance table's gateway, address and «Recepción de eventos» (webhook or stream): under «Avanzado» only (a shop
# owner reads in the status line when a stream is not connected).
ADVANCED_COLUMNS = (1, 2, EVENTS_COLUMN)
# An event stream's state (StreamState) in a shop owner's words: (text, colour); `reconnecting` after a connection
# was lost. A stream that is not running (the receiver stopped) is disconnected.
STREAM_WORDS = {STREAM_CONNECTED: ("conectado", GREEN), STREAM_CONNECTING: ("conectando…", ORANGE),
                STREAM_WAITING: ("desconectado", RED), STREAM_STOPPED: ("desconectado", RED)}
RECONNECTING = ("reconectando…", ORANGE)
SECRET_HINT = "se guarda cifrada; vacío: conservar la actual"
DELIVERY_STATES = {"active": "al día", "failing": "fallando", "disabled": "desactivada (410)"}
REFRESH_EVENTS = {*CONTRACT_EVENTS, events.DESK_RECONNECTED, events.MESSAGE_SENT, events.INSTANCE_SAVED, events.SUBSCRIPTION_CHANGED,
                  events.LISTENER_CHANGED}


def stream_words(state: StreamState | None) -> tuple[str, str]:
    """What Mensajes shows for an instance's event stream, and its colour: conectado, conectando…, reconectando… or
    desconectado (None: no stream runs, the receiver is stopped)."""
    if state is None:
        return STREAM_WORDS[STREAM_STOPPED]
    if state.reconnecting and state.state in (STREAM_CONNECTING, STREAM_WAITING):
        return RECONNECTING
    return STREAM_WORDS.get(state.state, (state.state, GREY))


def _time(stamp: float | None) -> str:
    """A moment in Lima's time, as the vouchers show it (not the PC's zone, not UTC)."""
    return datetime.fromtimestamp(stamp, clock.PERU).strftime("%d/%m %H:%M:%S") if stamp else "—"


def whatsapp_number(typed: str) -> str:
    """The number typed in «Número», normalised the way Clientes saves it (987654321 → +51987654321); what is
    wrong with it is shown under the field."""
    try:
        return normalise_whatsapp(typed) or ""
    except ValueError as exc:
        raise invalid("to", str(exc)) from None


def send_text(engine: Engine, instance: str, typed: str, text: str, media_path: str | None) -> ChatSendResult:
    """«Enviar» (on a worker): the number normalised as everywhere, then the engine's send."""
    return engine.messaging.send_message(instance, whatsapp_number(typed), text, media_path=media_path)


def reply(engine: Engine, instance: str, peer: str, text: str) -> ChatSendResult:
    """The inbox's reply box (on a worker): operation 4, to the open conversation."""
    return engine.messaging.send({"instance": instance, "to": peer, "message": text})


def load_inbox(engine: Engine, instance: str | None, peer: str | None) -> dict[str, Any]:
    """Read (on a worker) the conversations and the open one's messages."""
    conversations = engine.messaging.conversations()
    if peer is None and conversations:
        instance, peer = conversations[0].instance, conversations[0].peer
    messages = engine.messaging.messages(instance, peer) if peer else []
    return {"conversations": conversations, "instance": instance, "peer": peer, "messages": messages}


class MessagesPage(QWidget):
    def __init__(self, context: Context) -> None:
        super().__init__()
        self.context = context
        self.engine = context.engine
        self.attachment: str | None = None
        self.open_conversation: tuple[str | None, str | None] = (None, None)
        self.instances: list[Instance] = []
        self.streams: dict[str, StreamState] = {}  # the event streams' states, by instance (told by StreamChanged)
        # The gateways' labels and their instances' fields, from the gateway registry (in memory, no I/O).
        self.gateways: dict[str, GatewayDescription] = {g.name: g for g in self.engine.messaging.gateways()}
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Mensajes de WhatsApp"))
        self.banner = MessageBanner()
        layout.addWidget(self.banner)
        top = QHBoxLayout()
        self.status_label = QLabel("WhatsApp: …")  # in a shop owner's words: connected or not
        self.status_label.setWordWrap(True)
        self.advanced = QCheckBox("Avanzado")
        self.advanced.setToolTip("Muestra los datos técnicos de la conexión con WhatsApp")
        self.connect_whatsapp_button = QPushButton("Conectar WhatsApp")  # pairing by QR, Meta (connect_whatsapp.py)
        self.connect_whatsapp_button.clicked.connect(self.open_connect_whatsapp)
        top.addWidget(self.status_label, 1)
        top.addWidget(self.connect_whatsapp_button)
        top.addWidget(self.advanced)
        layout.addLayout(top)
        self.listener_label = QLabel("Receptor de webhooks: …")  # technical: under «Avanzado»
        self.listener_label.setWordWrap(True)
        layout.addWidget(self.listener_label)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._inbox_tab(), "Conversaciones")
        self.tabs.addTab(self._send_tab(), "Enviar")
        self.tabs.addTab(self._instances_tab(), "Conexión")
        self.subscriptions_index = self.tabs.addTab(self._subscriptions_tab(), "Suscripciones")
        layout.addWidget(self.tabs, 1)
        self.listener_state: ListenerState | None = None
        self.advanced.toggled.connect(self._show_advanced)
        self._show_advanced(False)
        # A burst of events (a campaign's read receipts) refreshes once.
        self.refresh_timer = QTimer(self)
        self.refresh_timer.setSingleShot(True)
        self.refresh_timer.setInterval(50)
        self.refresh_timer.timeout.connect(self.refresh)
        context.events.occurred.connect(self._on_event)
        self.refresh()

    def open_connect_whatsapp(self) -> QDialog:
        from .connect_whatsapp import ConnectWhatsAppDialog

        dialog = ConnectWhatsAppDialog(self.context, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    # ------------------------------------------------------------ inbox

    def _inbox_tab(self) -> QWidget:
        self.conversations = QListWidget()
        self.conversations.currentItemChanged.connect(self._conversation_chosen)
        self.thread_list = QListWidget()
        self.thread_list.setWordWrap(True)
        self.thread_list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.reply_text = QLineEdit()
        self.reply_text.setPlaceholderText("Escriba su respuesta…")
        self.reply_button = QPushButton("Responder")
        self.reply_text.returnPressed.connect(self.send_reply)
        self.reply_button.clicked.connect(self.send_reply)
        self.reply_errors = FieldErrors()
        reply_row = QHBoxLayout()
        reply_row.addWidget(self.reply_errors.wrap(self.reply_text, "message"), 1)
        reply_row.addWidget(self.reply_button, 0, Qt.AlignmentFlag.AlignTop)
        thread = QWidget()
        thread_layout = QVBoxLayout(thread)
        thread_layout.setContentsMargins(0, 0, 0, 0)
        thread_layout.addWidget(self.thread_list, 1)
        thread_layout.addLayout(reply_row)
        splitter = QSplitter()
        splitter.addWidget(self.conversations)
        splitter.addWidget(thread)
        splitter.setStretchFactor(1, 2)
        self._update_reply()
        return splitter

    def _update_reply(self) -> None:
        instance, peer = self.open_conversation
        can = bool(instance and peer and peer.startswith("+"))
        self.reply_text.setEnabled(can)
        self.reply_button.setEnabled(can)
        self.reply_text.setPlaceholderText(
            "Escriba su respuesta…" if can else
            "Elija una conversación para responder" if not peer else
            "No se puede responder: WhatsApp aún no comparte el número de esta persona")

    def send_reply(self) -> None:
        instance, peer = self.open_conversation
        text = self.reply_text.text().strip()
        self.reply_errors.clear()
        if not (instance and peer and text):
            return
        self.banner.clear()
        self.context.workers.run(self, reply, self.engine, instance, peer, text, done=self._replied,
                                 failed=self._reply_failed, busy=[self.reply_button, self.reply_text])

    def _replied(self, result: ChatSendResult) -> None:
        self.reply_text.clear()
        self.open_conversation = (self.open_conversation[0], result.to)
        self.refresh()

    def _reply_failed(self, exc: BaseException) -> None:
        self.reply_errors.show(exc)
        self.banner.show_error(exc)

    def _conversation_chosen(self, item: QListWidgetItem | None, _previous: Any = None) -> None:
        if item is None or self._filling:
            return
        instance, peer = item.data(Qt.ItemDataRole.UserRole)
        if (instance, peer) != self.open_conversation:
            self.open_conversation = (instance, peer)
            self.to.setText(peer)
            self._update_reply()
            self.refresh()

    _filling = False

    def _show_inbox(self, inbox: dict[str, Any]) -> None:
        self._filling = True
        try:
            self.open_conversation = (inbox["instance"], inbox["peer"])
            self._update_reply()
            self.conversations.clear()
            conversation: Conversation
            for conversation in inbox["conversations"]:
                count = f"{conversation.messages} mensaje" + ("s" if conversation.messages != 1 else "")
                label = f"{conversation.name or conversation.peer} · {conversation.peer}\n{count}"
                item = QListWidgetItem(label)
                item.setData(Qt.ItemDataRole.UserRole, (conversation.instance, conversation.peer))
                self.conversations.addItem(item)
                if (conversation.instance, conversation.peer) == self.open_conversation:
                    self.conversations.setCurrentItem(item)
            self.thread_list.clear()
            for message in inbox["messages"]:
                self.thread_list.addItem(self._message_item(message, self.advanced.isChecked()))
            self.thread_list.scrollToBottom()
        finally:
            self._filling = False

    def _message_item(self, message: Message, advanced: bool = False) -> QListWidgetItem:
        when = _time(message.timestamp)
        text = message.body or ""
        if message.media:  # words and the style's file icon: an emoji clip shows as a box in many fonts
            text = f"Adjunto: {message.media.rsplit('/', 1)[-1]}\n{text}".strip()
        if message.direction == "in":
            item = QListWidgetItem(f"{message.name or message.peer} ({when}):\n{text}")
        else:
            ticks = TICKS.get(message.status, "")
            item = QListWidgetItem(f"Usted ({when}) {ticks}:\n{text}")
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight)
            if message.status == READ:
                item.setForeground(QColor(READ_COLOUR))
        if message.media:
            item.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_FileIcon))
        item.setData(Qt.ItemDataRole.UserRole, message.id)
        status = {SENT: "Enviado", DELIVERED: "Entregado", READ: "Leído",
                  "received": "Recibido"}.get(message.status, message.status)
        item.setToolTip(f"{status} · {message.id}" if advanced else status)  # message ids: technical
        return item

    def thread_texts(self) -> list[str]:
        return [self.thread_list.item(i).text() for i in range(self.thread_list.count())]

    # ------------------------------------------------------------ send

    def _send_tab(self) -> QWidget:
        tab, form, self.errors = form_tab()
        self.send_instance = QComboBox()
        self.to = QLineEdit()
        self.to.setPlaceholderText("987654321 (celular de Perú) o +34 612 345 678 (otro país)")
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText("Texto del mensaje")
        self.text.setMaximumHeight(120)
        self.attachment_label = QLabel("Sin adjunto")
        self.attach_button = QPushButton("Adjuntar comprobante…")
        self.clear_attachment = QPushButton("Quitar")
        self.send_button = QPushButton("Enviar")
        attach = QHBoxLayout()
        attach.addWidget(self.attachment_label, 1)
        attach.addWidget(self.attach_button)
        attach.addWidget(self.clear_attachment)
        form.addRow("Desde:", self.errors.wrap(self.send_instance, "instance"))
        form.addRow("Número:", self.errors.wrap(self.to, "to"))
        form.addRow("Mensaje:", self.errors.wrap(self.text, "message"))
        form.addRow("Adjunto:", self.errors.wrap(attach, "media"))
        form.addRow("", self.send_button)
        self.attach_button.clicked.connect(self._choose_attachment)
        self.clear_attachment.clicked.connect(lambda: self.set_attachment(None))
        self.send_button.clicked.connect(self.send)
        return tab

    def _choose_attachment(self) -> None:
        choose_path(self, "Adjuntar comprobante", self.set_attachment,
                    name_filter="Comprobantes (*.xml *.pdf *.zip);;Todos los archivos (*)")

    def set_attachment(self, path: str | None) -> None:
        self.attachment = path or None
        self.attachment_label.setText(path.rsplit("/", 1)[-1] if path else "Sin adjunto")

    def send(self) -> None:
        self.errors.clear()
        self.banner.clear()
        instance = self.send_instance.currentData() or ""
        self.context.workers.run(self, send_text, self.engine, instance, self.to.text(),
                                 self.text.toPlainText().strip(), self.attachment,
                                 done=self._sent, failed=self._send_failed, busy=[self.send_button])

    def _sent(self, result: ChatSendResult) -> None:
        self.to.setText(result.to)
        self.banner.show_message(f"Mensaje enviado por WhatsApp al {result.to}.", "success")
        self.text.clear()
        self.set_attachment(None)
        self.open_conversation = (self.send_instance.currentData(), result.to)
        self.refresh()

    def _send_failed(self, exc: BaseException) -> None:
        self.errors.show_or_tell(exc, self.banner)

    # ------------------------------------------------------------ instances

    def _instances_tab(self) -> QWidget:
        tab = QWidget()
        layout = QVBoxLayout(tab)
        self.instance_table = QTableWidget(0, 5)
        self.instance_table.setHorizontalHeaderLabels(["Nombre", "Pasarela", "Dirección", "Estado",
                                                       "Recepción de eventos"])
        self.instance_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.instance_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.instance_table.horizontalHeader().setStretchLastSection(True)
        self.instance_table.itemSelectionChanged.connect(self._instance_chosen)
        layout.addWidget(self.instance_table, 1)
        self.test_button = QPushButton("Probar conexión")
        self.test_button.setToolTip("Comprueba si el WhatsApp elegido en la tabla está conectado")
        layout.addWidget(self.test_button, 0, Qt.AlignmentFlag.AlignRight)
        box = QGroupBox("Avanzado: instancia de la pasarela de WhatsApp")
        self.advanced_box = box
        form = QFormLayout(box)
        self.instance_errors = FieldErrors()
        self.instance_name = QLineEdit()
        self.gateway = QComboBox()
        for gateway in self.gateways.values():
            self.gateway.addItem(gateway.label, gateway.name)
        self.base_url = QLineEdit()
        form.addRow("Nombre:", self.instance_errors.wrap(self.instance_name, "instance"))
        form.addRow("Pasarela:", self.gateway)
        form.addRow("Dirección:", self.instance_errors.wrap(self.base_url, "base_url"))
        # One row per credential or option key of any gateway (credentials first); the chosen gateway's are shown,
        # with its labels.
        # An option offered as a list (its `choices`) is a drop-down of its Spanish labels (`self.choices`).
        self.fields: dict[str, QLineEdit] = {}
        self.choices: dict[str, QComboBox] = {}
        self.field_labels: dict[str, QLabel] = {}
        self._field_rows: dict[str, QWidget] = {}
        entered = [f for g in self.gateways.values() for f in g.credentials if f.entered]
        entered += [f for g in self.gateways.values() for f in g.options]
        for field in entered:
            if field.key in self.field_labels:
                continue
            widget: QWidget
            if field.choices:
                widget = self.choices[field.key] = QComboBox()
                for value, label in field.choices:
                    self.choices[field.key].addItem(label, value)
            else:
                widget = self.fields[field.key] = QLineEdit()
            self.field_labels[field.key] = QLabel()
            self._field_rows[field.key] = self.instance_errors.wrap(widget, field.key)
            form.addRow(self.field_labels[field.key], self._field_rows[field.key])
        buttons = QHBoxLayout()
        self.save_instance_button = QPushButton("Guardar")
        self.register_button = QPushButton("Registrar webhook en la pasarela")
        for button in (self.save_instance_button, self.register_button):
            buttons.addWidget(button)
        form.addRow("", buttons)
        layout.addWidget(box)
        self.gateway.currentIndexChanged.connect(self._gateway_changed)
        self.save_instance_button.clicked.connect(self.save_instance)
        self.test_button.clicked.connect(self.test_connection)
        self.register_button.clicked.connect(self.register_webhook)
        self._gateway_changed()
        return tab

    def _gateway(self) -> GatewayDescription:
        return self.gateways[self.gateway.currentData()]

    def _entered(self, gateway: GatewayDescription) -> list[GatewayField]:
        """The fields the form asks for: the credentials the user types, then the options."""
        return [*(f for f in gateway.credentials if f.entered), *gateway.options]

    def _gateway_changed(self) -> None:
        gateway = self._gateway()
        self.base_url.setPlaceholderText(gateway.address_hint)
        shown = {f.key: f for f in self._entered(gateway)}
        for key, label in self.field_labels.items():
            field = shown.get(key)
            widget: QWidget = self.fields[key] if key in self.fields else self.choices[key]
            for part in (widget, self._field_rows[key], label):
                part.setVisible(field is not None)
            if field is not None:
                label.setText(f"{field.label}:")
            if field is not None and key in self.fields:
                self.fields[key].setEchoMode(QLineEdit.EchoMode.Password if field.secret
                                             else QLineEdit.EchoMode.Normal)
                self.fields[key].setPlaceholderText(field.hint or (SECRET_HINT if field.secret else ""))

    def _clear_secrets(self) -> None:
        """Typed secrets are not left in the form."""
        for gateway in self.gateways.values():
            for field in gateway.credentials:
                if field.secret and field.key in self.fields:
                    self.fields[field.key].clear()

    def _instance_chosen(self) -> None:
        rows = self.instance_table.selectionModel().selectedRows()
        if not rows:
            return
        instance = self.instances[rows[0].row()]
        self.instance_name.setText(instance.name)
        found = self.gateway.findData(instance.gateway)
        if found >= 0:  # a gateway no longer registered keeps the form as it is
            self.gateway.setCurrentIndex(found)
        self.base_url.setText(instance.base_url)
        for gateway in self.gateways.values():
            for option in gateway.options:
                self._set_option(option.key, str(instance.options.get(option.key, "")))
        self._clear_secrets()

    def _set_option(self, key: str, value: str) -> None:
        if key in self.choices:  # a value this version does not offer shows the default (the first)
            self.choices[key].setCurrentIndex(max(0, self.choices[key].findData(value.strip().lower())))
        else:
            self.fields[key].setText(value)

    def option_value(self, key: str) -> str:
        """What the form holds for an option: the chosen value of a list, the typed text of a field."""
        if key in self.choices:
            return str(self.choices[key].currentData() or "")
        return self.fields[key].text().strip()

    def _instance_values(self) -> tuple[str, str, str, dict[str, str], dict[str, Any]]:
        gateway = self._gateway()
        credentials = {f.key: self.fields[f.key].text() for f in gateway.credentials if f.entered}
        options: dict[str, Any] = {}
        for option in gateway.options:
            value = self.option_value(option.key)
            if value or option.required:
                options[option.key] = value
        return self.instance_name.text().strip(), gateway.name, self.base_url.text().strip(), credentials, options

    def save_instance(self) -> None:
        self.instance_errors.clear()
        self.banner.clear()
        values = self._instance_values()
        self.context.workers.run(self, self.engine.messaging.save_instance, *values,
                                 done=lambda saved: self._instance_done(f"Instancia «{saved.name}» guardada."),
                                 failed=self._instance_failed, busy=[self.save_instance_button])

    def test_connection(self) -> None:
        name = self.instance_name.text().strip()
        self.banner.clear()
        self.context.workers.run(self, self.engine.messaging.test_connection, name,
                                 done=lambda state: self._instance_done(
                                     f"WhatsApp «{name}»: {STATES.get(state, (state,))[0]}."),
                                 failed=self._instance_failed, busy=[self.test_button])

    def register_webhook(self) -> None:
        name = self.instance_name.text().strip()
        self.banner.clear()
        streams = "events_via" in self.choices and self.option_value("events_via") != VIA_WEBHOOK
        self.context.workers.run(self, self.engine.messaging.register_webhook, name,
                                 done=lambda url: self._instance_done(
                                     f"La pasarela enviará los eventos de «{name}» por el stream (Socket.IO): Yupana "
                                     "los lee con una conexión saliente, sin túnel." if streams else
                                     f"La pasarela enviará los eventos de «{name}» a {url.split('?')[0]}."),
                                 failed=self._instance_failed, busy=[self.register_button])

    def _instance_done(self, text: str) -> None:
        self.banner.show_message(text, "success")
        self._clear_secrets()
        self.refresh()

    def _instance_failed(self, exc: BaseException) -> None:
        self.instance_errors.show_or_tell(exc, self.banner)

    def _show_instances(self, instances: list[Instance]) -> None:
        self.instances = instances
        current = self.send_instance.currentData()
        self.send_instance.clear()
        self.instance_table.setRowCount(len(instances))
        for index, instance in enumerate(instances):
            gateway = self.gateways.get(instance.gateway)
            label = gateway.label if gateway is not None else instance.gateway  # a gateway no longer registered
            self.send_instance.addItem(instance.name, instance.name)
            state = instance.state or ""  # no state yet: an empty cell
            text, colour = STATES.get(state, (state, "#777"))
            cells = [instance.name, label, instance.base_url, text]
            for column, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if column == STATE_COLUMN:
                    item.setForeground(QColor(colour))
                self.instance_table.setItem(index, column, item)
            self._show_events_via(index, instance)
        found = self.send_instance.findData(current)
        if found >= 0:
            self.send_instance.setCurrentIndex(found)
        self._show_status()

    def streams_events(self, instance: Instance) -> bool:
        """Whether the instance receives its events over a stream (Evolution's Socket.IO), not by webhook."""
        return str(instance.options.get("events_via") or VIA_WEBHOOK).strip().lower() != VIA_WEBHOOK

    def _show_events_via(self, row: int, instance: Instance) -> None:
        """The «Recepción de eventos» cell: «webhook», or the stream's state as it is now."""
        if not self.streams_events(instance):
            item = QTableWidgetItem("webhook")
        else:
            state = self.streams.get(instance.name)
            text, colour = stream_words(state)
            item = QTableWidgetItem(f"stream {text}")
            item.setForeground(QColor(colour))
            if state is not None and state.detail:
                item.setToolTip(state.detail)
        self.instance_table.setItem(row, EVENTS_COLUMN, item)

    def _show_streams(self, states: list[StreamState]) -> None:
        """The running streams' states, read (on a worker) when the page refreshes: they fill in the streams no event
        has told yet (started before the page); a state an event told is newer than the read and is kept."""
        for state in states:
            self.streams.setdefault(state.instance, state)
        self._streams_changed()

    def _stream_changed(self, state: StreamState) -> None:
        self.streams[state.instance] = state
        self._streams_changed()

    def _streams_changed(self) -> None:
        for index, instance in enumerate(self.instances):
            self._show_events_via(index, instance)
        self._show_status()

    def stream_state_text(self, name: str) -> str | None:
        """The «Recepción de eventos» cell of an instance, as shown."""
        return self._cell_text(name, EVENTS_COLUMN)

    def _cell_text(self, name: str, column: int) -> str | None:
        """An instance's cell of the table, as shown (None: no such instance, or an empty cell)."""
        for index, instance in enumerate(self.instances):
            if instance.name == name:
                item = self.instance_table.item(index, column)
                return item.text() if item is not None else None
        return None

    def _show_status(self) -> None:
        """One line a shop owner reads: is WhatsApp connected, will customers' messages arrive."""
        if not self.instances:
            text = ("WhatsApp no está configurado en este entorno: pida a quien instaló Yupana que lo configure "
                    "(Mensajes → Avanzado).")
        else:
            states = {i.name: STATES.get(i.state or "unknown", (i.state or "",))[0] for i in self.instances}
            if len(states) == 1:
                text = f"WhatsApp {next(iter(states.values()))}."
                if self.instances[0].state in (None, "", "unknown"):
                    text = "WhatsApp sin probar: pulse «Probar conexión» en la pestaña Conexión."
            else:
                text = "WhatsApp: " + ", ".join(f"{name} {state}" for name, state in states.items()) + "."
        listener = self.listener_state
        if listener is not None and listener.state != "running":
            text += " Los mensajes que le escriban no llegarán a Yupana hasta resolverlo (vea Avanzado)."
        if listener is not None and listener.notice:  # its port changed: the details (Meta, a tunnel) in Avanzado
            text += " Yupana cambió el puerto donde recibe los mensajes: vea Avanzado, algo debe cambiarse a mano."
        cut = [i.name for i in self.instances if self.streams_events(i)
               and stream_words(self.streams.get(i.name))[0] != STREAM_WORDS[STREAM_CONNECTED][0]]
        if cut and listener is not None and listener.state == "running":
            names = ", ".join(f"«{name}»" for name in cut)
            text += (f" La conexión de eventos de {names} no está activa: los mensajes llegarán al reconectarse "
                     "(Yupana reintenta solo; vea Conexión).")
        self.status_label.setText(text)

    def _show_advanced(self, shown: bool) -> None:
        """The technical parts (gateway, addresses, webhooks, subscriptions, message ids) only under «Avanzado»."""
        self.listener_label.setVisible(shown)
        self.advanced_box.setVisible(shown)
        self.tabs.setTabVisible(self.subscriptions_index, shown)
        for column in ADVANCED_COLUMNS:
            self.instance_table.setColumnHidden(column, not shown)
        if self.thread_list.count():  # the messages' tooltips show their ids under «Avanzado»
            self.refresh()

    def instance_state_text(self, name: str) -> str | None:
        return self._cell_text(name, STATE_COLUMN)

    # ------------------------------------------------------------ subscriptions

    def _subscriptions_tab(self) -> QWidget:
        tab = QWidget()
        layout = QVBoxLayout(tab)
        note = QLabel("Las suscripciones se crean con la operación 5 (POST /api/v1/chat/webhook). Cada evento se "
                      "entrega firmado (Standard Webhooks) y se reintenta hasta 10 horas si el destino no responde.")
        note.setWordWrap(True)
        layout.addWidget(note)
        self.subscription_table = QTableWidget(0, 7)
        self.subscription_table.setHorizontalHeaderLabels(
            ["Id", "Instancia", "URL", "Eventos", "Estado", "Último intento", "Próximo reintento"])
        self.subscription_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.subscription_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.subscription_table.horizontalHeader().setStretchLastSection(True)
        layout.addWidget(self.subscription_table, 1)
        self.resend_button = QPushButton("Reenviar")
        self.resend_button.setToolTip("Vuelve a intentar ahora las entregas pendientes o fallidas de la suscripción")
        self.resend_button.clicked.connect(self.resend)
        layout.addWidget(self.resend_button, 0, Qt.AlignmentFlag.AlignRight)
        self.subscriptions: list[Subscription] = []
        return tab

    def _show_subscriptions(self, subscriptions: list[Subscription]) -> None:
        self.subscriptions = subscriptions
        self.subscription_table.setRowCount(len(subscriptions))
        for index, subscription in enumerate(subscriptions):
            state = DELIVERY_STATES.get(subscription.state or "", subscription.state or "")
            if subscription.pending:
                state += f" · {subscription.pending} pendiente(s)"
            last = _time(subscription.last_attempt_at)
            if subscription.last_status:
                last += f" (HTTP {subscription.last_status})"
            elif subscription.last_error:
                last += " (sin respuesta)"
            cells = [subscription.id, subscription.instance, subscription.url, ", ".join(subscription.events), state,
                     last, _time(subscription.next_attempt_at) if subscription.pending else "—"]
            for column, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if column == 4 and subscription.state != "active":
                    item.setForeground(QColor("#c62828"))
                self.subscription_table.setItem(index, column, item)

    def resend(self) -> None:
        rows = self.subscription_table.selectionModel().selectedRows()
        if not rows:
            self.banner.show_message("Elija una suscripción en la tabla para reenviar sus entregas.", "warning")
            return
        sub_id = self.subscriptions[rows[0].row()].id
        self.context.workers.run(self, self.engine.messaging.resend, sub_id,
                                 done=lambda n: self.banner.show_message(f"{n} entrega(s) de {sub_id} se reintentan "
                                                                         "ahora.", "info"),
                                 busy=[self.resend_button])

    # ------------------------------------------------------------ live refresh

    def _on_event(self, name: str, payload: Event) -> None:
        if isinstance(payload, events.StreamChanged):  # told with its state: shown as it is, nothing read
            self._stream_changed(payload.stream)
        elif name in REFRESH_EVENTS:
            self.refresh_timer.start()
        elif isinstance(payload, events.SettingsChanged) and payload.key == "environment":
            self.open_conversation = (None, None)  # each environment has its own instances and inbox
            self.refresh_timer.start()

    def refresh(self) -> None:
        if not self.context.events.active:  # closing: a late timer must not start work on a closed engine
            return
        instance, peer = self.open_conversation
        self.context.workers.run(self, load_inbox, self.engine, instance, peer, done=self._show_inbox)
        self.context.workers.run(self, self.engine.messaging.instances, done=self._show_instances)
        self.context.workers.run(self, self.engine.messaging.subscriptions, done=self._show_subscriptions)
        self.context.workers.run(self, self.engine.messaging.listener_state, done=self._show_listener)
        self.context.workers.run(self, self.engine.messaging.stream_states, done=self._show_streams)

    def _show_listener(self, state: ListenerState) -> None:
        self.listener_state = state
        self._show_status()
        if state.state == "running":
            text = f"Receptor de webhooks activo en {state.url}."
            if state.exposed:
                text += (" ⚠ Está abierto a la red: cualquiera en ella puede intentar enviarle datos (se verifican "
                         "las firmas).")
            else:
                text += (" Solo este equipo lo alcanza: una pasarela en la nube necesita una dirección pública "
                         "(Ajustes → Mensajería, docs/messaging.md).")
        elif state.state == "error":
            text = f"Receptor de webhooks con error: {state.error}"
        else:
            text = "Receptor de webhooks detenido: los eventos de la pasarela no llegarán hasta iniciarlo."
        if state.notice:  # its port changed: what Yupana updated and what must be changed by hand
            text += " " + state.notice
        self.listener_label.setText(text)
