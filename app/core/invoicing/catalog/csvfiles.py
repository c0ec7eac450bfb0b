"""Customers and products as CSV files, as Excel in Peru writes and reads them.

Reading detects the file's dialect: the encoding, the separator (`;`, `,`, tab or `|`: the one that splits the
header into the most known column names) and, per amount, the decimal mark (`2,50` and `2.50` both read 2.50; only
a single mark followed by exactly three digits, «1,250», is ambiguous and takes the file's majority reading, or the
comma when the separator is `;`). Headers are matched with accents, case and spacing aside, in any order; unknown
columns are ignored.

The encoding: a BOM names it (UTF-8, or UTF-16 as Excel's «texto Unicode»); a file whose every byte reads as UTF-8
is UTF-8; any other is guessed among Windows-1252 (Excel's «CSV» on Windows in Spanish), cp850 (DOS and old
point-of-sale systems) and ISO-8859-1 by charset-normalizer, with a check of how Spanish the non-ASCII characters
read (a symbol inside a word, «Az£car», is a misreading). The guess is only a guess: the preview names it, shows the
first rows holding non-ASCII characters as read with it and offers the four encodings (`ENCODINGS`) before
anything is imported; `preview` and `import_file` take the one chosen.

Files are streamed: read row by row, never whole in memory (a 200,000-row import costs the process a few tens of
MB, bench/catalog.py). `preview` parses and checks every row without writing and keeps the first rows read and the
first problems found; `import_file` imports all rows in one transaction or none (any bad row: nothing is imported
and the bad rows are listed). Every problem is in Spanish with the spreadsheet's row number (the header is its
row; a problem of the whole file has none). `export` writes UTF-8 with BOM, `;` and the decimal comma, which
`import_file` reads back to the same catalogue. docs/catalog.md, «CSV files».
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import os
import re
import unicodedata
from array import array
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.errors import invalid
from app.core.invoicing.catalog import records, text
from app.core.invoicing.catalog.customers import Customers
from app.core.invoicing.catalog.products import DuplicateBarcode, Products
from app.core.invoicing.catalog.records import Customer, Product
from app.core.platform.lazy import lazy_module
from app.core.platform.paths import private_file
from app.core.platform.spreadsheet_text import guarded, unguarded

if TYPE_CHECKING:
    import charset_normalizer
else:
    charset_normalizer = lazy_module("charset_normalizer")

DELIMITERS = (";", ",", "\t", "|")
EXPORT_DELIMITER = ";"
EXPORT_DECIMAL = ","
YES, NO = "sí", "no"
SAMPLE_ROWS = 100  # records a preview keeps to be shown (every row is still checked)
MAX_ERRORS = 1000  # problems a preview or a report lists (every one is counted)
NON_ASCII_ROWS = 5  # rows with non-ASCII characters a preview of a file that is not UTF-8 shows
FIELD_LIMIT = 128 * 1024  # characters in one value: longer is a problem of its row (the csv module's own limit)
# What the csv module may read into one value before it gives up: a value over FIELD_LIMIT is reported with its
# row and column, and only past this (an unclosed quote swallowing the rest of the file) does reading stop.
_READ_LIMIT = 16 * 1024 * 1024
csv.field_size_limit(max(csv.field_size_limit(), _READ_LIMIT))  # process-wide: it only ever grows
_CHUNK = 64 * 1024  # bytes read at a time while the encoding is detected
_SAMPLE_BYTES = 64 * 1024  # lines with non-ASCII bytes the encoding is guessed from


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
class Encoding:
    codec: str  # the codec name Python reads it with
    label: str  # as a person knows it


# What the preview of a file that is not UTF-8 offers, the guess among them (docs/catalog.md).
ENCODINGS = (Encoding("utf-8", "UTF-8"), Encoding("cp1252", "Windows-1252"), Encoding("cp850", "cp850"),
             Encoding("latin-1", "ISO-8859-1"))
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_GUESSES = ("cp1252", "cp850", "latin-1")  # in this order of preference when they read a file alike


def encoding_label(codec: str) -> str:
    """«Windows-1252» for cp1252: how the preview names an encoding."""
    labels = {e.codec: e.label for e in ENCODINGS} | {"utf-8-sig": "UTF-8 (con BOM)", "utf-16": "UTF-16"}
    return labels.get(codec, codec)


@dataclass(frozen=True)
class RowError:
    row: int | None  # the spreadsheet's row number: the header is row 1 (None: the whole file)
    column: str | None  # the column's header as written in the file (None: the whole row or file)
    message: str

    def __str__(self) -> str:
        if self.row is None:
            return self.message
        where = f"Fila {self.row}" + (f", columna «{self.column}»" if self.column else "")
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class SampleRow:
    row: int  # the spreadsheet's row number
    text: str  # its values as read, joined by « | »


@dataclass
class EncodingCheck:
    """A file that is not UTF-8: what it was guessed to be, the encodings offered, and the first rows with non-ASCII
    characters as read (with `Dialect.encoding`, the guess unless another was chosen): to be looked at before
    anything is imported."""

    guessed: str  # the codec guessed
    choices: tuple[Encoding, ...] = ENCODINGS
    rows: list[SampleRow] = field(default_factory=list)  # at most NON_ASCII_ROWS, the header too if it has them

    @property
    def label(self) -> str:
        return encoding_label(self.guessed)


@dataclass
class Preview:
    dialect: Dialect | None
    rows: list[Any] = field(default_factory=list)  # the first SAMPLE_ROWS records read (Customer or Product)
    row_numbers: list[int] = field(default_factory=list)  # the spreadsheet row of each record
    errors: list[RowError] = field(default_factory=list)  # the first MAX_ERRORS problems, in the file's order
    count: int = 0  # rows read without a problem, in the whole file
    error_count: int = 0  # every problem found, listed or not
    bad_rows: int = 0  # rows with a problem
    encoding_check: EncodingCheck | None = None  # None: the file is UTF-8

    @property
    def ok(self) -> bool:
        return not self.errors and not self.error_count

    def add(self, error: RowError) -> None:
        """Count a problem, and list it while fewer than MAX_ERRORS are."""
        if error.row is not None and not (self.errors and self.errors[-1].row == error.row):
            self.bad_rows += 1
        self.error_count += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(error)

    def keep(self, number: int, record: Any) -> None:
        """Count a record read without problems; the first SAMPLE_ROWS are kept to be shown."""
        self.count += 1
        if len(self.rows) < SAMPLE_ROWS:
            self.rows.append(record)
            self.row_numbers.append(number)

    def note(self, number: int, row: list[str]) -> None:
        """A row as read: the first ones with non-ASCII characters are shown when the file is not UTF-8."""
        check = self.encoding_check
        if check is not None and len(check.rows) < NON_ASCII_ROWS and not all(cell.isascii() for cell in row):
            shown = " | ".join(cell.strip() for cell in row)
            check.rows.append(SampleRow(number, shown if len(shown) <= 300 else shown[:299] + "…"))


@dataclass
class ImportReport:
    imported: int  # records written: all of the file's, or 0
    errors: list[RowError]  # the first MAX_ERRORS problems
    dialect: Dialect | None
    error_count: int = 0  # every problem found, listed or not

    @property
    def ok(self) -> bool:
        return not self.errors and not self.error_count


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


# ---------------------------------------------------------------- the encoding

class _BadFile(Exception):
    """Some row of a file being imported is bad: leaves the import's transaction so that it is rolled back."""


