"""Write app/data/fonts/YupanaSans.ttf: DejaVu Sans (Debian's fonts-dejavu-core) cut to the characters
a Peruvian voucher needs, under its own family name.

Why a cut: fpdf2 parses and subsets the embedded font for every PDF; the whole DejaVu Sans (6,000 glyphs)
costs ~40 ms a document, the cut (~1,600 glyphs) a few. Only the regular face: every embedded font costs
~4 ms a PDF in fpdf2, so bold is drawn as the regular glyphs stroked (docs/pdf.md). Why a new family name: the DejaVu (Bitstream Vera)
licence allows modified fonts under a name without «Bitstream» or «Vera», and the windows load it
beside a system DejaVu Sans without the two being confused. Run again after changing CHARACTERS:

    python installer/make_fonts.py [/usr/share/fonts/truetype/dejavu]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fontTools import subset, ttLib

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "app" / "data" / "fonts"
SOURCES = {"YupanaSans.ttf": ("DejaVuSans.ttf", "Regular")}
FAMILY = "Yupana Sans"

# Basic Latin, Latin-1, Latin Extended-A and -B, spacing modifiers (ʼ of Quechua and Aymara), combining
# diacritical marks (a letter with an accent that has no precomposed form prints as the letter and the mark: the
# marks have no advance), Greek, Cyrillic and its supplement, Latin Extended Additional (Vietnamese), general
# punctuation («», –, —, “”, •, …), currency signs, letterlike symbols (№, ™), a few arrows and mathematical signs,
# squares and bullets (□ marks a character no font has, docs/pdf.md), and the replacement character. Chinese,
# Japanese and emoji come from fallback fonts (app.core.invoicing.printing.fonts), not from this cut.
RANGES = [(0x20, 0x7E), (0xA0, 0x24F), (0x2B0, 0x2FF), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x52F),
          (0x1E00, 0x1EFF), (0x2010, 0x2044), (0x20A0, 0x20BF), (0x2100, 0x214F), (0x2190, 0x2195),
          (0x2212, 0x2215), (0x2248, 0x2248), (0x2260, 0x2265), (0x25A0, 0x25CF), (0xFFFD, 0xFFFD)]
CHARACTERS = {code for start, end in RANGES for code in range(start, end + 1)}


def cut(source: Path, target: Path, style: str) -> None:
    font = ttLib.TTFont(source, recalcTimestamp=False)  # the same source gives the same file
    options = subset.Options()
    options.layout_features = []  # no shaping: fpdf2 places glyphs one by one
    options.drop_tables += ["GSUB", "GPOS", "GDEF", "hdmx", "FFTM", "kern", "MATH"]
    options.hinting = False  # screen hinting: a third of the bytes, of no use in a PDF or on paper
    options.notdef_outline = True
    options.recommended_glyphs = True
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14]  # keep the copyright and licence records
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=CHARACTERS)
    subsetter.subset(font)
    names = font["name"]
    full = FAMILY if style == "Regular" else f"{FAMILY} {style}"
    for record in list(names.names):
        if record.nameID == 1:
            names.setName(FAMILY, 1, record.platformID, record.platEncID, record.langID)
        elif record.nameID == 3:
            names.setName(f"{full}; subset of DejaVu Sans", 3, record.platformID, record.platEncID, record.langID)
        elif record.nameID == 4:
            names.setName(full, 4, record.platformID, record.platEncID, record.langID)
        elif record.nameID == 6:
            names.setName(full.replace(" ", ""), 6, record.platformID, record.platEncID, record.langID)
    font.save(target)


def main() -> int:
    source_dir = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/fonts/truetype/dejavu")
    TARGET.mkdir(parents=True, exist_ok=True)
    for name, (source, style) in SOURCES.items():
        cut(source_dir / source, TARGET / name, style)
        print(TARGET / name, (TARGET / name).stat().st_size, "bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
