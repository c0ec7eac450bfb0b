"""Start the windows: one QApplication, one engine, the main window."""

from __future__ import annotations

import sys
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator
from PySide6.QtWidgets import QApplication

from app import APP_NAME, __version__

if TYPE_CHECKING:
    from app.core.api import Engine

    from .collector import GuiThreadCollector
    from .main_window import MainWindow


@dataclass
class AppParts:
    """What this module adds to the one QApplication (its Spanish translator, the GUI-thread collector), kept
    here with their types rather than as ad-hoc attributes on the application object."""

    spanish: QTranslator | None = None
    ours: QTranslator | None = None  # app/data/i18n: what Qt's catalogue lacks, in Peru's Spanish
    collector: GuiThreadCollector | None = None


_parts: weakref.WeakKeyDictionary[QCoreApplication, AppParts] = weakref.WeakKeyDictionary()


def parts_of(app: QCoreApplication) -> AppParts:
    """The parts of `app` (empty for an application this module has not touched yet)."""
    return _parts.setdefault(app, AppParts())


def application() -> QApplication:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    if not isinstance(app, QApplication):
        raise RuntimeError("the windows need a QApplication, and a bare QCoreApplication already exists")
    install_spanish_translation(app)
    app.setApplicationName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setOrganizationName(APP_NAME)
    return app


OUR_CATALOGUE = "i18n/yupana_es.qm"  # built from yupana_es.ts beside it with pyside6-lrelease (`make translations`)


def install_spanish_translation(app: QApplication) -> None:
    """Qt's own words (standard buttons «Aceptar», «Mostrar detalles…», file dialogs) in Spanish, once; then our
    small catalogue, installed after Qt's so that it is asked first: the strings Qt's lacks («Look in», «Files of
    type») and Peru's words where Qt's says Spain's («archivo», not «fichero»; «carpeta», not «directorio»)."""
    from app.core.api import package_data

    parts = parts_of(app)
    if parts.spanish is not None:
        return
    translator = QTranslator(app)
    if translator.load(QLocale(QLocale.Language.Spanish, QLocale.Country.Peru), "qtbase", "_",
                       QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        app.installTranslator(translator)
    parts.spanish = translator
    ours = QTranslator(app)
    if ours.load(str(package_data(OUR_CATALOGUE))):
        app.installTranslator(ours)
    parts.ours = ours


def start(home: str | None = None) -> tuple[Engine, MainWindow]:
    """Open the engine and show the main window (with the crash hook); `run` adds the event loop."""

    from .collector import GuiThreadCollector
    from .crash import install_excepthook
    from .main_window import MainWindow
    from .shared_database import open_waiting

    app = application()
    parts = parts_of(app)
    if parts.collector is None:
        parts.collector = GuiThreadCollector(app)
    engine = open_waiting(home)  # the shared database off: said, and tried again, instead of a crash
    if engine is None:
        raise SystemExit(0)  # the user left while waiting for it
    window = MainWindow(engine)
    install_excepthook(window, engine.admin.log_file())
    window.show()
    # The webhook listener starts with the app (a busy port shows in the status bar and in Mensajes);
    # in sandbox mode the local stand-ins start in the background once the window is up.
    window.workers.run(window, engine.messaging.start_listener, failed=lambda exc: window.refresh_status())
    window.workers.run(window, engine.invoicing.watch_summaries)  # RA/RC that `yupana` commands leave pending
    window.workers.run(window, window.start_sandbox_if_chosen)
    window.workers.run(window, window.start_api_if_chosen)
    return engine, window


def shutdown(engine: Engine, window: MainWindow) -> None:
    window.close()
    window.workers.wait(15_000)
    engine.close()
    app = QApplication.instance()
    parts = _parts.get(app) if app is not None else None
    if parts is not None and parts.collector is not None:
        parts.collector.stop()
        parts.collector = None


def run(home: str | None = None) -> int:
    engine, window = start(home)
    try:
        return application().exec()
    finally:
        shutdown(engine, window)