class _Unreadable(Exception):
    """The csv module cannot go on reading the file from this row (its message is Spanish)."""

    def __init__(self, error: RowError) -> None:
        super().__init__(error.message)
        self.error = error


def chosen_codec(encoding: str) -> str:
    """The codec of an encoding chosen by name («Windows-1252», «iso-8859-1», «utf8», …): one of ENCODINGS (or a
    BOM's); a 400 for any other."""
    names = {codecs.lookup(e.codec).name: e.codec for e in ENCODINGS} | {"utf-8-sig": "utf-8-sig", "utf-16": "utf-16"}
    try:
        found = names.get(codecs.lookup(encoding.strip()).name)
    except LookupError:
        found = None
    if found is None:
        offered = ", ".join(e.label for e in ENCODINGS)
        raise invalid("encoding", f"La codificación «{encoding}» no es una de las que se ofrecen: {offered}.")
    return found


@dataclass(frozen=True)
class Detected:
    codec: str  # by BOM, «utf-8» when every byte reads as UTF-8, else the guess
    utf8: bool  # the file is UTF-8 (by its BOM, or every byte)


def detect_encoding(path: Path) -> Detected:
    """The encoding of a file, read 64 kB at a time: its BOM; else UTF-8 if every byte decodes as UTF-8; else
    `guess_encoding` of the lines with non-ASCII bytes (the first 64 kB of them). Raises OSError."""
    with open(path, "rb") as handle:
        chunk = handle.read(_CHUNK)
        for bom, codec in _BOMS:
            if chunk.startswith(bom):
                return Detected(codec, True)
        decoder = codecs.getincrementaldecoder("utf-8")()
        utf8, sample, tail = True, bytearray(), b""
        while chunk and (utf8 or len(sample) < _SAMPLE_BYTES):
            if utf8:
                utf8 = _decodes(decoder, chunk)
            tail = _collect_non_ascii(sample, tail + chunk)
            chunk = handle.read(_CHUNK)
    if utf8 and _decodes(decoder, b"", final=True):
        return Detected("utf-8", True)
    if tail and not tail.isascii() and len(sample) < _SAMPLE_BYTES:
        sample += tail[:_SAMPLE_BYTES]
    return Detected(guess_encoding(bytes(sample)), False)


