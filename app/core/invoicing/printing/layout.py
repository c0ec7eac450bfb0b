"""The printed voucher laid out as pages of simple marks (text, rules, boxes, the QR, the logo), in mm.

One layout, two painters: app.core.invoicing.printing.pdf writes it with fpdf2, and the windows paint the same
marks with Qt for the preview and the printer (PySide6-Essentials has no PDF viewer). A4 pages break
between lines and repeat the table's header; the 80 mm ticket is one page as long as its content.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal

from app.core.invoicing.printing.amounts import PrintedLine, printed_lines, summary, with_taxes
from app.core.invoicing.printing.document import (
    DOCUMENT_LABELS,
    EXONERADAS,
    EXPORTACION,
    GRATUITAS,
    GRAVADAS,
    ICBPER,
    INAFECTAS,
    ISC,
    OTROS,
    TITLES,
    PrintedVoucher,
)
from app.core.invoicing.printing.fonts import PT, metrics, printable
from app.core.invoicing.sunat_catalogues import CREDITO, DETRACCION_NOTICE, LEGENDS, PAYMENT_FORMS, PERCEPCION_NOTICE
from app.core.platform import formatting as fmt

FORMATS = ("a4", "ticket")
CHECK_URL = "https://e-consulta.sunat.gob.pe/ol-ti-itconsvalicpe/ConsValiCpe.htm"
GREY = 225
QR_MASK = 2  # vertical stripes every third column: an even spread of dark modules for SUNAT's digits and base64


@dataclass(frozen=True, slots=True)
class Text:
    x: float  # left edge
    y: float  # baseline
    text: str
    size: float  # points
    bold: bool = False


@dataclass(frozen=True, slots=True)
class Rule:
    x1: float
    y1: float
    x2: float
    y2: float
    width: float = 0.2


@dataclass(frozen=True, slots=True)
class Box:
    x: float
    y: float
    w: float
    h: float
    fill: int | None = None  # grey level 0-255, or None for an outline
    line_width: float = 0.3


@dataclass(frozen=True, slots=True)
class Qr:
    x: float
    y: float
    module: float  # side of one module in mm
    rows: tuple[tuple[tuple[int, int], ...], ...]  # per row, the dark runs as (first column, length)

    @property
    def size(self) -> float:
        return len(self.rows) * self.module


@dataclass(frozen=True, slots=True)
class Picture:
    x: float
    y: float
    w: float
    h: float
    data: bytes


@dataclass
class Page:
    width: float
    height: float
    marks: list = field(default_factory=list)


@dataclass(frozen=True)
class Issuer:
    """What the engine adds to the XML on paper: the company's optional logo (PNG or JPEG) and its size in mm, and
    the voucher's state: voided («ANULADO» across it), issued in a test environment («SIN VALOR TRIBUTARIO —
    SANDBOX» or «— BETA»: `test_environment` is the environment's badge, None in production)."""

    logo: bytes | None = None
    logo_size: tuple[float, float] | None = None  # (width, height) in mm, fitted by the caller; None: a square
    voided: bool = False
    test_environment: str | None = None
    # The link SUNAT's CDR gave the document (cbc:DocumentDescription): a guía's QR encodes it; None: not accepted yet.
    sunat_link: str | None = None


_DARK_RUN = re.compile(rb"\x01+")


def qr_runs(text: str) -> tuple[tuple[tuple[int, int], ...], ...]:
    """SUNAT's QR as dark runs per row, without border; level Q: a quarter of the code may be smudged or torn."""
    # A fixed mask: choosing the best of eight costs four times the rest of the page, and any mask is valid
    # (readers handle them all; the tests decode every one with zbarimg).
    import segno  # here, not at import: the engine starts without it

    code = segno.make(text, error="q", micro=False, boost_error=False, mask=QR_MASK)
    return tuple(tuple((found.start(), found.end() - found.start()) for found in _DARK_RUN.finditer(bytes(row)))
                 for row in code.matrix)


def wrap(text: str, width: float, size: float, bold: bool = False) -> list[str]:
    """Greedy word wrap to `width` mm; a word longer than the width is cut. Linear in the text's length: each
    character is measured once (a 10,000-character word is cut in milliseconds)."""
    measure = metrics(bold)
    known = measure.widths.__getitem__
    limit = width / (size * PT)  # in em
    space = measure.advance(" ")
    lines: list[str] = []
    for paragraph in printable(text).split("\n"):
        current: list[str] = []
        used = 0.0
        for word in paragraph.split():
            try:
                needed = sum(map(known, word))
            except KeyError:  # a character of a fallback font
                needed = sum(map(measure.advance, word))
            if current and used + space + needed <= limit:
                current.append(word)
                used += space + needed
                continue
            if current:
                lines.append(" ".join(current))
            if needed > limit:
                pieces, needed = _cut(word, list(map(measure.advance, word)), limit)
                lines.extend(pieces[:-1])
                word = pieces[-1]
            current, used = [word], needed
        lines.append(" ".join(current))
    return lines or [""]


