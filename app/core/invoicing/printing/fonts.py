"""The printed voucher's fonts: Yupana Sans (DejaVu Sans cut to the Latin, Greek and Cyrillic alphabets,
app/data/fonts) and two fallback fonts from Debian for what it lacks (docs/pdf.md, «Fuentes»).

The layout measures text with these widths, the PDF embeds the same fonts, and the windows paint the
preview with Yupana Sans, so the three agree. One face per font: bold is the same glyphs filled and stroked
(the PDF's text rendering mode 2, a painter path in the windows), so it keeps the regular advances; a second
embedded face would cost fpdf2 as much again per document.

Text is made printable first (`printable`): normalised to NFC (a letter typed as a letter and a combining accent
becomes the accented letter), then each character is printed by the first font that has it: Yupana Sans, else
Droid Sans Fallback (Chinese and Japanese), else Symbola (emoji up to Unicode 9 and symbols). The fallback fonts are
read only when a text needs them and embedded only in a document that uses them. A character none of them has
becomes its compatibility form («ﬁ» → «fi») or its decomposition (a letter and its combining mark) when the fonts
have those, else the visible mark □ (never a silent «?»); `noting_unprintable` collects those characters so the
printed voucher reports them (`unprintable_warning`). Right-to-left and shaped scripts (Arabic, Hebrew, Devanagari…)
are outside the fonts on purpose: printed letter by letter they would read wrong.
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from app.core.platform.paths import package_data

FONT_DIR = package_data("fonts")
FILE = FONT_DIR / "YupanaSans.ttf"
FAMILY = "Yupana Sans"
PT = 25.4 / 72  # one point in millimetres
BOLD_STROKE = 0.035  # the outline added to bold text, in em: DejaVu Sans Bold's stems are about that thicker
MISSING = "\u25a1"  # □: printed for a character no font has (Yupana Sans has it)
MAIN = 0  # the face index of Yupana Sans; fallbacks are 1, 2… in FALLBACKS' order


@dataclass(frozen=True)
class Fallback:
    """A font from a Debian package, read from the bundle's app/data/fonts or else where Debian installs it."""

    name: str
    file: str
    package: str  # the Debian package that installs it (.ci/run installs it for the tests)
    folder: str  # where the package puts `file`
    licence: str
    ranges: tuple[tuple[int, int], ...]  # the code points it is used for (first, last)

    def path(self) -> Path | None:
        for candidate in (FONT_DIR / self.file, Path(self.folder) / self.file):
            if candidate.is_file():
                return candidate
        return None

    def serves(self, code: int) -> bool:
        return any(first <= code <= last for first, last in self.ranges)


CJK = ((0x2E80, 0x2FFF), (0x3000, 0x9FFF), (0xF900, 0xFAFF), (0xFE30, 0xFE4F), (0xFF00, 0xFFEF),
       (0x20000, 0x2FFFF))
SYMBOLS = ((0x2000, 0x2BFF), (0x2E00, 0x2E7F), (0x1D000, 0x1D7FF), (0x1F000, 0x1FAFF))
FALLBACKS = (
    Fallback("Droid Sans Fallback", "DroidSansFallbackFull.ttf", "fonts-droid-fallback",
             "/usr/share/fonts/truetype/droid", "Apache-2.0", CJK),
    Fallback("Symbola", "Symbola_hint.ttf", "fonts-symbola", "/usr/share/fonts/truetype/ancient-scripts",
             "Symbola's licence: free for any use, may be redistributed", SYMBOLS),
)


@dataclass(frozen=True)
class Metrics:
    widths: dict[str, float]  # character → advance in em
    ascent: float  # in em
    chars: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "chars", frozenset(self.widths))

    def advance(self, char: str) -> float:
        """One character's advance in em (a fallback font's for a character Yupana Sans lacks)."""
        found = self.widths.get(char)
        return found if found is not None else _fallback_width(char)

    def width(self, text: str, size: float) -> float:
        """The text's width in millimetres at `size` points (no kerning: the PDF places glyphs one by one); a
        character of a fallback font has that font's advance."""
        try:
            total = sum(map(self.widths.__getitem__, text))
        except KeyError:
            total = sum(self.widths[char] if char in self.widths else _fallback_width(char) for char in text)
        return total * size * PT


def metrics(bold: bool = False) -> Metrics:
    """Yupana Sans' metrics (bold text has the same advances)."""
    return _metrics()


def _read_metrics(path: Path) -> Metrics:
    from fontTools import ttLib  # here, not at import: the engine starts without it

    font = ttLib.TTFont(path, lazy=True)
    units = font["head"].unitsPerEm
    advances = font["hmtx"].metrics
    widths = {chr(code): advances[name][0] / units for code, name in font.getBestCmap().items()}
    return Metrics(widths, font["hhea"].ascent / units)


