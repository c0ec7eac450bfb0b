"""Issue 31, item 4, in the windows: the import preview of a CSV that is not UTF-8 names the encoding guessed, shows
the first rows with accents as read, offers UTF-8, Windows-1252, cp850 and ISO-8859-1, reads the file again as the
one chosen, and imports it as shown."""

from __future__ import annotations

from tests.helpers.gui import open_widget


def _products_page(qtbot, context):
    from app.gui.products import ProductsPage

    return open_widget(qtbot, context, ProductsPage, show=True)


def _items(widget) -> list[str]:
    return [widget.item(i).text() for i in range(widget.count())]


def test_reproduction_a_cp850_file_is_shown_with_its_guessed_encoding_before_import(qtbot, context, company, engine,
                                                                                   tmp_path):
    page = _products_page(qtbot, context)
    path = tmp_path / "pos.csv"
    path.write_bytes("Codigo;Descripcion;Precio\r\nA1;Arroz extra;3,80\r\nA2;Azúcar rubia;2,50\r\n".encode("cp850"))
    page.preview_file(str(path))
    qtbot.waitUntil(lambda: page.preview_dialog is not None)
    dialog = page.preview_dialog
    assert dialog.encoding_note.isVisibleTo(dialog) and "parece estar en cp850" in dialog.encoding_note.text()
    assert _items(dialog.encoding_rows) == ["Fila 3: A2 | Azúcar rubia | 2,50"]
    combo = dialog.encoding_choice
    assert [combo.itemText(i) for i in range(combo.count())] == ["UTF-8", "Windows-1252", "cp850", "ISO-8859-1"]
    assert combo.currentText() == "cp850" and dialog.import_button.isEnabled()
    assert dialog.table.item(1, [h for h, _ in page.COLUMNS].index("Descripción")).text() == "Azúcar rubia"
    assert engine.catalog.products() == []  # nothing imported before «Importar»

    combo.setCurrentIndex(combo.findText("Windows-1252"))  # read again as another: a new preview
    qtbot.waitUntil(lambda: page.preview_dialog is not dialog)
    dialog = page.preview_dialog
    assert _items(dialog.encoding_rows) == ["Fila 3: A2 | Az£car rubia | 2,50"]
    assert "Ahora se lee como Windows-1252" in dialog.encoding_note.text()
    assert dialog.encoding_choice.currentText() == "Windows-1252"

    dialog.encoding_choice.setCurrentIndex(dialog.encoding_choice.findText("UTF-8"))  # bytes UTF-8 cannot read
    qtbot.waitUntil(lambda: page.preview_dialog is not dialog)
    dialog = page.preview_dialog
    assert not dialog.import_button.isEnabled()
    assert any(e.startswith("Fila 3, columna «Descripcion»:") and "no se pueden leer como UTF-8" in e
               for e in _items(dialog.error_list)), _items(dialog.error_list)

    dialog.encoding_choice.setCurrentIndex(dialog.encoding_choice.findText("cp850"))
    qtbot.waitUntil(lambda: page.preview_dialog is not dialog)
    dialog = page.preview_dialog
    assert dialog.import_button.isEnabled()
    dialog.import_button.click()
    qtbot.waitUntil(lambda: page.table.rowCount() == 2)
    assert "Se importaron 2 productos" in page.banner.text.text()
    assert engine.catalog.scanned_product("A2").descripcion == "Azúcar rubia"


def test_a_utf8_file_shows_no_encoding_choice_and_a_huge_value_names_its_row(qtbot, context, company, engine,
                                                                           tmp_path):
    page = _products_page(qtbot, context)
    path = tmp_path / "grande.csv"
    path.write_text("Código;Descripción;Precio\nA1;Azúcar;1\n" + f"A2;{'x' * 140_000};2\n", encoding="utf-8")
    page.preview_file(str(path))
    qtbot.waitUntil(lambda: page.preview_dialog is not None)
    dialog = page.preview_dialog
    assert not dialog.encoding_note.isVisibleTo(dialog) and not dialog.encoding_choice.isVisibleTo(dialog)
    errors = _items(dialog.error_list)
    assert len(errors) == 1 and errors[0].startswith("Fila 3, columna «Descripción»: el valor tiene 140,000 caracteres")
    assert "1 filas correctas y 1 con errores" in dialog.summary.text() and not dialog.import_button.isEnabled()
