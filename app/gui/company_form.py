"""The company profile form: RUC looked up to fill the name and address; used by Ajustes and the assistant."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.api import Company, invalid, ubigeo

from .context import Context
from .dialogs import choose_path
from .widgets import FieldErrors, MessageBanner

if TYPE_CHECKING:
    from app.core.api import PrintOptions, RucRecord


def _plain(text: str | None) -> str:
    decomposed = unicodedata.normalize("NFKD", (text or "").strip().upper())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def find_ubigeo(departamento: str | None, provincia: str | None, distrito: str | None) -> str | None:
    """The six-digit code of a place named by SUNAT's register (case and accents ignored)."""
    wanted = (_plain(departamento), _plain(provincia), _plain(distrito))
    if not all(wanted):
        return None
    for code, place in ubigeo.table().items():
        if (_plain(place.departamento), _plain(place.provincia), _plain(place.distrito)) == wanted:
            return code
    return None


FIELDS = [  # contract/company field, label, placeholder
    ("razon_social", "Razón social", ""),
    ("nombre_comercial", "Nombre comercial", "opcional"),
    ("direccion", "Dirección fiscal", "p. ej. AV. ABANCAY 123"),
    ("ubigeo", "Ubigeo", "6 dígitos, p. ej. 150101 (Lima, Lima, Lima)"),
    ("codigo_establecimiento", "Código de establecimiento", "0000 para el domicilio fiscal"),
]


