"""Start the windows: one QApplication, the main window, and its engine opened on a worker."""

from __future__ import annotations

import sys
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator
from PySide6.QtWidgets import QApplication

from app import APP_NAME, __version__

if TYPE_CHECKING:

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


def start(home: str | None = None) -> MainWindow:
    """Show the main window (with the crash hook) at once, saying «Abriendo sus datos…»; the engine is imported and
    opened on a worker once the window has painted, then attached (issue 33, start-up). `run` adds the event loop."""
    from .collector import GuiThreadCollector
    from .main_window import MainWindow

    app = application()
    parts = parts_of(app)
    if parts.collector is None:
        parts.collector = GuiThreadCollector(app)
    from .crash import install_excepthook

    window = MainWindow()
    install_excepthook(window, None)
    window.start_services = start_services  # once the engine is attached (and on the window a restore opens)
    window.open_engine_when_painted(home)
    window.show()
    return window


def start_services(window: MainWindow) -> None:
    """What runs beside a main window once its engine is attached (also beside the one a restore from the assistant
    opens on the restored folder): the crash hook names its log, and what starts with the app starts."""
    from .crash import install_excepthook

    engine = window.engine
    install_excepthook(window, engine.admin.log_file())  # on this window, the one that replaced it after a restore
    # The webhook listener starts with the app (a busy port shows in the status bar and in Mensajes);
    # in sandbox mode the local stand-ins start in the background once the window is up.
    window.workers.run(window, engine.messaging.start_listener, failed=lambda exc: window.refresh_status())
    window.workers.run(window, engine.invoicing.watch_summaries)  # RA/RC that `yupana` commands leave pending
    window.workers.run(window, window.start_sandbox_if_chosen)
    window.workers.run(window, window.start_api_if_chosen)


def shutdown(window: MainWindow) -> None:
    app = QApplication.instance()
    current: MainWindow | None = window
    while current is not None:  # a restore from the assistant replaced the first window (and its engine)
        current.close()
        current.workers.wait(15_000)
        if app is not None and not current.attached:
            app.processEvents()  # an engine opened while the window closed is handed back now, and closed
        if current.attached and not current.engine_released:
            current.engine.close()
        current = current.successor
    parts = _parts.get(app) if app is not None else None
    if parts is not None and parts.collector is not None:
        parts.collector.stop()
        parts.collector = None


def run(home: str | None = None) -> int:
    window = start(home)
    try:
        return application().exec()
    finally:
        shutdown(window)
