"""Small widgets every window uses: the inline message banner, field error labels, badges, cards."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from PySide6.QtCore import QDate, QEvent, QObject, QRect, QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QStyle,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.api import ErrorCode, YupanaError

from .field_labels import humanize, label_of

ERROR_STYLE = "color: #b00020;"
Labels = Callable[[str], str | None]  # a form's name for a contract field path (field_labels)
TONES = {
    "error": ("#fdecea", "#b00020"),
    "warning": ("#fff4e5", "#8a5300"),
    "info": ("#e8f1fb", "#0b4f8a"),
    "success": ("#e9f6ec", "#1b5e20"),
}

W = TypeVar("W", bound=QWidget)

# What a window's frame takes around its client area before the window system has drawn it (Windows 10/11: a title
# bar of about 31 px and a 1 px border at 100 %; the invisible resize borders lie outside the work area anyway).
FRAME_ALLOWANCE = QSize(16, 40)
PLACEHOLDER_MARGIN = 16  # a line edit's frame and text margins, both sides


def cell(table: QTableWidget, row: int, column: int) -> QTableWidgetItem:
    """The item of a cell the window always fills (Qt answers None for an empty cell: here that is a bug)."""
    item = table.item(row, column)
    if item is None:
        raise LookupError(f"the table has no item in row {row}, column {column}")
    return item


def cell_widget(table: QTableWidget, row: int, column: int, kind: type[W]) -> W:
    """The widget of a cell the window always fills with a `kind` (e.g. the affectation's QComboBox)."""
    widget = table.cellWidget(row, column)
    if not isinstance(widget, kind):
        raise LookupError(f"the table has no {kind.__name__} in row {row}, column {column}")
    return widget


def python_date(date: QDate) -> dt.date:
    """A QDate as a datetime.date (PySide's toPython, whose stub only promises an object)."""
    value = date.toPython()
    if not isinstance(value, dt.date):
        raise TypeError(f"not a valid date: {date}")
    return value


def progress_percent(report: tuple[int, int | None]) -> int | None:
    """A worker reports progress as `job.report(done, total)`, counted from the engine's items (a batch's, the
    padrón's steps), handed over as a tuple; None while the total is not known yet."""
    done, total = report
    return int(100 * done / total) if total else None


def show_progress(bar: QProgressBar, report: tuple[int, int | None]) -> None:
    """Move `bar` to what the worker reported (see `progress_percent`)."""
    percent = progress_percent(report)
    if percent is not None:
        bar.setValue(max(0, min(100, percent)))


def heading(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setPointSize(font.pointSize() + 5)
    font.setBold(True)
    label.setFont(font)
    return label


def describe(exc: BaseException, label: Labels = label_of) -> tuple[str, str, str]:
    """(tone, headline, details) of an error, in Spanish, for a person; fields named by `label` (a form's names)."""
    if isinstance(exc, YupanaError):
        lines = [f"Código: {exc.code}"]
        for detail in exc.details:
            code = f" (SUNAT {detail.sunat_code})" if detail.sunat_code else ""
            lines.append(f"• {humanize(detail.message, label)}{code}")
        tone = "warning" if exc.code == ErrorCode.NOT_CONFIGURED else "error"
        return tone, humanize(exc.message, label), "\n".join(lines)
    return "error", "Ocurrió un error inesperado. Los detalles están en el registro.", f"{type(exc).__name__}: {exc}"


class MessageBanner(QFrame):
    """An inline message at the top of a window, with expandable details; hidden when empty."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.toggle = QToolButton()
        self.toggle.setText("Detalles")
        self.toggle.setCheckable(True)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip("Cerrar el mensaje")
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setMaximumHeight(110)
        self.details.hide()
        top = QHBoxLayout()
        top.addWidget(self.text, 1)
        top.addWidget(self.toggle)
        top.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.addLayout(top)
        layout.addWidget(self.details)
        self.toggle.toggled.connect(self.details.setVisible)
        self.close_button.clicked.connect(self.clear)
        self.tone = ""
        self.hide()

    def show_message(self, text: str, tone: str = "info", details: str = "") -> None:
        background, foreground = TONES[tone]
        self.tone = tone
        self.setStyleSheet(f"#banner {{ background: {background}; border: 1px solid {foreground}; border-radius: 4px; }}"
                           f" #banner QLabel {{ color: {foreground}; }}")
        self.text.setText(text)
        self.details.setPlainText(details)
        self.toggle.setVisible(bool(details))
        self.toggle.setChecked(False)
        self.show()

    def show_error(self, exc: BaseException, label: Labels = label_of) -> None:
        tone, text, details = describe(exc, label)
        self.show_message(text, tone, details)

    def clear(self) -> None:
        self.text.clear()
        self.details.clear()
        self.tone = ""
        self.hide()


class FieldErrors:
    """Error labels under form fields, keyed by the contract's field path (e.g. «receptor.numero_documento»)."""

    def __init__(self, label: Labels = label_of) -> None:
        self.labels: dict[str, QLabel] = {}
        self.label = label  # the form's names of the contract's fields, in the messages

    def label_for(self, field: str) -> QLabel:
        label = QLabel()
        label.setStyleSheet(ERROR_STYLE)
        label.setWordWrap(True)
        label.hide()
        self.labels[field] = label
        return label

    def wrap(self, item: QWidget | QLayout, field: str) -> QWidget:
        """`item` (a widget or a layout) with the error label of `field` right under it, for a form row."""
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        if isinstance(item, QWidget):
            column.addWidget(item)
        else:
            column.addLayout(item)
        column.addWidget(self.label_for(field))
        return box

    def clear(self) -> None:
        for label in self.labels.values():
            label.clear()
            label.hide()

    def show(self, exc: BaseException) -> list[str]:
        """Put each detail next to its field; returns the fields that had no place in the form."""
        self.clear()
        unplaced = []
        for detail in getattr(exc, "details", []):
            label = self._match(detail.field)
            if label is None:
                unplaced.append(detail.field or "")
                continue
            message = humanize(detail.message, self.label)
            text = message if not label.text() else f"{label.text()}\n{message}"
            label.setText(text)
            label.show()
        return unplaced

    def show_or_tell(self, exc: BaseException, banner: MessageBanner) -> None:
        """Each detail under its field; the whole error in `banner` too when one has no place in the form or it
        names no field."""
        if self.show(exc) or not getattr(exc, "details", None):
            banner.show_error(exc)

    def _match(self, field: str | None) -> QLabel | None:
        if not field:
            return None
        if field in self.labels:
            return self.labels[field]
        # «items[2].igv» belongs under the items table, «emisor.ruc» under «emisor»...
        generic = re.sub(r"\[\d+\]", "", field)
        for candidate in (generic, generic.split(".")[0], field.split(".")[0]):
            if candidate in self.labels:
                return self.labels[candidate]
        return None

    def visible(self) -> dict[str, str]:
        return {field: label.text() for field, label in self.labels.items() if label.text()}


def form_tab() -> tuple[QWidget, QFormLayout, FieldErrors]:
    """A tab holding a form, and the error labels of its fields."""
    tab = QWidget()
    return tab, QFormLayout(tab), FieldErrors()


class Badge(QLabel):
    """A coloured pill: environment, certificate expiry, voucher status."""

    def __init__(self, text: str = "", colour: str = "#666", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.set(text, colour)

    def set(self, text: str, colour: str) -> None:
        self.colour = colour
        self.setText(f" {text} ")
        self.setStyleSheet(f"background: {colour}; color: white; border-radius: 6px; padding: 1px 8px; font-weight: bold;")


class ResultCard(QFrame):
    """A lookup result: one row per field, each with a copy button."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.form = QFormLayout(self)
        self.values: dict[str, str] = {}
        self.labels: dict[str, str] = {}
        self.copy_all = QPushButton("Copiar todo")
        self.copy_all.clicked.connect(self._copy_all)

    def show_record(self, record: Mapping[str, Any], labels: Mapping[str, str]) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.values = {}
        self.labels = {}
        self.copy_all = QPushButton("Copiar todo")
        self.copy_all.clicked.connect(self._copy_all)
        for key, value in record.items():
            if value in (None, ""):
                continue
            text = "sí" if value is True else "no" if value is False else str(value)
            self.values[key] = text
            self.labels[key] = labels.get(key, key.replace("_", " ").capitalize())
            self.form.addRow(self.labels[key] + ":", self._row(text))
        self.form.addRow("", self.copy_all)

    def _row(self, text: str) -> QWidget:
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        value = QLabel(text)
        value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        value.setWordWrap(True)
        copy = QToolButton()
        copy.setText("Copiar")
        copy.setToolTip("Copiar al portapapeles")
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(text))
        layout.addWidget(value, 1)
        layout.addWidget(copy)
        return row

    def _copy_all(self) -> None:
        QGuiApplication.clipboard().setText("\n".join(f"{self.labels[k]}: {v}" for k, v in self.values.items()))


def work_area(widget: QWidget) -> QRect:
    """The available geometry (the screen less the taskbar) of the screen `widget` is on, in device-independent
    pixels (a 1920×1080 screen at 125 % with a taskbar: 1536×832)."""
    screen = widget.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def room(window: QWidget) -> QSize:
    """What the work area of `window`'s screen leaves for its client area once its frame is counted."""
    return work_area(window).size() - FRAME_ALLOWANCE


def fit_to_screen(window: QWidget, width: int, height: int) -> QSize:
    """Give `window` its preferred size, or what the work area leaves of it once its frame is counted; a window
    without a parent is also moved inside the work area (a dialog with one is centred on it by Qt, within the
    screen). Returns the size given."""
    area, free = work_area(window), room(window)
    size = QSize(width, height).boundedTo(free).expandedTo(QSize(1, 1))
    window.resize(size)
    if window.parentWidget() is None:
        spare = free - size
        window.move(area.x() + max(0, spare.width() // 2), area.y() + max(0, spare.height() // 2))
    return size


def fits_width(window: QWidget, minimum: int) -> None:
    """A dialog at least `minimum` pixels wide (its texts read on one line), never wider than the work area."""
    window.setMinimumWidth(min(minimum, room(window).width()))


def scrolling(content: QWidget) -> QScrollArea:
    """`content` in a frameless scroll area: on a short screen it scrolls instead of pushing what comes after it
    (totals, buttons) below the edge (and sideways rather than cutting a field on a narrow one)."""
    area = QScrollArea()
    area.setWidget(content)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setSizeAdjustPolicy(QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents)
    return area


class ErrorStrip(QScrollArea):
    """An error label that grows to `lines` lines and then scrolls (a dozen bad lines never crush the table above
    it nor push the buttons below off the screen); shown and hidden with its label."""

    def __init__(self, label: QLabel, lines: int = 3) -> None:
        super().__init__()
        self.label = label
        hidden = label.isHidden()
        self.setWidget(label)  # QScrollArea shows the widget it is given: the label keeps its own state
        label.setVisible(not hidden)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizeAdjustPolicy(QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents)
        self.setMaximumHeight(lines * label.fontMetrics().lineSpacing() + 6)
        self.setVisible(not hidden)
        label.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.label and event.type() in (QEvent.Type.ShowToParent, QEvent.Type.HideToParent):
            self.setVisible(event.type() == QEvent.Type.ShowToParent)
        return super().eventFilter(watched, event)


def header_width(table: QTableView, text: str) -> int:
    """The width a column of `table` needs for its header to show `text` whole."""
    header = table.horizontalHeader()
    header.ensurePolished()
    margin = header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
    return header.fontMetrics().horizontalAdvance(text) + 2 * margin + 6


def combo_width(combo: QComboBox) -> int:
    """The width `combo` needs to show its current choice whole (its text, the arrow and the frame)."""
    combo.ensurePolished()
    hint = combo.sizeHint().width()  # the longest choice, plus the arrow and the frame
    longest = max((combo.fontMetrics().horizontalAdvance(combo.itemText(i)) for i in range(combo.count())), default=0)
    return hint - longest + combo.fontMetrics().horizontalAdvance(combo.currentText())


def fit_placeholder(edit: QLineEdit, *hints: str) -> None:
    """`edit` never narrower than its placeholder, nor than any of `hints` (other placeholders it may show): the
    hint is read whole."""
    edit.ensurePolished()
    metrics = edit.fontMetrics()
    edit.setMinimumWidth(max(metrics.horizontalAdvance(text) for text in (edit.placeholderText(), *hints))
                         + PLACEHOLDER_MARGIN)
