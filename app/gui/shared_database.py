"""Ajustes → «Base de datos compartida»: what a shared database is for, and «Probar la conexión» with the address typed
(issue 34, item 7). The test runs on a worker (a server out of reach takes up to its connect time-out); its answer,
good or bad, is shown in Spanish under the button."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QCoreApplication, Signal
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.core.api import Engine, shared_database

from .context import Context
from .dialogs import confirm
from .workers import Job, Workers

EXPLANATION = (
    "Varias cajas o computadoras de un mismo negocio pueden trabajar sobre una sola base de datos PostgreSQL: todas "
    "ven los mismos comprobantes, clientes, productos y mensajes. Escriba arriba su dirección (p. ej. "
    "postgresql://yupana@caja1/tienda); la contraseña no va en la dirección sino en el archivo de contraseñas de "
    "PostgreSQL (pgpass). La dirección es de este puesto y se usa al volver a abrir Yupana; vacía, los datos quedan "
    "en este equipo. Cómo instalar PostgreSQL, sumar un puesto y pasar los datos de este equipo a la base compartida "
    "(yupana db migrar): docs/desks.md.")
OK_STYLE = "color: #1b5e20;"
PROBLEM_STYLE = "color: #b71c1c;"


def moved_text(done: shared_database.Migration) -> str:
    """What a copy did, for the shop owner: the counts that are not zero, the numbering, and what to do now."""
    counted = ", ".join(f"{count.rows} {count.label}" for count in done.counts if count.rows) or "ningún dato"
    series = ", ".join(f"{serie.serie} sigue en el {serie.last + 1}" for serie in done.numbering)
    again = ("" if not done.to_enter_again else
             " Las claves de este equipo estaban protegidas por su llavero y no se copiaron: en la base compartida se "
             "protegen con la frase secreta del negocio. Falta " + "; ".join(done.to_enter_again) + ".")
    return (f"Copiado a {done.where}: {counted}." + (f" Numeración: {series}." if series else "") + again
            + " La carpeta de este equipo quedó como estaba. Cierre Yupana y vuelva a abrirlo: desde entonces este "
              "puesto trabaja sobre la base compartida.")


def tried(engine: Engine, url: str) -> shared_database.ConnectionCheck:
    """The connection test (on a worker): the address against the companies this desk issues for."""
    return shared_database.check(url, [company.ruc for company in engine.admin.companies()])


class SharedDatabaseBox(QWidget):
    """The explanation, «Probar la conexión» and what it found."""

    def __init__(self, context: Context, typed_url: Callable[[], str], moved: Callable[[], object]) -> None:
        super().__init__()
        self.context, self.typed_url, self.moved = context, typed_url, moved
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        explanation = QLabel(EXPLANATION)
        explanation.setWordWrap(True)
        self.test_button = QPushButton("Probar la conexión")
        self.test_button.setToolTip("Se conecta con la dirección escrita (sin guardarla) y dice si este puesto "
                                    "puede usar esa base de datos")
        self.test_button.clicked.connect(self.test)
        self.move_button = QPushButton("Copiar los datos de este equipo a esa base…")
        self.move_button.setToolTip("Copia comprobantes, CDR, clientes, productos, mensajes… a la base compartida "
                                    "vacía (yupana db migrar) y deja este puesto usándola")
        self.move_button.clicked.connect(self.ask_move)
        self.result = QLabel("")
        self.result.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.test_button)
        row.addWidget(self.move_button)
        row.addStretch(1)
        column.addWidget(explanation)
        column.addLayout(row)
        column.addWidget(self.result)

    def test(self) -> None:
        self.result.setStyleSheet("")
        self.result.setText("Probando la conexión…")
        self.context.workers.run(self, tried, self.context.engine, self.typed_url(), done=self._tested,
                                 failed=self._failed, busy=[self.test_button])

    def ask_move(self) -> None:
        url = self.typed_url()
        self.move_box = confirm(self, "Copiar los datos a la base compartida",
                                f"Se copiarán todos los datos de este equipo (comprobantes, CDR, clientes, productos, "
                                f"mensajes, ajustes…) a {url}, que debe estar vacía. La carpeta de este equipo no "
                                "cambia. Después Yupana debe cerrarse y abrirse de nuevo. ¿Copiar ahora?",
                                lambda: self.copy_into(url))

    def copy_into(self, url: str) -> None:
        self.result.setStyleSheet("")
        self.result.setText("Copiando los datos de este equipo…")
        self.context.workers.run(self, shared_database.migrate, self.context.engine.admin.home(), url,
                                 done=self._moved, failed=self._failed, busy=[self.test_button, self.move_button])

    def _moved(self, done: shared_database.Migration) -> None:
        self.result.setStyleSheet(OK_STYLE)
        self.result.setText(moved_text(done))
        self.moved()

    def _tested(self, found: shared_database.ConnectionCheck) -> None:
        self.result.setStyleSheet(OK_STYLE if found.ok else PROBLEM_STYLE)
        self.result.setText(found.message)

    def _failed(self, exc: BaseException) -> None:
        self.result.setStyleSheet(PROBLEM_STYLE)
        self.result.setText(getattr(exc, "message", None) or f"No se pudo probar la conexión: {exc}")


# ---------------------------------------------------------------- the shared database off when the app starts (item 8)

def _open_waiting(job: Job, home: str | Path | None) -> Engine | None:
    """On a worker: the engine once the shared database answers, each wait told as progress; None once cancelled."""
    return Engine.open_waiting(home, waiting=job.report, stopped=job.cancelled.wait)


class DatabaseWait(QDialog):
    """Shown instead of a crash when the shared database does not answer as Yupana opens: the server named in Spanish,
    tried again on a worker (Engine.open_waiting) until it answers — then the window opens — or the user leaves.

    `user_left`: the dialog was left («Salir», Esc) with nothing opened and nothing failed; `worker_ended` (and
    `ended`) once the worker's outcome is here: after «Salir» a connection attempt under way still runs to its
    time-out, and whoever showed the dialog waits for this signal instead of blocking its window."""

    worker_ended = Signal()

    def __init__(self, home: str | Path | None, first: str, workers: Workers) -> None:
        super().__init__()
        self.user_left = False
        self.ended = False
        self.setWindowTitle("Yupana: esperando la base de datos compartida")
        self.setMinimumWidth(560)
        self.message = QLabel(first)
        self.message.setWordWrap(True)
        self.message.setStyleSheet(PROBLEM_STYLE)
        self.status = QLabel("Se vuelve a intentar en unos segundos…")
        hint = QLabel("Yupana se abre solo en cuanto el servidor responda. Para trabajar sin la base compartida, "
                      "vuelva este puesto a su carpeta: «yupana db usar» sin dirección (docs/desks.md).")
        hint.setWordWrap(True)
        leave = QPushButton("Salir")
        leave.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        for widget in (self.message, self.status, hint):
            layout.addWidget(widget)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(leave)
        layout.addLayout(row)
        self.engine: Engine | None = None
        self.failure: BaseException | None = None
        self._job = workers.run(self, _open_waiting, home, pass_job=True, progress=self._told, done=self._opened,
                                failed=self._failed)

    def _told(self, told: tuple[str, float]) -> None:
        message, seconds = told
        self.message.setText(message)
        self.status.setText(f"Se vuelve a intentar en {seconds:g} s…")

    def _opened(self, engine: Engine | None) -> None:
        self.engine = engine
        self._ended()
        if not self.isVisible():  # the user left meanwhile: whoever showed the dialog closes an engine come too late
            return
        if engine is not None:
            self.accept()
        else:
            self.reject()

    def _failed(self, exc: BaseException) -> None:
        self.failure = exc
        self._ended()
        if self.isVisible():
            self.reject()

    def _ended(self) -> None:
        self.ended = True
        self.worker_ended.emit()

    def reject(self) -> None:
        self.user_left = self.user_left or (self.engine is None and self.failure is None)
        self._job.cancel()
        super().reject()

    def wait_finished(self) -> None:
        """After the dialog: the worker ended (a connection attempt under way takes at most its time-out) and its
        outcome delivered here (`engine`, or `failure`): an engine it opened as the user left is the caller's to
        close."""
        self._job.cancel()
        self._job.done.wait()
        relay = self._job.relay
        if relay is not None:
            QCoreApplication.sendPostedEvents(relay)  # its last news, queued for the GUI thread
