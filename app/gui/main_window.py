"""The main window: a side navigation, one page per section (built when first opened), a status bar."""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app import APP_NAME, __version__
from app.core.api import (
    KEYRING_MISSING,
    SANDBOX,
    UNLOCKED,
    ErrorCode,
    YupanaError,
    events,
    not_configured,
    statuses,
)
from app.sandbox.mode import SandboxMode

from .bridge import EngineEvents
from .context import Context
from .crash import crash_dialog
from .environment import EnvironmentBanner, badge
from .widgets import Badge, MessageBanner, fit_to_screen
from .workers import Workers

if TYPE_CHECKING:
    from app.api.local import LocalApi
    from app.core.api import Engine, Event, ListenerState

    from .assistant import SetupAssistant
    from .passphrase import PassphraseDialog
    from .shared_database import DatabaseWait
    from .vouchers import VouchersPage

log = logging.getLogger(__name__)

SECTIONS = ["Comprobantes", "Resúmenes y bajas", "Clientes", "Productos", "Certificados", "Mensajes", "Consultas",
            "Ajustes"]

# Section → "module:Class". The messaging work plugs its window in here (app.gui.messages:MessagesPage);
# until that module exists the section says so plainly.
SECTION_PAGES = {
    "Comprobantes": "app.gui.vouchers:VouchersPage",
    "Resúmenes y bajas": "app.gui.summaries:SummariesPage",
    "Clientes": "app.gui.customers:CustomersPage",
    "Productos": "app.gui.products:ProductsPage",
    "Certificados": "app.gui.certificates:CertificatesPage",
    "Mensajes": "app.gui.messages:MessagesPage",
    "Consultas": "app.gui.lookups:LookupsPage",
    "Ajustes": "app.gui.settings:SettingsPage",
}


def section_class(name: str) -> Callable[[Context], QWidget]:
    """The page class of a section (built with the windows' context), imported when the section is first opened
    (a quicker start). A module that is missing or broken fails loudly."""
    module_name, _, class_name = SECTION_PAGES[name].partition(":")
    return getattr(importlib.import_module(module_name), class_name)


# What the status bar shows changes with these (a voucher's status covers pendiente; the listener's its words).
BACKUP_CHECK_MS = 5 * 60_000  # how often the backups' banner is looked at again with no event
STATUS_EVENTS = (events.SETTINGS_CHANGED, events.VOUCHER_CHANGED, events.COMPANY_SAVED, events.LISTENER_CHANGED,
                 events.SUNAT_CDR)


def status_snapshot(engine: Engine) -> dict[str, Any]:
    """Read (on a worker) what the status bar shows."""
    return {"environment": engine.admin.config_get("environment"),
            "pending": len(engine.invoicing.vouchers(status=statuses.PENDIENTE)),
            "listener": engine.messaging.listener_state(),
            "companies": len(engine.admin.companies()), "secrets": engine.admin.secret_state(),
            "drafts": len(engine.invoicing.drafts()),
            "backup_warning": engine.admin.backup_status().warning}


def listener_words(state: ListenerState) -> tuple[str, str]:
    """The status bar's words for receiving WhatsApp messages, for a shop owner; the technical state as its tooltip
    (the webhook listener's address is for Mensajes → Avanzado)."""
    if state.state == "running":
        exposed = " (abierto a la red)" if state.exposed else ""
        if state.notice:  # its port changed: the owner must change Meta's URL and a tunnel by hand
            return f"WhatsApp: recibiendo mensajes{exposed} · cambió de puerto", state.notice
        return f"WhatsApp: recibiendo mensajes{exposed}", f"Receptor de webhooks en {state.url}"
    if state.state == "error":
        return "WhatsApp: no se pueden recibir mensajes", f"Receptor de webhooks con error: {state.error or '—'}"
    return "WhatsApp: sin recibir mensajes", "Receptor de webhooks detenido"


# The local API started with the app (Ajustes → API local → «api_autostart»): started once in this process, stopped
# when its engine closes.
_local_api: tuple[Engine, LocalApi] | None = None
_local_api_lock = threading.Lock()


