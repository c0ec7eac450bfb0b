"""The passphrase dialog: on a PC with no system keyring, the person's passphrase opens the saved keys.

Shown by the main window before anything that needs a key (the assistant, the sandbox set-up). On a
new data folder it asks for a passphrase twice and explains what it protects; afterwards it asks
for it once at each start. The passphrase is never stored: the engine checks it against a value
encrypted under the key it derives (app.core.platform.secrets). Checking takes a fraction of a second
(scrypt), so it runs on a worker.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.api import MIN_PASSPHRASE_CHARS, NEW_PASSPHRASE

from .context import Context
from .widgets import MessageBanner, fits_width

NEW_TEXT = (
    "Este equipo no tiene un llavero del sistema donde guardar con seguridad las claves de Yupana: la clave "
    "privada de su certificado digital, su clave SOL y los tokens de los servicios.<br><br>"
    "Elija una <b>frase secreta</b> para protegerlas. Yupana la pedirá cada vez que se abra y no la guarda en "
    "ninguna parte: si la olvida, tendrá que volver a importar su certificado y escribir su clave SOL.")
LOCKED_TEXT = ("Las claves de Yupana (certificado digital, clave SOL, tokens) están protegidas con su frase "
               "secreta. Escríbala para abrirlas.")
KEYRING_MISSING_TEXT = (
    "Las claves de esta carpeta de datos (certificado digital, clave SOL, tokens) están protegidas por el llavero "
    "del sistema, que ahora no responde. Puede consultar comprobantes, pero no firmar ni enviar. Inicie sesión con "
    "el mismo usuario del equipo; si el llavero se perdió, vea «Recuperar» en docs/security.md.")


class PassphraseDialog(QDialog):
    """Window-modal; `on_unlocked` runs once the engine accepted the passphrase."""

    def __init__(self, context: Context, state: str, on_unlocked: Callable[[], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.new = state == NEW_PASSPHRASE
        self.on_unlocked = on_unlocked
        self.unlocked = False
        self.setWindowTitle("Crear la frase secreta" if self.new else "Abrir las claves de Yupana")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        fits_width(self, 520)
        intro = QLabel(NEW_TEXT if self.new else LOCKED_TEXT)
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.RichText)
        self.banner = MessageBanner()
        self.passphrase = self._secret_field()
        self.confirmation = self._secret_field()
        form = QFormLayout()
        form.addRow("Frase secreta:", self.passphrase)
        if self.new:
            form.addRow("Repítala:", self.confirmation)
            self.passphrase.setPlaceholderText(f"al menos {MIN_PASSPHRASE_CHARS} caracteres")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Guardar y abrir" if self.new else "Abrir")
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText("Salir de Yupana")
        self.buttons.accepted.connect(self.submit)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.banner)
        layout.addLayout(form)
        layout.addWidget(self.buttons)

    def _fit_height(self) -> None:
        """Grow to show a message whole: a word-wrapped text needs more height at this width than the dialog had
        when it opened (a top-level window does not grow by itself for a label's height-for-width)."""
        layout = self.layout()
        if layout is None:
            return
        layout.activate()
        needed = layout.totalHeightForWidth(self.width())
        if needed > self.height():
            self.resize(self.width(), needed)

    @staticmethod
    def _secret_field() -> QLineEdit:
        field = QLineEdit()
        field.setEchoMode(QLineEdit.EchoMode.Password)
        return field

    def submit(self) -> None:
        typed = self.passphrase.text()
        problem = self._problem(typed)
        if problem:
            self.banner.show_message(problem, "error")
            self._fit_height()
            self.passphrase.setFocus()
            return
        self.banner.clear()
        self.context.workers.run(self, self.context.engine.admin.unlock_secrets, typed, done=self._accepted,
                                 failed=self._refused, busy=[self.ok_button])

    def _problem(self, typed: str) -> str:
        if not typed:
            return "Escriba la frase secreta."
        if self.new and len(typed) < MIN_PASSPHRASE_CHARS:
            return f"La frase secreta es muy corta: use al menos {MIN_PASSPHRASE_CHARS} caracteres."
        if self.new and self.confirmation.text() != typed:
            return "Las dos frases no coinciden. Escríbalas de nuevo."
        return ""

    def _accepted(self, _result: object) -> None:
        self.unlocked = True
        self.accept()
        self.on_unlocked()

    def _refused(self, exc: BaseException) -> None:
        self.banner.show_error(exc)
        self._fit_height()
        self.passphrase.selectAll()
        self.passphrase.setFocus()