def _cut(word: str, advances: list[float], limit: float) -> tuple[list[str], float]:
    """`word` cut into pieces no wider than `limit` em (at least one character each), and the last one's width."""
    pieces: list[str] = []
    start, used = 0, 0.0
    for index, advance in enumerate(advances):
        if used + advance > limit and index > start:
            pieces.append(word[start:index])
            start, used = index, 0.0
        used += advance
    pieces.append(word[start:])
    return pieces, used


class Sheet:
    """A cursor over pages: marks are added at `y`, which moves down; A4 pages break when full."""

    def __init__(self, width: float, height: float | None, margin: float) -> None:
        self.width, self.margin = width, margin
        self.fixed_height = height
        self.pages: list[Page] = []
        self.y = margin
        self.new_page()

    @property
    def page(self) -> Page:
        return self.pages[-1]

    @property
    def right(self) -> float:
        return self.width - self.margin

    def new_page(self) -> None:
        self.pages.append(Page(self.width, self.fixed_height or 0.0))
        self.y = self.margin

    def room(self) -> float:
        return float("inf") if self.fixed_height is None else self.fixed_height - self.margin - self.y

    def ensure(self, height: float) -> bool:
        """Start a new page when `height` mm do not fit; True when it did."""
        if self.room() < height:
            self.new_page()
            return True
        return False

    def text(self, x: float, text: str, size: float, bold: bool = False, align: str = "L", width: float = 0.0,
             baseline: float | None = None) -> None:
        text = printable(text)
        if align != "L":
            used = metrics(bold).width(text, size)
            x = x + width - used if align == "R" else x + (width - used) / 2
        self.page.marks.append(Text(x, baseline if baseline is not None else self.y + size * PT * 0.8, text, size,
                                    bold))

    def paragraph(self, x: float, text: str, width: float, size: float, bold: bool = False, align: str = "L",
                  leading: float = 1.25) -> None:
        for line in wrap(text, width, size, bold):
            self.ensure(size * PT * leading)
            self.text(x, line, size, bold, align, width)
            self.y += size * PT * leading

    def rule(self, x1: float | None = None, x2: float | None = None, width: float = 0.2) -> None:
        self.page.marks.append(Rule(self.margin if x1 is None else x1, self.y, self.right if x2 is None else x2,
                                    self.y, width))

    def finish(self, bottom: float) -> list[Page]:
        if self.fixed_height is None:
            self.page.height = self.y + bottom
        return self.pages


# ------------------------------------------------------------------------------------------------ shared parts

VOIDED = "ANULADO"
NO_TAX_VALUE = "SIN VALOR TRIBUTARIO"


def customer_label(voucher: PrintedVoucher) -> str:
    return DOCUMENT_LABELS.get(voucher.receptor_tipo, "DOC.")


def stamps(issuer: Issuer) -> list[str]:
    """What is printed across the voucher: «ANULADO», «SIN VALOR TRIBUTARIO — SANDBOX» (or «— BETA»)."""
    found = [VOIDED] if issuer.voided else []
    if issuer.test_environment:
        found.append(f"{NO_TAX_VALUE} — {issuer.test_environment}")
    return found


def totals(voucher: PrintedVoucher, lines: list[PrintedLine]) -> list[tuple[str, str, bool]]:
    """(label, amount, bold) rows. A boleta: the lines' subtotal with taxes, what is taken off and added, the total
    (they add up), then what the total includes. A factura: gravadas, exoneradas and inafectas always; the rest when
    present. `lines`: the voucher's printed lines (`printed_lines`), worked out once per layout."""
    if with_taxes(voucher):
        return _totals_with_taxes(voucher, lines)
    money = lambda value: fmt.money(value, voucher.moneda)  # noqa: E731
    taxable, taxes = voucher.taxable, voucher.taxes
    rows = [("Op. gravadas", money(taxable.get(GRAVADAS, 0)), False),
            ("Op. exoneradas", money(taxable.get(EXONERADAS, 0)), False),
            ("Op. inafectas", money(taxable.get(INAFECTAS, 0)), False)]
    if EXPORTACION in taxable:
        rows.append(("Op. exportación", money(taxable[EXPORTACION]), False))
    if GRATUITAS in taxable:
        rows.append(("Op. gratuitas", money(taxable[GRATUITAS]), False))
    if voucher.descuento_global:
        rows.append(("Descuentos globales", money(voucher.descuento_global), False))
    if voucher.descuentos:
        rows.append(("Descuentos", money(voucher.descuentos), False))
    if ISC in taxes:
        rows.append(("ISC", money(taxes[ISC]), False))
    rows.append(("IGV 18 %", money(voucher.igv), False))
    if ICBPER in taxes:
        rows.append(("ICBPER", money(taxes[ICBPER]), False))
    if OTROS in taxes:
        rows.append(("Otros tributos", money(taxes[OTROS]), False))
    rows.extend(_adjustments(voucher))
    rows.append(("IMPORTE TOTAL", money(voucher.total), True))
    return rows + _stated_beside(voucher)


