"""Consultas: RUC, carnet de extranjería and plate lookups, and the import of SUNAT's RUC register."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.api import sunat_catalogues

from .context import Context
from .dialogs import choose_path
from .widgets import FieldErrors, MessageBanner, ResultCard, heading, show_progress
from .workers import Job

if TYPE_CHECKING:
    from app.core.api import ContractModel, Engine, PadronImport, PadronStatus

Lookup = Callable[["Engine", str], "ContractModel"]
CARNET = sunat_catalogues.IDENTITY_DOCUMENTS[sunat_catalogues.CARNET_EXTRANJERIA]  # catalogue 06's label
KINDS: dict[str, tuple[Lookup, str]] = {  # label: (the engine's lookup, placeholder)
    "RUC": (lambda engine, numero: engine.lookups.ruc(numero), "11 dígitos, p. ej. 20100066603"),
    CARNET: (lambda engine, numero: engine.lookups.ce(numero), "p. ej. 001234567"),
    "Placa": (lambda engine, numero: engine.lookups.placa(numero), "p. ej. ABC123"),
}

LABELS = {
    "ruc": "RUC", "razon_social": "Razón social", "tipo_contribuyente": "Tipo de contribuyente",
    "estado": "Estado", "condicion": "Condición", "direccion": "Dirección", "departamento": "Departamento",
    "provincia": "Provincia", "distrito": "Distrito", "actividad_economica": "Actividad económica",
    "fuente": "Fuente", "desactualizado": "Dato desactualizado", "ce": "Carnet", "nombre_completo": "Nombre completo",
    "nombres": "Nombres", "apellido_paterno": "Apellido paterno", "apellido_materno": "Apellido materno",
    "nacionalidad": "Nacionalidad", "placa": "Placa", "marca": "Marca", "modelo": "Modelo", "color": "Color",
    "año": "Año", "clase": "Clase", "serie": "Serie", "motor": "Motor",
}


class LookupsPage(QWidget):
    def __init__(self, context: Context) -> None:
        super().__init__()
        self.context = context
        self.engine = context.engine
        self.import_job: Job | None = None
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Consultas"))
        self.banner = MessageBanner()
        layout.addWidget(self.banner)
        layout.addWidget(self._lookup_box())
        layout.addWidget(self._register_box())
        layout.addStretch(1)
        self.refresh_register_status()

    # ------------------------------------------------------------ lookups

    def _lookup_box(self) -> QGroupBox:
        box = QGroupBox("Buscar")
        self.kind = QComboBox()
        self.kind.addItems(list(KINDS))
        self.number = QLineEdit()
        self.search_button = QPushButton("Buscar")
        self.search_button.setDefault(True)
        self.errors = FieldErrors()
        self.card = ResultCard()
        self.card.hide()
        row = QHBoxLayout()
        row.addWidget(self.kind)
        row.addWidget(self.number, 1)
        row.addWidget(self.search_button)
        layout = QVBoxLayout(box)
        layout.addLayout(row)
        layout.addWidget(self.errors.label_for("numero"))
        layout.addWidget(self.card)
        self.kind.currentTextChanged.connect(self._kind_changed)
        self.number.returnPressed.connect(self.search)
        self.search_button.clicked.connect(self.search)
        self._kind_changed(self.kind.currentText())
        return box

    def _kind_changed(self, kind: str) -> None:
        self.number.setPlaceholderText(KINDS[kind][1])

    def search(self) -> None:
        lookup, _ = KINDS[self.kind.currentText()]
        self.errors.clear()
        self.banner.clear()
        self.context.workers.run(self, lookup, self.engine, self.number.text().strip(),
                                 done=self._show_record, failed=self._lookup_failed,
                                 busy=[self.search_button, self.number])

    def _show_record(self, record: ContractModel) -> None:
        data = record.to_json()
        self.card.show_record(data, LABELS)
        self.card.show()
        if data.get("desactualizado"):
            self.banner.show_message("El dato viene de la caché y puede estar desactualizado: el proveedor no "
                                     "respondió.", "warning")

    def _lookup_failed(self, exc: BaseException) -> None:
        self.card.hide()
        self.errors.show_or_tell(exc, self.banner)

    # ------------------------------------------------------------ the register

    def _register_box(self) -> QGroupBox:
        box = QGroupBox("Padrón reducido de RUC de SUNAT (consultas sin internet)")
        self.register_status = QLabel("Padrón: consultando…")
        self.import_button = QPushButton("Importar padrón…")
        self.cancel_button = QPushButton("Cancelar")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setValue(0)
        self.progress.hide()
        row = QHBoxLayout()
        row.addWidget(self.register_status, 1)
        row.addWidget(self.import_button)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(box)
        layout.addLayout(row)
        layout.addWidget(self.progress)
        self.import_button.clicked.connect(self.choose_register)
        self.cancel_button.clicked.connect(self.cancel_import)
        return box

    def refresh_register_status(self) -> None:
        self.context.workers.run(self, self.engine.lookups.padron_status,
                                 done=self._show_register_status, failed=self._register_unavailable)

    def _show_register_status(self, status: PadronStatus) -> None:
        if status.loaded:
            rows, source = status.rows, status.source
            loaded_at = str(status.loaded_at or "").replace("T", " ")[:16]
            count = f"{rows:,}".replace(",", " ") if isinstance(rows, int) else rows
            origin = f" de «{source}»" if source else ""
            self.register_status.setText(f"Padrón cargado el {loaded_at}: {count} contribuyentes{origin}.")
        else:
            self.register_status.setText("Todavía no se cargó ningún padrón. Descargue padron_reducido_ruc.zip "
                                         "de la página de SUNAT e impórtelo aquí.")

    def _register_unavailable(self, exc: BaseException) -> None:
        self.register_status.setText(f"Padrón: {getattr(exc, 'message', 'no disponible')}")
        self.import_button.setEnabled(False)

    def choose_register(self) -> None:
        choose_path(self, "Elegir el padrón reducido de RUC (padron_reducido_ruc.zip o .txt)", self.import_register,
                    name_filter="Padrón de SUNAT (*.zip *.txt);;Todos los archivos (*)")

    def import_register(self, path: str) -> Job:
        self.banner.clear()
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.setEnabled(True)
        self.register_status.setText("Importando… las consultas siguen usando el padrón anterior hasta terminar.")

        def work(job: Job) -> PadronImport | None:
            steps = self.engine.lookups.import_padron_steps(path)
            try:
                for step in steps:
                    if step.result is not None:
                        return step.result
                    job.report(step.done, step.total)
                    if job.cancelled.is_set():
                        break  # closing the steps stops the import: the previous padrón stays in use
            finally:
                if isinstance(steps, Generator):  # typed as an Iterator, made by a generator
                    steps.close()
            return None  # cancelled

        job = self.context.workers.run(self, work, pass_job=True, done=self._imported, failed=self._import_failed,
                                       progress=lambda value: show_progress(self.progress, value),
                                       busy=[self.import_button])
        self.import_job = job
        return job


    def cancel_import(self) -> None:
        if self.import_job:
            self.import_job.cancel()
            self.cancel_button.setEnabled(False)
            self.register_status.setText("Cancelando la importación…")

    def _imported(self, summary: PadronImport | None) -> None:
        self.cancel_button.setEnabled(False)
        self.import_job = None
        if summary is None or summary.cancelled:
            self.progress.hide()
            self.banner.show_message("Importación cancelada: se mantiene el padrón anterior.", "info")
        else:
            self.progress.setValue(100)
            loaded, skipped = summary.rows_loaded, summary.rows_skipped
            damaged = f"; se omitieron {skipped} líneas dañadas" if skipped else ""
            self.banner.show_message(f"Padrón importado: {loaded} contribuyentes{damaged} "
                                     f"({summary.seconds} s).", "success")
        self.refresh_register_status()

    def _import_failed(self, exc: BaseException) -> None:
        self.cancel_button.setEnabled(False)
        self.import_job = None
        self.progress.hide()
        self.banner.show_error(exc)
        self.refresh_register_status()
