"""Certificados: import PFX/P12, list with validity and an expiry badge, test certificates, default, delete."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import TYPE_CHECKING

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

from app.core.api import events, unreadable_file

from .context import Context
from .dialogs import PasswordDialog, choose_path, confirm
from .widgets import Badge, MessageBanner, heading

if TYPE_CHECKING:
    from app.core.api import CertificateInfo, Company, Event

REFRESH_EVENTS = (events.CERTIFICATE_SAVED, events.CERTIFICATE_DELETED, events.COMPANY_SAVED,
                  events.DESK_RECONNECTED)
COLUMNS = ["Titular", "RUC", "Válido desde", "Válido hasta", "Estado", "Predeterminado"]


def common_name(subject: str) -> str:
    """The holder's name (CN) out of a distinguished name; the whole text when there is none."""
    match = re.search(r"(?:^|,)\s*CN=((?:\\,|[^,])+)", subject)
    return match.group(1).replace("\\,", ",").strip() if match else subject


def certificate_badge(cert: CertificateInfo, now: dt.datetime | None = None) -> tuple[str, str]:
    """(badge text, colour): the store's own verdict (expired, within its last 30 days, valid)."""
    if cert.vencido(now):
        return "Vencido", "#c62828"
    if cert.por_vencer(now):
        return f"Vence en {max(cert.dias_restantes(now), 0)} días", "#e65100"
    return "Vigente", "#2e7d32"


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
        chooser = QHBoxLayout()  # on its own row: the company's whole name, beside the buttons it would not fit
        chooser.addWidget(QLabel("Empresa:"))
        chooser.addWidget(self.company)
        chooser.addStretch(1)
        layout.addLayout(chooser)
        for widget in (self.import_button, self.create_button, self.default_button, self.delete_button):
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
        self.context.events.occurred.connect(self._on_event)
        self.reload()

    def _on_event(self, name: str, payload: Event) -> None:
        if name in REFRESH_EVENTS:
            self.reload()

    # ------------------------------------------------------------ list

    def reload(self) -> None:
        def load() -> tuple[list[Company], list[CertificateInfo]]:
            return self.engine.admin.companies(), self.engine.invoicing.certificates()

        self.context.workers.run(self, load, done=self._show, failed=self._unavailable)

    def _unavailable(self, exc: BaseException) -> None:
        self.banner.show_error(exc)
        for button in (self.import_button, self.create_button, self.default_button, self.delete_button):
            button.setEnabled(False)
        self.context.workers.run(self, self.engine.admin.companies, done=self._fill_companies)

    def _fill_companies(self, companies: list) -> None:
        current = self.company.currentData()
        self.company.clear()
        for company in companies:
            self.company.addItem(f"{company.ruc} — {company.razon_social}", company.ruc)
        self.company.setCurrentIndex(max(self.company.findData(current), 0))

    def _show(self, loaded: tuple[list[Company], list[CertificateInfo]]) -> None:
        companies, certificates = loaded
        self._fill_companies(companies)
        self.certificates = certificates
        self.table.setRowCount(len(certificates))
        for row, cert in enumerate(certificates):
            test = " (prueba)" if cert.es_prueba else ""
            values = [common_name(cert.sujeto) + test, cert.ruc, cert.valido_desde.date().isoformat(),
                      cert.valido_hasta.date().isoformat()]
            for column, text in enumerate(values):
                item = QTableWidgetItem(text)
                if column == 0:
                    item.setToolTip(cert.sujeto)
                self.table.setItem(row, column, item)
            self.table.setCellWidget(row, 4, Badge(*certificate_badge(cert)))
            mark = QTableWidgetItem("★ sí" if cert.predeterminado else "")
            mark.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            self.table.setItem(row, 5, mark)
        if not certificates:
            self.banner.show_message("Todavía no hay certificados. Importe uno o cree uno de prueba.", "info")

    def selected(self) -> CertificateInfo | None:
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

        def work() -> CertificateInfo:
            try:
                data = Path(path).read_bytes()
            except OSError as exc:
                raise unreadable_file("archivo", path, exc) from None
            return self.engine.invoicing.import_certificate(data, password)

        self.context.workers.run(self, work, done=lambda cert: self._done("Certificado importado.", cert),
                                 failed=self.banner.show_error, busy=[self.import_button])

    def create_test(self) -> None:
        ruc = self.company.currentData()
        if not ruc:
            self.banner.show_message("Primero registre su empresa en Ajustes → Empresas.", "warning")
            return
        self.context.workers.run(self, lambda: self.engine.invoicing.create_test_certificate(ruc),
                                 done=lambda cert: self._done("Certificado de prueba creado (solo para sandbox y "
                                                              "SUNAT beta).", cert),
                                 failed=self.banner.show_error, busy=[self.create_button])

    def make_default(self) -> None:
        cert = self.selected()
        if cert is None:
            self.banner.show_message("Elija un certificado de la lista.", "warning")
            return
        self.context.workers.run(self, self.engine.invoicing.set_default_certificate, cert.ruc, cert.certificado_id,
                                 done=lambda _: self._done("Certificado predeterminado actualizado.", None),
                                 failed=self.banner.show_error, busy=[self.default_button])

    def ask_delete(self) -> None:
        cert = self.selected()
        if cert is None:
            self.banner.show_message("Elija un certificado de la lista.", "warning")
            return
        name = cert.sujeto or cert.certificado_id
        self.confirm_box = confirm(self, "Eliminar certificado",
                                   f"¿Eliminar el certificado «{name}»? No podrá firmar con él después.",
                                   lambda: self.delete(cert))

    def delete(self, cert: CertificateInfo) -> None:
        self.context.workers.run(self, self.engine.invoicing.delete_certificate, cert.certificado_id,
                                 done=lambda _: self._done("Certificado eliminado.", None),
                                 failed=self.banner.show_error, busy=[self.delete_button])

    def _done(self, message: str, _: object) -> None:
        self.banner.show_message(message, "success")
        self.reload()
