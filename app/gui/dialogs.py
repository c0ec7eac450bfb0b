"""Non-blocking dialogs: errors with expandable details, confirmations, passwords."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QDir, QStandardPaths, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from .widgets import describe


def documents_folder() -> str:
    """Where file dialogs open: the user's Documents folder (not the program's folder); home without one."""
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return documents if documents and QDir(documents).exists() else QDir.homePath()


def choose_path(parent: QWidget, title: str, on_chosen: Callable[[str], object], *,
                name_filter: str | None = None, folder: bool = False) -> QFileDialog:
    """Open a non-blocking file (or folder) chooser in the Documents folder; `on_chosen(path)` runs when the user
    picks one. The dialog is kept on `parent.file_dialog` so tests can reach it and it is not collected early."""
    dialog = QFileDialog(parent, title, documents_folder())
    dialog.setFileMode(QFileDialog.FileMode.Directory if folder else QFileDialog.FileMode.ExistingFile)
    if name_filter:
        dialog.setNameFilter(name_filter)
    dialog.fileSelected.connect(on_chosen)
    dialog.open()
    setattr(parent, "file_dialog", dialog)  # noqa: B010 - any widget may ask, so it is not a declared attribute
    return dialog


def error_dialog(parent: QWidget | None, exc: BaseException) -> QMessageBox:
    tone, text, details = describe(exc)
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning if tone == "warning" else QMessageBox.Icon.Critical)
    box.setWindowTitle("Yupana")
    box.setText(text)
    if details:
        box.setDetailedText(details)
    box.setWindowModality(Qt.WindowModality.NonModal)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.show()
    return box


def confirm(parent: QWidget, title: str, text: str, on_yes: Callable[[], object]) -> QMessageBox:
    """Ask yes/no without blocking; `on_yes` runs only on «Sí»."""
    box = QMessageBox(QMessageBox.Icon.Question, title, text,
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, parent)
    box.button(QMessageBox.StandardButton.Yes).setText("Sí")
    box.button(QMessageBox.StandardButton.No).setText("No")
    box.setDefaultButton(QMessageBox.StandardButton.No)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def finished(result: int) -> None:
        if result == QMessageBox.StandardButton.Yes:
            on_yes()

    box.finished.connect(finished)
    box.open()
    return box


class PasswordDialog(QDialog):
    """Ask a password (masked); `on_accept(password)` runs on «Aceptar»."""

    def __init__(self, parent: QWidget, title: str, prompt: str, on_accept: Callable[[str], None]) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Aceptar")
        buttons.button(QDialogButtonBox.StandardButton.Cancel).setText("Cancelar")
        layout = QVBoxLayout(self)
        label = QLabel(prompt)
        label.setWordWrap(True)
        layout.addWidget(label)
        layout.addWidget(self.password)
        layout.addWidget(buttons)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.accepted.connect(lambda: on_accept(self.password.text()))
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
