"""The main window: a side navigation and one page per section."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QMainWindow,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app import APP_NAME, __version__
from app.core.engine import Engine
from app.gui.registry_page import RegistryPage

SECTIONS = ["Comprobantes", "Certificados", "Mensajes", "Consultas", "Ajustes"]


def placeholder_page(title: str, text: str) -> QWidget:
    page = QWidget()
    layout = QVBoxLayout(page)
    heading = QLabel(f"<h2>{title}</h2>")
    body = QLabel(text)
    body.setWordWrap(True)
    layout.addWidget(heading)
    layout.addWidget(body)
    layout.addStretch(1)
    return page


class MainWindow(QMainWindow):
    def __init__(self, engine: Engine) -> None:
        super().__init__()
        self.engine = engine
        self.setWindowTitle(f"{APP_NAME} {__version__}")
        self.resize(1100, 720)
        self.navigation = QListWidget()
        self.navigation.addItems(SECTIONS)
        self.navigation.setFixedWidth(180)
        self.pages = QStackedWidget()
        for section in SECTIONS:
            self.pages.addWidget(placeholder_page(section, "Esta sección aún no está configurada."))
        self._replace_page("Consultas", RegistryPage(engine))
        self.navigation.currentRowChanged.connect(self.pages.setCurrentIndex)
        self.navigation.setCurrentRow(0)
        central = QWidget()
        layout = QHBoxLayout(central)
        layout.addWidget(self.navigation)
        layout.addWidget(self.pages, 1)
        self.setCentralWidget(central)
        environment = engine.config_get("environment").upper()
        self.environment_label = QLabel(f" {environment} ")
        self.environment_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.statusBar().addPermanentWidget(self.environment_label)

    def _replace_page(self, section: str, page: QWidget) -> None:
        index = SECTIONS.index(section)
        old = self.pages.widget(index)
        self.pages.removeWidget(old)
        old.deleteLater()
        self.pages.insertWidget(index, page)

    def show_section(self, name: str) -> None:
        self.navigation.setCurrentRow(SECTIONS.index(name))
