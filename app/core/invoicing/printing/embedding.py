"""Yupana Sans in every PDF without paying fpdf2's font work for every document.

fpdf2 parses a TrueType font for each document (`add_font`) and, when writing it, subsets it in place
and serialises the subset: ~40 ms a voucher, four times the whole budget (docs/pdf.md, «Velocidad»). Here
the font is parsed once per process and each document gets a light copy of it. Writing goes through
fpdf2's normal path, except that the subsetting of these shared fonts is done on a fresh copy of the
file, keyed by the glyph set and cached, with glyph ids retained (so the shared font's ids stay right),
and handed to the shared font's `save` on the same thread. Every document starts with the same common
glyphs (Spanish text, digits, punctuation), so vouchers in Spanish share one cached subset; a rarer
character adds a subset of its own (kept, bounded).
"""

from __future__ import annotations

import copy
import threading
from datetime import UTC, datetime
from functools import lru_cache
from io import BytesIO
from typing import Any

import fpdf.output
from fontTools import subset as ftsubset
from fontTools import ttLib
from fpdf import FPDF
from fpdf.fonts import SubsetMap, TTFFont
from fpdf.syntax import PDFContentStream

from app.core.invoicing.printing.fonts import FILE

FIXED_DATE = datetime(2024, 1, 1, tzinfo=UTC)
FAMILY = "yupanasans"
COMMON = ("".join(chr(code) for code in range(0x20, 0x7F)) + "ÁÉÍÓÚÜÑáéíóúüñ¿¡«»°ºª–—“”‘’•…€")
_SUBSETS_KEPT = 64

_pending = threading.local()  # id(shared font) → the subset bytes its next save() writes, per thread


class SharedFont(ttLib.TTFont):
    """A font parsed once and shared by every document; never changed after loading."""

    def __init__(self, path: Any) -> None:
        super().__init__(path, recalcTimestamp=False, lazy=False)
        with open(path, "rb") as handle:
            self.data = handle.read()
        self.getGlyphOrder()  # loaded now, not lazily by two threads at once
        self._subsets: dict[frozenset[str], bytes] = {}
        self._lock = threading.Lock()

    def subset_bytes(self, glyphs: frozenset[str]) -> bytes:
        with self._lock:
            found = self._subsets.get(glyphs)
        if found is not None:
            return found
        font = ttLib.TTFont(BytesIO(self.data), recalcTimestamp=False)
        options = ftsubset.Options(notdef_outline=True, recommended_glyphs=True, retain_gids=True)
        subsetter = ftsubset.Subsetter(options)
        subsetter.populate(glyphs=sorted(glyphs))
        subsetter.subset(font)
        out = BytesIO()
        font.save(out)
        data = out.getvalue()
        with self._lock:
            if len(self._subsets) >= _SUBSETS_KEPT:
                self._subsets.clear()
            self._subsets[glyphs] = data
        return data

    def save(self, file: Any, reorderTables: bool = True) -> None:  # noqa: N803 - fontTools' name
        data = _pending_subsets().pop(id(self), None)
        if data is None:
            super().save(file, reorderTables)
        else:
            file.write(data)


def _pending_subsets() -> dict[int, bytes]:
    """This thread's subsets made for a SharedFont and not yet written by its `save` (by the font's id)."""
    subsets: dict[int, bytes] = _pending.__dict__.setdefault("subsets", {})
    return subsets


class _Subsetter(ftsubset.Subsetter):
    """fpdf2's subsetter: for a SharedFont, the cached subset instead of changing the font in place."""

    def populate(self, glyphs: Any = (), **kwargs: Any) -> None:
        self.wanted = frozenset(glyphs)
        super().populate(glyphs=glyphs, **kwargs)

    def subset(self, font: Any) -> None:
        if isinstance(font, SharedFont):
            _pending_subsets()[id(font)] = font.subset_bytes(self.wanted)
        else:
            super().subset(font)


class _SubsetModule:
    """Stands for fontTools.subset inside fpdf.output (the only names it uses are Options and Subsetter)."""

    Subsetter = _Subsetter

    def __getattr__(self, name: str) -> Any:
        return getattr(ftsubset, name)


fpdf.output.ftsubset = _SubsetModule()
# fpdf2's knob for its zlib level (default 6): level 3 writes a voucher ~20 % faster for ~7 % more bytes.
PDFContentStream._COMPRESSION_LEVEL = 3


@lru_cache(maxsize=1)
def _prototype() -> tuple[TTFFont, SubsetMap]:
    """The parsed font, and its subset map with the common glyphs picked (copied for every document)."""
    pdf = FPDF()
    pdf.add_font(FAMILY, "", FILE)
    font = pdf.fonts[FAMILY]
    assert isinstance(font, TTFFont)  # added from a file just above
    font.ttfont = SharedFont(FILE)
    common = SubsetMap(font)
    for char in COMMON:
        common.pick(ord(char))
    common.pick.cache_clear()  # fpdf2's pick cache is per class: do not keep the prototype in it
    return font, common


def add_font(pdf: FPDF) -> str:
    """Give `pdf` Yupana Sans; returns its family name for set_font."""
    prototype, common = _prototype()
    font = copy.copy(prototype)  # shares the parsed tables and widths (never changed)
    font.i = len(pdf.fonts) + 1
    font.missing_glyphs = []
    font.biggest_size_pt = 0
    subset = copy.copy(common)  # the common glyphs already numbered; the containers are the document's own
    subset.font = font
    subset._char_id_per_glyph = dict(common._char_id_per_glyph)  # noqa: SLF001 - fpdf2 has no copy of its own
    subset._reserved = list(common._reserved)  # noqa: SLF001
    font.subset = subset
    pdf.fonts[prototype.fontkey] = font
    return FAMILY