# What SUNAT's rules have the printed voucher say (issue 37): RS 183-2004/SUNAT, the SPOT's legend with the seller's
# account at the Banco de la Nación; the percepción's legend as the XML states it (legend 2000 of catalogue 52, one
# text for every regime 51-53: a regime's own printed wording was never checked against its resolution, so none is
# added); the retención the customer (a retention agent, RS 037-2002/SUNAT) will make of the IGV.
SPOT_LEGEND = "Operación sujeta al Sistema de Pago de Obligaciones Tributarias con el Gobierno Central (SPOT)"
RETENTION_LEGEND = "Operación sujeta a retención del IGV: el cliente, agente de retención, retiene {rate} % ({amount})."


def notices(voucher: PrintedVoucher) -> list[str]:
    """The legends printed under the amount in words: the XML's legends of catalogue 52 (the detracción's in full,
    with its code, rate, amount and account), and the retención's."""
    found = []
    for code, text in voucher.leyendas:
        if code != DETRACCION_NOTICE:
            found.append(text)
    spot = voucher.detraccion
    if spot is not None:
        account = f" Cuenta en el Banco de la Nación N.° {spot.cuenta}." if spot.cuenta else ""
        found.append(f"{SPOT_LEGEND}. Detracción: código {spot.codigo} ({spot.porcentaje.normalize():f} %), "
                     f"{fmt.money(spot.monto, 'PEN')}.{account}")
    elif any(code == DETRACCION_NOTICE for code, _ in voucher.leyendas):
        found.append(SPOT_LEGEND + ".")
    if voucher.percepcion and not any(code == PERCEPCION_NOTICE for code, _ in voucher.leyendas):
        found.append(LEGENDS[PERCEPCION_NOTICE])  # a voucher signed before it carried legend 2000
    if voucher.retencion:
        rate, amount = voucher.retencion
        found.append(RETENTION_LEGEND.format(rate=rate, amount=fmt.money(amount, voucher.moneda)))
    return found


def _stated_beside(voucher: PrintedVoucher) -> list[tuple[str, str, bool]]:
    """The detracción and percepción (in soles) and the retención, printed after the total they are not part of."""
    rows = []
    if voucher.detraccion is not None:
        spot = voucher.detraccion
        rows.append((f"Detracción ({spot.porcentaje.normalize():f} %)", fmt.money(spot.monto, "PEN"), False))
    if voucher.percepcion:
        rate, amount, with_it = voucher.percepcion
        rows.append((f"Percepción ({rate} %)", fmt.money(amount, "PEN"), False))
        rows.append(("Total con percepción", fmt.money(with_it, "PEN"), True))
    if voucher.retencion:
        rate, amount = voucher.retencion
        rows.append((f"Retención del IGV ({rate} %)", fmt.money(amount, voucher.moneda), False))
        rows.append(("Neto a pagar", fmt.money(voucher.total - amount, voucher.moneda), True))
    return rows


def _advance_rows(voucher: PrintedVoucher, total: Decimal) -> list[tuple[str, str, bool]]:
    """The advances deducted: one row per advance voucher, named (SUNAT's printed voucher says which), or one row of
    their sum when the XML does not name them."""
    named = voucher.anticipos_pagados
    if not named or any(not name for name, _ in named):
        return [("Anticipos", f"- {fmt.money(total, voucher.moneda)}", False)]
    return [(f"Anticipo {name}", f"- {fmt.money(paid, voucher.moneda)}", False) for name, paid in named]


def _adjustments(voucher: PrintedVoucher) -> list[tuple[str, str, bool]]:
    money = lambda value: fmt.money(value, voucher.moneda)  # noqa: E731
    rows = []
    if voucher.cargos:
        rows.append(("Cargos", money(voucher.cargos), False))
    if voucher.anticipos:
        rows += _advance_rows(voucher, voucher.anticipos)
    if voucher.redondeo:
        rows.append(("Redondeo", money(voucher.redondeo), False))
    return rows


