"""The first-run assistant: company profile, certificate, environment (sandbox by default); or «Restaurar desde una
copia» (issue 35): a backup put into this new data folder, its numbering checked, Yupana going on with it."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
    QWizard,
    QWizardPage,
)

from app.core.api import Company, Engine, backups, environments, invalid, unreadable_file

from .company_form import CompanyForm
from .context import Context
from .dialogs import choose_path
from .environment import confirm_switch
from .restore import RestoreDialog
from .widgets import FieldErrors, MessageBanner, fit_to_screen


@runtime_checkable
class HandsOver(Protocol):
    """The main window as a restore from the assistant uses it (app.gui.main_window.MainWindow)."""

    engine_released: bool
    restore_dialog: QWidget | None

    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def release_engine(self) -> None: ...
    def hand_over(self, engine: Engine) -> HandsOver: ...


CERTIFICATE_FIELDS = {"password", "archivo", "clave", "certificado"}  # errors of the certificate page's fields
ENVIRONMENT_CHOICES = [  # the longer sentences of a first choice; names from app.core.api.environments
    (environments.SANDBOX, "Sandbox: todo en este equipo, sin internet ni clave SOL. Ideal para aprender y probar."),
    (environments.BETA, "SUNAT beta: el servidor de pruebas de SUNAT (necesita internet; los comprobantes no valen)."),
    (environments.PRODUCCION, "Producción: comprobantes reales ante SUNAT (necesita certificado real y clave SOL)."),
]


def apply_setup(context: Context, company: Company, environment: str, certificate: tuple[str, str] | None) -> list[str]:
    """Save the choices in a safe order; returns what was done, in Spanish, for the last page."""
    engine = context.engine
    done = []
    saved = engine.admin.set_company(company)
    done.append(f"Empresa {saved.razon_social} ({saved.ruc}) registrada.")
    engine.admin.config_set("environment", environment)
    if environment == environments.SANDBOX:
        started = context.sandboxes.start()
        done.append("Modo sandbox activo" + (f": {', '.join(sorted(started))}." if started else "."))
    else:
        context.sandboxes.stop()
        done.append(f"Entorno: {environments.get(environment).label}.")
    # A certificate that cannot be made or read stops «Terminar» with its reason on the last page: the
    # assistant never closes saying all went well when the shop cannot sign yet.
    if certificate is None:
        cert = engine.invoicing.create_test_certificate(saved.ruc)
        done.append("Certificado de prueba creado.")
    else:
        path, password = certificate
        cert = engine.invoicing.import_certificate(read_file(path), password)
        done.append(f"Certificado «{Path(path).name}» importado.")
    if not cert.predeterminado:
        engine.invoicing.set_default_certificate(saved.ruc, cert.certificado_id)
    return done


def read_file(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise unreadable_file("certificado", path, exc) from None


class CompanyPage(QWizardPage):
    def __init__(self, context: Context) -> None:
        super().__init__()
        self.setTitle("1. Su empresa")
        self.setSubTitle("Escriba su RUC y pulse «Buscar en SUNAT» para llenar la razón social y la dirección.")
        layout = QVBoxLayout(self)
        self.banner = MessageBanner()
        self.form = CompanyForm(context, self.banner, with_list=False)
        self.restore_button = QPushButton("Restaurar desde una copia…")
        self.restore_button.setToolTip("¿Ya usaba Yupana en otro equipo? Ponga aquí una copia de seguridad "
                                       "(yupana-respaldo-….zip) en lugar de empezar de cero")
        row = QHBoxLayout()
        row.addWidget(QLabel("¿Ya usaba Yupana en otro equipo?"))
        row.addWidget(self.restore_button)
        row.addStretch(1)
        layout.addWidget(self.banner)
        layout.addWidget(self.form)
        layout.addLayout(row)


class CertificatePage(QWizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle("2. Certificado digital")
        self.setSubTitle("Con él se firman los comprobantes. Para probar, basta uno de prueba.")
        layout = QVBoxLayout(self)
        self.create_test = QRadioButton("Crear un certificado de prueba (recomendado para empezar)")
        self.import_own = QRadioButton("Importar mi certificado (.pfx o .p12)")
        self.create_test.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.create_test)
        group.addButton(self.import_own)
        self.path = QLineEdit()
        self.path.setPlaceholderText("archivo .pfx o .p12")
        browse = QPushButton("Elegir…")
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.details = QWidget()
        self.errors = FieldErrors()
        form = QFormLayout(self.details)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        form.addRow("Archivo:", self.errors.wrap(row, "archivo"))
        form.addRow("Contraseña:", self.errors.wrap(self.password, "password"))
        self.details.setEnabled(False)
        self.import_own.toggled.connect(self.details.setEnabled)
        browse.clicked.connect(self._browse)
        layout.addWidget(self.create_test)
        layout.addWidget(self.import_own)
        layout.addWidget(self.details)
        layout.addStretch(1)

    def _browse(self) -> None:
        choose_path(self, "Elegir el certificado digital", self.path.setText, name_filter="Certificados (*.pfx *.p12)")

    def choice(self) -> tuple[str, str] | None:
        return (self.path.text().strip(), self.password.text()) if self.import_own.isChecked() else None

    def show_errors(self, exc: BaseException) -> None:
        """A certificate the engine refused: its reason under the field it is about, the cursor in that field."""
        self.errors.show(exc)
        fields = {d.field for d in getattr(exc, "details", [])}
        field = self.password if "password" in fields else self.path
        field.selectAll()
        field.setFocus()


class EnvironmentPage(QWizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle("3. Entorno de trabajo")
        self.setSubTitle("Puede cambiarlo cuando quiera en Ajustes → Entorno.")
        layout = QVBoxLayout(self)
        self.buttons: dict[str, QRadioButton] = {}
        for value, text in ENVIRONMENT_CHOICES:
            button = QRadioButton(text)
            self.buttons[value] = button
            layout.addWidget(button)
        self.buttons[environments.SANDBOX].setChecked(True)
        self.banner = MessageBanner()
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        layout.addWidget(self.banner)
        layout.addWidget(self.summary)
        layout.addStretch(1)

    def choice(self) -> str:
        return next(value for value, button in self.buttons.items() if button.isChecked())


class SetupAssistant(QWizard):
    def __init__(self, context: Context, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.result_lines: list[str] = []
        self.completed = False
        self.done_box: QMessageBox | None = None
        self.setWindowTitle("Bienvenido a Yupana")
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.company_page = CompanyPage(context)
        self.certificate_page = CertificatePage()
        self.environment_page = EnvironmentPage()
        for page in (self.company_page, self.certificate_page, self.environment_page):
            self.addPage(page)
        self.setButtonText(QWizard.WizardButton.NextButton, "Siguiente >")
        self.setButtonText(QWizard.WizardButton.BackButton, "< Atrás")
        self.setButtonText(QWizard.WizardButton.FinishButton, "Terminar")
        self.setButtonText(QWizard.WizardButton.CancelButton, "Ahora no")
        self.restore_dialog: RestoreDialog | None = None
        self.company_page.restore_button.clicked.connect(self.ask_restore)
        fit_to_screen(self, 720, 520)
        # In sandbox mode the RUC lookup of page 1 already answers from the local registry sandbox.
        context.workers.run(self, self._start_sandbox_if_chosen, failed=lambda exc: None)

    def _start_sandbox_if_chosen(self) -> None:
        if self.context.engine.admin.config_get("environment") == environments.SANDBOX:
            self.context.sandboxes.start()

    def accept(self) -> None:  # «Terminar»: save everything on a worker, close only when it worked
        page = self.environment_page
        page.banner.clear()
        self.certificate_page.errors.clear()
        chosen = page.choice()
        self.context.workers.run(self, self.context.engine.admin.config_get, "environment",
                                 done=lambda now: self._confirm_then_apply(now, chosen))

    def _confirm_then_apply(self, now: str, chosen: str) -> None:
        """Another environment than the folder's: say what changes and ask first (as Ajustes does)."""
        if chosen == now:
            self._apply(chosen)
        else:
            confirm_switch(self, self.context, chosen, lambda: self._apply(chosen))

    def _apply(self, environment: str) -> None:
        company = self.company_page.form.company()
        self.context.workers.run(self, apply_setup, self.context, company, environment,
                                 self.certificate_page.choice(), done=self._finished, failed=self._failed,
                                 busy=[self.button(QWizard.WizardButton.FinishButton),
                                       self.button(QWizard.WizardButton.BackButton)])

    def _finished(self, lines: list[str]) -> None:
        self.result_lines = lines
        self.completed = True
        super().accept()
        # The last word: what was done, in Spanish (non-blocking; on the main window when there is one).
        box = QMessageBox(QMessageBox.Icon.Information, "Yupana está listo",
                          "Listo, ya puede emitir comprobantes:\n\n" + "\n".join(f"• {line}" for line in lines),
                          QMessageBox.StandardButton.Ok, self.parentWidget() or self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.done_box = box

    def _failed(self, exc: BaseException) -> None:
        fields = [d.field for d in getattr(exc, "details", []) if d.field]
        company_fields = {"ruc", "razon_social", "ubigeo", "direccion", "codigo_establecimiento", "numero"}
        if fields and set(fields) <= company_fields:
            self.restart()  # back to page 1, where the fields are
            self.company_page.form.show_errors(exc)
        elif fields and set(fields) <= CERTIFICATE_FIELDS and self.certificate_page.choice() is not None:
            while self.currentPage() is not self.certificate_page:  # back to page 2, at the field
                self.back()
            self.certificate_page.show_errors(exc)
        else:
            self.environment_page.banner.show_error(exc)

    # ------------------------------------------------------------ «Restaurar desde una copia»

    def ask_restore(self) -> None:
        chosen = QFileDialog.getOpenFileName(self, "Copia de seguridad a restaurar", "",
                                             "Copias de Yupana (yupana-respaldo-*.zip);;Todos los archivos (*)")[0]
        if chosen:
            self.restore_from(chosen)

    def restore_from(self, backup: str) -> RestoreDialog:
        """The backup into this data folder, on a worker: only while the folder is new (no company, no vouchers);
        then Yupana goes on with the restored data in a new main window."""
        parent = self.parentWidget()
        window = parent if isinstance(parent, HandsOver) else None
        home = Path(self.context.engine.admin.home())
        if window is not None:
            window.pause()  # stop asking the engine meanwhile

        def release() -> None:  # on the worker, once the backup verified
            engine = self.context.engine
            companies = engine.admin.companies()
            if companies or engine.admin.database_file() != home / backups.DATABASE:
                names = ", ".join(f"{company.razon_social} ({company.ruc})" for company in companies)
                raise invalid("carpeta", f"La carpeta de datos «{home}» ya tiene datos de Yupana"
                                         + (f" ({names})" if names else "") + ": una copia se restaura solo en una "
                                         "carpeta nueva, vacía. Abra Yupana con otra carpeta (yupana --home "
                                         "CARPETA_NUEVA) y restaure allí.")
            if window is not None:
                window.release_engine()
            else:
                engine.close()
            for suffix in ("", "-wal", "-shm"):
                (home / f"{backups.DATABASE}{suffix}").unlink(missing_ok=True)

        def go_on(engine: Engine) -> None:
            if window is None:
                self.context.workers.run(self, engine.close)
                return
            successor = window.hand_over(engine)
            dialog.setParent(successor, dialog.windowFlags())
            successor.restore_dialog = dialog  # kept open over the new window
            dialog.show()

        def failed(_: BaseException) -> None:
            if window is not None and not window.engine_released:  # refused before anything changed
                window.resume()
            elif window is not None:  # the folder was freed but nothing was restored: start again on it
                dialog.workers.run(dialog, Engine, home, done=go_on)

        dialog = RestoreDialog(backup, home, None, release=release, finished=go_on, failed=failed)
        self.restore_dialog = dialog
        dialog.show()
        dialog.start()
        return dialog
