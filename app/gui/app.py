"""Start the windows: one QApplication, one engine, the main window."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication

from app import APP_NAME, __version__
from app.core.engine import Engine

from .main_window import MainWindow


def application() -> QApplication:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setOrganizationName(APP_NAME)
    return app


def run(home: str | None = None) -> int:
    app = application()
    engine = Engine(home)
    window = MainWindow(engine)
    window.show()
    try:
        return app.exec()
    finally:
        engine.close()