def _decodes(decoder: codecs.IncrementalDecoder, chunk: bytes, final: bool = False) -> bool:
    try:
        decoder.decode(chunk, final)
    except UnicodeDecodeError:
        return False
    return True


_HIGH_BYTE = re.compile(rb"[\x80-\xff]")


def _collect_non_ascii(sample: bytearray, data: bytes) -> bytes:
    """Add the complete lines of `data` with non-ASCII bytes to `sample` (up to _SAMPLE_BYTES); returns the last,
    unfinished line (at most 64 kB of it), to be completed by the next chunk."""
    end = data.rfind(b"\n") + 1
    at = 0
    while len(sample) < _SAMPLE_BYTES:
        found = _HIGH_BYTE.search(data, at, end)
        if found is None:
            break
        start, at = data.rfind(b"\n", 0, found.start()) + 1, data.find(b"\n", found.start()) + 1
        sample += data[start:at][:_SAMPLE_BYTES]
    return data[end:][-_SAMPLE_BYTES:]


# Non-ASCII characters Spanish text is made of; any other is as likely a misreading as not.
_SPANISH = frozenset("áéíóúüñÁÉÍÓÚÜÑ¿¡°ºª€")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def guess_encoding(sample: bytes) -> str:
    """The single-byte encoding a sample of lines with non-ASCII bytes is most likely in, among cp1252, cp850 and
    latin-1. charset-normalizer ranks them; on a few words it cannot tell («Az£car» reads as well as «Azúcar» to
    it), so the one whose non-ASCII characters read most like Spanish wins (`_spanish_score`), its ranking (then
    `_GUESSES`' order) deciding ties."""
    names = {"cp1252": "cp1252", "cp850": "cp850", "latin_1": "latin-1"}
    found = charset_normalizer.from_bytes(sample, cp_isolation=list(names))
    ranked = [names[match.encoding] for match in found if match.encoding in names]
    order = ranked + [codec for codec in _GUESSES if codec not in ranked]
    return max(order, key=lambda codec: (_spanish_score(sample.decode(codec, errors="replace")), -order.index(codec)))


def _spanish_score(decoded: str) -> int:
    """How Spanish the non-ASCII characters of a text read: +1 for each letter or sign of Spanish (ñ, á, ¿, °…);
    -2 for each sign inside a word («Az£car»), capital after a small letter («CafÚ») or control character."""
    score = 0
    for match in _NON_ASCII.finditer(decoded):
        at = match.start()
        char = decoded[at]
        before = decoded[at - 1] if at else " "
        after = decoded[at + 1] if at + 1 < len(decoded) else " "
        if char in _SPANISH:
            score += 1
        if char == "\ufffd" or unicodedata.category(char) == "Cc":
            score -= 2
        elif not char.isalpha() and before.isalpha() and after.isalpha():
            score -= 2
        elif char.isupper() and before.islower():
            score -= 2
    return score


# ---------------------------------------------------------------- reading

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


