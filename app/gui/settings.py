"""Ajustes: company profiles, SOL credentials, environment and endpoints, providers, rules, data and log."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.api import ENVIRONMENTS, GROUPS, SETTINGS, ErrorDetail, YupanaError, invalid_many

from .backups import BackupsBox
from .company_form import CompanyForm
from .context import Context
from .dialogs import choose_path, confirm
from .environment import confirm_switch
from .shared_database import SharedDatabaseBox
from .widgets import FieldErrors, MessageBanner, fit_placeholder, form_tab, heading

if TYPE_CHECKING:
    from app.core.api import Engine, Reachability

CHOICES = {
    "environment": [(e.name, e.label) for e in ENVIRONMENTS.values()],
    "signature_algorithm": [("rsa-sha1", "RSA-SHA1 (el que usa SUNAT)"), ("rsa-sha256", "RSA-SHA256")],
    "log_level": [(v, v) for v in ("DEBUG", "INFO", "WARNING", "ERROR")],
    "api_docs": [("no", "No"), ("si", "Sí (página /docs)")],
    "api_autostart": [("no", "No"), ("si", "Sí, al abrir Yupana")],
}


# Under the addresses a running sandbox stands in for (app.core.platform.environments).
SANDBOXED_NOTE = " En el entorno sandbox se usa la del sandbox en marcha: esta es la de beta y producción."


def keys_by_tab(keys: list[str]) -> dict[str, list[str]]:
    """Each setting under its group's tab, in the engine's order of groups (app.core.api.GROUPS)."""
    groups = GROUPS + sorted({SETTINGS[k].group for k in keys} - set(GROUPS))
    tabs = {group: [k for k in keys if SETTINGS[k].group == group] for group in groups}
    return {title: found for title, found in tabs.items() if found}


LOG_TAIL_BYTES = 64 * 1024


def save_settings(engine: Engine, values: dict[str, str]) -> dict[str, str]:
    """Save every changed value; the problems of all keys are reported together, each under its key."""
    problems: list[ErrorDetail] = []
    saved = {}
    for key, value in values.items():
        try:
            saved[key] = engine.admin.config_set(key, value)
        except YupanaError as exc:
            problems.extend(exc.details or [ErrorDetail(key, exc.message)])
    if problems:
        raise invalid_many(problems)
    return saved


def current_settings(engine: Engine) -> dict[str, str]:
    """Every setting's value by its key (read on a worker)."""
    return {setting.key: setting.value for setting in engine.admin.config_list()}


def read_log_tail(path: Path) -> str:
    if not Path(path).exists():
        return "El registro todavía está vacío."
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - LOG_TAIL_BYTES))
        return handle.read().decode("utf-8", errors="replace")