@lru_cache(maxsize=1)
def _metrics() -> Metrics:
    return _read_metrics(FILE)


_fallback_lock = threading.Lock()
_fallbacks: dict[int, Metrics | None] = {}  # face index → its metrics, None when the file is not installed


def fallback_metrics(face: int) -> Metrics | None:
    """The metrics of fallback `face` (1, 2…), read the first time a text needs it; None when it is absent."""
    if face in _fallbacks:
        return _fallbacks[face]
    with _fallback_lock:
        if face not in _fallbacks:
            path = FALLBACKS[face - 1].path()
            _fallbacks[face] = None if path is None else _read_metrics(path)
        return _fallbacks[face]


def fallback_path(face: int) -> Path | None:
    return FALLBACKS[face - 1].path()


@lru_cache(maxsize=8192)
def face_of(char: str) -> int | None:
    """The face that prints `char`: MAIN, a fallback's index, or None when no font has it."""
    if char in _metrics().widths:
        return MAIN
    code = ord(char)
    for face, fallback in enumerate(FALLBACKS, start=1):
        if fallback.serves(code):
            found = fallback_metrics(face)
            if found is not None and char in found.widths:
                return face
    return None


def _fallback_width(char: str) -> float:
    face = face_of(char)
    if face is None or face == MAIN:
        return _metrics().widths.get(char, 0.6)
    found = fallback_metrics(face)
    return found.widths[char] if found is not None else 0.6


def _ignorable(char: str) -> bool:
    """Invisible format characters (zero-width joiner, variation selectors, bidi marks…): nothing to print."""
    return unicodedata.category(char) == "Cf" or 0xFE00 <= ord(char) <= 0xFE0F or 0xE0100 <= ord(char) <= 0xE01EF


@lru_cache(maxsize=8192)
def _replacement(char: str) -> str | None:
    """What prints `char`, which Yupana Sans lacks: itself when a fallback has it, its compatibility form or its
    decomposition when the fonts have those, "" for an invisible format character; None: nothing does."""
    if char in "\t\n\r":
        return " "
    if _ignorable(char):
        return ""
    if face_of(char) is not None:
        return char
    for form in ("NFKC", "NFD"):  # «ﬁ» → «fi», «①» → «1»; a letter + its combining mark
        other = unicodedata.normalize(form, char)
        if other != char and all(face_of(part) is not None for part in other):
            return other
    return None


_unprintable: ContextVar[set[str] | None] = ContextVar("unprintable", default=None)


@contextmanager
def noting_unprintable() -> Iterator[set[str]]:
    """Collect, while the block runs (in this thread or task), the characters `printable` marked with □."""
    found: set[str] = set()
    token = _unprintable.set(found)
    try:
        yield found
    finally:
        _unprintable.reset(token)


def printable(text: str) -> str:
    """`text` as it prints: NFC, with only characters some font has; the others become □ and are noted."""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    if _metrics().chars.issuperset(text):
        return text
    parts = []
    for char in text:
        replacement = char if char in _metrics().widths else _replacement(char)
        if replacement is None:
            parts.append(MISSING)
            noted = _unprintable.get()
            if noted is not None:
                noted.add(char)
        else:
            parts.append(replacement)
    return "".join(parts)


def runs(text: str) -> list[tuple[int, str]]:
    """`text` (already printable) cut into runs of one face each: [(face, text)], in order."""
    if _metrics().chars.issuperset(text):
        return [(MAIN, text)]
    found: list[tuple[int, str]] = []
    start, current = 0, None
    for index, char in enumerate(text):
        face = face_of(char)
        face = MAIN if face is None else face
        if face != current:
            if current is not None:
                found.append((current, text[start:index]))
            start, current = index, face
    if current is not None:
        found.append((current, text[start:]))
    return found


def unprintable_warning(chars: Iterable[str]) -> str | None:
    """The printed voucher's warning about characters printed as □, in Spanish; None when there are none."""
    listed = sorted(set(chars))
    if not listed:
        return None
    shown = ", ".join(f"«{char}» (U+{ord(char):04X})" for char in listed[:8])
    more = f" y {len(listed) - 8} más" if len(listed) > 8 else ""
    count = "1 carácter" if len(listed) == 1 else f"{len(listed)} caracteres"
    return (f"La representación impresa no tiene letra para {count}, que se imprime{'n' if len(listed) > 1 else ''} "
            f"como {MISSING}: {shown}{more}.")
