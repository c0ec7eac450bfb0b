"""«Conectar WhatsApp» (from Mensajes): pair a phone with an Evolution API instance by its QR code, or set up and test
WhatsApp Cloud API (Meta), without leaving Yupana.

Evolution: the form asks for what the user has — the server, the instance's name and either the server's global key
(Yupana creates the instance and keeps its token encrypted) or an instance's token (Yupana connects that existing
instance) — and says which case applies as it is typed. The QR is drawn from the text Evolution gives (segno) and
redrawn whenever Evolution renews it; a timer polls the instance's state on a worker (never on the GUI thread) until
the phone has scanned it, then shows «Conectado».

Meta: the token and the phone_number_id are proved with one read of the number at Meta before they are saved; a
refusal is explained in Spanish under the field it is about.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QCloseEvent, QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.api import CREATE, META_GRAPH_URL, EvolutionPairing, case_text, check_meta_number, pairing_case

from .context import Context
from .widgets import FieldErrors, MessageBanner, fit_to_screen

if TYPE_CHECKING:
    from app.core.api import Engine, Instance, MetaNumber, PairingState, QrCode

QR_PIXELS = 264  # on screen: large enough for a phone's camera at arm's length, small enough for 1366×768
POLL_MS = 2000  # Evolution renews the QR about every 20 s; a scan shows within two seconds
CONNECTED = "Conectado"
WAITING = "Esperando que escanee el código…"
SCAN_HELP = ("En el teléfono: WhatsApp → Dispositivos vinculados → Vincular un dispositivo, y apunte la cámara a este "
             "código.")
EVOLUTION_HINT = "https://evolution.mi-empresa.pe"


def qr_pixmap(qr: QrCode, pixels: int = QR_PIXELS) -> QPixmap:
    """The QR as a picture: drawn from its text (segno) when Evolution gave it, else Evolution's own PNG."""
    pixmap = QPixmap()
    if qr.code:
        import segno  # here: Mensajes opens without it until a QR is shown

        code = segno.make(qr.code, error="m", micro=False)
        buffer = io.BytesIO()
        scale = max(1, pixels // code.symbol_size(border=4)[0])
        code.save(buffer, kind="png", scale=scale, border=4)
        pixmap.loadFromData(buffer.getvalue(), "PNG")
    elif qr.image:
        pixmap.loadFromData(qr.png(), "PNG")
    return pixmap


def save_meta(engine: Engine, name: str, base_url: str, token: str, phone_number_id: str, app_secret: str,
              verify_token: str) -> tuple[MetaNumber, Instance]:
    """«Guardar» of the Meta form (on a worker): proved at Meta first, then kept (the secrets encrypted)."""
    number = check_meta_number(token, phone_number_id, base_url)
    saved = engine.messaging.save_instance(name, "meta", base_url or META_GRAPH_URL,
                                           {"token": token, "app_secret": app_secret, "verify_token": verify_token},
                                           {"phone_number_id": phone_number_id.strip()})
    return number, saved


def register_if_listening(engine: Engine, name: str) -> str:
    """After pairing (on a worker): the gateway is told where to post if the listener runs; "" when it does not."""
    if engine.messaging.listener_state().state != "running":
        return ""
    return engine.messaging.register_webhook(name)


class ConnectWhatsAppDialog(QDialog):
    def __init__(self, context: Context, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.engine = context.engine
        self.pairing = EvolutionPairing(self.engine.messaging)
        self.state: PairingState | None = None
        self.shown_code = ""  # the QR text on screen: redrawn only when Evolution renews it
        self._polling = False
        self.setWindowTitle("Conectar WhatsApp")
        self.banner = MessageBanner()
        self.tabs = QTabWidget()
        self.tabs.addTab(self._evolution_tab(), "Con código QR (Evolution API)")
        self.tabs.addTab(self._meta_tab(), "WhatsApp Cloud API (Meta)")
        self.close_button = QPushButton("Cerrar")
        self.close_button.clicked.connect(self.reject)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        bottom.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(bottom)
        self.poll_timer = QTimer(self)
        self.poll_timer.setInterval(POLL_MS)
        self.poll_timer.timeout.connect(self.poll)
        fit_to_screen(self, 860, 560)

    # ------------------------------------------------------------ Evolution: the form

    def _evolution_tab(self) -> QWidget:
        tab = QWidget()
        self.errors = FieldErrors()
        self.base_url = QLineEdit()
        self.base_url.setPlaceholderText(EVOLUTION_HINT)
        self.instance = QLineEdit()
        self.instance.setPlaceholderText("tienda (letras, números, guion o punto)")
        self.global_key = QLineEdit()
        self.global_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.global_key.setPlaceholderText("para crear una instancia nueva")
        self.instance_token = QLineEdit()
        self.instance_token.setEchoMode(QLineEdit.EchoMode.Password)
        self.instance_token.setPlaceholderText("para conectar una que ya existe")
        self.number = QLineEdit()
        self.number.setPlaceholderText("opcional: para vincular con un código")
        form = QFormLayout()
        form.addRow("Servidor:", self.errors.wrap(self.base_url, "base_url"))
        form.addRow("Instancia:", self.errors.wrap(self.instance, "instance"))
        form.addRow("Clave global:", self.errors.wrap(self.global_key, "global_key"))
        form.addRow("Token de la instancia:", self.errors.wrap(self.instance_token, "instance_token"))
        form.addRow("Número del teléfono:", self.errors.wrap(self.number, "number"))
        self.case_label = QLabel()
        self.case_label.setWordWrap(True)
        self.connect_button = QPushButton("Conectar")
        self.connect_button.clicked.connect(self.start)
        left = QVBoxLayout()
        left.addLayout(form)
        left.addWidget(self.case_label)
        left.addWidget(self.connect_button, 0, Qt.AlignmentFlag.AlignRight)
        left.addStretch(1)
        row = QHBoxLayout(tab)
        row.addLayout(left, 1)
        row.addLayout(self._qr_panel())
        for edit in (self.instance, self.global_key, self.instance_token):
            edit.textChanged.connect(self._show_case)
        self._show_case()
        return tab

    def _qr_panel(self) -> QVBoxLayout:
        self.qr_label = QLabel()
        self.qr_label.setFixedSize(QR_PIXELS, QR_PIXELS)
        self.qr_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.qr_label.setStyleSheet("background: white; border: 1px solid #ccc;")
        self.state_label = QLabel("—")
        self.state_label.setWordWrap(True)
        self.pairing_code_label = QLabel()
        self.pairing_code_label.setWordWrap(True)
        self.pairing_code_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.help_label = QLabel(SCAN_HELP)
        self.help_label.setWordWrap(True)
        self.help_label.setMaximumWidth(QR_PIXELS)
        panel = QVBoxLayout()
        panel.addWidget(self.qr_label)
        panel.addWidget(self.state_label)
        panel.addWidget(self.pairing_code_label)
        panel.addWidget(self.help_label)
        panel.addStretch(1)
        return panel

    def _show_case(self) -> None:
        case = pairing_case(self.global_key.text(), self.instance_token.text())
        self.case_label.setText(case_text(case, self.instance.text().strip()))
        self.connect_button.setText("Crear y conectar" if case == CREATE else "Conectar")

    # ------------------------------------------------------------ Evolution: pairing

    def start(self) -> None:
        self.errors.clear()
        self.banner.clear()
        self.poll_timer.stop()
        values = (self.base_url.text(), self.instance.text(), self.global_key.text(), self.instance_token.text(),
                  self.number.text())
        self.state_label.setText("Conectando con el servidor…")
        self.context.workers.run(self, self.pairing.start, *values, done=self._started, failed=self._failed,
                                 busy=[self.connect_button])

    def _started(self, state: PairingState) -> None:
        # The token is kept encrypted by the engine now: it is not left in the form.
        self.global_key.clear()
        self.instance_token.clear()
        done = "creada en el servidor" if state.case == CREATE else "encontrada en el servidor"
        self.case_label.setText(f"Instancia «{state.instance}» {done}; su token quedó guardado cifrado en Yupana.")
        self._show(state)
        if not state.connected:
            self.poll_timer.start()

    def poll(self) -> None:
        """One look at the instance (on a worker); a look still running skips this tick."""
        if self._polling:
            return
        self._polling = True
        self.context.workers.run(self, self.pairing.poll, done=self._polled, failed=self._poll_failed)

    def _polled(self, state: PairingState) -> None:
        self._polling = False
        self._show(state)
        if state.connected:
            self.poll_timer.stop()

    def _poll_failed(self, exc: BaseException) -> None:
        self._polling = False  # a lost poll is tried again on the next tick; the user sees why meanwhile
        self.banner.show_error(exc)

    def _failed(self, exc: BaseException) -> None:
        self.state_label.setText("—")
        self.errors.show_or_tell(exc, self.banner)

    def _show(self, state: PairingState) -> None:
        previous = self.state
        self.state = state
        if state.connected:
            self.qr_label.clear()
            self.shown_code = ""
            self.state_label.setText(CONNECTED)
            self.state_label.setStyleSheet("color: #2e7d32; font-weight: bold;")
            self.pairing_code_label.clear()
            self.help_label.setText(f"El teléfono quedó vinculado a la instancia «{state.instance}».")
            if previous is None or not previous.connected:
                self.banner.show_message(state.notice or f"WhatsApp «{state.instance}» conectado.",
                                         "warning" if state.notice else "success")
                self.context.workers.run(self, register_if_listening, self.engine, state.instance,
                                         done=self._registered, failed=self.banner.show_error)
            return
        self.state_label.setText(WAITING)
        self.state_label.setStyleSheet("")
        self.help_label.setText(SCAN_HELP)
        if state.qr is not None and (state.qr.code or state.qr.image) != self.shown_code:
            self.qr_label.setPixmap(qr_pixmap(state.qr))
            self.shown_code = state.qr.code or state.qr.image
        pairing = state.qr.pairing_code if state.qr else ""
        self.pairing_code_label.setText(f"O escriba en el teléfono el código {pairing}" if pairing else "")

    def _registered(self, url: str) -> None:
        if url:
            self.banner.show_message(f"WhatsApp conectado; la pasarela enviará los mensajes a {url.split('?')[0]}.",
                                     "success")

    # ------------------------------------------------------------ Meta

    def _meta_tab(self) -> QWidget:
        tab = QWidget()
        self.meta_errors = FieldErrors()
        self.meta_name = QLineEdit()
        self.meta_name.setPlaceholderText("meta (el nombre de esta conexión en Yupana)")
        self.meta_url = QLineEdit(META_GRAPH_URL)
        self.meta_token = QLineEdit()
        self.meta_token.setEchoMode(QLineEdit.EchoMode.Password)
        self.meta_number_id = QLineEdit()
        self.meta_number_id.setPlaceholderText("solo dígitos (WhatsApp → Configuración de la API)")
        self.meta_secret = QLineEdit()
        self.meta_secret.setEchoMode(QLineEdit.EchoMode.Password)
        self.meta_verify = QLineEdit()
        self.meta_verify.setPlaceholderText("el que escriba también en Meta (webhook)")
        form = QFormLayout()
        for label, edit, field in (("Nombre:", self.meta_name, "instance"), ("Graph API:", self.meta_url, "base_url"),
                                   ("Token de acceso:", self.meta_token, "token"),
                                   ("phone_number_id:", self.meta_number_id, "phone_number_id"),
                                   ("App secret:", self.meta_secret, "app_secret"),
                                   ("Token de verificación:", self.meta_verify, "verify_token")):
            form.addRow(label, self.meta_errors.wrap(edit, field))
        self.meta_result = QLabel()
        self.meta_result.setWordWrap(True)
        self.meta_test_button = QPushButton("Probar conexión")
        self.meta_save_button = QPushButton("Guardar")
        self.meta_test_button.clicked.connect(self.test_meta)
        self.meta_save_button.clicked.connect(self.save_meta)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.meta_test_button)
        buttons.addWidget(self.meta_save_button)
        layout = QVBoxLayout(tab)
        layout.addLayout(form)
        layout.addWidget(self.meta_result)
        layout.addLayout(buttons)
        layout.addStretch(1)
        return tab

    def _meta_begin(self) -> None:
        self.meta_errors.clear()
        self.banner.clear()
        self.meta_result.clear()

    def test_meta(self) -> None:
        self._meta_begin()
        self.context.workers.run(self, check_meta_number, self.meta_token.text(), self.meta_number_id.text(),
                                 self.meta_url.text().strip(), done=self._meta_tested, failed=self._meta_failed,
                                 busy=[self.meta_test_button, self.meta_save_button])

    def save_meta(self) -> None:
        self._meta_begin()
        self.context.workers.run(self, save_meta, self.engine, self.meta_name.text(), self.meta_url.text().strip(),
                                 self.meta_token.text(), self.meta_number_id.text(), self.meta_secret.text(),
                                 self.meta_verify.text(), done=self._meta_saved, failed=self._meta_failed,
                                 busy=[self.meta_test_button, self.meta_save_button])

    def _meta_tested(self, number: MetaNumber) -> None:
        name = f" ({number.verified_name})" if number.verified_name else ""
        self.meta_result.setText(f"Conexión correcta: Meta reconoce el número {number.display_phone_number}{name}.")
        self.meta_result.setStyleSheet("color: #2e7d32;")

    def _meta_saved(self, result: tuple[MetaNumber, Instance]) -> None:
        number, saved = result
        self._meta_tested(number)
        self.meta_token.clear()
        self.meta_secret.clear()
        self.banner.show_message(f"Instancia «{saved.name}» guardada: WhatsApp {number.display_phone_number}.",
                                 "success")

    def _meta_failed(self, exc: BaseException) -> None:
        self.meta_errors.show_or_tell(exc, self.banner)

    # ------------------------------------------------------------ closing

    def done(self, result: int) -> None:
        """Closing stops the polling; the session's HTTP client is closed on a worker (a look may be under way)."""
        self.poll_timer.stop()
        self.context.workers.run(self, self.pairing.close, failed=lambda exc: None)
        super().done(result)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        self.poll_timer.stop()
        super().closeEvent(event)
