"""Completion from the catalogue as one types: a QCompleter on a line edit fed by an engine search run on a worker
once typing settles (the search answers from indexes; docs/catalog.md). Choosing a suggestion emits the record."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QAbstractProxyModel, QModelIndex, QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QCompleter, QLineEdit, QWidget

from .context import Context
from .widgets import work_area

DELAY_MS = 120  # a scanner types a whole code in less; a person pauses longer between words
SUGGESTIONS = 12
POPUP_PADDING = 16  # a row's own margins in the popup, each side and the focus frame


class CatalogCompleter(QObject):
    """Suggestions under `line` from `search(typed)`; `chosen(record)` when one is picked (click or Enter)."""

    chosen = Signal(object)
    answered = Signal(str, list)  # (what was typed, the records found) for each search that is still current

    def __init__(self, owner: QWidget, context: Context, line: QLineEdit, search: Callable[[str, int], list],
                 label: Callable[[Any], str], min_chars: int = 2) -> None:
        super().__init__(owner)
        self.owner, self.context, self.line = owner, context, line
        self.search, self.label, self.min_chars = search, label, min_chars
        self.matches: list[Any] = []
        self.model = QStandardItemModel(self)
        self.completer = QCompleter(self.model, self)
        self.completer.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setWidget(line)  # not line.setCompleter: the record fills the form, not the popup's text
        # activated's QModelIndex overload (two rows may read the same); PySide6's stub cannot index a signal:
        by_index = self.completer.activated[QModelIndex]  # type: ignore[index]  # stub: no SignalInstance.__getitem__
        by_index.connect(self._activated)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(DELAY_MS)
        self.timer.timeout.connect(self.search_now)
        line.textEdited.connect(lambda _text: self.timer.start())

    def cancel(self) -> None:
        """Typing ended with Enter (a scan) or the field was filled: no popup arrives late."""
        self.timer.stop()
        self._hide_popup()

    def search_now(self) -> None:
        typed = self.line.text().strip()
        if len(typed) < self.min_chars:
            self._show(typed, [])
            return
        self.context.workers.run(self.owner, self.search, typed, SUGGESTIONS,
                                 done=lambda found: self._show(typed, found), failed=lambda exc: None)

    def _show(self, typed: str, found: list[Any]) -> None:
        if self.line.text().strip() != typed:  # typing went on: a newer search answers
            return
        self.matches = list(found)
        self.answered.emit(typed, self.matches)
        self.model.clear()
        for record in self.matches:
            self.model.appendRow(QStandardItem(self.label(record)))
        if self.matches and self.line.hasFocus():
            self.completer.complete(self._popup_rect())
        else:
            self._hide_popup()

    def _popup_rect(self) -> QRect:
        """Under the line, as wide as the longest suggestion (never wider than the screen's work area)."""
        popup = self.completer.popup()
        width = self.line.width()
        if popup is not None:
            widest = max(popup.fontMetrics().horizontalAdvance(self.label(record)) for record in self.matches)
            needed = widest + popup.verticalScrollBar().sizeHint().width() + 2 * popup.frameWidth() + POPUP_PADDING
            width = min(max(width, needed), work_area(self.line).width())
        return QRect(0, 0, width, self.line.height())

    def _hide_popup(self) -> None:
        popup = self.completer.popup()
        if popup is not None:
            popup.hide()

    def _activated(self, index: QModelIndex) -> None:
        model = self.completer.completionModel()  # a proxy of `self.model`
        row = (model.mapToSource(index) if isinstance(model, QAbstractProxyModel) else index).row()
        if 0 <= row < len(self.matches):
            self._hide_popup()
            self.chosen.emit(self.matches[row])


class ScanField(QLineEdit):
    """A line a barcode scanner types into: its Enter is the scan (`scanned`), never the dialog's default button
    (a scan must not press «Emitir»)."""

    scanned = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.popup: QWidget | None = None  # the completion popup: while it is open, Enter chooses its row

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if self.popup is not None and self.popup.isVisible():
                event.ignore()  # the completer picks the row
                return
            event.accept()
            self.scanned.emit()
            return
        super().keyPressEvent(event)
