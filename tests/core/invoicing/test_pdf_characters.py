"""Printing keeps every character (issue 31, item 3): text normalised to NFC, Chinese and Japanese from Droid Sans
Fallback, emoji up to Unicode 9 from Symbola, Greek and Cyrillic in Yupana Sans, fallback fonts embedded only when a
voucher uses them, anything else printed as □ and reported as a warning, and line wrapping linear in the text's
length. Read back with poppler's pdftotext and pdffonts."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.invoicing import printing
from app.core.invoicing.printing import layout
from app.core.invoicing.printing.fonts import metrics, printable
from tests.core.invoicing.test_pdf import issue
from tests.helpers.base import ROOT
from tests.helpers.voucher_matrix import factura, item

needs_poppler = pytest.mark.skipif(any(shutil.which(tool) is None for tool in ("pdftotext", "pdffonts")),
                                   reason="poppler-utils is installed by .ci/run")
DEBIAN_FONTS = (Path("/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"),
                Path("/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf"))
needs_fallback_fonts = pytest.mark.skipif(not all(path.is_file() for path in DEBIAN_FONTS),
                                          reason="fonts-droid-fallback and fonts-symbola are installed by .ci/run")

SPANISH = "Café con leche, ñandú y pingüino ¿algo más? ¡Sí!"
CHINESE = "炒饭 中文 饺子"
JAPANESE = "ラーメン 日本語 ひらがな カタカナ"
CYRILLIC = "Пельмени по-русски Щи"
GREEK = "Ελληνικός καφές"
EMOJI = "Emoji 😀 🤣 🥑 🦄 ☕ 👍 🍕"  # Unicode 6 to 9
LINES = (SPANISH, CHINESE, JAPANESE, CYRILLIC, GREEK, EMOJI)
MISSING = "\u25a1"  # □, printed for a character no font has


def pdf_text(content: bytes, tmp_path: Path) -> str:
    path = tmp_path / "printed.pdf"
    path.write_bytes(content)
    out = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, check=True).stdout.decode("utf-8")
    return " ".join(out.split())


def pdf_fonts(content: bytes, tmp_path: Path) -> str:
    path = tmp_path / "fonts.pdf"
    path.write_bytes(content)
    return subprocess.run(["pdffonts", str(path)], capture_output=True, check=True).stdout.decode("utf-8")


@needs_poppler
def test_a_decomposed_accent_prints_as_the_accented_letter(engine, certificado_id, tmp_path):
    """«Cafe» + U+0301, as some keyboards and Macs type it, prints «Café»; an accented letter outside Latin-1 keeps
    its accent («Nguyễn», typed as e + circumflex + tilde) and a letter with a mark that has no precomposed form
    keeps the mark (q + tilde), instead of losing it or becoming «?»."""
    description = "Cafe\u0301 de Puno para Nguye\u0302\u0303n, q\u0303"
    voucher_id = issue(engine, certificado_id, factura("F101", 1, [item(description, "1", "10")]))
    for formato in printing.FORMATS:
        pdf = engine.invoicing.pdf(voucher_id, formato)
        text = pdf_text(pdf.content, tmp_path)
        assert "Café de Puno para Nguyễn, q\u0303" in text, (formato, text)
        assert pdf.avisos == ()


@needs_poppler
@needs_fallback_fonts
def test_spanish_chinese_japanese_cyrillic_greek_and_emoji_all_read_back(engine, certificado_id, tmp_path):
    voucher_id = issue(engine, certificado_id, factura("F102", 1, [item(text, "1", "10") for text in LINES]))
    for formato in printing.FORMATS:
        pdf = engine.invoicing.pdf(voucher_id, formato)
        text = pdf_text(pdf.content, tmp_path)
        for line in LINES:
            assert line in text, (formato, line, text)
        assert "?" not in text.replace("¿algo más?", "") and MISSING not in text
        assert pdf.avisos == ()
        assert engine.invoicing.printed_pages(voucher_id, formato).avisos == ()


@needs_poppler
@needs_fallback_fonts
def test_fallback_fonts_are_embedded_only_in_a_voucher_that_uses_them(engine, certificado_id, tmp_path):
    latin = issue(engine, certificado_id, factura("F103", 1, [item(SPANISH + " " + CYRILLIC + " " + GREEK, "1",
                                                                   "10")]))
    chinese = issue(engine, certificado_id, factura("F103", 2, [item(CHINESE, "1", "10")]))
    emoji = issue(engine, certificado_id, factura("F103", 3, [item(EMOJI, "1", "10")]))
    embedded = {name: pdf_fonts(engine.invoicing.pdf(voucher_id).content, tmp_path)
                for name, voucher_id in (("latin", latin), ("chinese", chinese), ("emoji", emoji))}
    assert "YupanaSans" in embedded["latin"]
    assert "DroidSansFallback" not in embedded["latin"] and "Symbola" not in embedded["latin"]
    assert "DroidSansFallback" in embedded["chinese"] and "Symbola" not in embedded["chinese"]
    assert "Symbola" in embedded["emoji"] and "DroidSansFallback" not in embedded["emoji"]
    fonts = [line.split() for text in embedded.values() for line in text.splitlines()[2:]]
    assert len(fonts) == 5 and all(columns[-5:-2] == ["yes", "yes", "yes"] for columns in fonts)  # emb, sub, uni


@needs_poppler
def test_a_character_no_font_has_prints_a_visible_mark_and_a_warning(engine, certificado_id, tmp_path):
    """Arabic and Hebrew are written right to left with joined letters: printed letter by letter they would read
    wrong, so they are outside the fonts on purpose. They print as □ and the voucher says so; never a silent «?»."""
    voucher_id = issue(engine, certificado_id, factura("F104", 1, [item("Té شاي y leche חלב", "1", "10")]))
    pdf = engine.invoicing.pdf(voucher_id)
    text = pdf_text(pdf.content, tmp_path)
    assert f"Té {MISSING * 3} y leche {MISSING * 3}" in text and "?" not in text
    assert len(pdf.avisos) == 1
    warning = pdf.avisos[0]
    assert "6 caracteres" in warning and MISSING in warning
    assert all(f"«{char}» (U+{ord(char):04X})" in warning for char in "شايחלב")
    assert engine.invoicing.printed_pages(voucher_id, "ticket").avisos == pdf.avisos


def test_text_is_made_printable_without_losing_characters():
    assert printable("Ñandú «ñ» ¿Qué? ¡Sí! €") == "Ñandú «ñ» ¿Qué? ¡Sí! €"
    assert printable("n\u0303") == "ñ"  # decomposed input is composed first
    assert printable("Cafe\u0301") == "Café"
    assert printable("Ǆ ǅ Ș ț ệ") == "Ǆ ǅ Ș ț ệ"  # Latin Extended-B and Additional are in the cut
    assert printable("Привет Ωμέγα") == "Привет Ωμέγα"
    assert printable("a\u200db\ufe0f") == "ab"  # invisible format characters print nothing
    assert printable("a\tb\nc") == "a b c"
    assert printable("ש") == MISSING


def test_wrapping_cuts_a_long_word_and_keeps_every_character():
    text = "Descripción " + "x" * 500 + " fin"
    lines = layout.wrap(text, 60, 8)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(metrics().width(line, 8) <= 60.0001 for line in lines) and len(lines) > 3


def test_wrapping_an_unbroken_text_is_linear_in_its_length():
    """A 10,000-character unbroken text used to take minutes to wrap (each cut measured every shorter prefix). Run
    apart, so a regression fails by its deadline instead of holding the suite."""
    script = ("import time\n"
              "from app.core.invoicing.printing.layout import wrap\n"
              "times = []\n"
              "for n in (10_000, 20_000, 10_000, 20_000):\n"
              "    started = time.perf_counter()\n"
              "    lines = wrap('x' * n, 60, 8)\n"
              "    times.append(time.perf_counter() - started)\n"
              "    assert ''.join(lines) == 'x' * n\n"
              "print(min(times[0], times[2]), min(times[1], times[3]))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=ROOT, timeout=30)
    assert done.returncode == 0, done.stderr.decode()
    short, long = (float(value) for value in done.stdout.split())
    assert long < 1.0  # milliseconds in fact; minutes before


def test_the_windows_bundle_carries_every_fallback_font_with_its_licence():
    """The PyInstaller spec copies each fallback font the printer looks for (printing/fonts.py) into the bundle's
    app/data/fonts, where the printer looks first, with its Debian copyright file; .ci/run installs the packages."""
    import ast

    from app.core.invoicing.printing.fonts import FALLBACKS

    spec = (ROOT / "installer" / "yupana.spec").read_text(encoding="utf-8")
    listed = next(ast.literal_eval(node.value) for node in ast.walk(ast.parse(spec)) if isinstance(node, ast.Assign)
                  and any(isinstance(target, ast.Name) and target.id == "FALLBACK_FONTS" for target in node.targets))
    assert listed == [(font.package, f"{font.folder}/{font.file}") for font in FALLBACKS]
    assert '"app/data/fonts"' in spec and "/usr/share/doc/{package}/copyright" in spec
    apt = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert all(font.package in apt.partition("APT_PACKAGES=(")[2].partition(")")[0] for font in FALLBACKS)
    docs = (ROOT / "docs" / "pdf.md").read_text(encoding="utf-8")
    assert all(font.package in docs and font.licence.split(":")[0] in docs for font in FALLBACKS)


@needs_fallback_fonts
def test_threads_printing_chinese_and_emoji_at_once_give_the_same_files(engine, certificado_id):
    """The fallback fonts are parsed once and shared; their subsets are renumbered, the numbers handed to fpdf2 per
    thread (printing/embedding.py): workers rendering at once must each get their own, complete file."""
    from concurrent.futures import ThreadPoolExecutor

    xmls = []
    for number, lines in enumerate(([CHINESE, EMOJI], [JAPANESE], [EMOJI, CYRILLIC], [CHINESE + " 点心"]), start=1):
        voucher_id = issue(engine, certificado_id, factura("F105", number, [item(text, "1", "10") for text in lines]))
        xmls.append(engine.invoicing.voucher(voucher_id).xml_firmado)
    jobs = [(xml, formato) for xml in xmls for formato in printing.FORMATS] * 4
    alone = {job: printing.render_pdf(*job) for job in set(jobs)}
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda job: printing.render_pdf(*job), jobs))
    assert together == [alone[job] for job in jobs]