def _totals_with_taxes(voucher: PrintedVoucher, lines: list[PrintedLine]) -> list[tuple[str, str, bool]]:
    money = lambda value: fmt.money(value, voucher.moneda)  # noqa: E731
    printed = summary(voucher, lines)
    rows = [("Subtotal", money(printed.subtotal), False)]
    if printed.descuentos:
        rows.append(("Descuentos", f"- {money(printed.descuentos)}", False))
    if printed.anticipos:
        rows += _advance_rows(voucher, printed.anticipos)
    if printed.icbper:
        rows.append(("ICBPER", money(printed.icbper), False))
    if printed.cargos:
        rows.append(("Cargos", money(printed.cargos), False))
    if printed.redondeo:
        rows.append(("Redondeo", money(printed.redondeo), False))
    rows.append(("IMPORTE TOTAL", money(printed.total), True))
    return rows + _stated_beside(voucher)


def included(voucher: PrintedVoucher) -> list[tuple[str, str]]:
    """What a boleta's total includes (the taxable bases and the IGV), printed small under its total; nothing for a
    factura, whose totals show them."""
    if not with_taxes(voucher):
        return []
    taxable = voucher.taxable
    rows = [(label, fmt.money(taxable[code], voucher.moneda)) for label, code in (
        ("Op. gravadas", GRAVADAS), ("Op. exoneradas", EXONERADAS), ("Op. inafectas", INAFECTAS),
        ("Op. exportación", EXPORTACION), ("Op. gratuitas", GRATUITAS)) if taxable.get(code)]
    if ISC in voucher.taxes:
        rows.append(("ISC", fmt.money(voucher.taxes[ISC], voucher.moneda)))
    rows.append(("IGV 18 %", fmt.money(voucher.igv, voucher.moneda)))
    return rows


def line_notes(line: PrintedLine, moneda: str) -> list[tuple[str, str]]:
    """(text, amount) rows under a line: its discount, its charge, a free line's reference value."""
    notes = []
    if line.descuento:
        notes.append(("Descuento", f"-{fmt.number(line.descuento)}"))
    if line.cargo:
        notes.append(("Cargo", fmt.number(line.cargo)))
    if line.referencia is not None:
        notes.append((f"Gratuito: valor referencial {fmt.money(line.referencia, moneda)}", ""))
    return notes


def details(voucher: PrintedVoucher) -> list[tuple[str, str]]:
    """(label, value) rows under the header: customer, address, date, currency, payment, reference and reason."""
    rows = [("Cliente", voucher.receptor_nombre or "-"),
            (customer_label(voucher), voucher.receptor_numero or "-")]
    if voucher.receptor_direccion:
        rows.append(("Dirección", voucher.receptor_direccion))
    rows += [("Fecha de emisión", fmt.day(voucher.fecha) + (f"  {voucher.hora[:5]}" if voucher.hora else "")),
             ("Moneda", fmt.CURRENCY_NAMES.get(voucher.moneda, voucher.moneda))]
    if voucher.forma_pago:
        rows.append(("Forma de pago", PAYMENT_FORMS.get(voucher.forma_pago, voucher.forma_pago)))
    if voucher.referencia:
        kind = TITLES.get(voucher.referencia_tipo, "Comprobante").replace(" ELECTRÓNICA", "")
        rows.append(("Documento que modifica", f"{kind} ELECTRÓNICA {voucher.referencia}"))
    if voucher.motivo or voucher.motivo_codigo:
        rows.append(("Motivo", " - ".join(part for part in (voucher.motivo_codigo, voucher.motivo) if part)))
    return rows


def cuotas(voucher: PrintedVoucher) -> list[tuple[str, str, str]]:
    return [(f"Cuota {c.numero:03d}", fmt.day(c.vencimiento), fmt.money(c.monto, voucher.moneda))
            for c in voucher.cuotas]


def legend(voucher: PrintedVoucher) -> str:
    return f"Representación impresa de la {voucher.title}."


def check_text() -> str:
    return f"Consulte su validez en SUNAT: {CHECK_URL}"


def _logo_size(issuer: Issuer, max_w: float, max_h: float) -> tuple[float, float]:
    w, h = issuer.logo_size or (max_h, max_h)
    scale = min(max_w / w, max_h / h, 1.0) if w and h else 1.0
    return w * scale, h * scale


def _fitted_size(text: str, width: float, size: float, smallest: float = 5.0) -> float:
    """`size`, or smaller (down to `smallest`) so that `text` fits in `width` mm: a long unit value in its column."""
    used = metrics().width(text, size)
    return size if used <= width else max(smallest, size * width / used)


