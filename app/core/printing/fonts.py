"""The printed voucher's font: Yupana Sans (DejaVu Sans cut to a voucher's characters, app/data/fonts).

The layout measures text with these widths, the PDF embeds the same font, and the windows paint the
preview with it, so the three agree. Text is made printable first: a character the font lacks becomes
its compatibility form or its unaccented letter when there is one, else «?» (never an empty box).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fontTools import ttLib

FONT_DIR = Path(__file__).resolve().parent.parent.parent / "data" / "fonts"
FILES = {False: FONT_DIR / "YupanaSans.ttf", True: FONT_DIR / "YupanaSans-Bold.ttf"}
FAMILY = "Yupana Sans"
PT = 25.4 / 72  # one point in millimetres


@dataclass(frozen=True)
class Metrics:
    widths: dict[str, float]  # character → advance in em
    ascent: float  # in em

    def width(self, text: str, size: float) -> float:
        """The text's width in millimetres at `size` points (no kerning: the PDF places glyphs one by one)."""
        widths = self.widths
        return sum(widths.get(char, 0.6) for char in text) * size * PT


@lru_cache(maxsize=2)
def metrics(bold: bool = False) -> Metrics:
    font = ttLib.TTFont(FILES[bold], lazy=True)
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