@dataclass
class _Opened:
    """A file opened to be read row by row from its header."""

    delimiter: str
    rows: Iterator[tuple[int, list[str]]]  # (spreadsheet row number, values), the header first
    empty: bool  # nothing but empty lines


@contextmanager
def _opened(table: Table, path: Path, codec: str) -> Iterator[_Opened]:
    """The file's rows, read as they are needed. Before the header, Excel's «sep=;» line names the separator (it
    is row 1, not a row of the table) and empty rows are skipped, their numbers kept; without it the separator is
    detected from the header. Bytes the codec cannot read become U+FFFD (each is a problem of its row)."""
    reading = "utf-8-sig" if codec == "utf-8" else codec  # a BOM is not part of the first header
    with open(path, "rb") as raw:
        lines = iter(io.TextIOWrapper(raw, encoding=reading, errors="replace", newline=""))
        skipped, delimiter = 0, None
        for line in lines:
            stripped = line.strip()
            if skipped == 0 and stripped.lower().startswith("sep=") and len(stripped) == 5:
                delimiter = stripped[4]
            elif any(char.isalnum() for char in line):
                reader = csv.reader(itertools.chain([line], lines), delimiter=delimiter or detect_delimiter(line, table))
                yield _Opened(reader.dialect.delimiter, _numbered(reader, skipped + 1), False)
                return
            skipped += 1
        yield _Opened(delimiter or EXPORT_DELIMITER, iter(()), True)


def _numbered(reader: Iterator[list[str]], first: int) -> Iterator[tuple[int, list[str]]]:
    """Each row with its spreadsheet number (a value with line breaks inside quotes stays in its row); the csv
    module's errors raised as `_Unreadable`, in Spanish, with the row."""
    for number in itertools.count(first):
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise _Unreadable(RowError(number, None, _csv_problem(exc))) from None
        yield number, row


def _csv_problem(exc: csv.Error) -> str:
    if "field larger than field limit" in str(exc):
        return (f"un valor de esta fila pasa de {_READ_LIMIT // (1024 * 1024)} MB y el archivo no se puede seguir "
                "leyendo: casi siempre son unas comillas («\"») que se abren y no se cierran, en esta fila o en "
                "una anterior.")
    return ("el archivo no se puede seguir leyendo como CSV desde esta fila: revise sus comillas («\"») y su "
            "separador.")


def read(table: Table, path: Path, encoding: str | None = None) -> Preview:
    """Parse and check every row of a file (nothing is written), read as `encoding` (a name of ENCODINGS) or as
    detected. Keeps the first rows read and problems found, counts them all."""
    preview = Preview(None)
    for number, record in _checked(table, Path(path), encoding, preview, detect=True):
        preview.keep(number, record)
    return preview


def _checked(table: Table, path: Path, encoding: str | None, preview: Preview, detect: bool
             ) -> Iterator[tuple[int, Any]]:
    """The records of the file's good rows with their row numbers, as they are read; the problems go to
    `preview` (and its dialect, and the encoding check of a file that is not UTF-8 when `detect`). Two passes: the
    amounts' decimal mark is voted on first."""
    try:
        codec = chosen_codec(encoding) if encoding else None
        if detect or codec is None:
            found = detect_encoding(path)
            codec = codec or found.codec
            preview.encoding_check = None if found.utf8 else EncodingCheck(found.codec)
        file_mark = _file_decimal_mark(table, path, codec)
        with _opened(table, path, codec) as opened:
            preview.dialect = Dialect(codec, opened.delimiter, file_mark)
            if opened.empty:
                preview.add(RowError(None, None, "El archivo está vacío."))
            yield from _check_rows(table, opened, file_mark, preview)
    except OSError as exc:
        preview.add(RowError(None, None, f"No se pudo leer el archivo «{path}»: {_os_problem(exc)}."))
    except _Unreadable as problem:
        preview.add(problem.error)


def _os_problem(exc: OSError) -> str:
    """Why a file cannot be read, in Spanish (the system's own text is in English)."""
    if isinstance(exc, FileNotFoundError):
        return "no existe"
    if isinstance(exc, PermissionError):
        return "no hay permiso para leerlo"
    if isinstance(exc, IsADirectoryError):
        return "es una carpeta, no un archivo"
    return f"el sistema no lo permite (error {exc.errno})" if exc.errno else "el sistema no lo permite"


