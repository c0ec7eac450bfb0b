"""Start the windows: one QApplication, one engine, the main window."""

from __future__ import annotations

import sys

from PySide6.QtCore import QLibraryInfo, QLocale, QTranslator
from PySide6.QtWidgets import QApplication

from app import APP_NAME, __version__


def application() -> QApplication:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    install_spanish_translation(app)
    app.setApplicationName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setOrganizationName(APP_NAME)
    return app


def install_spanish_translation(app: QApplication) -> None:
    """Qt's own words (standard buttons «Aceptar», «Mostrar detalles…», file dialogs) in Spanish, once."""
    if getattr(app, "spanish", None) is not None:
        return
    translator = QTranslator(app)
    if translator.load(QLocale(QLocale.Language.Spanish, QLocale.Country.Peru), "qtbase", "_",
                       QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        app.installTranslator(translator)
    app.spanish = translator


def start(home: str | None = None):
    """Open the engine and show the main window (with the crash hook); `run` adds the event loop."""
    from app.core.engine import Engine

    from .collector import GuiThreadCollector
    from .crash import install_excepthook
    from .main_window import MainWindow

    app = application()
    if not hasattr(app, "collector"):
        app.collector = GuiThreadCollector(app)
    engine = Engine(home)
    window = MainWindow(engine)
    install_excepthook(window, engine.log_file)
    window.show()
    # The webhook listener starts with the app (a busy port shows in the status bar and in Mensajes);
    # in sandbox mode the local stand-ins start in the background once the window is up.
    window.workers.run(window, engine.start_listener, failed=lambda exc: window.refresh_status())
    window.workers.run(window, window.start_sandbox_if_chosen)
    window.workers.run(window, window.start_api_if_chosen)
    return engine, window


def shutdown(engine, window) -> None:
    window.close()
    window.workers.wait(15_000)
    engine.close()
    collector = getattr(QApplication.instance(), "collector", None)
    if collector is not None:
        collector.stop()
        del QApplication.instance().collector


def run(home: str | None = None) -> int:
    engine, window = start(home)
    try:
        return application().exec()
    finally:
        shutdown(engine, window)
