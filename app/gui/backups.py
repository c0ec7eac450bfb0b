"""Ajustes → «Copias de seguridad» (issue 35): under the folder and schedule fields, the newest backup in the folder
and this desk's last try with its result, «Hacer copia ahora» (made on the engine's backups loop, never here) and
«Restaurar…» (a backup put into a new, empty data folder and its numbering checked, as `yupana respaldo restaurar`
does, in restore.py's dialog). The main window's banner text comes from
the same status (`engine.admin.backup_status().warning`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.api import MIN_PASSPHRASE_CHARS, BackupRun, BackupStatus, clock

from .context import Context
from .restore import RestoreDialog, RestoreOutcome

EXPLANATION = (
    "Yupana hace una copia verificada de sus datos cada día a la hora elegida y después de cada tantos comprobantes, "
    "con Yupana abierto y sin detener la emisión, en la carpeta de arriba (fuera de la carpeta de datos: una memoria "
    "USB o una carpeta sincronizada con OneDrive, Google Drive o Dropbox). Se conservan la más reciente de cada uno "
    "de los últimos 7 días, 4 semanas y 12 meses.")
REASONS = {"diaria": "la copia diaria", "comprobantes": "por los comprobantes emitidos", "pedida": "pedida a mano"}
OK_STYLE = "color: #1b5e20;"
PROBLEM_STYLE = "color: #b71c1c;"
POLL_MS = 500  # while a backup asked for here is under way
RECOVERY_PROMPT = (f"Las claves de Yupana las guarda el llavero de este equipo, que no viaja con las copias. Elija una "
                   f"frase de recuperación (al menos {MIN_PASSPHRASE_CHARS} caracteres): al restaurar una copia en "
                   "otro equipo se la pedirá. Yupana no la guarda: anótela en un lugar seguro.")
NEW_RECOVERY_PROMPT = (f"Escriba la nueva frase de recuperación (al menos {MIN_PASSPHRASE_CHARS} caracteres): las "
                       "copias que se hagan desde ahora se abrirán con ella. Las copias hechas antes siguen abriéndose "
                       "solo con la frase anterior. Yupana no la guarda: anótela en un lugar seguro.")
RECOVERY_NOT_NEEDED = ("Esta carpeta no necesita una frase de recuperación: sus claves no las guarda el llavero del "
                       "sistema (se abren con la frase secreta de Yupana, o todavía no tiene ninguna).")
CHOOSE_RECOVERY = "Frase de recuperación…"
CHANGE_RECOVERY = "Cambiar frase de recuperación…"


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
        self.recovery_button = QPushButton(CHOOSE_RECOVERY)
        self.recovery_button.setToolTip("Con el llavero del sistema, la frase que abre los certificados y la clave SOL "
                                        "de una copia restaurada en otro equipo")
        self.recovery_button.clicked.connect(self.ask_recovery)
        self.result = QLabel("")
        self.result.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.backup_button)
        row.addWidget(self.restore_button)
        row.addWidget(self.recovery_button)
        row.addStretch(1)
        column.addWidget(explanation)
        column.addWidget(self.status)
        column.addLayout(row)
        column.addWidget(self.result)
        self.restore_dialog: RestoreDialog | None = None
        self.last_status: BackupStatus | None = None
        self.waiting_for: BackupRun | None = None
        self.waiting = False
        self.recovery: tuple[bool, bool] | None = None  # (has one, needs one), read on a worker
        self.poll = QTimer(self)
        self.poll.setInterval(POLL_MS)
        self.poll.timeout.connect(self.refresh)
        self.refresh()
        self.refresh_recovery()

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

    def refresh_recovery(self) -> None:
        """Whether the folder has a recovery passphrase (the button then offers to change it), read on a worker."""
        admin = self.context.engine.admin
        self.context.workers.run(self, lambda: (admin.has_recovery_passphrase(), admin.needs_recovery_passphrase()),
                                 done=self._show_recovery)

    def _show_recovery(self, recovery: tuple[bool, bool]) -> None:
        self.recovery = recovery
        self.recovery_button.setText(CHANGE_RECOVERY if recovery[0] else CHOOSE_RECOVERY)

    def ask_recovery(self) -> None:
        """The recovery passphrase, typed twice (hidden): the first one, or a new one replacing it."""
        if self.recovery is None:
            return  # still being read: the button is pressed again in a moment
        has, needs = self.recovery
        if not (has or needs):
            QMessageBox.information(self, "Frase de recuperación", RECOVERY_NOT_NEEDED)
            return
        title = "Cambiar frase de recuperación" if has else "Frase de recuperación"
        first, ok = QInputDialog.getText(self, title, NEW_RECOVERY_PROMPT if has else RECOVERY_PROMPT,
                                         QLineEdit.EchoMode.Password)
        if not ok or not first:
            return
        again, ok = QInputDialog.getText(self, title, "Repítala para confirmar:", QLineEdit.EchoMode.Password)
        if not ok:
            return
        if again != first:
            self.result.setStyleSheet(PROBLEM_STYLE)
            self.result.setText("Las dos frases no coinciden: no se guardó ninguna.")
            return
        if has:
            self.change_recovery(first)
        else:
            self.set_recovery(first)

    def set_recovery(self, passphrase: str) -> None:
        """Kept on a worker (scrypt takes a moment)."""
        self.result.setStyleSheet("")
        self.context.workers.run(self, self.context.engine.admin.set_recovery_passphrase, passphrase,
                                 done=self._recovery_set, failed=self._failed, busy=[self.recovery_button])

    def change_recovery(self, passphrase: str) -> None:
        """A new recovery passphrase for the backups made from now on, on a worker."""
        self.result.setStyleSheet("")
        self.context.workers.run(self, self.context.engine.admin.change_recovery_passphrase, passphrase,
                                 done=self._recovery_changed, failed=self._failed, busy=[self.recovery_button])

    def _recovery_set(self, _: object) -> None:
        self.result.setStyleSheet(OK_STYLE)
        self.result.setText("Frase de recuperación guardada: las copias llevan la clave de sus secretos cifrada con "
                            "ella. Anótela en un lugar seguro: Yupana no la guarda.")
        self.refresh()
        self.refresh_recovery()

    def _recovery_changed(self, _: object) -> None:
        self.result.setStyleSheet(OK_STYLE)
        self.result.setText("Frase de recuperación cambiada: las copias que se hagan desde ahora se abren con la "
                            "nueva. Las copias hechas antes siguen abriéndose solo con la frase anterior: guárdela "
                            "mientras las conserve, o haga una copia ahora.")
        self.refresh()
        self.refresh_recovery()

    def ask_restore(self) -> None:
        chosen, _ = QFileDialog.getOpenFileName(self, "Copia de seguridad a restaurar", "",
                                                "Copias de Yupana (yupana-respaldo-*.zip)")
        if not chosen:
            return
        target = QFileDialog.getExistingDirectory(self, "Carpeta de datos nueva (vacía)")
        if target:
            self.restore(chosen, target)

    def restore(self, backup: str, folder: str) -> RestoreDialog:
        """What `yupana respaldo restaurar` does, in a dialog with its progress and questions (restore.py); the
        restored folder is then opened with Yupana."""
        self.result.setStyleSheet("")
        self.result.setText(f"Restaurando la copia «{Path(backup).name}»…")
        dialog = RestoreDialog(backup, Path(folder), self, failed=self._failed, ended=self._restored)
        self.restore_dialog = dialog
        dialog.show()
        dialog.start()
        return dialog

    def _restored(self, outcome: RestoreOutcome) -> None:
        home = Path(outcome.restored.database).parent
        series = ", ".join(f"{serie['serie']} hasta el {serie['ultimo']}" for serie in outcome.restored.series)
        self.result.setStyleSheet(OK_STYLE if outcome.numbering is not None else PROBLEM_STYLE)
        self.result.setText(
            f"Copia «{Path(outcome.backup).name}» restaurada en {home}" + (f" (en la copia: {series})" if series else "")
            + (". Numeración comprobada (archivos escritos al emitir, SUNAT para las series F, el último impreso de "
               "las demás)" if outcome.numbering is not None else ". La numeración NO se comprobó")
            + f". Para trabajar con esos datos, abra Yupana con esa carpeta: yupana --home \"{home}\".")

    def _failed(self, exc: BaseException) -> None:
        self.waiting = False
        self.poll.stop()
        self.backup_button.setEnabled(True)
        self.result.setStyleSheet(PROBLEM_STYLE)
        self.result.setText(getattr(exc, "message", None) or f"No se pudo: {exc}")

