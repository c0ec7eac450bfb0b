"""Helpers of the GUI tests (their fixtures are in tests/gui/conftest.py)."""

from __future__ import annotations


def wait_idle(qtbot, workers, timeout: int = 10_000) -> None:
    """Wait until every background job has delivered its outcome to the GUI thread."""
    qtbot.waitUntil(lambda: workers.running == 0, timeout=timeout)


def open_widget(qtbot, context, cls, *, show: bool = False):
    """A real page or form of the app on the shared context, once its first background loads are in."""
    widget = cls(context)
    qtbot.addWidget(widget)
    if show:
        widget.show()
    wait_idle(qtbot, context.workers)
    return widget


def save_pdf(qtbot, context, panel, target) -> None:
    """«Guardar PDF» of a detail's printed panel, into `target`, as a user picks the file."""
    dialog = panel.choose_file()
    wait_idle(qtbot, context.workers)
    dialog.fileSelected.emit(str(target))
    dialog.close()
    wait_idle(qtbot, context.workers)


def complete_unit(qtbot, box, typed: str, label: str) -> None:
    """Type `typed` into an editable unit box (catalogue 03) and pick `label` from its completer's popup, as a person
    does; asserts the popup offered it."""
    from PySide6.QtCore import Qt

    box.setFocus()
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), typed)
    popup = box.completer().popup()
    qtbot.waitUntil(popup.isVisible)
    model = box.completer().completionModel()
    offered = [model.index(row, 0).data() for row in range(model.rowCount())]
    assert label in offered
    popup.setCurrentIndex(model.index(offered.index(label), 0))
    qtbot.keyClick(popup, Qt.Key.Key_Return)