def _check_rows(table: Table, opened: _Opened, file_mark: str, preview: Preview) -> Iterator[tuple[int, Any]]:
    first = next(opened.rows, None)
    if first is None:
        return
    header_number, header = first
    preview.note(header_number, header)
    positions, errors = _header_positions(table, header, header_number)
    for error in errors:
        preview.add(error)
    missing = _missing_columns(table, positions)
    if missing:
        preview.add(_missing_columns_error(table, missing, header_number))
        return
    sheet = _Sheet(table, header, positions, opened.delimiter, file_mark, encoding_label(preview.dialect.encoding
                                                                                         if preview.dialect else ""))
    seen = _FirstRows()  # unique key → the row that first had it, across the whole file
    for number, row in opened.rows:
        if any(cell.strip() for cell in row):
            preview.note(number, row)
            record = _read_row(sheet, number, row, seen, preview)
            if record is not None:
                yield number, record


class _FirstRows:
    """unique key → the first row that had it, for every row of a file, in about 12 bytes a key: an open-addressing
    table of the keys' 64-bit hashes (a dict of strings would cost some 120 bytes a key: 50 MB for 200,000 products
    with barcodes). Two different keys with the same hash (about one chance in 10^8 for a million keys) would be
    reported as repeated."""

    def __init__(self) -> None:
        self._hashes = array("q", bytes(8 * 1024))
        self._rows = array("i", bytes(4 * 1024))
        self._used = 0

    def first(self, key: str, row: int) -> int | None:
        """The row that had `key` before, or None (and `row` is recorded as its first)."""
        wanted = hash(key) or 1  # 0 marks a free slot
        hashes, mask = self._hashes, len(self._hashes) - 1
        slot = wanted & mask
        while hashes[slot]:
            if hashes[slot] == wanted:
                return self._rows[slot]
            slot = (slot + 1) & mask
        hashes[slot], self._rows[slot] = wanted, row
        self._used += 1
        if self._used * 2 > len(hashes):
            self._grow()
        return None

    def _grow(self) -> None:
        old_hashes, old_rows = self._hashes, self._rows
        size = len(old_hashes) * 2
        hashes, rows = array("q", bytes(8 * size)), array("i", bytes(4 * size))
        mask = size - 1
        for index, wanted in enumerate(old_hashes):
            if wanted:
                slot = wanted & mask
                while hashes[slot]:
                    slot = (slot + 1) & mask
                hashes[slot], rows[slot] = wanted, old_rows[index]
        self._hashes, self._rows = hashes, rows


@dataclass(frozen=True)
class _Sheet:
    """What every data row of one file is read with, fixed by its header and its dialect."""

    table: Table
    header: list[str]
    positions: dict[str, tuple[int, str]]  # field → (column index, header as written)
    delimiter: str
    file_mark: str  # the decimal mark the ambiguous amounts are read with
    encoding: str  # the label of the encoding it is read with


def _header_positions(table: Table, header: list[str], row: int) -> tuple[dict[str, tuple[int, str]], list[RowError]]:
    """field → (column index, header as written) for the known columns, and an error per repeated column (the
    last of the repeated columns is the one read). Unknown columns are ignored."""
    known = table.header_map()
    positions: dict[str, tuple[int, str]] = {}
    errors: list[RowError] = []
    for index, name in enumerate(header):
        column = known.get(_header_key(name))
        if column is None:
            continue
        if column.field in positions:
            errors.append(RowError(row, name.strip(), f"La columna «{name.strip()}» está repetida."))
        positions[column.field] = (index, name.strip())
    return positions, errors


def _missing_columns(table: Table, positions: dict[str, tuple[int, str]]) -> list[str]:
    """The headers (as export writes them) of the required columns the file lacks."""
    return [c.header for c in table.columns if c.field in table.required and c.field not in positions]


def _missing_columns_error(table: Table, missing: list[str], row: int) -> RowError:
    # Lists every expected header: the user fixes the first row once, not column by column.
    expected = "; ".join(c.header for c in table.columns)
    return RowError(row, None, f"Faltan las columnas {', '.join(f'«{m}»' for m in missing)}. La primera "
                               f"fila debe tener los encabezados: {expected}.")


