"""Start the windows: one QApplication, one engine, the main window."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication

from app import APP_NAME, __version__


def application() -> QApplication:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setOrganizationName(APP_NAME)
    return app


def run(home: str | None = None) -> int:
    from app.core.engine import Engine

    from .crash import install_excepthook
    from .main_window import MainWindow

    app = application()
    engine = Engine(home)
    window = MainWindow(engine)
    install_excepthook(window, engine.log_file)
    window.show()
    # In sandbox mode the local stand-ins start in the background once the window is up.
    window.workers.run(window, window.start_sandbox_if_chosen)
    try:
        return app.exec()
    finally:
        window.workers.wait(15_000)
        engine.close()