def stamp_band(sheet: Sheet, x: float, width: float, issuer: Issuer, big: float, small: float) -> None:
    """«ANULADO» in large letters and the test environment's mark, in a box across the width."""
    found = stamps(issuer)
    if not found:
        return
    top = sheet.y
    sheet.y += 1.5
    for text in found:
        size = big if text == VOIDED else small
        sheet.paragraph(x, text, width, size, True, "C", 1.15)
    sheet.y += 1.0
    sheet.page.marks.append(Box(x, top, width, sheet.y - top, None, 0.6))
    sheet.y += 3


# ------------------------------------------------------------------------------------------------ A4

A4_W, A4_H, A4_MARGIN = 210.0, 297.0, 12.0
# Columns of the lines' table: (title, width, alignment); the description takes what is left. A factura shows the
# unit value without IGV and the unit price with it; a boleta, the unit price with IGV (what the customer paid).
A4_COLUMNS = [("Cant.", 16.0, "R"), ("Unidad", 20.0, "L"), ("Código", 16.0, "L"), ("Descripción", 0.0, "L"),
              ("V. unitario", 26.0, "R"), ("P. unitario", 22.0, "R"), ("Importe", 24.0, "R")]
A4_COLUMNS_WITH_TAXES = [("Cant.", 16.0, "R"), ("Unidad", 20.0, "L"), ("Código", 16.0, "L"),
                         ("Descripción", 0.0, "L"), ("P. unitario", 26.0, "R"), ("Importe", 24.0, "R")]


def title_box(sheet: Sheet, box_x: float, box_w: float, said: tuple[str, str, str]) -> None:
    """The A4 page's box at the top right: the issuer's RUC, the document's title and its serie-número; `sheet.y`
    ends under it."""
    ruc, title, serie_numero = said
    sheet.y = sheet.margin + 3
    sheet.text(box_x, f"R.U.C. {ruc}", 11, True, "C", box_w)
    sheet.y += 6
    for line in wrap(title, box_w - 4, 11, True):
        sheet.text(box_x, line, 11, True, "C", box_w)
        sheet.y += 5
    sheet.y += 1
    sheet.text(box_x, serie_numero, 12, True, "C", box_w)
    sheet.y += 7
    sheet.page.marks.append(Box(box_x, sheet.margin, box_w, sheet.y - sheet.margin, None, 0.5))


def a4(voucher: PrintedVoucher, issuer: Issuer) -> list[Page]:
    sheet = Sheet(A4_W, A4_H, A4_MARGIN)
    m = A4_MARGIN
    box_w = 66.0
    box_x = sheet.right - box_w
    text_x = m
    if issuer.logo:
        w, h = _logo_size(issuer, 40.0, 24.0)
        sheet.page.marks.append(Picture(m, m, w, h, issuer.logo))
        text_x = m + w + 4
    text_w = box_x - 4 - text_x
    sheet.paragraph(text_x, voucher.emisor_nombre, text_w, 12, True)
    if voucher.emisor_comercial and voucher.emisor_comercial != voucher.emisor_nombre:
        sheet.paragraph(text_x, voucher.emisor_comercial, text_w, 9.5)
    sheet.paragraph(text_x, voucher.emisor_direccion, text_w, 8.5)
    if voucher.emisor_lugar:
        sheet.paragraph(text_x, voucher.emisor_lugar, text_w, 8.5)
    issuer_bottom = sheet.y
    title_box(sheet, box_x, box_w, (voucher.emisor_ruc, voucher.title, voucher.serie_numero))
    logo_bottom = m + (_logo_size(issuer, 40.0, 24.0)[1] if issuer.logo else 0)
    sheet.y = max(issuer_bottom, sheet.y, logo_bottom) + 5
    stamp_band(sheet, m, sheet.right - m, issuer, 28, 11)
    # Customer, date, payment, note reference.
    label_w = 42.0
    for label, value in details(voucher):
        sheet.text(m, f"{label}:", 9, True)
        sheet.paragraph(m + label_w, value, sheet.right - m - label_w, 9)
    sheet.y += 3
    lines = printed_lines(voucher)
    _a4_lines(sheet, voucher, lines)
    _a4_totals(sheet, voucher, lines)
    _a4_footer(sheet, voucher)
    pages = sheet.finish(0)
    a4_page_footers(sheet, pages, issuer)
    return pages


def a4_page_footers(sheet: Sheet, pages: list[Page], issuer: Issuer) -> None:
    """«Página n de m» when there are several pages; the voucher's stamps on every page."""
    m = A4_MARGIN
    marked = " · ".join(stamps(issuer))
    for number, page in enumerate(pages, start=1):
        sheet.pages = [page]
        if len(pages) > 1:
            sheet.text(m, f"Página {number} de {len(pages)}", 7.5, False, "R", sheet.right - m,
                       baseline=A4_H - m / 2)
        if marked:
            sheet.text(m, marked, 7.5, True, baseline=A4_H - m / 2)


