"""Pages of marks (app.core.invoicing.printing.layout) written as a PDF with fpdf2, Yupana Sans embedded, and a
fallback font (printing/fonts.py) only in a document whose text uses it."""

from __future__ import annotations

import io
import threading

from fpdf import FPDF
from fpdf.enums import TextMode

from app.core.invoicing.printing import embedding, fonts
from app.core.invoicing.printing.fonts import BOLD_STROKE, FILE, MAIN, PT
from app.core.invoicing.printing.layout import Box, Page, Picture, Qr, Rule, Text

TITLE = "Representación impresa"


# Documents that use a fallback font are written one at a time: the fallback fonts' subsets are renumbered and the
# numbers reach fpdf2 through the shared font (printing/embedding.py), which two threads at once mixed up now and then
# (tests/core/invoicing/test_pdf_characters.py, threads). They are rare; Spanish-only documents never wait here.
_FALLBACK_DOCUMENTS = threading.Lock()


def write(pages: list[Page], title: str = TITLE, shared_fonts: bool = True) -> bytes:
    """The PDF of `pages` (every page keeps its own size: the ticket is as long as its content).
    `shared_fonts=False`: fpdf2's own font handling, parsed and subset per document (the benchmark's baseline)."""
    known = fonts.metrics().chars
    if all(known.issuperset(mark.text) for page in pages for mark in page.marks if type(mark) is Text):
        return _write(pages, title, shared_fonts)
    with _FALLBACK_DOCUMENTS:
        return _write(pages, title, shared_fonts)


def _write(pages: list[Page], title: str, shared_fonts: bool) -> bytes:
    first = pages[0]
    pdf = FPDF(unit="mm", format=(first.width, first.height))
    pdf.set_auto_page_break(False)
    pdf.set_margins(0, 0, 0)
    pdf.set_creator("Yupana")
    pdf.set_title(title)
    pdf.set_creation_date(embedding.FIXED_DATE)  # equal vouchers give equal files
    if shared_fonts:
        family = embedding.add_font(pdf)
    else:
        family = embedding.FAMILY
        pdf.add_font(family, "", FILE)
    faces = _Faces(pdf, family, shared_fonts)
    pdf.set_draw_color(0)
    for page in pages:
        pdf.add_page(format=(page.width, page.height))
        texts = []
        for mark in page.marks:
            kind = type(mark)
            if kind is Text:
                texts.append(mark)
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
        _texts(pdf, faces, texts)
    return bytes(pdf.output())


class _Faces:
    """The document's fonts: Yupana Sans from the start, a fallback font added the first time a text needs it."""

    def __init__(self, pdf: FPDF, family: str, shared: bool) -> None:
        self.pdf, self.shared = pdf, shared
        self.families = {MAIN: family}
        self.known = fonts.metrics().chars

    def family(self, face: int) -> str:
        found = self.families.get(face)
        if found is None:
            if self.shared:
                found = embedding.add_font(self.pdf, face)
            else:
                found = embedding.family_of(face)
                self.pdf.add_font(found, "", fonts.fallback_path(face))
            self.families[face] = found
        return found


def _texts(pdf: FPDF, faces: _Faces, texts: list[Text]) -> None:
    """The page's text, after its shapes (the grey boxes lie under their text): regular text, then bold text as
    the regular glyphs filled and stroked (fonts.BOLD_STROKE) in one saved graphics state, since the text
    rendering mode outlives a text object. fpdf2 writes the text's line width as it is, in points, not in
    set_line_width's mm. A page whose text has characters of a fallback font is written run by run, each run in
    its font (`_text`); the others, most pages, in Yupana Sans alone as before."""
    write = _plain_text if faces.known.issuperset("".join([mark.text for mark in texts])) else _text
    current = (faces.families[MAIN], 0.0)
    for mark in texts:
        if not mark.bold:
            current = write(pdf, faces, mark, current)
    bold = [mark for mark in texts if mark.bold]
    if not bold:
        return
    stroked_size = 0.0
    with pdf.local_context(text_mode=TextMode.FILL_STROKE):
        for mark in bold:
            if mark.size != stroked_size:
                pdf.set_line_width(mark.size * PT * BOLD_STROKE * pdf.k)
                stroked_size = mark.size
            current = write(pdf, faces, mark, current)


def _plain_text(pdf: FPDF, _faces: _Faces, mark: Text, current: tuple[str, float]) -> tuple[str, float]:
    """Write one text mark of a page in Yupana Sans alone; `current` is the (family, size) set, returned as left."""
    if mark.size != current[1]:
        current = (current[0], mark.size)
        pdf.set_font(current[0], "", mark.size)
    pdf.text(mark.x, mark.y, mark.text)
    return current


def _text(pdf: FPDF, faces: _Faces, mark: Text, current: tuple[str, float]) -> tuple[str, float]:
    """Write one text mark; `current` is the (family, size) set, returned as it is left."""
    if faces.known.issuperset(mark.text):
        parts = [(MAIN, mark.text)]
    else:
        parts = fonts.runs(mark.text)
    x = mark.x
    for face, part in parts:
        wanted = (faces.family(face), mark.size)
        if wanted != current:
            pdf.set_font(wanted[0], "", mark.size)
            current = wanted
        pdf.text(x, mark.y, part)
        if len(parts) > 1:
            x += fonts.metrics().width(part, mark.size)
    return current


def _qr(pdf: FPDF, mark: Qr) -> None:
    """The code as one filled path of rectangles, one per dark run: ~600 `rect` calls would cost more than the
    rest of the page. Written in PDF user space (points, origin bottom left) through fpdf2's content stream;
    each coordinate is formatted once per code, not once per rectangle."""
    pdf.set_fill_color(0)
    k = pdf.k
    size = mark.module * k
    count = len(mark.rows)
    x0, y0 = mark.x * k, (pdf.h - mark.y) * k  # pdf.h: the page's height in mm
    xs = [f"{x0 + column * size:.3f}" for column in range(count)]
    widths = [f"{length * size:.3f}" for length in range(count + 1)]
    height = f"{size:.3f}"
    parts: list[str] = []
    for row, runs in enumerate(mark.rows):
        tail = f" {y0 - (row + 1) * size:.3f} "
        parts.extend(f"{xs[column]}{tail}{widths[length]} {height} re" for column, length in runs)
    pdf._out(" ".join(parts) + " f")  # noqa: SLF001 - fpdf2 has no public call for a raw path
