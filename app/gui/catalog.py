"""What the «Clientes» and «Productos» sections share: a searchable table, an editor, CSV import with a preview
and export. The searches, saves and files go through the engine on a worker (docs/catalog.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QCompleter,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .context import Context
from .dialogs import choose_path, confirm
from .widgets import FieldErrors, MessageBanner, fit_to_screen, heading

SEARCH_DELAY_MS = 150  # typing settles before a search goes to the engine
PAGE_ROWS = 200  # rows the table shows: a search narrows a large catalogue
PREVIEW_ROWS = 100  # rows of a CSV shown before importing it


@dataclass(frozen=True)
class Field:
    """One field of the editor: the record's attribute, its label, and how it is typed."""

    name: str
    label: str
    kind: str = "text"  # «text», «choice» (a code among `choices`) or «flag»
    choices: tuple[tuple[str, str], ...] = ()  # (code, label)
    placeholder: str = ""
    default: Any = None


SEARCHABLE_CHOICES = 100  # a longer list (the 2,116 units of catalogue 03) is typed into, not scrolled


def searchable(combo: QComboBox) -> None:
    """Typing any part of a label («saco», «FOT», «yard») offers the choices that contain it; nothing typed is added
    as a new choice, so the field keeps a code of the list."""
    combo.setEditable(True)
    combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    completer = combo.completer()
    assert completer is not None  # an editable combo box has one
    completer.setFilterMode(Qt.MatchFlag.MatchContains)
    completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
    completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)


def _shown(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "sí" if value else "no"
    return str(value)


class RecordEditor(QDialog):
    """Add or change one record; the engine's problems land under their fields. `save(data, id)` runs on a worker;
    `values` fill a new record's fields (a voucher line saved as a product)."""

    def __init__(self, parent: QWidget, context: Context, fields: tuple[Field, ...], singular: str,
                 save: Callable[[dict[str, Any], int | None], Any], on_saved: Callable[[Any], None],
                 record: Any | None = None, values: dict[str, Any] | None = None) -> None:
        super().__init__(parent)
        self.context, self.record, self.save_fn, self.on_saved = context, record, save, on_saved
        self.setWindowTitle(("Editar " if record else "Nuevo ") + singular)
        self.errors = FieldErrors()
        self.banner = MessageBanner()
        self.inputs: dict[str, QComboBox | QCheckBox | QLineEdit] = {}
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        form = QFormLayout()
        for field in fields:
            widget: QComboBox | QCheckBox | QLineEdit
            value = getattr(record, field.name) if record else (values or {}).get(field.name, field.default)
            if field.kind == "choice":
                combo = QComboBox()
                for code, label in field.choices:
                    combo.addItem(label, code)
                if value and combo.findData(value) < 0:  # a code typed elsewhere (a CSV) stays as it is
                    combo.addItem(str(value), value)
                combo.setCurrentIndex(max(combo.findData(value), 0))
                if len(field.choices) > SEARCHABLE_CHOICES:
                    searchable(combo)
                widget = combo
            elif field.kind == "flag":
                widget = QCheckBox()
                widget.setChecked(bool(value))
            else:
                line = QLineEdit(_shown(value))
                line.setPlaceholderText(field.placeholder)
                widget = line
            self.inputs[field.name] = widget
            form.addRow(f"{field.label}:", self.errors.wrap(widget, field.name))
        layout.addLayout(form)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.cancel_button = QPushButton("Cancelar")
        self.save_button = QPushButton("Guardar")
        self.save_button.setDefault(True)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.save_button)
        layout.addLayout(buttons)
        self.cancel_button.clicked.connect(self.reject)
        self.save_button.clicked.connect(self.save)

    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for name, widget in self.inputs.items():
            if isinstance(widget, QComboBox):
                data[name] = widget.currentData()
            elif isinstance(widget, QCheckBox):
                data[name] = widget.isChecked()
            else:
                data[name] = widget.text().strip() or None
        return data

    def save(self) -> None:
        self.errors.clear()
        self.banner.clear()
        record_id = self.record.id if self.record else None
        self.context.workers.run(self, self.save_fn, self.data(), record_id, done=self._saved,
                                 failed=self._failed, busy=[self.save_button])

    def _saved(self, record: Any) -> None:
        self.on_saved(record)
        self.accept()

    def _failed(self, exc: BaseException) -> None:
        if self.errors.show(exc) or not getattr(exc, "details", None):
            self.banner.show_error(exc)


