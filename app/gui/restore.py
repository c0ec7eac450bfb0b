"""«Restaurar desde una copia» (issue 35, item 2), from the first-start assistant and from Ajustes → «Copias de
seguridad»: the steps `yupana respaldo restaurar` runs, on a worker with their progress, in a dialog.

The backup is verified, put into a data folder without a database, opened (its keys with the recovery passphrase when
the backup's keys need it, asked here), and then the numbering is checked as `yupana numeracion verificar
--tras-restaurar` does: the vouchers and CDRs written as files after the backup are read back, SUNAT is asked about the
F series' later numbers, and the last number printed of the other series (boletas) is asked to the person. The dialog
ends with the list of what was found. Questions asked from the worker are answered on the window thread (`Asker`)."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from app.core.api import (
    Engine,
    NumberingCheck,
    SerieFinding,
    YupanaError,
    backups,
    clock,
)

from .widgets import MessageBanner, fit_to_screen
from .workers import Job, Workers

STEPS = 4
PASSPHRASE_QUESTION = "frase"
LAST_NUMBER_QUESTION = "ultimo"
OK_STYLE = "color: #1b5e20;"
PROBLEM_STYLE = "color: #b71c1c;"


@dataclass
class RestoreOutcome:
    """What a restore did: the backup put back, where, the numbering check (None if it could not run: `problem`)."""

    backup: str
    restored: backups.Restored
    engine: Engine | None
    numbering: NumberingCheck | None = None
    problem: str = ""
    keys_open: bool = True
    lines: list[str] = field(default_factory=list)


class Asker(QObject):
    """A question from a worker, answered on the window thread: `ask` blocks the worker until `show` replies (None:
    the person declined)."""

    asked = Signal(object, object)

    def __init__(self, show: Callable[[Any, Callable[[Any], None]], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.show = show
        self.pending: list[Callable[[Any], None]] = []
        self.asked.connect(self._asked, Qt.ConnectionType.QueuedConnection)

    def ask(self, question: Any) -> Any:  # on the worker
        answered = threading.Event()
        box: list[Any] = [None]

        def reply(value: Any) -> None:
            if not answered.is_set():
                box[0] = value
                answered.set()

        self.pending.append(reply)
        self.asked.emit(question, reply)
        answered.wait()
        return box[0]

    @Slot(object, object)
    def _asked(self, question: Any, reply: Callable[[Any], None]) -> None:
        self.show(question, reply)

    def decline_all(self) -> None:
        """The dialog went away: every question waiting is answered «no»."""
        for reply in self.pending:
            reply(None)
        self.pending.clear()


def restore_steps(job: Job, backup: str, home: Path, ask: Callable[[Any], Any],
                  release: Callable[[], None] | None = None) -> RestoreOutcome:
    """On a worker: restore (the backup verified, then the folder's empty database released), open the keys, check
    the numbering."""
    job.report((f"Verificando la copia «{Path(backup).name}» y restaurándola en «{home}»…", 0, STEPS))
    restored = backups.restore(backup, home, release)
    job.report(("Abriendo los datos restaurados…", 1, STEPS))
    engine = Engine(home)
    try:
        outcome = RestoreOutcome(backup, restored, engine)
        job.report(("Abriendo las claves de la copia…", 2, STEPS))
        outcome.keys_open = engine.admin.open_locked_secrets(lambda error: ask((PASSPHRASE_QUESTION, error)))
        job.report(("Comprobando la numeración: archivos escritos al emitir y consulta a SUNAT de las series F…",
                    3, STEPS))
        try:
            outcome.numbering = engine.invoicing.check_numbering(
                Path(backup).resolve().parent, lambda finding: ask((LAST_NUMBER_QUESTION, finding)),
                after_restore=True)
        except YupanaError as exc:
            outcome.problem = exc.message
        outcome.lines = outcome_lines(outcome)
        job.report(("Listo.", STEPS, STEPS))
        return outcome
    except BaseException:
        engine.close()
        raise


def outcome_lines(outcome: RestoreOutcome) -> list[str]:
    """What was found, in Spanish, as the command prints it."""
    info = outcome.restored.backup
    made = dt.datetime.fromisoformat(info.created_at).astimezone(clock.PERU).strftime("%d/%m/%Y %H:%M")
    lines = [f"Copia «{Path(outcome.backup).name}» del {made} restaurada en "
             f"«{Path(outcome.restored.database).parent}»: {info.vouchers:,} comprobantes.",
             outcome.restored.environment_note()]
    if not outcome.keys_open:
        lines.append("Las claves de la copia (certificados, clave SOL) siguen cerradas: se abren con su frase de "
                     "recuperación, que Yupana pedirá al firmar o enviar.")
    numbering = outcome.numbering
    if numbering is None:
        lines.append(f"No se pudo comprobar la numeración: {outcome.problem} Antes de emitir, vuelva a comprobarla.")
        return lines
    lines.extend(numbering.lines(lambda _: "compruébelo luego en Ajustes → «Copias de seguridad»"))
    return lines


class RestoreDialog(QDialog):
    """The steps with their progress, the questions, and at the end the list of what was found.

    `release` (on the worker, after the backup verified) frees the data folder; `finished` (on the window thread)
    takes the restored folder's open engine; without it the engine is closed once the list is shown. `ended` (on the
    window thread) is told what was done; `failed`, why nothing was."""

    def __init__(self, backup: str, home: Path, parent: QWidget | None = None, *,
                 release: Callable[[], None] | None = None,
                 finished: Callable[[Engine], None] | None = None,
                 failed: Callable[[BaseException], None] | None = None,
                 ended: Callable[[RestoreOutcome], None] | None = None) -> None:
        super().__init__(parent)
        self.backup, self.home = backup, Path(home)
        self.release, self.on_finished, self.on_failed, self.on_ended = release, finished, failed, ended
        self.setWindowTitle("Restaurar desde una copia")
        self.workers = Workers(threads=1, parent=self)
        self.asker = Asker(self._show_question, self)
        self.question: QInputDialog | None = None
        self.outcome: RestoreOutcome | None = None
        self.error: BaseException | None = None
        self.step = QLabel(f"Restaurando «{Path(backup).name}»…")
        self.step.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setRange(0, STEPS)
        self.banner = MessageBanner()
        self.found = QPlainTextEdit()
        self.found.setReadOnly(True)
        self.found.setPlaceholderText("Aquí aparecerá lo encontrado: comprobantes recuperados, números de cada serie "
                                      "y números dudosos.")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.buttons.button(QDialogButtonBox.StandardButton.Close).setText("Cerrar")
        self.buttons.rejected.connect(self.reject)
        self.close_button = self.buttons.button(QDialogButtonBox.StandardButton.Close)
        column = QVBoxLayout(self)
        column.addWidget(self.step)
        column.addWidget(self.progress)
        column.addWidget(self.banner)
        column.addWidget(self.found, 1)
        column.addWidget(self.buttons)
        fit_to_screen(self, 760, 520)

    @property
    def running(self) -> bool:
        return self.workers.running > 0

    def start(self) -> None:
        self.banner.clear()
        self.workers.run(self, restore_steps, self.backup, self.home, self.asker.ask, self.release, pass_job=True,
                         done=self._done, failed=self._failed, progress=self._progressed, busy=[self.close_button])

    def _progressed(self, report: tuple[str, int, int]) -> None:
        text, done, _total = report
        self.step.setText(text)
        self.progress.setValue(done)

    def _show_question(self, question: tuple[str, Any], reply: Callable[[Any], None]) -> None:
        kind, about = question
        box = QInputDialog(self)
        box.setWindowTitle("Restaurar desde una copia")
        box.setOkButtonText("Aceptar")
        box.setCancelButtonText("Cancelar")
        if kind == PASSPHRASE_QUESTION:
            box.setLabelText((f"{about}\n\n" if about else "")
                             + f"Las claves de la copia «{Path(self.backup).name}» (certificados, clave SOL) las "
                               "guardaba el llavero del otro equipo. Escriba la frase de recuperación que eligió al "
                               "hacer la primera copia:")
            box.setTextEchoMode(QLineEdit.EchoMode.Password)
        else:
            finding: SerieFinding = about
            box.setLabelText(f"{finding.serie} (tipo {finding.tipo}, RUC {finding.emisor_ruc}): {finding.motivo.rstrip('.')}.\n"
                             f"El último número conocido es el {finding.propuesto}. Escriba el último número impreso "
                             f"de {finding.serie} (mire el último comprobante entregado); la numeración sigue después "
                             "del mayor.")
            box.setInputMode(QInputDialog.InputMode.IntInput)
            box.setIntRange(0, 99_999_999)
            box.setIntValue(finding.propuesto)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        fit_to_screen(box, 520, 220)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def answered(result: int) -> None:
            self.question = None
            if result != QDialog.DialogCode.Accepted:
                reply(None)
            elif kind == PASSPHRASE_QUESTION:
                reply(box.textValue())
            else:
                reply(box.intValue())

        box.finished.connect(answered)
        self.question = box
        box.open()

    def _done(self, outcome: RestoreOutcome) -> None:
        self.outcome = outcome
        self.step.setText(f"Copia «{Path(outcome.backup).name}» restaurada.")
        self.step.setStyleSheet(OK_STYLE if outcome.numbering is not None else PROBLEM_STYLE)
        self.progress.setValue(STEPS)
        self.found.setPlainText("\n".join(outcome.lines))
        engine, outcome.engine = outcome.engine, None
        if engine is not None and self.on_finished is not None:
            self.on_finished(engine)
        elif engine is not None:
            self.workers.run(self, engine.close)
        if self.on_ended is not None:
            self.on_ended(outcome)

    def _failed(self, exc: BaseException) -> None:
        self.error = exc
        self.step.setText(f"No se restauró «{Path(self.backup).name}».")
        self.step.setStyleSheet(PROBLEM_STYLE)
        self.banner.show_error(exc)
        if self.on_failed is not None:
            self.on_failed(exc)

    def reject(self) -> None:
        if self.running:  # never left half done: the questions are declined, the steps end by themselves
            self.asker.decline_all()
            return
        super().reject()

    def done_text(self) -> str:
        return self.found.toPlainText()
