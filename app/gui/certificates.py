"""Certificados: import PFX/P12, list with validity and an expiry badge, test certificates, default, delete."""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core import clock
from app.core.errors import unreadable_file

from .context import Context
from .dialogs import PasswordDialog, choose_path, confirm
from .widgets import Badge, MessageBanner, heading, value_of
from .workers import require

COLUMNS = ["Titular", "RUC", "Válido desde", "Válido hasta", "Estado", "Predeterminado"]
SOON_DAYS = 30


def first(record: Any, *names: str) -> Any:
    for name in names:
        value = value_of(record, name)
        if value not in (None, ""):
            return value
    return None


def as_date(value: Any) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).date()
        except ValueError:
            return None
    return None


def expiry(valid_until: date | None, today: date | None = None) -> tuple[str, str]:
    """(badge text, colour) for a certificate's expiry date."""
    if valid_until is None:
        return "Sin fecha", "#757575"
    days = (valid_until - (today or clock.now().date())).days
    if days < 0:
        return "Vencido", "#c62828"
    if days <= SOON_DAYS:
        return f"Vence en {days} días", "#e65100"
    return "Vigente", "#2e7d32"


def common_name(subject: str) -> str:
    """The holder's name (CN) out of a distinguished name; the whole text when there is none."""
    match = re.search(r"(?:^|,)\s*CN=((?:\\,|[^,])+)", subject)
    return match.group(1).replace("\\,", ",").strip() if match else subject


def certificate_badge(cert: Any, until: date | None) -> tuple[str, str]:
    """The store's own verdict when it gives one (same 30-day rule), else from the date."""
    if hasattr(cert, "vencido") and hasattr(cert, "por_vencer"):
        if cert.vencido():
            return "Vencido", "#c62828"
        if cert.por_vencer():
            return f"Vence en {max(cert.dias_restantes(), 0)} días", "#e65100"
        return "Vigente", "#2e7d32"
    return expiry(until)