def _a4_columns(voucher: PrintedVoucher) -> list[tuple[str, float, str]]:
    return A4_COLUMNS_WITH_TAXES if with_taxes(voucher) else A4_COLUMNS


def _column_widths(width: float, columns: list[tuple[str, float, str]] = A4_COLUMNS) -> list[float]:
    fixed = sum(w for _, w, _ in columns)
    return [w or width - fixed for _, w, _ in columns]


def _a4_header_row(sheet: Sheet, columns: list[tuple[str, float, str]]) -> None:
    widths = _column_widths(sheet.right - sheet.margin, columns)
    sheet.page.marks.append(Box(sheet.margin, sheet.y, sheet.right - sheet.margin, 6, GREY))
    x = sheet.margin
    for (title, _, align), w in zip(columns, widths, strict=True):
        sheet.text(x + 1, title, 8, True, align, w - 2, baseline=sheet.y + 4.2)
        x += w
    sheet.y += 6


def _a4_cells(voucher: PrintedVoucher, line: PrintedLine) -> list[str]:
    """The line's cells but the unit and the description (wrapped in their columns)."""
    source = line.line
    if with_taxes(voucher):
        return [fmt.quantity(source.cantidad), "", source.codigo, "", line.unitario, fmt.number(line.importe)]
    precio = "0.00" if source.gratuito else fmt.number(source.precio_unitario)
    return [fmt.quantity(source.cantidad), "", source.codigo, "", line.unitario, precio, fmt.number(line.importe)]


def _a4_lines(sheet: Sheet, voucher: PrintedVoucher, lines: list[PrintedLine]) -> None:
    size, leading = 8.0, 8.0 * PT * 1.3
    columns = _a4_columns(voucher)
    widths = _column_widths(sheet.right - sheet.margin, columns)
    _a4_header_row(sheet, columns)
    for line in lines:
        description = wrap(line.line.descripcion, widths[3] - 2, size)
        notes = line_notes(line, voucher.moneda)
        unit = wrap(line.unidad, widths[1] - 2, size)
        height = (max(len(description) + len(notes), len(unit))) * leading + 1.6
        if sheet.ensure(height):
            _a4_header_row(sheet, columns)
        top = sheet.y + 0.8
        first = top + size * PT * 0.8
        x = sheet.margin
        for (_, _, align), w, cell in zip(columns, widths, _a4_cells(voucher, line), strict=True):
            if cell:
                sheet.text(x + 1, cell, _fitted_size(cell, w - 2, size), False, align, w - 2, baseline=first)
            x += w
        unit_x = sheet.margin + widths[0] + 1
        for index, text in enumerate(unit):
            sheet.text(unit_x, text, size, baseline=first + index * leading)
        desc_x = sheet.margin + sum(widths[:3]) + 1
        for index, text in enumerate(description):
            sheet.text(desc_x, text, size, baseline=first + index * leading)
        amount_x, amount_w = sheet.right - widths[-1] + 1, widths[-1] - 2
        for index, (text, amount) in enumerate(notes, start=len(description)):
            sheet.text(desc_x, text, size, baseline=first + index * leading)
            if amount:
                sheet.text(amount_x, amount, size, False, "R", amount_w, baseline=first + index * leading)
        sheet.y += height
        sheet.page.marks.append(Rule(sheet.margin, sheet.y, sheet.right, sheet.y, 0.1))


