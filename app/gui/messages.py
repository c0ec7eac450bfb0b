"""Mensajes: WhatsApp instances, a send form, the live inbox and the subscriptions of operation 5.

Everything that touches a gateway or the database runs on the worker pool; the listener's events
reach this page through the engine's bus (app.gui.bridge), so the inbox and the instances' states
update by themselves.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
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
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.api import CONTRACT_EVENTS, GATEWAYS, events

from .context import Context
from .dialogs import choose_path
from .widgets import FieldErrors, MessageBanner, form_tab, heading

if TYPE_CHECKING:
    from app.core.api import ChatSendResult, Conversation, Engine, Event, Instance, ListenerState, Message, Subscription

SENT, DELIVERED, READ = "sent", "delivered", "read"  # a message's status (docs/messaging.md)
TICKS = {SENT: "✓", DELIVERED: "✓✓", READ: "✓✓"}
READ_COLOUR = "#1e88e5"
STATES = {"open": ("conectada", "#2e7d32"), "close": ("desconectada", "#c62828"),
          "connecting": ("conectando…", "#e65100"), "unknown": ("sin probar", "#777")}
GATEWAY_LABELS = {"evolution": "Evolution API", "meta": "WhatsApp Cloud API (Meta)", "yupana": "Otro Yupana"}
CREDENTIAL_LABELS = {"apikey": "apikey de la instancia", "token": "Token de acceso", "app_secret": "App secret (Meta)",
                     "verify_token": "Token de verificación (Meta)", "webhook_secret": "Secreto de webhook"}
DELIVERY_STATES = {"active": "al día", "failing": "fallando", "disabled": "desactivada (410)"}
REFRESH_EVENTS = {*CONTRACT_EVENTS, events.MESSAGE_SENT, events.INSTANCE_SAVED, events.SUBSCRIPTION_CHANGED,
                  events.LISTENER_CHANGED}


def _time(stamp: float | None) -> str:
    return datetime.fromtimestamp(stamp).strftime("%d/%m %H:%M:%S") if stamp else "—"


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
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Mensajes"))
        self.banner = MessageBanner()
        layout.addWidget(self.banner)
        self.listener_label = QLabel("Receptor de webhooks: …")
        self.listener_label.setWordWrap(True)
        layout.addWidget(self.listener_label)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._inbox_tab(), "Bandeja")
        self.tabs.addTab(self._send_tab(), "Enviar")
        self.tabs.addTab(self._instances_tab(), "Instancias")
        self.tabs.addTab(self._subscriptions_tab(), "Suscripciones")
        layout.addWidget(self.tabs, 1)
        # A burst of events (a campaign's read receipts) refreshes once.
        self.refresh_timer = QTimer(self)
        self.refresh_timer.setSingleShot(True)
        self.refresh_timer.setInterval(50)
        self.refresh_timer.timeout.connect(self.refresh)
        context.events.occurred.connect(self._on_event)
        self.refresh()

    # ------------------------------------------------------------ inbox

    def _inbox_tab(self) -> QWidget:
        self.conversations = QListWidget()
        self.conversations.currentItemChanged.connect(self._conversation_chosen)
        self.thread_list = QListWidget()
        self.thread_list.setWordWrap(True)
        self.thread_list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        splitter = QSplitter()
        splitter.addWidget(self.conversations)
        splitter.addWidget(self.thread_list)
        splitter.setStretchFactor(1, 2)
        return splitter

    def _conversation_chosen(self, item: QListWidgetItem | None, _previous: Any = None) -> None:
        if item is None or self._filling:
            return
        instance, peer = item.data(Qt.ItemDataRole.UserRole)
        if (instance, peer) != self.open_conversation:
            self.open_conversation = (instance, peer)
            self.to.setText(peer)
            self.refresh()

    _filling = False

    def _show_inbox(self, inbox: dict[str, Any]) -> None:
        self._filling = True
        try:
            self.open_conversation = (inbox["instance"], inbox["peer"])
            self.conversations.clear()
            conversation: Conversation
            for conversation in inbox["conversations"]:
                count = f"{conversation.messages} mensaje" + ("s" if conversation.messages != 1 else "")
                label = (f"{conversation.name or conversation.peer} · {conversation.peer}\n"
                         f"{conversation.instance} · {count}")
                item = QListWidgetItem(label)
                item.setData(Qt.ItemDataRole.UserRole, (conversation.instance, conversation.peer))
                self.conversations.addItem(item)
                if (conversation.instance, conversation.peer) == self.open_conversation:
                    self.conversations.setCurrentItem(item)
            self.thread_list.clear()
            for message in inbox["messages"]:
                self.thread_list.addItem(self._message_item(message))
            self.thread_list.scrollToBottom()
        finally:
            self._filling = False

    @staticmethod
    def _message_item(message: Message) -> QListWidgetItem:
        when = _time(message.timestamp)
        text = message.body or ""
        if message.media:
            text = f"📎 {message.media.rsplit('/', 1)[-1]}  {text}".strip()
        if message.direction == "in":
            item = QListWidgetItem(f"{message.name or message.peer} ({when}):\n{text}")
        else:
            ticks = TICKS.get(message.status, "")
            item = QListWidgetItem(f"Usted ({when}) {ticks}:\n{text}")
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight)
            if message.status == READ:
                item.setForeground(QColor(READ_COLOUR))
        item.setData(Qt.ItemDataRole.UserRole, message.id)
        item.setToolTip({SENT: "Enviado", DELIVERED: "Entregado", READ: "Leído",
                         "received": "Recibido"}.get(message.status, message.status))
        return item

    def thread_texts(self) -> list[str]:
        return [self.thread_list.item(i).text() for i in range(self.thread_list.count())]

    # ------------------------------------------------------------ send

    def _send_tab(self) -> QWidget:
        tab, form, self.errors = form_tab()
        self.send_instance = QComboBox()
        self.to = QLineEdit()
        self.to.setPlaceholderText("+51987654321 (con código de país)")
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText("Texto del mensaje")
        self.text.setMaximumHeight(120)
        self.attachment_label = QLabel("Sin adjunto")
        self.attach_button = QPushButton("Adjuntar XML o PDF…")
        self.clear_attachment = QPushButton("Quitar")
        self.send_button = QPushButton("Enviar")
        attach = QHBoxLayout()
        attach.addWidget(self.attachment_label, 1)
        attach.addWidget(self.attach_button)
        attach.addWidget(self.clear_attachment)
        form.addRow("Instancia:", self.errors.wrap(self.send_instance, "instance"))
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
        self.context.workers.run(self, lambda: self.engine.messaging.send_message(
            instance, self.to.text(), self.text.toPlainText().strip(), media_path=self.attachment),
            done=self._sent, failed=self._send_failed, busy=[self.send_button])

    def _sent(self, result: ChatSendResult) -> None:
        self.banner.show_message(f"Mensaje enviado a {result.to} ({result.id}).", "success")
        self.text.clear()
        self.set_attachment(None)
        self.open_conversation = (self.send_instance.currentData(), result.to)
        self.refresh()

    def _send_failed(self, exc: BaseException) -> None:
        unplaced = self.errors.show(exc)
        if unplaced or not getattr(exc, "details", None):
            self.banner.show_error(exc)

    # ------------------------------------------------------------ instances

    def _instances_tab(self) -> QWidget:
        tab = QWidget()
        layout = QVBoxLayout(tab)
        self.instance_table = QTableWidget(0, 4)
        self.instance_table.setHorizontalHeaderLabels(["Instancia", "Pasarela", "Dirección", "Estado"])
        self.instance_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.instance_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.instance_table.horizontalHeader().setStretchLastSection(True)
        self.instance_table.itemSelectionChanged.connect(self._instance_chosen)
        layout.addWidget(self.instance_table, 1)
        box = QGroupBox("Instancia")
        form = QFormLayout(box)
        self.instance_errors = FieldErrors()
        self.instance_name = QLineEdit()
        self.gateway = QComboBox()
        for name in GATEWAYS:
            self.gateway.addItem(GATEWAY_LABELS[name], name)
        self.base_url = QLineEdit()
        self.base_url.setPlaceholderText("https://evolution.mi-empresa.pe")
        self.credential = QLineEdit()
        self.credential.setEchoMode(QLineEdit.EchoMode.Password)
        self.credential.setPlaceholderText("se guarda cifrada; vacío: conservar la actual")
        self.app_secret = QLineEdit()
        self.app_secret.setEchoMode(QLineEdit.EchoMode.Password)
        self.verify_token = QLineEdit()
        self.phone_number_id = QLineEdit()
        self.remote_name = QLineEdit()
        self.remote_name.setPlaceholderText("vacío: el mismo nombre")
        self.meta_rows = [self.app_secret, self.verify_token, self.phone_number_id]
        form.addRow("Nombre:", self.instance_errors.wrap(self.instance_name, "instance"))
        form.addRow("Pasarela:", self.gateway)
        form.addRow("Dirección:", self.instance_errors.wrap(self.base_url, "base_url"))
        self.credential_label = QLabel()
        form.addRow(self.credential_label, self.credential)
        form.addRow("App secret (Meta):", self.app_secret)
        form.addRow("Token de verificación (Meta):", self.verify_token)
        form.addRow("phone_number_id (Meta):", self.phone_number_id)
        form.addRow("Nombre en la pasarela:", self.remote_name)
        self.instance_form = form
        buttons = QHBoxLayout()
        self.save_instance_button = QPushButton("Guardar")
        self.test_button = QPushButton("Probar conexión")
        self.register_button = QPushButton("Registrar webhook en la pasarela")
        for button in (self.save_instance_button, self.test_button, self.register_button):
            buttons.addWidget(button)
        form.addRow("", buttons)
        layout.addWidget(box)
        self.gateway.currentIndexChanged.connect(self._gateway_changed)
        self.save_instance_button.clicked.connect(self.save_instance)
        self.test_button.clicked.connect(self.test_connection)
        self.register_button.clicked.connect(self.register_webhook)
        self._gateway_changed()
        return tab

    def _gateway_changed(self) -> None:
        gateway = self.gateway.currentData()
        self.credential_label.setText({"evolution": "apikey:", "meta": "Token de acceso:",
                                       "yupana": "Token (Bearer):"}[gateway])
        for widget in self.meta_rows:
            widget.setVisible(gateway == "meta")
            self.instance_form.labelForField(widget).setVisible(gateway == "meta")
        self.remote_name.setVisible(gateway != "meta")
        self.instance_form.labelForField(self.remote_name).setVisible(gateway != "meta")

    def _instance_chosen(self) -> None:
        rows = self.instance_table.selectionModel().selectedRows()
        if not rows:
            return
        instance = self.instances[rows[0].row()]
        self.instance_name.setText(instance.name)
        self.gateway.setCurrentIndex(self.gateway.findData(instance.gateway))
        self.base_url.setText(instance.base_url)
        self.phone_number_id.setText(instance.options.get("phone_number_id", ""))
        self.remote_name.setText(instance.options.get("remote_name", ""))
        self.credential.clear()

    def _instance_values(self) -> tuple[str, str, str, dict[str, str], dict[str, Any]]:
        gateway = self.gateway.currentData()
        key = {"evolution": "apikey", "meta": "token", "yupana": "token"}[gateway]
        credentials = {key: self.credential.text()}
        options: dict[str, Any] = {}
        if gateway == "meta":
            credentials.update(app_secret=self.app_secret.text(), verify_token=self.verify_token.text())
            options["phone_number_id"] = self.phone_number_id.text().strip()
        elif self.remote_name.text().strip():
            options["remote_name"] = self.remote_name.text().strip()
        return self.instance_name.text().strip(), gateway, self.base_url.text().strip(), credentials, options

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
                                     f"Instancia «{name}»: {STATES.get(state, (state,))[0]}."),
                                 failed=self._instance_failed, busy=[self.test_button])

    def register_webhook(self) -> None:
        name = self.instance_name.text().strip()
        self.banner.clear()
        self.context.workers.run(self, self.engine.messaging.register_webhook, name,
                                 done=lambda url: self._instance_done(
                                     f"La pasarela enviará los eventos de «{name}» a {url.split('?')[0]}."),
                                 failed=self._instance_failed, busy=[self.register_button])

    def _instance_done(self, text: str) -> None:
        self.banner.show_message(text, "success")
        self.credential.clear()
        self.app_secret.clear()
        self.refresh()

    def _instance_failed(self, exc: BaseException) -> None:
        unplaced = self.instance_errors.show(exc)
        if unplaced or not getattr(exc, "details", None):
            self.banner.show_error(exc)

    def _show_instances(self, instances: list[Instance]) -> None:
        self.instances = instances
        current = self.send_instance.currentData()
        self.send_instance.clear()
        self.instance_table.setRowCount(len(instances))
        for index, instance in enumerate(instances):
            self.send_instance.addItem(f"{instance.name} ({GATEWAY_LABELS[instance.gateway]})", instance.name)
            state = instance.state or ""  # no state yet: an empty cell
            text, colour = STATES.get(state, (state, "#777"))
            cells = [instance.name, GATEWAY_LABELS[instance.gateway], instance.base_url, text]
            for column, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if column == 3:
                    item.setForeground(QColor(colour))
                self.instance_table.setItem(index, column, item)
        found = self.send_instance.findData(current)
        if found >= 0:
            self.send_instance.setCurrentIndex(found)

    def instance_state_text(self, name: str) -> str | None:
        for index, instance in enumerate(self.instances):
            if instance.name == name:
                item = self.instance_table.item(index, 3)
                return item.text() if item is not None else None
        return None

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
        if name in REFRESH_EVENTS:
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

    def _show_listener(self, state: ListenerState) -> None:
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
        self.listener_label.setText(text)
