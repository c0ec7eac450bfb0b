"""Ajustes → «Copias de seguridad» (issue 35): under the folder and schedule fields, the newest backup in the folder
and this desk's last try with its result, «Hacer copia ahora» (made on the engine's backups loop, never here) and
«Restaurar…» (a backup put into a new, empty data folder, on a worker). The main window's banner text comes from
the same status (`engine.admin.backup_status().warning`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.core.api import BackupRun, BackupStatus, backups, clock

from .context import Context

EXPLANATION = (
    "Yupana hace una copia verificada de sus datos cada día a la hora elegida y después de cada tantos comprobantes, "
    "con Yupana abierto y sin detener la emisión, en la carpeta de arriba (fuera de la carpeta de datos: una memoria "
    "USB o una carpeta sincronizada con OneDrive, Google Drive o Dropbox). Se conservan la más reciente de cada uno "
    "de los últimos 7 días, 4 semanas y 12 meses.")
REASONS = {"diaria": "la copia diaria", "comprobantes": "por los comprobantes emitidos", "pedida": "pedida a mano"}
OK_STYLE = "color: #1b5e20;"
PROBLEM_STYLE = "color: #b71c1c;"
POLL_MS = 500  # while a backup asked for here is under way


def _when(iso: str) -> str:
    """An ISO instant as the shop owner reads it: Peru's date and time."""
    return dt.datetime.fromisoformat(iso).astimezone(clock.PERU).strftime("%d/%m/%Y %H:%M")


def status_text(status: BackupStatus) -> str:
    if not status.folder:
        return "Elija una carpeta para las copias de seguridad: sin ella no se hacen copias."
    newest = f"La copia más reciente en la carpeta es del {_when(status.newest)}." if status.newest else ""
    return " ".join(part for part in (status.warning or newest, run_text(status.last_run)) if part)


def run_text(run: BackupRun | None) -> str:
    if run is None:
        return ""
    how = REASONS.get(run.reason, run.reason)
    if run.ok:
        return f"Última copia de este equipo ({how}): {_when(run.started_at)}, verificada."
    return f"Última copia de este equipo ({how}): {_when(run.started_at)}, falló: {run.message}"


class BackupsBox(QWidget):
    """The status of the backups, «Hacer copia ahora» and «Restaurar…»."""

    def __init__(self, context: Context) -> None:
        super().__init__()
        self.context = context
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        explanation = QLabel(EXPLANATION)
        explanation.setWordWrap(True)
        self.status = QLabel("…")
        self.status.setWordWrap(True)
        self.backup_button = QPushButton("Hacer copia ahora")
        self.backup_button.setToolTip("Una copia verificada en la carpeta elegida, ahora, sin detener la emisión")
        self.backup_button.clicked.connect(self.backup_now)
        self.restore_button = QPushButton("Restaurar…")
        self.restore_button.setToolTip("Pone una copia en una carpeta de datos nueva y vacía (otro equipo, un "
                                       "disco nuevo); luego se abre Yupana con esa carpeta")
        self.restore_button.clicked.connect(self.ask_restore)
        self.result = QLabel("")
        self.result.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.backup_button)
        row.addWidget(self.restore_button)
        row.addStretch(1)
        column.addWidget(explanation)
        column.addWidget(self.status)
        column.addLayout(row)
        column.addWidget(self.result)
        self.last_status: BackupStatus | None = None
        self.waiting_for: BackupRun | None = None
        self.waiting = False
        self.poll = QTimer(self)
        self.poll.setInterval(POLL_MS)
        self.poll.timeout.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        self.context.workers.run(self, self.context.engine.admin.backup_status, done=self._show)

    def _show(self, status: BackupStatus) -> None:
        self.last_status = status
        self.status.setText(status_text(status))
        self.status.setStyleSheet(PROBLEM_STYLE if status.warning else "")
        if self.waiting and status.last_run is not None and status.last_run is not self.waiting_for:
            self.waiting = False
            self.poll.stop()
            self.backup_button.setEnabled(True)
            self.result.setStyleSheet(OK_STYLE if status.last_run.ok else PROBLEM_STYLE)
            self.result.setText(run_text(status.last_run))

    def backup_now(self) -> None:
        self.result.setStyleSheet("")
        self.waiting_for = self.last_status.last_run if self.last_status else None
        self.context.workers.run(self, self.context.engine.admin.backup_now, done=self._asked,
                                 failed=self._failed, busy=[self.backup_button])

    def _asked(self, _: object) -> None:
        self.result.setText("Haciendo la copia…")
        self.waiting = True
        self.backup_button.setEnabled(False)
        self.poll.start()

    def ask_restore(self) -> None:
        chosen, _ = QFileDialog.getOpenFileName(self, "Copia de seguridad a restaurar", "",
                                                "Copias de Yupana (yupana-respaldo-*.zip)")
        if not chosen:
            return
        target = QFileDialog.getExistingDirectory(self, "Carpeta de datos nueva (vacía)")
        if target:
            self.restore(chosen, target)

    def restore(self, backup: str, folder: str) -> None:
        self.result.setStyleSheet("")
        self.result.setText("Restaurando la copia…")
        self.context.workers.run(self, backups.restore, backup, Path(folder), done=self._restored,
                                 failed=self._failed, busy=[self.restore_button])

    def _restored(self, restored: backups.Restored) -> None:
        series = ", ".join(f"{serie['serie']} hasta el {serie['ultimo']}" for serie in restored.series)
        self.result.setStyleSheet(OK_STYLE)
        self.result.setText(
            f"Copia restaurada en {Path(restored.database).parent}" + (f" (series: {series})" if series else "")
            + ". Lo emitido después de la copia no está en ella: antes de emitir confirme el último número impreso "
              f"de cada serie. Para trabajar con esa carpeta abra Yupana con yupana --home "
              f"\"{Path(restored.database).parent}\".")

    def _failed(self, exc: BaseException) -> None:
        self.waiting = False
        self.poll.stop()
        self.backup_button.setEnabled(True)
        self.result.setStyleSheet(PROBLEM_STYLE)
        self.result.setText(getattr(exc, "message", None) or f"No se pudo: {exc}")