class ImportPreview(QDialog):
    """What a CSV file holds before anything is written: the rows read and every bad row; «Importar» only when
    no row is bad (nothing is half-imported). A file that is not UTF-8 first shows the encoding guessed, the first
    rows with accents or eñes as read with it, and the encodings to choose from: another choice reads the file
    again (a new preview) and the import reads it as shown."""

    def __init__(self, page: CatalogPage, path: str, preview: Any) -> None:
        super().__init__(page)
        self.page, self.path, self.preview = page, path, preview
        self.setWindowTitle(f"Importar {page.PLURAL} desde CSV")
        fit_to_screen(self, 860, 560)
        layout = QVBoxLayout(self)
        self.encoding_note = QLabel()
        self.encoding_note.setWordWrap(True)
        self.encoding_rows = QListWidget()
        self.encoding_choice = QComboBox()
        self._encoding_box(layout, preview)
        read, bad = preview.count, preview.bad_rows
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        if preview.errors:
            shown = (f" Se muestran los primeros {len(preview.errors)} de {preview.error_count} problemas."
                     if preview.error_count > len(preview.errors) else "")
            self.summary.setText(f"{read} filas correctas y {bad} con errores. Corrija el archivo y vuelva a "
                                 f"importarlo: no se importará nada mientras haya errores.{shown}")
        else:
            self.summary.setText(f"{read} filas listas para importar (las que ya existen se reemplazan).")
        layout.addWidget(self.summary)
        self.error_list = QListWidget()
        self.error_list.addItems([str(error) for error in preview.errors])
        self.error_list.setVisible(bool(preview.errors))
        layout.addWidget(self.error_list, 1)
        self.table = QTableWidget(0, len(page.COLUMNS))
        self.table.setHorizontalHeaderLabels([header for header, _ in page.COLUMNS])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        fill_table(self.table, page.COLUMNS, preview.rows[:PREVIEW_ROWS])
        self.table.setVerticalHeaderLabels([str(n) for n in preview.row_numbers[:PREVIEW_ROWS]])
        self.table.resizeColumnsToContents()  # the file's words and the headers whole (the table scrolls sideways)
        layout.addWidget(self.table, 2)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.cancel_button = QPushButton("Cancelar")
        self.import_button = QPushButton("Importar")
        self.import_button.setEnabled(preview.ok and read > 0)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.import_button)
        layout.addLayout(buttons)
        self.cancel_button.clicked.connect(self.reject)
        self.import_button.clicked.connect(self.run_import)

    def _encoding_box(self, layout: QVBoxLayout, preview: Any) -> None:
        """The guess, the rows to judge it by and the choice, for a file that is not UTF-8 (hidden otherwise)."""
        check = preview.encoding_check
        for widget in (self.encoding_note, self.encoding_rows, self.encoding_choice):
            widget.setVisible(check is not None)
        if check is None:
            return
        labels = {choice.codec: choice.label for choice in check.choices}
        read_as = preview.dialect.encoding if preview.dialect else check.guessed
        note = (f"El archivo no está en UTF-8: parece estar en {check.label}. Antes de importar, revise que las "
                "tildes y eñes se lean bien en estas filas; si no, elija otra codificación.")
        if read_as != check.guessed:
            note += f" Ahora se lee como {labels.get(read_as, read_as)}."
        self.encoding_note.setText(note)
        self.encoding_rows.addItems([f"Fila {sample.row}: {sample.text}" for sample in check.rows])
        self.encoding_rows.setMaximumHeight(110)
        for choice in check.choices:
            self.encoding_choice.addItem(choice.label, choice.codec)
        self.encoding_choice.setCurrentIndex(max(self.encoding_choice.findData(read_as), 0))
        self.encoding_choice.currentIndexChanged.connect(self.choose_encoding)
        chooser = QHBoxLayout()
        chooser.addWidget(QLabel("Codificación del archivo:"))
        chooser.addWidget(self.encoding_choice)
        chooser.addStretch(1)
        layout.addWidget(self.encoding_note)
        layout.addWidget(self.encoding_rows)
        layout.addLayout(chooser)

    @property
    def encoding(self) -> str | None:
        """The encoding the file is read with when it was guessed or chosen (None: UTF-8, detected again)."""
        if self.preview.encoding_check is None or self.preview.dialect is None:
            return None
        return self.preview.dialect.encoding

    def choose_encoding(self, index: int) -> None:
        """Read the file again as the encoding chosen: a new preview replaces this one."""
        codec = self.encoding_choice.itemData(index)
        self.page.context.workers.run(self, self.page.engine.catalog.preview_csv, self.page.KIND, self.path,
                                      encoding=codec, done=self._read_again, failed=self.page.banner.show_error,
                                      busy=[self.import_button, self.encoding_choice])

    def _read_again(self, preview: Any) -> None:
        self.page.show_preview(self.path, preview)
        self.close()

    def run_import(self) -> None:
        self.page.context.workers.run(self, self.page.engine.catalog.import_csv, self.page.KIND, self.path,
                                      encoding=self.encoding, done=self._imported,
                                      failed=self.page.banner.show_error, busy=[self.import_button])

    def _imported(self, report: Any) -> None:
        self.page.imported(report)
        self.accept()


