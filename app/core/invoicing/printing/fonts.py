"""The printed voucher's font: Yupana Sans (DejaVu Sans cut to a voucher's characters, app/data/fonts).

The layout measures text with these widths, the PDF embeds the same font, and the windows paint the
preview with it, so the three agree. One face only: bold is the same glyphs filled and stroked (the
PDF's text rendering mode 2, a painter path in the windows), so it keeps the regular advances; a second
embedded font would cost fpdf2 as much again per document. Text is made printable first: a character the font lacks becomes
its compatibility form or its unaccented letter when there is one, else «?» (never an empty box).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from app.core.platform.paths import package_data

FONT_DIR = package_data("fonts")
FILE = FONT_DIR / "YupanaSans.ttf"
FAMILY = "Yupana Sans"
PT = 25.4 / 72  # one point in millimetres
BOLD_STROKE = 0.035  # the outline added to bold text, in em: DejaVu Sans Bold's stems are about that thicker


@dataclass(frozen=True)
class Metrics:
    widths: dict[str, float]  # character → advance in em
    ascent: float  # in em

    def width(self, text: str, size: float) -> float:
        """The text's width in millimetres at `size` points (no kerning: the PDF places glyphs one by one)."""
        widths = self.widths
        return sum(widths.get(char, 0.6) for char in text) * size * PT


def metrics(bold: bool = False) -> Metrics:
    """The font's metrics (bold text has the same advances)."""
    return _metrics()


@lru_cache(maxsize=1)
def _metrics() -> Metrics:
    from fontTools import ttLib  # here, not at import: the engine starts without it

    font = ttLib.TTFont(FILE, lazy=True)
    units = font["head"].unitsPerEm
    advances = font["hmtx"].metrics
    widths = {chr(code): advances[name][0] / units for code, name in font.getBestCmap().items()}
    return Metrics(widths, font["hhea"].ascent / units)


@lru_cache(maxsize=4096)
def _printable_char(char: str) -> str:
    known = metrics(False).widths
    if char in known:
        return char
    if char in "\t\n\r":
        return " "
    compatible = unicodedata.normalize("NFKC", char)  # «ﬁ» → «fi», «Ǆ» → «DŽ»
    if all(c in known for c in compatible):
        return compatible
    base = "".join(c for c in unicodedata.normalize("NFKD", char) if c in known and not unicodedata.combining(c))
    return base or "?"


def printable(text: str) -> str:
    """`text` with only characters the font has (NFC first, so «ñ» written as n + tilde stays «ñ»)."""
    known = metrics(False).widths
    text = unicodedata.normalize("NFC", text)
    if all(char in known for char in text):
        return text
    return "".join(_printable_char(char) for char in text)