def _file_decimal_mark(table: Table, path: Path, codec: str) -> str:
    """The file's decimal mark for the ambiguous amounts («1,250»), from a first pass over its amounts: the
    majority of the unambiguous ones, and on a tie the comma when the separator is `;` (Excel's Spanish CSV).
    A file that cannot be read to its end votes with the rows before (the checking pass reports why)."""
    comma = point = 0
    with _opened(table, path, codec) as opened:
        first = next(opened.rows, None)
        if first is not None:
            positions, _ = _header_positions(table, first[1], first[0])
            columns = [positions[c.field][0] for c in table.columns if c.kind == "decimal" and c.field in positions]
            try:
                comma, point = _votes(_cell(row, index) for _, row in opened.rows for index in columns)
            except _Unreadable:
                pass
        delimiter = opened.delimiter
    return "," if comma > point or (comma == point and delimiter == ";") else "."


def _read_row(sheet: _Sheet, number: int, row: list[str], seen: _FirstRows, preview: Preview) -> Any | None:
    """Check one non-empty data row: its problems go to `preview`, and its record is returned when it has none;
    `seen` collects its unique keys."""
    unreadable = _unreadable_values(sheet, number, row)
    if unreadable:  # a value over 128 kB or with bytes the encoding cannot read: nothing else of it is checked
        for error in unreadable:
            preview.add(error)
        return None
    table = sheet.table
    data: dict[str, Any] = {name: _cell(row, index) for name, (index, _) in sheet.positions.items()}
    _unguard_texts(sheet, data)
    amount_errors = _parse_amounts(sheet, data)
    extra = _extra_values_error(sheet, number, row)
    if extra is not None:
        preview.add(extra)
    _convenience(table, data)
    values, problems = table.check(data)
    problems = {**problems, **amount_errors}  # the amount's own message wins over the check's
    if not problems:
        record = table.make(**values)
        problems = _duplicates(table, record, number, seen)
    # In the file's column order; a field without a column (a check on an absent optional column) first.
    for name, message in sorted(problems.items(), key=lambda item: sheet.positions.get(item[0], (-1, ""))[0]):
        preview.add(RowError(number, _column_header(sheet, name), message))
    return None if problems else record  # a row with values beyond the header is still read (and reported)


def _unguard_texts(sheet: _Sheet, data: dict[str, Any]) -> None:
    """Take off the apostrophe export puts before a text a spreadsheet would read as a formula
    (app.core.platform.spreadsheet_text), so export → import gives back the same text."""
    kinds = {c.field: c.kind for c in sheet.table.columns}
    for name, value in data.items():
        if kinds[name] == "text":
            data[name] = unguarded(value)


def _unreadable_values(sheet: _Sheet, number: int, row: list[str]) -> list[RowError]:
    """A problem for each value over FIELD_LIMIT characters (most often an unclosed quote that took in the next
    rows), and for each value of a known column with bytes the encoding could not read (shown as «�»)."""
    if max(map(len, row), default=0) <= FIELD_LIMIT and "\ufffd" not in "".join(row):
        return []  # nearly every row: tested at C speed
    errors = []
    for index, cell in enumerate(row):
        if len(cell) > FIELD_LIMIT:
            errors.append(RowError(number, _header_at(sheet, index),
                                   f"el valor tiene {len(cell):,} caracteres y el máximo es {FIELD_LIMIT:,} "
                                   "(128 kB): revise si en esta fila hay unas comillas («\"») que se abren y no "
                                   "se cierran."))
    for index, header in sheet.positions.values():
        cell = _cell(row, index)
        if "\ufffd" in cell and len(cell) <= FIELD_LIMIT:
            shown = cell.strip() if len(cell.strip()) <= 60 else cell.strip()[:59] + "…"
            errors.append(RowError(number, header, f"«{shown}» tiene bytes que no se pueden leer como "
                                                   f"{sheet.encoding} (se ven como «\ufffd»): elija la codificación "
                                                   "del archivo."))
    return sorted(errors, key=lambda error: _column_index(sheet, error.column))


def _header_at(sheet: _Sheet, index: int) -> str | None:
    """The header of the file's column `index` as written, or None for a value beyond the header."""
    return sheet.header[index].strip() or None if index < len(sheet.header) else None


