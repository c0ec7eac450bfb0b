"""Building blocks shared by the section pages."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from .widgets import MessageBanner, heading


class NotAvailablePage(QWidget):
    """A section whose feature is not in this version: says so plainly, shows no fake data."""

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        layout.addWidget(heading(title))
        self.banner = MessageBanner()
        self.banner.show_message(text, "warning")
        layout.addWidget(self.banner)
        note = QLabel("Cuando la función esté instalada, esta sección se activará sola.")
        note.setWordWrap(True)
        layout.addWidget(note)
        layout.addStretch(1)
