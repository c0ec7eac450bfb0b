"""Issue 31, item 4: CSV import edges. A file that is not UTF-8 is shown with the encoding guessed (charset-normalizer
and how Spanish its accents read), the first rows with non-ASCII characters and the four encodings to choose from,
before anything is imported; every message is Spanish with the spreadsheet's row number (a value over 128 kB too);
the file is streamed, never held whole in memory (docs/catalog.md)."""

from __future__ import annotations

import codecs
import csv
import tracemalloc
from decimal import Decimal
from pathlib import Path

import pytest

from app.core.errors import YupanaError
from app.core.invoicing.catalog import csvfiles
from app.core.invoicing.catalog.products import Products
from app.core.storage.engines import open_database
from app.core.storage.sqlite.catalog import SqliteProductRepository

HEADER = "Codigo;Descripcion;Precio\r\n"  # plain ASCII, as a point-of-sale system exports it


@pytest.fixture
def products(tmp_path):
    (tmp_path / "datos").mkdir()
    storage = open_database(tmp_path / "datos" / "yupana.db")
    yield Products(storage, SqliteProductRepository(storage))
    storage.close()


def _write(path: Path, text: str, encoding: str) -> Path:
    path.write_bytes(text.encode(encoding))
    return path


# ---------------------------------------------------------------- the encoding, before anything is imported

def test_reproduction_a_cp850_file_with_one_accented_word_is_shown_with_its_guessed_encoding(products, tmp_path):
    """Issue 31: a cp850 file with plain-ASCII headers imported as «Az£car» without a word. Now the preview names
    the encoding guessed, shows the row with the accent as read with it, offers the four encodings, and nothing is
    written until the import."""
    path = _write(tmp_path / "pos.csv", HEADER + "A1;Arroz extra;3,80\r\nA2;Azúcar rubia;2,50\r\nA3;Fideos;1,90\r\n",
                  "cp850")
    preview = csvfiles.products_file(products).preview(path)
    check = preview.encoding_check
    assert check is not None and check.guessed == "cp850" and check.label == "cp850"
    assert preview.dialect == csvfiles.Dialect("cp850", ";", ",")
    assert [(sample.row, sample.text) for sample in check.rows] == [(3, "A2 | Azúcar rubia | 2,50")]
    assert [choice.label for choice in check.choices] == ["UTF-8", "Windows-1252", "cp850", "ISO-8859-1"]
    assert preview.ok and preview.count == 3 and preview.rows[1].descripcion == "Azúcar rubia"
    assert products.count() == 0  # a preview writes nothing
    report = csvfiles.products_file(products).import_file(path, preview.dialect.encoding)
    assert report.ok and report.imported == 3
    assert products.by_code("A2").descripcion == "Azúcar rubia"


def test_another_encoding_chosen_reads_the_file_as_that_one_and_still_names_the_guess(products, tmp_path):
    path = _write(tmp_path / "pos.csv", HEADER + "A1;Arroz;3\r\nA2;Azúcar rubia;2,50\r\n", "cp850")
    as_windows = csvfiles.products_file(products).preview(path, "Windows-1252")
    assert as_windows.dialect.encoding == "cp1252" and as_windows.encoding_check.guessed == "cp850"
    assert [sample.text for sample in as_windows.encoding_check.rows] == ["A2 | Az£car rubia | 2,50"]
    as_utf8 = csvfiles.products_file(products).preview(path, "utf-8")  # bytes UTF-8 cannot read: a problem each
    assert [str(error) for error in as_utf8.errors] == [
        "Fila 3, columna «Descripcion»: «Az\ufffdcar rubia» tiene bytes que no se pueden leer como UTF-8 (se ven "
        "como «\ufffd»): elija la codificación del archivo."]
    report = csvfiles.products_file(products).import_file(path, "utf-8")
    assert not report.ok and report.imported == 0 and report.errors == as_utf8.errors and products.count() == 0
    with pytest.raises(YupanaError) as refused:
        csvfiles.products_file(products).preview(path, "ebcdic")
    assert refused.value.details[0].field == "encoding" and "«ebcdic»" in refused.value.message


@pytest.mark.parametrize("words", ["Azúcar rubia", "Piña golden", "Café tostado", "Jabón de tocador", "ÑANDÚ ANDINO",
                                   "Cable 25°C", "Tubo N° 4", "Champú", "Ají amarillo", "Pingüino"])
@pytest.mark.parametrize("encoding", ["cp1252", "cp850"])
def test_one_accented_word_is_enough_to_tell_windows_from_dos(words, encoding, products, tmp_path):
    path = _write(tmp_path / "uno.csv", HEADER + f"A1;Arroz;3\r\nA2;{words};2,50\r\n", encoding)
    preview = csvfiles.products_file(products).preview(path)
    assert preview.encoding_check.guessed == encoding and preview.rows[1].descripcion == words