class SettingsForm(QWidget):
    """Settings as fields with their Spanish label and help; advanced ones behind «Avanzado»; saved together."""

    def __init__(self, context: Context, keys: list[str], banner: MessageBanner) -> None:
        super().__init__()
        self.context, self.banner = context, banner
        self.errors = FieldErrors()
        self.fields: dict[str, QComboBox | QLineEdit] = {}
        self.labels: dict[str, str] = {}
        self.loaded: dict[str, str] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.form = QFormLayout()
        self.advanced = QGroupBox("Avanzado")
        advanced_form = self.advanced_form = QFormLayout(self.advanced)
        for key in keys:
            setting = SETTINGS[key]
            self.labels[key] = setting.label or key
            (advanced_form if setting.advanced else self.form).addRow(f"{self.labels[key]}:", self._row(setting))
        self.advanced_button = QPushButton("Avanzado…")
        self.advanced_button.setCheckable(True)
        self.advanced_button.setToolTip("Direcciones de los servicios, tiempos de espera y diagnóstico: "
                                        "normalmente no hace falta cambiarlos.")
        self.advanced_button.toggled.connect(self.advanced.setVisible)
        self.advanced.hide()
        self.save_button = QPushButton("Guardar")
        buttons = QHBoxLayout()
        buttons.addWidget(self.save_button)
        buttons.addStretch(1)
        buttons.addWidget(self.advanced_button)
        self.advanced_button.setVisible(advanced_form.rowCount() > 0)
        if self.form.rowCount() == 0:
            note = QLabel("Normalmente no hace falta cambiar nada aquí. «Avanzado…» muestra las direcciones de los "
                          "servicios y los tiempos de espera.")
            note.setWordWrap(True)
            self.form.addRow(note)
        layout.addLayout(self.form)
        layout.addWidget(self.advanced)
        layout.addLayout(buttons)
        self.save_button.clicked.connect(self.save)

    def _row(self, setting: Any) -> QWidget:
        widget = self._field(setting.key)
        widget.setToolTip(setting.description)
        self.fields[setting.key] = widget
        hint = QLabel(setting.description + (SANDBOXED_NOTE if setting.sandboxed else ""))
        hint.setWordWrap(True)
        hint.setStyleSheet("color: #666; font-size: 11px;")
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(widget)
        column.addWidget(hint)
        column.addWidget(self.errors.label_for(setting.key))
        return box

    def _field(self, key: str) -> QComboBox | QLineEdit:
        if key in CHOICES:
            combo = QComboBox()
            for value, label in CHOICES[key]:
                combo.addItem(label, value)
            return combo
        return QLineEdit()

    def value(self, key: str) -> str:
        widget = self.fields[key]
        return widget.currentData() if isinstance(widget, QComboBox) else widget.text().strip()

    def set_value(self, key: str, value: str) -> None:
        widget = self.fields[key]
        if isinstance(widget, QComboBox):
            index = widget.findData(value)
            if index < 0:
                widget.addItem(value, value)
                index = widget.count() - 1
            widget.setCurrentIndex(index)
        else:
            widget.setText(value)

    def load(self, values: dict[str, str]) -> None:
        for key in self.fields:
            self.set_value(key, values.get(key, ""))
            self.loaded[key] = values.get(key, "")

    def save(self) -> None:
        changed = {k: self.value(k) for k in self.fields if self.value(k) != self.loaded.get(k)}
        self.errors.clear()
        if "environment" in changed:  # where vouchers go: said and confirmed first
            confirm_switch(self, self.context, changed["environment"], lambda: self._save(changed))
        else:
            self._save(changed)

    def _save(self, changed: dict[str, str]) -> None:
        self.context.workers.run(self, save_settings, self.context.engine, changed, done=self._saved,
                                 failed=self._failed, busy=[self.save_button])

    def _saved(self, saved: dict[str, str]) -> None:
        self.loaded.update(saved)
        self.banner.show_message("Ajustes guardados." if saved else "No había cambios que guardar.", "success")

    def _failed(self, exc: BaseException) -> None:
        for detail in getattr(exc, "details", []):  # a problem behind «Avanzado» must be seen
            if detail.field in self.fields and self.advanced.isAncestorOf(self.fields[detail.field]):
                self.advanced_button.setChecked(True)
        self.errors.show(exc)
        self.banner.show_error(exc)