def start_local_api(engine: Engine) -> str:
    """Serve the local HTTP API from this process, in a background thread, on the port of the settings; its base URL.
    A second call while it runs answers the same URL."""
    global _local_api
    from app.api.local import LocalApi

    with _local_api_lock:
        if _local_api is None or _local_api[0] is not engine or not _local_api[1].running:
            api = LocalApi(engine)
            api.start()
            engine.admin.on_close(api.stop)
            _local_api = (engine, api)
        return _local_api[1].base_url


def open_engine(home: str | None) -> Engine:
    """On a worker: import the engine (~360 ms of modules) and open the data folder (issue 33, start-up)."""
    from app.core.api import Engine

    return Engine(home)


OPENING = "Abriendo sus datos…"
OPEN_FAILED = "No se pudieron abrir sus datos."


class MainWindow(QMainWindow):
    """The window's frame (navigation, pages, status bar) is built without the engine: the app's start shows it saying
    «Abriendo sus datos…» while `open_engine` imports and opens the engine on a worker, then `attach_engine` fills it.
    `MainWindow(engine)` attaches at once, as before."""

    engine: Engine  # set by attach_engine
    context: Context
    engine_attached = Signal()  # attach_engine filled the window
    engine_open_failed = Signal(object)  # open_engine_when_painted could not open it (the exception)

    def __init__(self, engine: Engine | None = None, sandboxes: SandboxMode | None = None,
                 first_run: bool | None = None) -> None:
        super().__init__()
        self.workers = Workers(parent=self)
        self.workers.on_error = self.show_error
        self.attached = False
        self.first_run = first_run  # None: open the assistant when no company exists yet
        self.assistant: SetupAssistant | None = None
        # The passphrase dialog, or the box saying the keyring went away.
        self.passphrase_dialog: PassphraseDialog | QMessageBox | None = None
        self.crash: QMessageBox | None = None
        self.snapshot: dict[str, Any] = {}
        self.closing = False
        self.drafts_offered = False
        self.painted = False
        self.to_open: tuple[str | None] | None = None  # (the data folder) until its engine is asked for
        self.open_error: BaseException | None = None  # why the engine could not be opened
        self.database_wait: DatabaseWait | None = None  # shown while the shared database does not answer at the start
        self.successor: MainWindow | None = None  # the window on a restored data folder that replaced this one
        self.engine_released = False
        self.restore_dialog: QWidget | None = None  # the list of what a restore found, over the window it opened
        self.start_services: Callable[[MainWindow], None] | None = None  # app.start's: listener, API, sandboxes
        self.setWindowTitle(f"{APP_NAME} {__version__}")
        fit_to_screen(self, 1180, 760)  # a 1366×768 laptop's work area is 728 px high
        self.navigation = QListWidget()
        self.navigation.addItems(SECTIONS)
        self.navigation.setStyleSheet("QListWidget { font-size: 15px; } QListWidget::item { padding: 10px; }")
        self.navigation.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.navigation.ensurePolished()
        self.navigation.setFixedWidth(max(170, self.navigation.sizeHintForColumn(0) + 8))  # the longest name fits
        self.pages = QStackedWidget()
        self.built: dict[str, QWidget] = {}
        for _ in SECTIONS:
            self.pages.addWidget(QWidget())  # replaced by the real page when first opened
        # Shown until the engine is attached: «Abriendo sus datos…», or why they could not be opened.
        self.opening = QLabel(OPENING)
        self.opening.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.opening.setWordWrap(True)
        self.opening.setStyleSheet("QLabel { font-size: 15px; padding: 24px; }")
        self.pages.addWidget(self.opening)
        self.pages.setCurrentWidget(self.opening)
        self.navigation.setEnabled(False)
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        self.environment_banner = EnvironmentBanner()  # beta and production: said across the window
        column.addWidget(self.environment_banner)
        self.backup_banner = MessageBanner()  # the last good backup older than 7 days, or its folder unreachable
        column.addWidget(self.backup_banner)
        layout = QHBoxLayout()
        layout.addWidget(self.navigation)
        layout.addWidget(self.pages, 1)
        column.addLayout(layout, 1)
        self.setCentralWidget(central)
        self._build_status_bar()
        # Bursts of engine events (a voucher going generado → firmado → aceptado) refresh the bar once.
        self.status_timer = QTimer(self)
        self.status_timer.setSingleShot(True)
        self.status_timer.setInterval(100)
        self.status_timer.timeout.connect(self.refresh_status)
        self.backup_check = QTimer(self)  # a backup grows old and a USB drive goes away with no event
        self.backup_check.setInterval(BACKUP_CHECK_MS)
        self.backup_check.timeout.connect(self.refresh_status)
        if engine is not None:
            self.attach_engine(engine, sandboxes)

    def attach_engine(self, engine: Engine, sandboxes: SandboxMode | None = None) -> None:
        """Fill the window from `engine`: its pages, its status bar and its events (once)."""
        if self.attached:
            raise RuntimeError("the main window already has its engine")
        self.engine = engine
        self.context = Context(engine, self.workers, EngineEvents(engine, self), sandboxes or SandboxMode(engine))
        self.attached = True
        self.navigation.setEnabled(True)
        self.navigation.currentRowChanged.connect(self._open_row)
        self.navigation.setCurrentRow(0)
        self.pages.removeWidget(self.opening)
        self.opening.deleteLater()
        self.context.events.occurred.connect(self._on_event)
        QTimer.singleShot(0, self.refresh_status)
        self.backup_check.start()
        self.engine_attached.emit()

    # ------------------------------------------------------------ opening the engine (the app's start)

    def open_engine_when_painted(self, home: str | None) -> None:
        """Open the engine of `home` on a worker once the window has first painted (so the frame is on screen before
        the engine's modules load), attach it, then run `start_services` (what the app starts beside it). A failure
        is said in the window, in Spanish."""
        self.to_open = (home,)
        if self.painted:
            self._open_now()
        else:  # a window never exposed (started minimised) gets no paint: open anyway
            QTimer.singleShot(1000, self._open_if_not_exposed)

    def paintEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().paintEvent(event)
        if not self.painted:
            self.painted = True
            if self.to_open is not None:
                QTimer.singleShot(0, self._open_now)

    def _open_if_not_exposed(self) -> None:
        handle = self.windowHandle()
        if self.to_open is not None and not (handle is not None and handle.isExposed()):
            self._open_now()

    def _open_now(self) -> None:
        if self.to_open is None or self.closing:
            return
        (home,) = self.to_open
        self.to_open = None
        self.workers.run(self, open_engine, home, done=self._engine_opened,
                         failed=lambda exc: self._engine_failed(exc, home))

    def _engine_opened(self, engine: Engine) -> None:
        if self.closing:  # closed while it opened
            engine.close()
            return
        self.attach_engine(engine)
        if self.start_services is not None:
            self.start_services(self)

    def _engine_failed(self, exc: BaseException, home: str | None = None) -> None:
        """The engine could not be opened (a folder in use, a newer schema): said in the window, with the technical
        detail logged. The shared database not answering is waited for instead (issue 34): a dialog names the server
        and tries again until it answers — the engine it opens is attached — or the user leaves, closing Yupana."""
        if isinstance(exc, YupanaError) and exc.code == ErrorCode.UPSTREAM_UNAVAILABLE and not self.closing:
            self._wait_for_database(home, exc.message)
            return
        self._say_open_failed(exc)

    def _wait_for_database(self, home: str | None, first: str) -> None:
        from .shared_database import DatabaseWait

        dialog = DatabaseWait(home, first, self.workers)
        self.database_wait = dialog
        dialog.finished.connect(lambda _result: self._database_waited(dialog))
        dialog.open()

    def _database_waited(self, dialog: DatabaseWait) -> None:
        if dialog.user_left:
            self._database_left(dialog)
            return
        dialog.wait_finished()
        self.database_wait = None
        if dialog.failure is not None:
            self._say_open_failed(dialog.failure)
        elif dialog.result() == QDialog.DialogCode.Accepted and dialog.engine is not None:
            self._engine_opened(dialog.engine)
        else:  # nothing opened, nothing failed: left
            self._database_left(dialog)

    def _database_left(self, dialog: DatabaseWait) -> None:
        """«Salir»: Yupana closes. A connection attempt under way runs to its time-out (a server that drops packets:
        up to 10 s): the window leaves the screen now, its events still running, and closes when the attempt ends
        (an engine it opened meanwhile is closed)."""
        if not dialog.ended:
            self.hide()
            dialog.worker_ended.connect(lambda: self._database_left(dialog))
            return
        dialog.wait_finished()  # the worker ended: at once
        self.database_wait = None
        if dialog.engine is not None:
            dialog.engine.close()
        self.close()

    def _say_open_failed(self, exc: BaseException) -> None:
        log.error("could not open the engine: %s", exc, exc_info=exc)
        reason = str(exc) if isinstance(exc, YupanaError) else f"Detalle técnico: {type(exc).__name__}: {exc}"
        self.opening.setText(f"{OPEN_FAILED}\n\n{reason}\n\nCierre Yupana, corrija lo indicado y vuelva a abrirlo.")
        self.opening.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_error = exc
        self.engine_open_failed.emit(exc)

    # ------------------------------------------------------------ pages

    def page(self, name: str) -> QWidget:
        """The section's page, built on first use."""
        if name not in self.built:
            page = section_class(name)(self.context)
            index = SECTIONS.index(name)
            old = self.pages.widget(index)
            if old is not None:  # the placeholder put there in __init__
                self.pages.removeWidget(old)
                old.deleteLater()
            self.pages.insertWidget(index, page)
            self.built[name] = page
        return self.built[name]

    def _open_row(self, row: int) -> None:
        if row < 0:
            return
        self.page(SECTIONS[row])
        self.pages.setCurrentIndex(row)

    def show_section(self, name: str) -> QWidget:
        self.navigation.setCurrentRow(SECTIONS.index(name))
        return self.page(name)

    # ------------------------------------------------------------ status bar

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.environment_label = Badge("…", "#777")
        self.listener_label = QLabel("WhatsApp: sin recibir mensajes")
        self.pending_label = QLabel("Envíos pendientes: …")
        self.busy_label = QLabel("")
        bar.addWidget(self.busy_label, 1)
        bar.addPermanentWidget(self.pending_label)
        bar.addPermanentWidget(self.listener_label)
        bar.addPermanentWidget(self.environment_label)
        self.workers.busy_changed.connect(
            lambda n: self.busy_label.setText(f"Trabajando… ({n})" if n else ""))

    def refresh_status(self) -> None:
        if self.closing or not self.attached:
            return
        self.workers.run(self, status_snapshot, self.engine, done=self._show_status)

    def _show_status(self, snapshot: dict[str, Any]) -> None:
        self.snapshot = snapshot
        text, colour = badge(snapshot["environment"])
        self.environment_label.set(text, colour)
        self.environment_banner.show_environment(snapshot["environment"])
        if snapshot["backup_warning"]:
            self.backup_banner.show_message(snapshot["backup_warning"], "warning")
        else:
            self.backup_banner.clear()
        self.environment_label.setToolTip("Entorno de trabajo (Ajustes → Entorno)")
        pending = snapshot["pending"]
        self.pending_label.setText("Envíos pendientes: —" if pending is None else f"Envíos pendientes: {pending}")
        words, detail = listener_words(snapshot["listener"])
        self.listener_label.setText(words)
        self.listener_label.setToolTip(detail)
        if snapshot["secrets"] != UNLOCKED:
            self.ask_for_keys(snapshot["secrets"])
            if snapshot["secrets"] != KEYRING_MISSING:
                return  # the assistant and the sandbox wait until the keys are open
        if self.first_run is None:
            self.first_run = snapshot["companies"] == 0
            if self.first_run:
                self.open_assistant()
        if snapshot.get("drafts") and not self.first_run and not self.drafts_offered:
            self.drafts_offered = True  # a voucher left unfinished (closed, or the program killed): offered once
            cast("VouchersPage", self.show_section("Comprobantes")).new_voucher()

    def _on_event(self, name: str, payload: Event) -> None:
        if name in STATUS_EVENTS:
            self.status_timer.start()
        if isinstance(payload, events.SettingsChanged) and payload.key == "environment":
            self.workers.run(self, self.start_sandbox_if_chosen)

    def start_api_if_chosen(self) -> str | None:
        """With «api_autostart», the local API serves from this process in a background thread (Ajustes → API local)."""
        if self.engine.admin.config_get("api_autostart") == "si":
            return start_local_api(self.engine)
        return None

    def start_sandbox_if_chosen(self) -> None:
        """Choosing «sandbox» (in Ajustes or the assistant) brings the local stand-ins up (once keys can be read);
        another environment stops them, and their addresses go with them."""
        if self.engine.admin.config_get("environment") != SANDBOX:
            self.context.sandboxes.stop()
        elif self.engine.admin.secret_state() == UNLOCKED:
            self.context.sandboxes.start()

    # ------------------------------------------------------------ keys, assistant and errors

    def ask_for_keys(self, state: str) -> None:
        """No keyring: the passphrase dialog (once); a keyring that went away: say so and how to recover."""
        if state == KEYRING_MISSING:
            if self.passphrase_dialog is None:
                from .dialogs import error_dialog
                from .passphrase import KEYRING_MISSING_TEXT

                self.passphrase_dialog = error_dialog(self, not_configured(KEYRING_MISSING_TEXT))
            return
        if self.passphrase_dialog is not None and self.passphrase_dialog.isVisible():
            return
        from .passphrase import PassphraseDialog

        dialog = PassphraseDialog(self.context, state, self._keys_opened, self)
        self.passphrase_dialog = dialog
        dialog.rejected.connect(self.close)
        dialog.open()

    def _keys_opened(self) -> None:
        self.workers.run(self, self.start_sandbox_if_chosen)
        self.refresh_status()


    def open_assistant(self) -> SetupAssistant:
        from .assistant import SetupAssistant

        assistant = SetupAssistant(self.context, self)
        self.assistant = assistant
        assistant.show()
        return assistant

    # ------------------------------------------------------------ a restore replacing the data folder's database

    def pause(self) -> None:
        """Stop asking the engine: a restore from the assistant is about to replace its (new, empty) database."""
        self.closing = True
        self.status_timer.stop()
        self.backup_check.stop()

    def resume(self) -> None:
        """The restore was refused before anything changed: back to work."""
        self.closing = False
        self.backup_check.start()
        self.refresh_status()

    def release_engine(self) -> None:
        """On a worker, once paused: the running jobs end, the sandboxes stop and the engine closes its database."""
        self.workers.pool.waitForDone(15_000)
        self.context.sandboxes.stop()
        self.engine.close()
        self.engine_released = True

    def hand_over(self, engine: Engine) -> MainWindow:
        """Yupana goes on with `engine` (the restored data folder) in a new main window; this one closes."""
        successor = MainWindow(engine)  # the assistant again only if the restored folder has no company
        successor.start_services = self.start_services
        self.successor = successor
        successor.show()
        if self.start_services is not None:
            self.start_services(successor)
        self.close()
        return successor

    def show_error(self, owner: Any, exc: BaseException) -> None:
        """A failure no window handled: inline on the owner page if it can, otherwise a non-blocking dialog."""
        banner = getattr(owner, "banner", None)
        if isinstance(exc, YupanaError) and banner is not None:
            banner.show_error(exc)
        elif isinstance(exc, YupanaError):
            from .dialogs import error_dialog

            self.error_box = error_dialog(self, exc)
        else:
            self.crash = crash_dialog(self, exc, self.engine.admin.log_file() if self.attached else None)

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        self.closing = True
        self.status_timer.stop()
        if self.attached:
            self.context.events.stop()
        self.workers.wait(15_000)
        super().closeEvent(event)