class CertificatesPage(QWidget):
    def __init__(self, context: Context) -> None:
        super().__init__()
        self.context = context
        self.engine = context.engine
        self.certificates: list = []
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Certificados digitales"))
        intro = QLabel("El certificado firma sus comprobantes. Importe el archivo .pfx o .p12 que le dio su entidad "
                       "certificadora, o cree uno de prueba para el modo sandbox o SUNAT beta.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.banner = MessageBanner()
        layout.addWidget(self.banner)
        buttons = QHBoxLayout()
        self.import_button = QPushButton("Importar PFX/P12…")
        self.company = QComboBox()
        self.company.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.create_button = QPushButton("Crear certificado de prueba")
        self.default_button = QPushButton("Usar como predeterminado")
        self.delete_button = QPushButton("Eliminar…")
        for widget in (self.import_button, QLabel("Empresa:"), self.company, self.create_button,
                       self.default_button, self.delete_button):
            buttons.addWidget(widget)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        layout.addWidget(self.table, 1)
        self.import_button.clicked.connect(self.choose_file)
        self.create_button.clicked.connect(self.create_test)
        self.default_button.clicked.connect(self.make_default)
        self.delete_button.clicked.connect(self.ask_delete)
        self.context.events.event.connect(self._on_event)
        self.reload()

    def _on_event(self, name: str, payload: dict) -> None:
        if name.startswith("certificate") or name == "company.saved":
            self.reload()

    # ------------------------------------------------------------ list

    def reload(self) -> None:
        def load() -> tuple[list, list, dict]:
            companies = self.engine.list_companies()
            certificates = require(self.engine, "list_certificates")()
            defaults = {}
            if hasattr(self.engine, "default_certificate"):
                for company in companies:
                    chosen = self.engine.default_certificate(company.ruc)
                    if chosen is not None:
                        defaults[company.ruc] = first(chosen, "certificado_id", "id") or chosen
            return companies, list(certificates), defaults

        self.context.workers.run(self, load, done=self._show, failed=self._unavailable)

    def _unavailable(self, exc: BaseException) -> None:
        self.banner.show_error(exc)
        for button in (self.import_button, self.create_button, self.default_button, self.delete_button):
            button.setEnabled(False)
        self.context.workers.run(self, self.engine.list_companies, done=self._fill_companies)

    def _fill_companies(self, companies: list) -> None:
        current = self.company.currentData()
        self.company.clear()
        for company in companies:
            self.company.addItem(f"{company.ruc} — {company.razon_social}", company.ruc)
        self.company.setCurrentIndex(max(self.company.findData(current), 0))

    def _show(self, loaded: tuple[list, list, dict]) -> None:
        companies, certificates, defaults = loaded
        self._fill_companies(companies)
        self.certificates = certificates
        self.table.setRowCount(len(certificates))
        for row, cert in enumerate(certificates):
            until = as_date(first(cert, "valido_hasta", "valid_until"))
            since = as_date(first(cert, "valido_desde", "valid_from"))
            ruc = first(cert, "ruc") or ""
            is_default = bool(first(cert, "predeterminado")) or \
                defaults.get(ruc) == first(cert, "certificado_id", "id")
            test = " (prueba)" if first(cert, "es_prueba") else ""
            subject = first(cert, "sujeto", "subject") or ""
            values = [common_name(subject) + test, ruc,
                      since.isoformat() if since else "", until.isoformat() if until else ""]
            for column, text in enumerate(values):
                self.table.setItem(row, column, QTableWidgetItem(str(text)))
            self.table.item(row, 0).setToolTip(subject)
            text, colour = certificate_badge(cert, until)
            self.table.setCellWidget(row, 4, Badge(text, colour))
            mark = QTableWidgetItem("★ sí" if is_default else "")
            mark.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            self.table.setItem(row, 5, mark)
        if not certificates:
            self.banner.show_message("Todavía no hay certificados. Importe uno o cree uno de prueba.", "info")

    def selected(self) -> Any | None:
        row = self.table.currentRow()
        return self.certificates[row] if 0 <= row < len(self.certificates) else None

    # ------------------------------------------------------------ actions

    def choose_file(self) -> None:
        choose_path(self, "Elegir el certificado digital", self.ask_password,
                    name_filter="Certificados (*.pfx *.p12);;Todos los archivos (*)")

    def ask_password(self, path: str) -> PasswordDialog:
        self.password_dialog = PasswordDialog(
            self, "Contraseña del certificado",
            f"Escriba la contraseña del archivo «{Path(path).name}». No se guarda: solo se usa para abrirlo.",
            lambda password: self.import_file(path, password))
        self.password_dialog.open()
        return self.password_dialog

    def import_file(self, path: str, password: str) -> None:
        self.banner.clear()

        def work() -> Any:
            try:
                data = Path(path).read_bytes()
            except OSError as exc:
                raise unreadable_file("archivo", path, exc) from None
            return require(self.engine, "import_certificate")(data, password)

        self.context.workers.run(self, work, done=lambda cert: self._done("Certificado importado.", cert),
                                 failed=self.banner.show_error, busy=[self.import_button])

    def create_test(self) -> None:
        ruc = self.company.currentData()
        if not ruc:
            self.banner.show_message("Primero registre su empresa en Ajustes → Empresas.", "warning")
            return
        self.context.workers.run(self, lambda: require(self.engine, "create_test_certificate")(ruc),
                                 done=lambda cert: self._done("Certificado de prueba creado (solo para sandbox y "
                                                              "SUNAT beta).", cert),
                                 failed=self.banner.show_error, busy=[self.create_button])

    def make_default(self) -> None:
        cert = self.selected()
        if cert is None:
            self.banner.show_message("Elija un certificado de la lista.", "warning")
            return
        ruc, cert_id = first(cert, "ruc"), first(cert, "certificado_id", "id")
        self.context.workers.run(self, lambda: require(self.engine, "set_default_certificate")(ruc, cert_id),
                                 done=lambda _: self._done("Certificado predeterminado actualizado.", None),
                                 failed=self.banner.show_error, busy=[self.default_button])

    def ask_delete(self) -> None:
        cert = self.selected()
        if cert is None:
            self.banner.show_message("Elija un certificado de la lista.", "warning")
            return
        name = first(cert, "sujeto", "subject") or first(cert, "certificado_id", "id")
        self.confirm_box = confirm(self, "Eliminar certificado",
                                   f"¿Eliminar el certificado «{name}»? No podrá firmar con él después.",
                                   lambda: self.delete(cert))

    def delete(self, cert: Any) -> None:
        cert_id = first(cert, "certificado_id", "id")
        self.context.workers.run(self, lambda: require(self.engine, "delete_certificate")(cert_id),
                                 done=lambda _: self._done("Certificado eliminado.", None),
                                 failed=self.banner.show_error, busy=[self.delete_button])

    def _done(self, message: str, _: Any) -> None:
        self.banner.show_message(message, "success")
        self.reload()
