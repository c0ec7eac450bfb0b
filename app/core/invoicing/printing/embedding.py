"""Yupana Sans in every PDF without paying fpdf2's font work for every document.

fpdf2 parses a TrueType font for each document (`add_font`) and, when writing it, subsets it in place
and serialises the subset: ~40 ms a voucher, four times the whole budget (docs/pdf.md, «Velocidad»). Here
the font is parsed once per process and each document gets a light copy of it. Writing goes through
fpdf2's normal path, except that the subsetting of these shared fonts is done on a fresh copy of the
file, keyed by the glyph set and cached, with glyph ids retained (so the shared font's ids stay right),
and handed to the shared font's `save` on the same thread. Every document starts with the same common
glyphs (Spanish text, digits, punctuation), so vouchers in Spanish share one cached subset; a rarer
character adds a subset of its own (kept, bounded).

The fallback fonts (Droid Sans Fallback, Symbola: printing/fonts.py) are added to a document only when its text
uses them, parsed once per process the same way. They are large (Droid Sans Fallback has 49,000 glyphs), so their
subsets do not keep glyph ids (that would embed ~400 kB of empty entries and take three times as long): the subset's
own ids are handed to fpdf2 through the shared font's `getGlyphID`, on the same thread, between subsetting and
saving.
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

from app.core.invoicing.printing.fonts import FALLBACKS, FILE, MAIN, fallback_path

FIXED_DATE = datetime(2024, 1, 1, tzinfo=UTC)
FAMILY = "yupanasans"
COMMON = ("".join(chr(code) for code in range(0x20, 0x7F)) + "ÁÉÍÓÚÜÑáéíóúüñ¿¡«»°ºª–—“”‘’•…€")
_SUBSETS_KEPT = 64

_pending = threading.local()  # id(shared font) → the subset bytes its next save() writes, per thread


# A subset: its bytes, and for a subset that does not keep glyph ids, each glyph name's id in it.
Subset = tuple[bytes, dict[str, int] | None]


class SharedFont(ttLib.TTFont):
    """A font parsed once and shared by every document; never changed after loading. `retain_gids`: its subsets
    keep the font's glyph ids (Yupana Sans), else they are numbered anew (the large fallback fonts)."""

    def __init__(self, path: Any, retain_gids: bool = True) -> None:
        super().__init__(path, recalcTimestamp=False, lazy=False)
        with open(path, "rb") as handle:
            self.data = handle.read()
        self.getGlyphOrder()  # loaded now, not lazily by two threads at once
        self.retain_gids = retain_gids
        self._subsets: dict[frozenset[str], Subset] = {}
        self._lock = threading.Lock()

    def subset_bytes(self, glyphs: frozenset[str]) -> Subset:
        with self._lock:
            found = self._subsets.get(glyphs)
        if found is not None:
            return found
        font = ttLib.TTFont(BytesIO(self.data), recalcTimestamp=False)
        options = ftsubset.Options(notdef_outline=True, recommended_glyphs=True, retain_gids=self.retain_gids)
        options.drop_tables += ["GSUB", "GPOS", "GDEF", "hdmx", "FFTM", "kern", "MATH"]
        subsetter = ftsubset.Subsetter(options)
        subsetter.populate(glyphs=sorted(glyphs))
        subsetter.subset(font)
        ids = None if self.retain_gids else {name: gid for gid, name in enumerate(font.getGlyphOrder())}
        out = BytesIO()
        font.save(out)
        made: Subset = (out.getvalue(), ids)
        with self._lock:
            if len(self._subsets) >= _SUBSETS_KEPT:
                self._subsets.clear()
            self._subsets[glyphs] = made
        return made

    def getGlyphID(self, glyphName: str) -> int:  # noqa: N802, N803 - fontTools' names
        """The glyph's id in the subset this thread is writing (fallback fonts), else in the font."""
        pending = _pending_subsets().get(id(self))
        if pending is not None and pending[1] is not None:
            return pending[1][glyphName]
        return int(super().getGlyphID(glyphName))

    def save(self, file: Any, reorderTables: bool = True) -> None:  # noqa: N803 - fontTools' name
        pending = _pending_subsets().pop(id(self), None)
        if pending is None:
            super().save(file, reorderTables)
        else:
            file.write(pending[0])


def _pending_subsets() -> dict[int, Subset]:
    """This thread's subsets made for a SharedFont and not yet written by its `save` (by the font's id)."""
    subsets: dict[int, Subset] = _pending.__dict__.setdefault("subsets", {})
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


_prototypes_lock = threading.Lock()


@lru_cache(maxsize=len(FALLBACKS) + 1)
def _prototype(face: int = MAIN) -> tuple[TTFFont, SubsetMap]:
    """The parsed font of `face`, and its subset map with the common glyphs picked (copied for every document)."""
    path = FILE if face == MAIN else fallback_path(face)
    if path is None:
        raise FileNotFoundError(FALLBACKS[face - 1].file)
    family = family_of(face)
    with _prototypes_lock:  # fpdf2's glyph caches are shared by the class: one font parsed at a time
        pdf = FPDF()
        pdf.add_font(family, "", path)
        font = pdf.fonts[family]
        assert isinstance(font, TTFFont)  # added from a file just above
        font.ttfont = SharedFont(path, retain_gids=face == MAIN)
        common = SubsetMap(font)
        for char in COMMON if face == MAIN else "":
            common.pick(ord(char))
        common.pick.cache_clear()  # fpdf2's pick cache is per class: do not keep the prototype in it
    return font, common


def family_of(face: int) -> str:
    """The family name a face has in a PDF (set_font)."""
    return FAMILY if face == MAIN else f"yupanafallback{face}"


def add_font(pdf: FPDF, face: int = MAIN) -> str:
    """Give `pdf` Yupana Sans (or fallback `face`); returns its family name for set_font."""
    prototype, common = _prototype(face)
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
    return family_of(face)