def read_logo(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:
        raise invalid("logo", f"No se pudo leer el logo «{path}»: compruebe que el archivo existe.") from None


class CompanyForm(QWidget):
    companies_loaded = Signal(list)
    saved = Signal(object)

    def __init__(self, context: Context, banner: MessageBanner, with_list: bool = True) -> None:
        super().__init__()
        self.context, self.banner = context, banner
        self.engine = context.engine
        self.errors = FieldErrors()
        self.companies: list = []
        self.ruc = QLineEdit()
        self.ruc.setPlaceholderText("11 dígitos")
        self.lookup_button = QPushButton("Buscar en SUNAT")
        self.inputs: dict[str, QLineEdit] = {}
        form = QFormLayout()
        ruc_row = QHBoxLayout()
        ruc_row.addWidget(self.ruc, 1)
        ruc_row.addWidget(self.lookup_button)
        form.addRow("RUC:", self.errors.wrap(ruc_row, "ruc"))
        for name, label, placeholder in FIELDS:
            line = QLineEdit()
            line.setPlaceholderText(placeholder)
            self.inputs[name] = line
            form.addRow(f"{label}:", self.errors.wrap(line, name))
        self.inputs["codigo_establecimiento"].setText("0000")
        # How its vouchers print (docs/pdf.md): kept apart from the profile, saved with it.
        self.print_format = QComboBox()
        self.print_format.addItem("A4", "a4")
        self.print_format.addItem("Ticket de 80 mm", "ticket")
        self.logo_label = QLabel("Sin logo")
        self.logo_button = QPushButton("Elegir logo…")
        self.no_logo_button = QPushButton("Quitar logo")
        self.logo_path: str | None = None
        self.drop_logo = False
        logo_row = QHBoxLayout()
        logo_row.addWidget(self.logo_label, 1)
        logo_row.addWidget(self.logo_button)
        logo_row.addWidget(self.no_logo_button)
        self.prices_with_igv = QCheckBox("Precios incluyen IGV")
        self.prices_with_igv.setToolTip("Al emitir, la columna de precios toma precios con IGV (se puede cambiar en "
                                        "cada comprobante).")
        self.detraction_account = QLineEdit()
        self.detraction_account.setPlaceholderText("opcional, p. ej. 00-000-123456")
        self.detraction_account.setToolTip("La cuenta de detracciones de la empresa: el formulario de comprobantes la "
                                           "completa en la sección «Detracción» (se recuerda al emitir una factura "
                                           "con detracción).")
        if with_list:
            form.addRow("Precios al vender:", self.prices_with_igv)
            form.addRow("Cuenta de detracciones (Banco de la Nación):", self.detraction_account)
            form.addRow("Formato de impresión:", self.print_format)
            form.addRow("Logo en el comprobante:", self.errors.wrap(logo_row, "logo"))
        self.logo_button.clicked.connect(
            lambda: choose_path(self, "Elegir el logo (PNG o JPEG)", self.logo_chosen,
                                name_filter="Imágenes (*.png *.jpg *.jpeg)"))
        self.no_logo_button.clicked.connect(self.remove_logo)
        self.save_button = QPushButton("Guardar empresa")
        form.addRow("", self.save_button)
        layout = QHBoxLayout(self)
        self.list = QListWidget()
        self.list.setMaximumWidth(300)
        if with_list:
            left = QVBoxLayout()
            new = QPushButton("Nueva empresa")
            new.clicked.connect(self.clear)
            left.addWidget(self.list, 1)
            left.addWidget(new)
            layout.addLayout(left)
            self.save_button.clicked.connect(self.save)
        else:
            self.save_button.hide()
        layout.addLayout(form, 1)
        self.list.currentRowChanged.connect(self._select)
        self.lookup_button.clicked.connect(self.lookup)
        self.ruc.returnPressed.connect(self.lookup)

    # ------------------------------------------------------------ list

    def reload_companies(self) -> None:
        self.context.workers.run(self, self.engine.admin.companies, done=self._show_companies)

    def _show_companies(self, companies: list) -> None:
        self.companies = companies
        self.list.clear()
        for company in companies:
            self.list.addItem(f"{company.razon_social}\n{company.ruc}")
        if companies and not self.ruc.text():
            self.list.setCurrentRow(0)
        self.companies_loaded.emit(companies)

    def _select(self, row: int) -> None:
        if 0 <= row < len(self.companies):
            self.fill(self.companies[row])

    def fill(self, company: Company) -> None:
        self.ruc.setText(company.ruc)
        for name in self.inputs:
            self.inputs[name].setText(getattr(company, name) or "")
        self.logo_path, self.drop_logo = None, False
        self._load_options(company.ruc)

    def _load_options(self, ruc: str) -> None:
        self.context.workers.run(self, lambda: (self.engine.admin.print_options(ruc),
                                                self.engine.admin.prices_include_igv(ruc),
                                                self.engine.admin.detraction_account(ruc)),
                                 done=self._show_options)

    def _show_options(self, options: tuple[PrintOptions, bool, str | None]) -> None:
        self._show_print_options(options[0])
        self.prices_with_igv.setChecked(options[1])
        self.detraction_account.setText(options[2] or "")

    def _show_print_options(self, options: PrintOptions) -> None:
        self.print_format.setCurrentIndex(max(0, self.print_format.findData(options.formato)))
        self.logo_label.setText(f"Logo de {options.logo_px[0]} × {options.logo_px[1]} px" if options.logo_px
                                else "Sin logo")

    def logo_chosen(self, path: str) -> None:
        self.logo_path, self.drop_logo = path, False
        self.logo_label.setText(f"{Path(path).name} (se guarda con la empresa)")

    def remove_logo(self) -> None:
        self.logo_path, self.drop_logo = None, True
        self.logo_label.setText("Sin logo (se guarda con la empresa)")

    def clear(self) -> None:
        self.list.clearSelection()
        self.ruc.clear()
        for line in self.inputs.values():
            line.clear()
        self.inputs["codigo_establecimiento"].setText("0000")
        self.print_format.setCurrentIndex(0)
        self.prices_with_igv.setChecked(False)
        self.detraction_account.clear()
        self.logo_path, self.drop_logo = None, False
        self.logo_label.setText("Sin logo")
        self.errors.clear()

    # ------------------------------------------------------------ lookup and save

    def lookup(self) -> None:
        self.errors.clear()
        self.context.workers.run(self, lambda n: self.engine.lookups.ruc(n), self.ruc.text().strip(),
                                 done=self._fill_from_register, failed=self._lookup_failed,
                                 busy=[self.lookup_button])

    def _fill_from_register(self, record: RucRecord) -> None:
        if record.razon_social:
            self.inputs["razon_social"].setText(record.razon_social)
        if record.direccion:
            self.inputs["direccion"].setText(record.direccion)
        code = find_ubigeo(record.departamento, record.provincia, record.distrito)
        if code:
            self.inputs["ubigeo"].setText(code)
        estado, condicion = record.estado, record.condicion
        if estado and (estado.upper() != "ACTIVO" or (condicion or "HABIDO").upper() != "HABIDO"):
            self.banner.show_message(f"Atención: SUNAT registra este RUC como {estado} / {condicion}.", "warning")

    def _lookup_failed(self, exc: BaseException) -> None:
        if self.errors.show(exc) or not getattr(exc, "details", None):
            self.banner.show_error(exc)

    def company(self) -> Company:
        values = {name: line.text().strip() for name, line in self.inputs.items()}
        return Company(ruc=self.ruc.text().strip(), razon_social=values["razon_social"], ubigeo=values["ubigeo"],
                       direccion=values["direccion"], nombre_comercial=values["nombre_comercial"] or None,
                       codigo_establecimiento=values["codigo_establecimiento"] or "0000")

    def save(self) -> None:
        self.errors.clear()
        company, formato = self.company(), self.print_format.currentData()
        logo_path, drop_logo = self.logo_path, self.drop_logo
        prices_with_igv = self.prices_with_igv.isChecked()
        account = self.detraction_account.text().strip() or None

        def work() -> Company:
            saved = self.engine.admin.set_company(company)
            self.engine.admin.set_print_options(saved.ruc, formato, read_logo(logo_path) if logo_path else None,
                                                clear_logo=drop_logo)
            self.engine.admin.set_prices_include_igv(saved.ruc, prices_with_igv)
            self.engine.admin.set_detraction_account(saved.ruc, account)
            return saved

        self.context.workers.run(self, work, done=self._saved, failed=self.show_errors, busy=[self.save_button])

    def _saved(self, company: Company) -> None:
        self.logo_path, self.drop_logo = None, False
        self._load_options(company.ruc)
        self.banner.show_message(f"Empresa {company.razon_social} ({company.ruc}) guardada.", "success")
        self.saved.emit(company)
        self.reload_companies()

    def show_errors(self, exc: BaseException) -> None:
        """Field problems under their field; the rest in the banner."""
        if self.errors.show(exc) or not getattr(exc, "details", None):
            self.banner.show_error(exc)