def _column_index(sheet: _Sheet, header: str | None) -> int:
    names = [name.strip() for name in sheet.header]
    return names.index(header) if header in names else len(names)


def _parse_amounts(sheet: _Sheet, data: dict[str, Any]) -> dict[str, str]:
    """Replace the non-empty decimal cells of `data` by their Decimal; returns field → message for the cells that
    are not amounts (those keep their text)."""
    errors: dict[str, str] = {}
    kinds = {c.field: c.kind for c in sheet.table.columns}
    for name, value in list(data.items()):
        if kinds[name] == "decimal" and value.strip():
            try:
                data[name] = parse_amount(value, sheet.file_mark)
            except records.FieldProblem as problem:
                errors[name] = str(problem)
    return errors


def _extra_values_error(sheet: _Sheet, number: int, row: list[str]) -> RowError | None:
    """A row with non-empty values beyond the header's columns: most often a wrong separator (a «,» inside an
    amount split by a `,` separator). Reported, and the row is still read."""
    width = len(sheet.header)
    if len(row) > width and any(cell.strip() for cell in row[width:]):
        return RowError(number, None, f"La fila tiene {len(row)} valores y el encabezado "
                                      f"{width}: revise el separador «{sheet.delimiter}».")
    return None


def _duplicates(table: Table, record: Any, number: int, seen: _FirstRows) -> dict[str, str]:
    """field → message for each unique key of `record` already in an earlier row; the keys not seen before are
    recorded as this row's (even when another key of the row is a duplicate)."""
    problems: dict[str, str] = {}
    for name, key, shown in table.keys(record):
        earlier = seen.first(key, number)
        if earlier is not None:
            problems[name] = f"«{shown}» ya está en la fila {earlier}."
    return problems


def _column_header(sheet: _Sheet, name: str) -> str:
    """The column's header as written in the file, or as export writes it when the file has no such column."""
    return sheet.positions.get(name, (0, next(c.header for c in sheet.table.columns if c.field == name)))[1]


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
    return guarded(str(value))  # a name like «=HYPERLINK(…)» stays text in a spreadsheet


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

    def preview(self, path: Path, encoding: str | None = None) -> Preview:
        return read(self.table, path, encoding)

    def import_file(self, path: Path, encoding: str | None = None) -> ImportReport:
        """Import every row in one transaction, or nothing: with any bad row (or a barcode that is another
        stored product's), nothing is written and the bad rows are listed. The rows are checked and written as
        they are read (`encoding`: a name of ENCODINGS, else detected); a bad row rolls the transaction back."""
        path = Path(path)
        problems = Preview(None)
        numbers = array("i")  # the row of each record written, to name the rows of barcodes refused

        def good_records() -> Iterator[Any]:
            for number, record in _checked(self.table, path, encoding, problems, detect=False):
                if problems.ok:  # after a bad row nothing more is written, but every row is still checked
                    numbers.append(number)
                    yield record
            if not problems.ok or not numbers:
                raise _BadFile

        try:
            if isinstance(self._store, Products):
                clashes = self._store.save_all(good_records())
            else:
                self._store.save_all(good_records())
                clashes = []
        except _BadFile:
            return ImportReport(0, problems.errors, problems.dialect, problems.error_count)
        if clashes:
            return self._clashes(path, encoding or (problems.dialect.encoding if problems.dialect else None),
                                 {numbers[i] for i in clashes}, problems.dialect)
        return ImportReport(len(numbers), [], problems.dialect)

    def _clashes(self, path: Path, encoding: str | None, rows: set[int], dialect: Dialect | None) -> ImportReport:
        """The report of an import refused because some barcodes are other stored products': the file is read
        again for those rows' products (they were not kept)."""
        column = next(c.header for c in self.table.columns if c.field == "codigo_barras")
        found = Preview(None)
        for number, record in _checked(self.table, path, encoding, Preview(None), detect=False):
            if number in rows:
                found.add(RowError(number, column, DuplicateBarcode(record).message))
        return ImportReport(0, found.errors, dialect, found.error_count)

    def export(self, path: Path) -> int:
        return write(self.table, self._store.all(), path)


def customers_file(store: Customers) -> CatalogFile:
    return CatalogFile(CUSTOMERS, store)


def products_file(store: Products) -> CatalogFile:
    return CatalogFile(PRODUCTS, store)