def fill_table(table: QTableWidget, columns: list[tuple[str, Callable[[Any], Any]]], rows: list[Any]) -> None:
    table.setRowCount(len(rows))
    for row, record in enumerate(rows):
        for column, (_, value_of) in enumerate(columns):
            item = QTableWidgetItem(_shown(value_of(record)))
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
            table.setItem(row, column, item)


class CatalogPage(QWidget):
    """A section listing one catalogue: search as one types, add, edit, delete, import and export CSV."""

    TITLE = ""
    KIND = ""  # the engine's name of the catalogue: «clientes» or «productos»
    SINGULAR = ""
    PLURAL = ""
    SEARCH_HINT = ""
    COLUMNS: list[tuple[str, Callable[[Any], Any]]] = []
    FIELDS: tuple[Field, ...] = ()

    def __init__(self, context: Context) -> None:
        super().__init__()
        self.context = context
        self.engine = context.engine
        self.records: list[Any] = []
        self.editor: RecordEditor | None = None
        self.preview_dialog: ImportPreview | None = None
        layout = QVBoxLayout(self)
        layout.addWidget(heading(self.TITLE))
        self.banner = MessageBanner()
        layout.addWidget(self.banner)
        top = QHBoxLayout()
        self.search = QLineEdit()
        self.search.setPlaceholderText(self.SEARCH_HINT)
        self.search.setClearButtonEnabled(True)
        top.addWidget(self.search, 1)
        self.new_button = QPushButton("Nuevo")
        self.edit_button = QPushButton("Editar")
        self.delete_button = QPushButton("Eliminar")
        self.import_button = QPushButton("Importar CSV…")
        self.export_button = QPushButton("Exportar CSV…")
        for button in (self.new_button, self.edit_button, self.delete_button, self.import_button, self.export_button):
            top.addWidget(button)
        layout.addLayout(top)
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels([header for header, _ in self.COLUMNS])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().hide()
        layout.addWidget(self.table, 1)
        self.count_label = QLabel("")
        layout.addWidget(self.count_label)
        self.search_timer = QTimer(self)
        self.search_timer.setSingleShot(True)
        self.search_timer.setInterval(SEARCH_DELAY_MS)
        self.search_timer.timeout.connect(self.reload)
        self.search.textChanged.connect(lambda _text: self.search_timer.start())
        self.search.returnPressed.connect(self.reload)
        self.new_button.clicked.connect(lambda: self.open_editor(None))
        self.edit_button.clicked.connect(self.edit_selected)
        self.table.doubleClicked.connect(lambda _index: self.edit_selected())
        self.delete_button.clicked.connect(self.delete_selected)
        self.import_button.clicked.connect(
            lambda: choose_path(self, f"Importar {self.PLURAL} (CSV)", self.preview_file,
                                name_filter="Archivos CSV (*.csv *.txt)"))
        self.export_button.clicked.connect(self.choose_export)
        self.reload()

    # ------------------------------------------------------------ what each catalogue does

    def list_records(self, typed: str) -> list[Any]:
        raise NotImplementedError

    def save_record(self, data: dict[str, Any], record_id: int | None) -> Any:
        raise NotImplementedError

    def delete_record(self, record_id: int) -> bool:
        raise NotImplementedError

    def describe(self, record: Any) -> str:
        raise NotImplementedError

    # ------------------------------------------------------------ the table

    def reload(self) -> None:
        self.search_timer.stop()
        self.context.workers.run(self, self.list_records, self.search.text().strip(), done=self._show,
                                 failed=self.banner.show_error)

    def _show(self, records: list[Any]) -> None:
        self.records = records
        fill_table(self.table, self.COLUMNS, records)
        typed = self.search.text().strip()
        if typed:
            self.count_label.setText(f"{len(records)} {self.PLURAL} para «{typed}»"
                                     + (" (se muestran los primeros)" if len(records) >= PAGE_ROWS else ""))
        else:
            self.count_label.setText(f"{len(records)} {self.PLURAL}" + (
                f" (los primeros {PAGE_ROWS}; escriba para buscar)" if len(records) >= PAGE_ROWS else ""))

    def selected(self) -> Any | None:
        row = self.table.currentRow()
        return self.records[row] if 0 <= row < len(self.records) else None

    def open_editor(self, record: Any | None) -> RecordEditor:
        self.editor = RecordEditor(self, self.context, self.FIELDS, self.SINGULAR, self.save_record, self.record_saved,
                                   record)
        self.editor.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.editor.open()
        return self.editor

    def edit_selected(self) -> None:
        record = self.selected()
        if record is None:
            self.banner.show_message(f"Elija en la tabla el {self.SINGULAR} que quiere editar.", "warning")
            return
        self.open_editor(record)

    def record_saved(self, record: Any) -> None:
        self.editor = None
        self.banner.show_message(f"{self.describe(record)} guardado.", "success")
        self.reload()

    def delete_selected(self) -> None:
        record = self.selected()
        if record is None:
            self.banner.show_message(f"Elija en la tabla el {self.SINGULAR} que quiere eliminar.", "warning")
            return
        self.confirm_box = confirm(self, f"Eliminar {self.SINGULAR}", f"¿Eliminar {self.describe(record)}?",
                                   lambda: self.context.workers.run(self, self.delete_record, record.id,
                                                                    done=lambda _: self._deleted(record),
                                                                    failed=self.banner.show_error))

    def _deleted(self, record: Any) -> None:
        self.banner.show_message(f"{self.describe(record)} eliminado.", "success")
        self.reload()

    # ------------------------------------------------------------ CSV files

    def preview_file(self, path: str) -> None:
        if not path:
            return
        self.context.workers.run(self, self.engine.catalog.preview_csv, self.KIND, path,
                                 done=lambda preview: self.show_preview(path, preview), failed=self.banner.show_error,
                                 busy=[self.import_button])

    def show_preview(self, path: str, preview: Any) -> ImportPreview:
        self.preview_dialog = ImportPreview(self, path, preview)
        self.preview_dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.preview_dialog.open()
        return self.preview_dialog

    def imported(self, report: Any) -> None:
        self.preview_dialog = None
        if report.ok:
            self.banner.show_message(f"Se importaron {report.imported} {self.PLURAL}.", "success")
        else:  # the store refused at the last moment (a barcode of another product): nothing was written
            more = report.error_count - len(report.errors)
            self.banner.show_message("No se importó nada: corrija estas filas y vuelva a intentarlo.", "error",
                                     "\n".join([str(error) for error in report.errors]
                                               + ([f"… y {more} problemas más."] if more > 0 else [])))
        self.reload()

    def choose_export(self) -> None:
        dialog = QFileDialog(self, f"Exportar {self.PLURAL} (CSV)")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilter("Archivos CSV (*.csv)")
        dialog.setDefaultSuffix("csv")
        dialog.selectFile(f"{self.KIND}.csv")
        dialog.fileSelected.connect(self.export_to)
        dialog.open()
        self.file_dialog = dialog

    def export_to(self, path: str) -> None:
        if not path:
            return
        self.context.workers.run(self, self.engine.catalog.export_csv, self.KIND, path,
                                 done=lambda count: self.banner.show_message(
                                     f"Se exportaron {count} {self.PLURAL} a {path}.", "success"),
                                 failed=self.banner.show_error, busy=[self.export_button])
