"""Pages of marks (app.core.printing.layout) written as a PDF with fpdf2, Yupana Sans embedded."""

from __future__ import annotations

import io

from fpdf import FPDF

from . import embedding
from .layout import Box, Page, Picture, Qr, Rule, Text

TITLE = "Representación impresa"


def write(pages: list[Page], title: str = TITLE) -> bytes:
    """The PDF of `pages` (every page keeps its own size: the ticket is as long as its content)."""
    first = pages[0]
    pdf = FPDF(unit="mm", format=(first.width, first.height))
    pdf.set_auto_page_break(False)
    pdf.set_margins(0, 0, 0)
    pdf.set_creator("Yupana")
    pdf.set_title(title)
    pdf.set_creation_date(embedding.FIXED_DATE)  # equal vouchers give equal files
    regular, bold = embedding.add_fonts(pdf)
    for page in pages:
        pdf.add_page(format=(page.width, page.height))
        current: tuple[str, float] | None = None
        for mark in page.marks:
            kind = type(mark)
            if kind is Text:
                font = (bold if mark.bold else regular, mark.size)
                if font != current:
                    pdf.set_font(font[0], "", mark.size)
                    current = font
                pdf.text(mark.x, mark.y, mark.text)
            elif kind is Rule:
                pdf.set_line_width(mark.width)
                pdf.line(mark.x1, mark.y1, mark.x2, mark.y2)
            elif kind is Box:
                if mark.fill is None:
                    pdf.set_line_width(mark.line_width)
                    pdf.rect(mark.x, mark.y, mark.w, mark.h, style="D")
                else:
                    pdf.set_fill_color(mark.fill)
                    pdf.rect(mark.x, mark.y, mark.w, mark.h, style="F")
                    pdf.set_fill_color(0)
            elif kind is Qr:
                _qr(pdf, mark)
            elif kind is Picture:
                pdf.image(io.BytesIO(mark.data), mark.x, mark.y, mark.w, mark.h)
    return bytes(pdf.output())


def _qr(pdf: FPDF, mark: Qr) -> None:
    """The code as one filled path of rectangles, one per dark run: ~600 `rect` calls would cost more than the
    rest of the page. Written in PDF user space (points, origin bottom left) through fpdf2's content stream."""
    pdf.set_fill_color(0)
    k = pdf.k
    top = pdf.h * k  # the page's height in points
    size = mark.module * k
    x0, y0 = mark.x * k, top - mark.y * k
    parts = []
    for row, runs in enumerate(mark.rows):
        y = y0 - (row + 1) * size
        parts.extend(f"{x0 + column * size:.3f} {y:.3f} {length * size:.3f} {size:.3f} re"
                     for column, length in runs)
    pdf._out(" ".join(parts) + " f")  # noqa: SLF001 - fpdf2 has no public call for a raw path