def test_the_guess_sees_an_accent_far_down_the_file_and_shows_only_the_first_rows_with_one(products, tmp_path):
    rows = "".join(f"P{i};Producto {i};1,50\r\n" for i in range(20_000))
    accented = "".join(f"Q{i};Ñandú {i};2\r\n" for i in range(10))
    path = _write(tmp_path / "largo.csv", HEADER + rows + accented, "cp850")
    preview = csvfiles.products_file(products).preview(path)
    assert preview.encoding_check.guessed == "cp850" and preview.count == 20_010
    assert [sample.row for sample in preview.encoding_check.rows] == [20_002, 20_003, 20_004, 20_005, 20_006]
    assert preview.encoding_check.rows[0].text == "Q0 | Ñandú 0 | 2"


def test_utf8_files_have_no_encoding_to_check(products, tmp_path):
    text = HEADER + "A1;Azúcar rubia;2,50\r\n"
    for name, data in [("sin-bom.csv", text.encode("utf-8")), ("bom.csv", codecs.BOM_UTF8 + text.encode("utf-8")),
                       ("ascii.csv", (HEADER + "A1;Arroz;1\r\n").encode("ascii"))]:
        (tmp_path / name).write_bytes(data)
        preview = csvfiles.products_file(products).preview(tmp_path / name)
        assert preview.ok and preview.encoding_check is None, name
    assert csvfiles.products_file(products).preview(tmp_path / "bom.csv").dialect.encoding == "utf-8-sig"
    as_chosen = csvfiles.products_file(products).preview(tmp_path / "sin-bom.csv", "UTF-8")  # a BOM-less UTF-8 file
    assert as_chosen.rows[0].descripcion == "Azúcar rubia" and as_chosen.encoding_check is None


def test_a_windows_1252_file_with_typographic_quotes_is_windows_1252(products, tmp_path):
    path = _write(tmp_path / "excel.csv", HEADER + "A1;Café “especial” – 1 kg;2,50\r\n", "cp1252")
    preview = csvfiles.products_file(products).preview(path)
    assert preview.encoding_check.guessed == "cp1252" and preview.rows[0].descripcion == "Café “especial” – 1 kg"


# ---------------------------------------------------------------- Spanish messages with the real row number

def test_a_value_over_128_kb_is_a_problem_of_its_row_and_column_in_spanish(products, tmp_path):
    """Issue 31: the csv module's «field larger than field limit (131072)», as «Fila 0»."""
    path = tmp_path / "grande.csv"
    path.write_text(HEADER + "A1;Arroz;1\r\n" + f"A2;{'x' * 200_000};2\r\n" + "A3;Fideos;3\r\n", encoding="utf-8")
    preview = csvfiles.products_file(products).preview(path)
    assert [(error.row, error.column) for error in preview.errors] == [(3, "Descripcion")]
    message = str(preview.errors[0])
    assert message.startswith("Fila 3, columna «Descripcion»: el valor tiene 200,000 caracteres y el máximo es "
                              "131,072 (128 kB)") and "comillas" in message
    assert "field" not in message and "Fila 0" not in message
    assert [p.codigo for p in preview.rows] == ["A1", "A3"]  # the rows around it are still read
    report = csvfiles.products_file(products).import_file(path)
    assert report.imported == 0 and report.errors == preview.errors and products.count() == 0


def test_an_unclosed_quote_that_takes_in_the_rest_of_the_file_names_its_row(products, tmp_path):
    path = tmp_path / "comillas.csv"
    body = "".join(f"B{i};{'Producto largo ' * 8}{i};1\r\n" for i in range(150_000))  # 18 MB after the quote
    path.write_text(HEADER + "A1;Arroz;1\r\n" + 'A2;"Azúcar;2\r\n' + body, encoding="utf-8")
    preview = csvfiles.products_file(products).preview(path)
    assert [error.row for error in preview.errors] == [3]
    assert str(preview.errors[0]).startswith("Fila 3: un valor de esta fila pasa de 16 MB y el archivo no se puede "
                                             "seguir leyendo")
    assert not preview.ok and preview.count == 1


def test_row_numbers_are_the_spreadsheets_after_values_with_line_breaks(products, tmp_path):
    path = tmp_path / "saltos.csv"
    path.write_text(HEADER + 'A1;"Arroz\r\nextra\r\ngraneado";1\r\nA2;Fideos;x\r\n', encoding="utf-8")
    preview = csvfiles.products_file(products).preview(path)
    assert [str(error) for error in preview.errors] == ["Fila 3, columna «Precio»: El precio «x» no es un número."]
    assert preview.rows[0].descripcion == "Arroz\r\nextra\r\ngraneado" and preview.row_numbers == [2]