def _a4_totals(sheet: Sheet, voucher: PrintedVoucher, lines: list[PrintedLine]) -> None:
    """The amount in words across the page, then the totals on the right and the instalments on the left."""
    rows = totals(voucher, lines)
    extra = included(voucher)
    sheet.y += 2
    if voucher.leyenda:
        sheet.paragraph(sheet.margin, f"SON: {voucher.leyenda}", sheet.right - sheet.margin, 9, True)
    for notice in notices(voucher):
        sheet.paragraph(sheet.margin, notice, sheet.right - sheet.margin, 8.5)
    needed = max(len(rows) * 5.2 + len(extra) * 4.0 + (4.5 if extra else 0), _a4_cuotas_height(voucher)) + 4
    sheet.ensure(needed)
    sheet.y += 2
    top = sheet.y
    label_x, amount_w = sheet.right - 72, 34.0
    for label, amount, bold in rows:
        if bold:
            sheet.page.marks.append(Box(label_x - 2, sheet.y - 0.8, sheet.right - label_x + 2, 6.2, GREY))
        sheet.text(label_x, label, 9, bold)
        sheet.text(sheet.right - amount_w - 1, amount, 9, bold, "R", amount_w)
        sheet.y += 5.2
    if extra:
        sheet.y += 0.5
        sheet.text(label_x, "El importe total incluye:", 7.5)
        sheet.y += 4.0
        for label, amount in extra:
            sheet.text(label_x, label, 7.5)
            sheet.text(sheet.right - amount_w - 1, amount, 7.5, False, "R", amount_w)
            sheet.y += 4.0
    bottom = sheet.y
    sheet.y = top
    if voucher.forma_pago == CREDITO:
        pending = fmt.money(voucher.pendiente if voucher.pendiente is not None else voucher.total, voucher.moneda)
        sheet.text(sheet.margin, "Pago al crédito", 8.5, True)
        sheet.y += 4.5
        sheet.text(sheet.margin, f"Monto neto pendiente de pago: {pending}", 8.5)
        sheet.y += 5
        x = sheet.margin
        for title, w in (("Cuota", 24), ("Vencimiento", 28), ("Monto", 30)):
            sheet.text(x, title, 8, True, "R" if title == "Monto" else "L", w - 2)
            x += w
        sheet.y += 4.2
        for name, due, amount in cuotas(voucher):
            sheet.text(sheet.margin, name, 8)
            sheet.text(sheet.margin + 24, due, 8)
            sheet.text(sheet.margin + 52, amount, 8, False, "R", 28)
            sheet.y += 4.2
    sheet.y = max(sheet.y, bottom) + 4


def _a4_cuotas_height(voucher: PrintedVoucher) -> float:
    return (13.7 + 4.2 * len(voucher.cuotas)) if voucher.forma_pago == CREDITO else 0.0


QR_SIDE_A4 = 30.0
QR_SIDE_TICKET = 32.0


def qr_mark(x: float, y: float, side: float, text: str) -> Qr:
    rows = qr_runs(text)
    return Qr(x, y, side / len(rows), rows)


def a4_qr_footer(sheet: Sheet, qr_text: str) -> tuple[float, float]:
    """Under a rule, the A4 page's QR of `qr_text` at the left; (where the text beside it starts, the QR's bottom
    with its white border); `sheet.y` is left at the text's first line."""
    code = qr_mark(0, 0, QR_SIDE_A4, qr_text)
    quiet = 4 * code.module  # four modules of white around the code, as readers need
    sheet.ensure(QR_SIDE_A4 + 2 * quiet)
    sheet.rule(width=0.3)
    top = sheet.y + quiet
    sheet.page.marks.append(Qr(sheet.margin + quiet, top, code.module, code.rows))
    sheet.y = top + 2
    return sheet.margin + QR_SIDE_A4 + 2 * quiet + 2, top + QR_SIDE_A4 + quiet


def _a4_footer(sheet: Sheet, voucher: PrintedVoucher) -> None:
    x, bottom = a4_qr_footer(sheet, voucher.qr_text())
    width = sheet.right - x
    sheet.paragraph(x, legend(voucher), width, 9.5, True)
    sheet.y += 1
    sheet.paragraph(x, f"Código hash: {voucher.digest_value or '-'}", width, 9)
    sheet.y += 1
    sheet.paragraph(x, check_text(), width, 8)
    sheet.y = max(sheet.y, bottom)


# ------------------------------------------------------------------------------------------------ ticket

TICKET_W, TICKET_MARGIN = 80.0, 4.0  # 72 mm printable on an 80 mm roll


