"""The «Consultas» page: RUC, carnet de extranjería and plate lookups, and the padrón import with a progress bar.

Lookups and the import run in worker threads (a provider may take up to its time-out, an import
minutes); results come back to the window through Qt signals, so the window never freezes.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.engine import Engine

KINDS = {"RUC": "ruc", "Carnet de extranjería": "ce", "Placa": "placa"}
LABELS = {"ruc": "RUC", "razon_social": "Razón social", "tipo_contribuyente": "Tipo de contribuyente",
          "estado": "Estado", "condicion": "Condición", "direccion": "Dirección", "departamento": "Departamento",
          "provincia": "Provincia", "distrito": "Distrito", "actividad_economica": "Actividad económica",
          "ce": "Carnet", "nombre_completo": "Nombre completo", "nombres": "Nombres",
          "apellido_paterno": "Apellido paterno", "apellido_materno": "Apellido materno",
          "nacionalidad": "Nacionalidad", "placa": "Placa", "marca": "Marca", "modelo": "Modelo", "color": "Color",
          "año": "Año", "clase": "Clase", "serie": "Serie", "motor": "Motor", "fuente": "Fuente",
          "desactualizado": "Desactualizado"}


class Signals(QObject):
    progress = Signal(int)  # per mille
    imported = Signal(dict)
    looked_up = Signal(int, dict)


class RegistryPage(QWidget):
    def __init__(self, engine: Engine) -> None:
        super().__init__()
        self.engine = engine
        self.signals = Signals()
        self._cancel = threading.Event()
        self._worker: threading.Thread | None = None
        # one reused thread for lookups, so its database connections are reused too
        self._lookups = ThreadPoolExecutor(max_workers=1, thread_name_prefix="registry-lookup")
        self.destroyed.connect(lambda *_: self._lookups.shutdown(wait=False))
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Consultas</h2>"))

        row = QHBoxLayout()
        self.kind = QComboBox()
        self.kind.addItems(list(KINDS))
        self.number = QLineEdit()
        self.number.setPlaceholderText("Número (RUC de 11 dígitos, carnet o placa sin guion)")
        self.lookup_button = QPushButton("Consultar")
        row.addWidget(self.kind)
        row.addWidget(self.number, 1)
        row.addWidget(self.lookup_button)
        layout.addLayout(row)
        self.result = QLabel("")
        self.result.setWordWrap(True)
        self.result_form = QFormLayout()
        layout.addWidget(self.result)
        layout.addLayout(self.result_form)

        layout.addWidget(QLabel("<h3>Padrón reducido de RUC (SUNAT)</h3>"))
        self.padron_label = QLabel("")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat("%p%")
        buttons = QHBoxLayout()
        self.import_button = QPushButton("Importar padrón…")
        self.cancel_button = QPushButton("Cancelar")
        self.cancel_button.setEnabled(False)
        buttons.addWidget(self.import_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        layout.addWidget(self.padron_label)
        layout.addWidget(self.progress)
        layout.addLayout(buttons)
        layout.addStretch(1)

        self.lookup_button.clicked.connect(self.start_lookup)
        self.number.returnPressed.connect(self.start_lookup)
        self.import_button.clicked.connect(self.choose_file)
        self.cancel_button.clicked.connect(self._cancel.set)
        self.signals.progress.connect(self.progress.setValue)
        self.signals.imported.connect(self._imported)
        self.signals.looked_up.connect(self._show_result)
        self.show_status()

    # -------------------------------------------------------------- lookups

    def start_lookup(self) -> None:
        operation, numero = KINDS[self.kind.currentText()], self.number.text()
        self.lookup_button.setEnabled(False)
        self.result.setText("Consultando…")

        def work() -> None:
            status, envelope = self.engine.call(operation, numero=numero)
            self.signals.looked_up.emit(status, envelope)

        self._lookups.submit(work)

    def _show_result(self, status: int, envelope: dict[str, Any]) -> None:
        self.lookup_button.setEnabled(True)
        while self.result_form.rowCount():
            self.result_form.removeRow(0)
        if not envelope.get("success"):
            self.result.setText(envelope["error"]["message"])
            return
        self.result.setText("")
        for key, value in envelope["data"].items():
            shown = "sí" if value is True else ("—" if value is None else str(value))
            self.result_form.addRow(LABELS.get(key, key), QLabel(shown))

    # -------------------------------------------------------------- padrón import

    def show_status(self) -> None:
        status = self.engine.padron_status()
        if status["loaded"]:
            self.padron_label.setText(f"Cargado: {status['rows']:,} contribuyentes de «{status['source']}» "
                                      f"({status['loaded_at']}).".replace(",", "."))
        else:
            self.padron_label.setText("No hay padrón cargado. Descargue padron_reducido_ruc.zip de SUNAT e impórtelo.")

    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Padrón reducido de RUC", "",
                                              "Padrón de SUNAT (*.zip *.txt);;Todos los archivos (*)")
        if path:
            self.start_import(path)

    def start_import(self, path: str) -> None:
        self._cancel.clear()
        self.import_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress.setValue(0)
        self.padron_label.setText("Importando… las consultas siguen usando el padrón anterior hasta terminar.")

        def progress(done: int, total: int) -> None:
            self.signals.progress.emit(int(1000 * done / total) if total else 1000)

        def work() -> None:
            try:
                summary = self.engine.import_padron(path, progress=progress, cancel=self._cancel.is_set)
            except Exception as exc:  # shown to the user; the engine logged the details
                summary = {"error": getattr(exc, "message", str(exc))}
            self.signals.imported.emit(summary)

        self._worker = threading.Thread(target=work, name="padron-import", daemon=True)
        self._worker.start()

    def _imported(self, summary: dict[str, Any]) -> None:
        self.import_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.show_status()
        if "error" in summary:
            self.padron_label.setText(summary["error"])
        elif summary.get("cancelled"):
            self.padron_label.setText("Importación cancelada; se mantiene el padrón anterior.")
        else:
            self.padron_label.setText(self.padron_label.text() + f" Omitidas {summary['rows_skipped']} líneas "
                                      f"dañadas; {summary['seconds']} s.")