def test_a_file_that_cannot_be_read_is_said_in_spanish_without_a_row(products, tmp_path):
    preview = csvfiles.products_file(products).preview(tmp_path / "no-esta.csv")
    assert [str(error) for error in preview.errors] == [f"No se pudo leer el archivo «{tmp_path / 'no-esta.csv'}»: "
                                                        "no existe."]
    folder = csvfiles.products_file(products).preview(tmp_path)
    assert str(folder.errors[0]).endswith("es una carpeta, no un archivo.") and folder.errors[0].row is None
    (tmp_path / "vacio.csv").write_bytes(b"\r\n;;\r\n")
    empty = csvfiles.products_file(products).import_file(tmp_path / "vacio.csv")
    assert [str(error) for error in empty.errors] == ["El archivo está vacío."]


def test_a_file_full_of_bad_rows_lists_the_first_problems_and_counts_them_all(products, tmp_path):
    path = tmp_path / "malo.csv"
    path.write_text(HEADER + "".join(f"M{i};Malo {i};x{i}\r\n" for i in range(1_500)), encoding="utf-8")
    preview = csvfiles.products_file(products).preview(path)
    assert len(preview.errors) == csvfiles.MAX_ERRORS == 1_000
    assert preview.error_count == 1_500 and preview.bad_rows == 1_500 and preview.count == 0
    assert preview.errors[-1].row == 1_001 and not preview.ok
    report = csvfiles.products_file(products).import_file(path)
    assert (report.imported, len(report.errors), report.error_count) == (0, 1_000, 1_500)


def test_a_code_repeated_far_apart_names_the_first_row(products, tmp_path):
    path = tmp_path / "repetido.csv"
    rows = [f"P{i};Producto {i};1\r\n" for i in range(30_000)]
    rows.append("p7;Otra vez P7;2\r\n")  # row 30,002: case aside, it is row 9's code
    path.write_text(HEADER + "".join(rows), encoding="utf-8")
    preview = csvfiles.products_file(products).preview(path)
    assert [str(error) for error in preview.errors] == ["Fila 30002, columna «Codigo»: «p7» ya está en la fila 9."]
    assert preview.count == 30_000 and preview.bad_rows == 1


def test_barcodes_of_other_stored_products_name_their_rows_and_nothing_is_written(products, tmp_path):
    from app.core.invoicing.catalog import records

    products.save(records.product(codigo="OLD", descripcion="Guardado", precio="1", codigo_barras="999"))
    path = tmp_path / "choque.csv"
    path.write_text("Codigo;Descripcion;Precio;Codigo de barras\r\n" + "".join(
        f"N{i};Nuevo {i};1;{'999' if i == 2500 else 1000 + i}\r\n" for i in range(5_000)), encoding="cp1252")
    report = csvfiles.products_file(products).import_file(path)
    assert [str(error) for error in report.errors] == [
        "Fila 2502, columna «Código de barras»: El código de barras «999» ya es de otro producto."]
    assert report.imported == 0 and products.count() == 1


# ---------------------------------------------------------------- streamed

def _traced_peak(run) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_preview_and_import_are_streamed_not_held_in_memory(products, tmp_path):
    """The Python memory a preview and an import take at their peak, against holding the file's rows (what
    today's reading held, and its records too): a fraction of it, because rows are read, checked and written one
    at a time. Not timed: memory as tracemalloc counts it."""
    path = tmp_path / "productos.csv"
    path.write_text(HEADER.replace("Precio", "Precio;Unidad;Codigo de barras") + "".join(
        f"P{i:05d};Producto de prueba número {i} de la tienda;{i % 90 + 1},50;NIU;775{i:010d}\r\n"
        for i in range(8_000)), encoding="utf-8")

    def hold_rows() -> None:
        with open(path, encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle, delimiter=";"))
        assert len(rows) == 8_001

    held = _traced_peak(hold_rows)
    preview_peak = _traced_peak(lambda: csvfiles.products_file(products).preview(path))
    reports = []
    import_peak = _traced_peak(lambda: reports.append(csvfiles.products_file(products).import_file(path)))
    assert reports[0].ok and reports[0].imported == 8_000 and products.count() == 8_000
    assert products.by_code("P07999").precio == Decimal("80.50")
    assert preview_peak < held / 3, (preview_peak, held)
    assert import_peak < held / 3, (import_peak, held)
