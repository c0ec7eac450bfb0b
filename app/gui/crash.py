"""The crash dialog: an unexpected exception is logged and shown, and the app keeps running."""

from __future__ import annotations

import logging
import sys
import traceback
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

log = logging.getLogger(__name__)


def crash_dialog(parent: QWidget | None, exc: BaseException, log_file: Path | str | None) -> QMessageBox:
    """Non-blocking: the window stays usable; the traceback is in «Mostrar detalles»."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Critical)
    box.setWindowTitle("Yupana: error inesperado")
    box.setText("Ocurrió un error inesperado. La aplicación sigue abierta; puede continuar trabajando.")
    where = f"El detalle quedó guardado en el registro:\n{log_file}" if log_file else ""
    box.setInformativeText(where + "\nSi se repite, envíe ese archivo a soporte.")
    box.setDetailedText("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    box.setWindowModality(Qt.WindowModality.NonModal)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.show()
    return box


def install_excepthook(window: QWidget, log_file: Path | str | None) -> None:
    """Route exceptions that escape Qt slots to the crash dialog instead of ending the app; the dialog is kept on
    `window.crash`."""

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, exc, tb)
            return
        log.error("unexpected exception", exc_info=(kind, exc, tb))
        try:
            box = crash_dialog(window, exc, log_file)
            # Kept on the window (MainWindow.crash; the tests read it). Set by name: main_window imports this module.
            setattr(window, "crash", box)  # noqa: B010
        except RuntimeError:  # the window is already gone
            sys.__excepthook__(kind, exc, tb)

    sys.excepthook = hook
