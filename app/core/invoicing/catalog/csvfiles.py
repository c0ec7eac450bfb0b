"""Customers and products as CSV files, as Excel in Peru writes and reads them.

Reading detects the file's dialect: the encoding (UTF-8 with or without BOM, UTF-16 with BOM as Excel's «texto
Unicode», else Windows-1252, else Latin-1), the separator (`;`, `,`, tab or `|`: the one that splits the header
into the most known column names) and, per amount, the decimal mark (`2,50` and `2.50` both read 2.50; only a
single mark followed by exactly three digits, «1,250», is ambiguous and takes the file's majority reading, or the
comma when the separator is `;`). Headers are matched with accents, case and spacing aside, in any order; unknown
columns are ignored.

`preview` parses and checks every row without writing; `import_file` imports all rows in one transaction or none
(any bad row: nothing is imported and every bad row is listed). `export` writes UTF-8 with BOM, `;` and the
decimal comma, which `import_file` reads back to the same catalogue. docs/catalog.md, «CSV files».
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from app.core.invoicing.catalog import records, text
from app.core.invoicing.catalog.customers import Customers
from app.core.invoicing.catalog.products import DuplicateBarcode, Products
from app.core.invoicing.catalog.records import Customer, Product
from app.core.platform.paths import private_file

DELIMITERS = (";", ",", "\t", "|")
EXPORT_DELIMITER = ";"
EXPORT_DECIMAL = ","
YES, NO = "sí", "no"


@dataclass(frozen=True)
class Column:
    field: str
    header: str  # as export writes it
    kind: str = "text"  # «text», «decimal» or «flag»
    aliases: tuple[str, ...] = ()  # other headers accepted (compared folded)


@dataclass(frozen=True)
class Dialect:
    encoding: str  # the codec name Python reads it with
    delimiter: str
    decimal: str  # the decimal mark the ambiguous amounts were read with


@dataclass(frozen=True)
class RowError:
    row: int  # the spreadsheet's row number: the header is row 1
    column: str | None  # the column's header as written in the file (None: the whole row or file)
    message: str

    def __str__(self) -> str:
        where = f"Fila {self.row}" + (f", columna «{self.column}»" if self.column else "")
        return f"{where}: {self.message}"


@dataclass
class Preview:
    dialect: Dialect | None
    rows: list[Any] = field(default_factory=list)  # the records read (Customer or Product), rows without errors
    row_numbers: list[int] = field(default_factory=list)  # the spreadsheet row of each record
    errors: list[RowError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass
class ImportReport:
    imported: int  # records written: all of the file's, or 0
    errors: list[RowError]
    dialect: Dialect | None

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class Table:
    """What one kind of catalogue file holds."""

    name: str
    columns: tuple[Column, ...]
    required: tuple[str, ...]  # fields whose column must be present
    check: Callable[[dict], tuple[dict, dict[str, str]]]
    make: Callable[..., Any]
    keys: Callable[[Any], list[tuple[str, str, str]]]  # (field, unique key, text) for duplicate checks in the file

    def header_map(self) -> dict[str, Column]:
        known = {}
        for column in self.columns:
            for name in (column.field, column.header, *column.aliases):
                known[_header_key(name)] = column
        return known


def _header_key(name: str) -> str:
    return "_".join(text.words(name))


CUSTOMERS = Table(
    name="clientes",
    columns=(
        Column("tipo_documento", "Tipo de documento", aliases=("tipo doc", "tipo", "tipo documento identidad")),
        Column("numero", "Número de documento", aliases=("numero documento", "documento", "ruc/dni", "ruc dni",
                                                          "nro documento", "n documento", "numero de doc")),
        Column("nombre", "Nombre o razón social", aliases=("nombre", "razon social", "cliente", "nombres")),
        Column("direccion", "Dirección", aliases=("domicilio",)),
        Column("whatsapp", "WhatsApp", aliases=("celular", "telefono", "movil")),
        Column("email", "Correo electrónico", aliases=("correo", "e-mail", "email")),
    ),
    required=("nombre",),
    check=records.check_customer,
    make=Customer,
    keys=lambda c: [("numero", c.clave, c.numero or c.nombre)],
)

PRODUCTS = Table(
    name="productos",
    columns=(
        Column("codigo", "Código", aliases=("codigo producto", "cod", "sku")),
        Column("codigo_barras", "Código de barras", aliases=("barras", "ean", "codigo barras")),
        Column("descripcion", "Descripción", aliases=("producto", "nombre", "detalle")),
        Column("unidad", "Unidad", aliases=("unidad de medida", "um", "u m")),
        Column("precio", "Precio", "decimal", aliases=("precio unitario", "precio de venta")),
        Column("precio_incluye_igv", "Precio incluye IGV", "flag", aliases=("incluye igv", "con igv")),
        Column("tipo_afectacion_igv", "Afectación IGV", aliases=("afectacion", "tipo de afectacion igv",
                                                                  "afectacion del igv")),
        Column("icbper", "ICBPER (bolsa plástica)", "flag", aliases=("bolsa", "bolsa plastica", "icbper")),
        Column("codigo_detraccion", "Código de detracción", aliases=("detraccion", "codigo detraccion")),
    ),
    required=("codigo", "descripcion", "precio"),
    check=records.check_product,
    make=Product,
    keys=lambda p: [("codigo", "c:" + p.codigo.casefold(), p.codigo)]
    + ([("codigo_barras", "b:" + p.codigo_barras, p.codigo_barras)] if p.codigo_barras else []),
)


# ---------------------------------------------------------------- reading

class FileProblem(Exception):
    """The file cannot be read as a table at all (its message is Spanish)."""


def decode(data: bytes) -> tuple[str, str]:
    """(text, codec): by BOM, else UTF-8 if it decodes, else Windows-1252 (Excel's «CSV» in Spanish Windows),
    else Latin-1 (which decodes anything)."""
    for bom, codec in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            return data.decode(codec), codec
    for codec in ("utf-8", "cp1252", "latin-1"):
        try:
            return data.decode(codec), codec
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes any bytes")


def _rows(content: str, delimiter: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(content, newline=""), delimiter=delimiter))


def _first_line(content: str) -> str:
    for line in content.splitlines():
        if line.strip():
            return line
    return ""


def detect_delimiter(content: str, table: Table) -> str:
    """The separator that splits the header into the most known column names (then the most columns)."""
    header = _first_line(content)
    known = table.header_map()

    def score(delimiter: str) -> tuple[int, int]:
        cells = next(csv.reader([header], delimiter=delimiter), [])
        return sum(_header_key(cell) in known for cell in cells), len(cells)

    return max(DELIMITERS, key=score)


_AMOUNT = re.compile(r"^[+-]?[\d.,]+$")


def _votes(values: Iterable[str]) -> tuple[int, int]:
    """(cells read with a decimal comma, with a decimal point) among the unambiguous amounts."""
    comma = point = 0
    for value in values:
        mark = _own_decimal_mark(value)
        comma += mark == ","
        point += mark == "."
    return comma, point


def _own_decimal_mark(value: str) -> str | None:
    """The decimal mark an amount shows by itself, or None when it shows none or is ambiguous («1,250»)."""
    value = _strip_amount(value)
    if "," in value and "." in value:
        return "," if value.rfind(",") > value.rfind(".") else "."
    for mark in ",.":
        if value.count(mark) == 1:
            return mark if len(value) - value.index(mark) - 1 != 3 else None
    return None


def _strip_amount(value: str) -> str:
    value = value.strip().replace("\u00a0", "").replace(" ", "")
    for symbol in ("S/.", "S/"):
        if value.upper().startswith(symbol):
            return value[len(symbol):]
    return value


def parse_amount(value: str, file_mark: str) -> Decimal:
    """An amount as typed in a spreadsheet: «2,50», «2.50», «1.234,50», «1,234.50», «S/ 2,50»; `file_mark` decides
    only a single mark followed by three digits. Keeps the decimals written (2,50 → 2.50)."""
    typed = value
    value = _strip_amount(value)
    if not _AMOUNT.match(value):
        raise records.FieldProblem(f"El precio «{typed.strip()}» no es un número.")
    mark = _own_decimal_mark(value) or (file_mark if ("," in value or "." in value) else ".")
    thousands = "." if mark == "," else ","
    whole, _, decimals = value.rpartition(mark) if mark in value else (value, "", "")
    if not whole and mark in value:
        whole = "0"
    if thousands in whole:
        sign = whole[0] if whole[0] in "+-" else ""
        groups = whole.lstrip("+-").split(thousands)
        if not (1 <= len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:])):
            raise records.FieldProblem(f"El precio «{typed.strip()}» no es un número.")
        whole = sign + "".join(groups)
    if mark in decimals or thousands in decimals:
        raise records.FieldProblem(f"El precio «{typed.strip()}» no es un número.")
    try:
        return Decimal(f"{whole}.{decimals}" if decimals else whole)
    except InvalidOperation:
        raise records.FieldProblem(f"El precio «{typed.strip()}» no es un número.") from None


def _convenience(table: Table, data: dict[str, str]) -> None:
    """What spreadsheets do to values, undone before the checks: Excel drops a DNI's leading zeros and the «+» of
    a phone number it took for a number; an empty document type with an 11- or 8-digit number is a RUC or DNI."""
    if table is not CUSTOMERS:
        return
    numero = (data.get("numero") or "").strip()
    tipo = (data.get("tipo_documento") or "").strip()
    if not tipo and numero.isdigit():
        data["tipo_documento"] = {11: "6", 8: "1"}.get(len(numero), tipo)
    elif records.DOCUMENT_NAMES.get(text.fold(tipo), tipo) == "1" and numero.isdigit() and len(numero) < 8:
        data["numero"] = numero.zfill(8)
    phone_typed = (data.get("whatsapp") or "").strip()
    if phone_typed.isdigit() and len(phone_typed) == 11 and phone_typed.startswith("519"):
        data["whatsapp"] = "+" + phone_typed


def read(table: Table, path: Path) -> Preview:
    """Parse and check every row of a file (nothing is written)."""
    try:
        content, codec = decode(Path(path).read_bytes())
    except OSError as exc:
        return Preview(None, errors=[RowError(0, None, f"No se pudo leer el archivo «{path}»: {exc.strerror}.")])
    skipped = 0  # rows before the header (Excel's «sep=;» line, empty rows): the numbers stay the spreadsheet's
    first, _, rest = content.partition("\n")
    if first.strip().lower().startswith("sep=") and len(first.strip()) == 5:
        delimiter, content, skipped = first.strip()[4], rest, 1
    else:
        delimiter = detect_delimiter(content, table)
    try:
        rows = _rows(content, delimiter)
    except csv.Error as exc:
        return Preview(Dialect(codec, delimiter, "."), errors=[RowError(0, None, f"El archivo no es un CSV válido: {exc}.")])
    while rows and not any(cell.strip() for cell in rows[0]):
        rows.pop(0)
        skipped += 1
    if not rows:
        return Preview(Dialect(codec, delimiter, "."), errors=[RowError(1, None, "El archivo está vacío.")])
    known = table.header_map()
    header = rows[0]
    positions: dict[str, tuple[int, str]] = {}  # field → (column index, header as written)
    errors: list[RowError] = []
    for index, name in enumerate(header):
        column = known.get(_header_key(name))
        if column is None:
            continue
        if column.field in positions:
            errors.append(RowError(skipped + 1, name.strip(), f"La columna «{name.strip()}» está repetida."))
        positions[column.field] = (index, name.strip())
    missing = [c.header for c in table.columns if c.field in table.required and c.field not in positions]
    if missing:
        expected = "; ".join(c.header for c in table.columns)
        errors.append(RowError(skipped + 1, None, f"Faltan las columnas {', '.join(f'«{m}»' for m in missing)}. La primera "
                                        f"fila debe tener los encabezados: {expected}."))
    decimal_fields = [c.field for c in table.columns if c.kind == "decimal"]
    comma, point = _votes(_cell(row, positions[f][0]) for row in rows[1:] for f in decimal_fields if f in positions)
    file_mark = "," if comma > point or (comma == point and delimiter == ";") else "."
    preview = Preview(Dialect(codec, delimiter, file_mark), errors=errors)
    if missing:
        return preview
    kinds = {c.field: c.kind for c in table.columns}
    seen: dict[str, int] = {}
    for number, row in enumerate(rows[1:], start=skipped + 2):
        if not any(cell.strip() for cell in row):
            continue
        data: dict[str, Any] = {name: _cell(row, index) for name, (index, _) in positions.items()}
        row_errors: dict[str, str] = {}
        for name, value in list(data.items()):
            if kinds[name] == "decimal" and value.strip():
                try:
                    data[name] = parse_amount(value, file_mark)
                except records.FieldProblem as problem:
                    row_errors[name] = str(problem)
        if len(row) > len(header) and any(cell.strip() for cell in row[len(header):]):
            preview.errors.append(RowError(number, None, f"La fila tiene {len(row)} valores y el encabezado "
                                                         f"{len(header)}: revise el separador «{delimiter}»."))
        _convenience(table, data)
        values, problems = table.check(data)
        problems = {**problems, **row_errors}
        if not problems:
            record = table.make(**values)
            for name, key, shown in table.keys(record):
                if key in seen:
                    problems[name] = f"«{shown}» ya está en la fila {seen[key]}."
                else:
                    seen[key] = number
        for name, message in sorted(problems.items(), key=lambda item: positions.get(item[0], (-1, ""))[0]):
            header_name = positions.get(name, (0, next(c.header for c in table.columns if c.field == name)))[1]
            preview.errors.append(RowError(number, header_name, message))
        if not problems:
            preview.rows.append(record)
            preview.row_numbers.append(number)
    return preview


def _cell(row: list[str], index: int) -> str:
    return row[index] if index < len(row) else ""


# ---------------------------------------------------------------- writing

def _format(value: Any, kind: str) -> str:
    if value is None:
        return ""
    if kind == "flag":
        return YES if value else NO
    if kind == "decimal":
        return format(value, "f").replace(".", EXPORT_DECIMAL)
    return str(value)


def write(table: Table, items: Iterable[Any], path: Path) -> int:
    """Write `items` (UTF-8 with BOM, `;`, decimal comma, CRLF as Excel); returns the number of rows. The file
    appears complete or not at all (written beside it, then renamed)."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    count = 0
    private_file(partial)  # customers are personal data: the file is the owner's only (POSIX)
    with open(partial, "w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle, delimiter=EXPORT_DELIMITER, lineterminator="\r\n")
        writer.writerow([c.header for c in table.columns])
        for item in items:
            writer.writerow([_format(getattr(item, c.field), c.kind) for c in table.columns])
            count += 1
    os.replace(partial, path)
    return count


# ---------------------------------------------------------------- per store

class CatalogFile:
    """CSV preview, import and export for one store (customers or products)."""

    def __init__(self, table: Table, store: Customers | Products) -> None:
        self.table = table
        self._store = store

    def preview(self, path: Path) -> Preview:
        return read(self.table, path)

    def import_file(self, path: Path) -> ImportReport:
        """Import every row in one transaction, or nothing: with any bad row (or a barcode that is another
        stored product's), nothing is written and every bad row is listed."""
        preview = self.preview(path)
        if not preview.ok:
            return ImportReport(0, preview.errors, preview.dialect)
        if isinstance(self._store, Products):
            clashes = self._store.save_all(preview.rows)
            if clashes:
                column = next(c.header for c in self.table.columns if c.field == "codigo_barras")
                errors = [RowError(preview.row_numbers[i], column, DuplicateBarcode(preview.rows[i]).message)
                          for i in clashes]
                return ImportReport(0, errors, preview.dialect)
        else:
            self._store.save_all(preview.rows)
        return ImportReport(len(preview.rows), [], preview.dialect)

    def export(self, path: Path) -> int:
        return write(self.table, self._store.all(), path)


def customers_file(store: Customers) -> CatalogFile:
    return CatalogFile(CUSTOMERS, store)


def products_file(store: Products) -> CatalogFile:
    return CatalogFile(PRODUCTS, store)