def ticket(voucher: PrintedVoucher, issuer: Issuer) -> list[Page]:
    sheet = Sheet(TICKET_W, None, TICKET_MARGIN)
    m, width = TICKET_MARGIN, TICKET_W - 2 * TICKET_MARGIN
    if issuer.logo:
        w, h = _logo_size(issuer, 40.0, 20.0)
        sheet.page.marks.append(Picture(m + (width - w) / 2, sheet.y, w, h, issuer.logo))
        sheet.y += h + 2
    sheet.paragraph(m, voucher.emisor_nombre, width, 10, True, "C")
    if voucher.emisor_comercial and voucher.emisor_comercial != voucher.emisor_nombre:
        sheet.paragraph(m, voucher.emisor_comercial, width, 8.5, False, "C")
    sheet.paragraph(m, f"R.U.C. {voucher.emisor_ruc}", width, 9, True, "C")
    sheet.paragraph(m, voucher.emisor_direccion, width, 7.5, False, "C")
    if voucher.emisor_lugar:
        sheet.paragraph(m, voucher.emisor_lugar, width, 7.5, False, "C")
    sheet.y += 1.5
    sheet.rule()
    sheet.y += 1.5
    sheet.paragraph(m, voucher.title, width, 9.5, True, "C")
    sheet.paragraph(m, voucher.serie_numero, width, 10, True, "C")
    sheet.y += 1
    sheet.rule()
    sheet.y += 1.5
    stamp_band(sheet, m, width, issuer, 18, 8)
    for label, value in details(voucher):
        sheet.paragraph(m, f"{label}: {value}", width, 7.5)
    sheet.y += 1
    sheet.rule()
    sheet.y += 1.5
    lines = printed_lines(voucher)
    _ticket_lines(sheet, voucher, lines, width)
    sheet.y += 0.5
    sheet.rule()
    sheet.y += 1.5
    _ticket_totals(sheet, voucher, lines, width)
    sheet.y += 2
    code = qr_mark(0, 0, QR_SIDE_TICKET, voucher.qr_text())
    quiet = 4 * code.module
    sheet.y += quiet
    sheet.page.marks.append(Qr(m + (width - QR_SIDE_TICKET) / 2, sheet.y, code.module, code.rows))
    sheet.y += QR_SIDE_TICKET + quiet
    sheet.paragraph(m, legend(voucher), width, 7.5, True, "C")
    sheet.paragraph(m, f"Código hash: {voucher.digest_value or '-'}", width, 7, False, "C")
    sheet.paragraph(m, check_text(), width, 6.5, False, "C")
    return sheet.finish(TICKET_MARGIN)


def _ticket_lines(sheet: Sheet, voucher: PrintedVoucher, lines: list[PrintedLine], width: float) -> None:
    """Each line: its description, then «quantity unit x unit price» and its amount; its notes under it."""
    m, size = TICKET_MARGIN, 7.5
    step = size * PT * 1.35
    for line in lines:
        sheet.paragraph(m, line.line.descripcion, width, size)
        amount = fmt.number(line.importe)
        left = f"{fmt.quantity(line.line.cantidad)} {line.unidad} x {line.unitario}"
        room = width - metrics().width(amount, size) - 2
        parts = wrap(left, room, size)
        for part in parts[:-1]:
            sheet.text(m, part, size)
            sheet.y += step
        sheet.text(m, parts[-1], size)
        sheet.text(m, amount, size, False, "R", width)
        sheet.y += step
        for text, value in line_notes(line, voucher.moneda):
            for index, part in enumerate(wrap(text, width - 3 - (16 if value else 0), size)):
                sheet.text(m + 3, part, size)
                if value and index == 0:
                    sheet.text(m, value, size, False, "R", width)
                sheet.y += step


def _ticket_totals(sheet: Sheet, voucher: PrintedVoucher, lines: list[PrintedLine], width: float) -> None:
    m = TICKET_MARGIN
    for label, amount, bold in totals(voucher, lines):
        sheet.text(m + 14, f"{label}:", 8 if not bold else 9, bold)
        sheet.text(m, amount, 8 if not bold else 9, bold, "R", width)
        sheet.y += 4.2 if not bold else 4.8
    extra = included(voucher)
    if extra:
        sheet.text(m + 14, "El importe total incluye:", 6.5)
        sheet.y += 3.4
        for label, amount in extra:
            sheet.text(m + 14, f"{label}:", 6.5)
            sheet.text(m, amount, 6.5, False, "R", width)
            sheet.y += 3.4
    sheet.y += 1
    if voucher.leyenda:
        sheet.paragraph(m, f"SON: {voucher.leyenda}", width, 7.5, True)
    for notice in notices(voucher):
        sheet.paragraph(m, notice, width, 7)
    if voucher.forma_pago == CREDITO:
        sheet.y += 1
        pending = fmt.money(voucher.pendiente if voucher.pendiente is not None else voucher.total, voucher.moneda)
        sheet.paragraph(m, f"Pago al crédito. Pendiente de pago: {pending}", width, 7.5, True)
        for name, due, amount in cuotas(voucher):
            sheet.text(m, f"{name}  vence {due}", 7.5)
            sheet.text(m, amount, 7.5, False, "R", width)
            sheet.y += 7.5 * PT * 1.35


def lay_out(voucher: PrintedVoucher, formato: str = "a4", issuer: Issuer | None = None) -> list[Page]:
    """The voucher's pages in `formato` («a4» or «ticket»)."""
    issuer = issuer or Issuer()
    if formato == "ticket":
        return ticket(voucher, issuer)
    return a4(voucher, issuer)


def texts(pages: list[Page]) -> Iterator[str]:
    """Every text mark, in order (tests and the preview's accessible description)."""
    for page in pages:
        for mark in page.marks:
            if isinstance(mark, Text):
                yield mark.text