class SettingsPage(QWidget):
    def __init__(self, context: Context) -> None:
        super().__init__()
        self.context = context
        self.engine = context.engine
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Ajustes"))
        self.banner = MessageBanner()
        layout.addWidget(self.banner)
        self.tabs = QTabWidget()
        layout.addWidget(self.tabs, 1)
        self.tabs.addTab(self._companies_tab(), "Empresas")
        self.tabs.addTab(self._sol_tab(), "Clave SOL")
        self.forms: dict[str, SettingsForm] = {}
        for title, keys in keys_by_tab(list(SETTINGS)).items():
            form = SettingsForm(context, keys, self.banner)
            self.forms[title] = form
            tab = QWidget()
            tab_layout = QVBoxLayout(tab)
            tab_layout.addWidget(form)
            if title == "Consultas":
                tab_layout.addWidget(self._token_box())
            if title == "SUNAT":
                browse = QPushButton("Elegir la carpeta de reglas de SUNAT…")
                browse.clicked.connect(self._choose_rules_dir)
                form.advanced_form.addRow("", browse)
            if title == "Datos y registro":
                tab_layout.addWidget(self._data_box(), 1)
            if title == "Copias de seguridad":
                browse = QPushButton("Elegir la carpeta de las copias…")
                browse.clicked.connect(self._choose_backup_folder)
                form.form.addRow("", browse)
                self.backups = BackupsBox(context)
                tab_layout.addWidget(self.backups)
            if title == "Base de datos compartida":
                self.shared_database = SharedDatabaseBox(context, partial(form.value, "database_url"), self.reload)
                tab_layout.addWidget(self.shared_database)
            if title == "Mensajería":
                note = QLabel("El receptor de webhooks recibe los eventos de la pasarela (mensajes entrantes, "
                              "entregas, lecturas). Con 127.0.0.1 solo lo alcanza este equipo: si la pasarela corre "
                              "en otro equipo use la dirección de la red local, y si está en la nube una dirección "
                              "pública (un túnel, ver docs/messaging.md) en listener_public_url. Las pasarelas se "
                              "configuran en Mensajes → Instancias.")
                note.setWordWrap(True)
                tab_layout.addWidget(note)
                self.reach_button = QPushButton("Probar el receptor")
                self.reach_button.setToolTip("Pide una comprobación a la dirección que se registra en las pasarelas")
                self.reach_button.clicked.connect(self.check_listener)
                tab_layout.addWidget(self.reach_button)
            if title == "API local":
                note = QLabel("La API local atiende solo a este equipo (p. ej. un punto de venta). Se inicia con "
                              "«yupana serve»; los programas deben enviar la cabecera Authorization: Bearer TOKEN "
                              "con el token de abajo. La descripción de la API está en /openapi.json.")
                note.setWordWrap(True)
                tab_layout.addWidget(note)
                tab_layout.addWidget(self._api_token_box())
            tab_layout.addStretch(0)
            self.tabs.addTab(tab, title)
        self.reload()

    def check_listener(self) -> None:
        self.banner.clear()
        self.context.workers.run(self, self.engine.messaging.check_listener, done=self._listener_checked,
                                 busy=[self.reach_button])

    def _listener_checked(self, result: Reachability) -> None:
        if result.local_only:
            self.banner.show_message(f"El receptor responde en {result.url}, pero solo desde este equipo: una "
                                     "pasarela en otro equipo o en la nube no podrá enviarle eventos. Use la "
                                     "dirección de la red local o un túnel (listener_public_url).", "warning")
        else:
            self.banner.show_message(f"El receptor responde en {result.url}: las pasarelas pueden enviarle "
                                     "eventos.", "success")

    def reload(self) -> None:
        self.context.workers.run(self, current_settings, self.engine, done=self._loaded)
        self.company_form.reload_companies()

    def _loaded(self, values: dict[str, str]) -> None:
        for form in self.forms.values():
            form.load(values)

    # ------------------------------------------------------------ companies and SOL

    def _companies_tab(self) -> QWidget:
        self.company_form = CompanyForm(self.context, self.banner)
        self.company_form.companies_loaded.connect(self._fill_sol_companies)
        return self.company_form

    def _sol_tab(self) -> QWidget:
        tab, form, self.sol_errors = form_tab()
        self.sol_company = QComboBox()
        self.sol_user = QLineEdit()
        self.sol_user.setPlaceholderText("p. ej. MODDATOS")
        self.sol_password = QLineEdit()
        self.sol_password.setEchoMode(QLineEdit.EchoMode.Password)
        self.sol_password.setPlaceholderText("se guarda cifrada; déjela vacía para no cambiarla")
        self.sol_save = QPushButton("Guardar clave SOL")
        form.addRow("Empresa:", self.sol_company)
        form.addRow("Usuario SOL:", self.sol_errors.wrap(self.sol_user, "usuario"))
        form.addRow("Clave SOL:", self.sol_errors.wrap(self.sol_password, "clave"))
        form.addRow("", self.sol_save)
        note = QLabel("La clave SOL se guarda cifrada en este equipo y nunca se muestra ni se escribe en el registro.")
        note.setWordWrap(True)
        form.addRow("", note)
        self.sol_save.clicked.connect(self.save_sol)
        self.sol_company.currentIndexChanged.connect(self._load_sol)
        return tab

    def _fill_sol_companies(self, companies: list) -> None:
        current = self.sol_company.currentData()
        self.sol_company.clear()
        for company in companies:
            self.sol_company.addItem(f"{company.ruc} — {company.razon_social}", company.ruc)
        index = self.sol_company.findData(current)
        self.sol_company.setCurrentIndex(max(index, 0))

    def _load_sol(self) -> None:
        ruc = self.sol_company.currentData()
        if ruc:
            self.context.workers.run(self, lambda: self.engine.invoicing.sol_credentials(ruc),
                                     done=self._show_sol, failed=lambda exc: self.sol_user.clear())

    def _show_sol(self, credentials: tuple[str, str]) -> None:
        user, _ = credentials
        self.sol_user.setText(user)

    def save_sol(self) -> None:
        ruc, user, password = self.sol_company.currentData(), self.sol_user.text().strip(), self.sol_password.text()
        self.sol_errors.clear()
        if not ruc:
            self.banner.show_message("Primero registre una empresa en la pestaña Empresas.", "warning")
            return
        self.context.workers.run(self, lambda: self.engine.invoicing.set_sol_credentials(ruc, user, password),
                                 done=self._sol_saved, failed=self._sol_failed, busy=[self.sol_save])

    def _sol_saved(self, _: Any) -> None:
        self.sol_password.clear()
        self.banner.show_message("Usuario y clave SOL guardados (cifrados).", "success")

    def _sol_failed(self, exc: BaseException) -> None:
        self.sol_errors.show(exc)
        self.banner.show_error(exc)

    # ------------------------------------------------------------ providers, rules, data

    def _token_box(self) -> QWidget:
        box = QWidget()
        row = QHBoxLayout(box)
        self.token_provider = QLineEdit()
        self.token_provider.setPlaceholderText("proveedor, p. ej. factiliza")
        fit_placeholder(self.token_provider)
        self.token_value = QLineEdit()
        self.token_value.setEchoMode(QLineEdit.EchoMode.Password)
        self.token_value.setPlaceholderText("token (se guarda cifrado)")
        self.token_save = QPushButton("Guardar token")
        row.addWidget(QLabel("Token de proveedor:"))
        row.addWidget(self.token_provider)
        row.addWidget(self.token_value, 1)
        row.addWidget(self.token_save)
        self.token_save.clicked.connect(self.save_token)
        return box

    def save_token(self) -> None:
        name, token = self.token_provider.text().strip(), self.token_value.text()

        def saved(_result: object) -> None:
            self.token_value.clear()
            self.banner.show_message(f"Token de «{name}» guardado (cifrado).", "success")

        self.context.workers.run(self, lambda: self.engine.lookups.set_provider_token(name, token), done=saved,
                                 failed=self.banner.show_error, busy=[self.token_save])

    # ------------------------------------------------------------ the local API's token

    def _api_token_box(self) -> QWidget:
        box = QWidget()
        row = QHBoxLayout(box)
        self.api_token = QLineEdit()
        self.api_token.setReadOnly(True)
        self.api_token.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_token.setPlaceholderText("pulse «Mostrar» para ver el token")
        self.api_token_show = QPushButton("Mostrar")
        self.api_token_show.setCheckable(True)
        self.api_token_new = QPushButton("Generar token nuevo…")
        row.addWidget(QLabel("Token de la API local:"))
        row.addWidget(self.api_token, 1)
        row.addWidget(self.api_token_show)
        row.addWidget(self.api_token_new)
        self.api_token_show.toggled.connect(self.show_api_token)
        self.api_token_new.clicked.connect(self.ask_new_api_token)
        return box

    def show_api_token(self, shown: bool) -> None:
        """The token is read (and created on first use) in a worker only when asked for; hidden again on untoggle."""
        if not shown:
            self.api_token.setEchoMode(QLineEdit.EchoMode.Password)
            self.api_token.clear()
            return
        self.context.workers.run(self, self.engine.admin.api_token, done=self._api_token_shown,
                                 failed=self._api_token_failed, busy=[self.api_token_show, self.api_token_new])

    def _api_token_shown(self, token: str) -> None:
        self.api_token.setText(token)
        self.api_token.setEchoMode(QLineEdit.EchoMode.Normal)

    def _api_token_failed(self, exc: BaseException) -> None:
        self.api_token_show.setChecked(False)
        self.banner.show_error(exc)

    def ask_new_api_token(self) -> None:
        self.confirm_box = confirm(self, "Token nuevo de la API local",
                                   "El token actual dejará de valer al instante: los programas que lo usan (p. ej. "
                                   "el punto de venta) necesitarán el nuevo. ¿Generar un token nuevo?",
                                   self.new_api_token)

    def new_api_token(self) -> None:
        self.context.workers.run(self, self.engine.admin.new_api_token, done=self._api_token_renewed,
                                 failed=self.banner.show_error, busy=[self.api_token_show, self.api_token_new])

    def _api_token_renewed(self, token: str) -> None:
        self.api_token_show.blockSignals(True)
        self.api_token_show.setChecked(True)
        self.api_token_show.blockSignals(False)
        self._api_token_shown(token)
        self.banner.show_message("Token nuevo generado: el anterior ya no vale. Cópielo en los programas que usan "
                                 "la API local.", "success")

    def _choose_backup_folder(self) -> None:
        choose_path(self, "Carpeta de las copias de seguridad",
                    lambda path: self.forms["Copias de seguridad"].set_value("backup_folder", path), folder=True)

    def _choose_rules_dir(self) -> None:
        choose_path(self, "Carpeta de reglas de SUNAT (VALI)",
                    lambda path: self.forms["SUNAT"].set_value("sunat_rules_dir", path), folder=True)

    def _data_box(self) -> QWidget:
        box = QWidget()
        column = QVBoxLayout(box)
        home = self.engine.admin.home()
        folder = QLabel(f"Carpeta de datos: {home}\n(para usar otra, inicie Yupana con la variable YUPANA_HOME o la "
                        "opción --home)")
        folder.setWordWrap(True)
        open_folder = QPushButton("Abrir la carpeta de datos")
        open_folder.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(home))))
        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setPlaceholderText("Pulse «Ver registro» para mostrar las últimas líneas.")
        self.log_refresh = QPushButton("Ver registro")
        self.log_refresh.clicked.connect(self.show_log)
        row = QHBoxLayout()
        row.addWidget(open_folder)
        row.addWidget(self.log_refresh)
        row.addStretch(1)
        column.addWidget(folder)
        column.addLayout(row)
        column.addWidget(QLabel(f"Registro: {self.engine.admin.log_file()}"))
        column.addWidget(self.log_view, 1)
        return box

    def show_log(self) -> None:
        self.context.workers.run(self, read_log_tail, self.engine.admin.log_file(), done=self._show_log_text,
                                 busy=[self.log_refresh])

    def _show_log_text(self, text: str) -> None:
        self.log_view.setPlainText(text)
        self.log_view.verticalScrollBar().setValue(self.log_view.verticalScrollBar().maximum())
