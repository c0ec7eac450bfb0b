"""Text that a spreadsheet must show as text: the one rule for every file Yupana writes for Excel or LibreOffice.

A cell whose text begins with `=`, `+`, `-`, `@`, a tab or a carriage return is taken for a formula by a
spreadsheet (OWASP's «CSV injection»): a customer named `=HYPERLINK("http://…";"Ver")` becomes a live link when
the file is opened. In a CSV file such a value is written with a leading apostrophe, which spreadsheets show as text
and hide; the catalogue's import takes that apostrophe off again, so export → import gives back the same text. In an
.xlsx file the cell is written as a string (openpyxl's `quotePrefix`), never as a formula.

A value that already begins with apostrophes before such a character gets one more, so the import's one
apostrophe off always restores what was written (`'=x` ↔ `''=x`).
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
GUARD = "'"


def looks_like_formula(text: str) -> bool:
    """True when a spreadsheet would read `text` (after any apostrophes of an earlier guard) as a formula."""
    return text.lstrip(GUARD).startswith(FORMULA_STARTS)


def guarded(text: str) -> str:
    """`text` as a CSV cell a spreadsheet shows as text: a leading apostrophe when it could be read as a formula."""
    return GUARD + text if looks_like_formula(text) else text


def unguarded(text: str) -> str:
    """The text `guarded` was given: its one leading apostrophe taken off when it guards a formula's start."""
    if text.startswith(GUARD) and looks_like_formula(text[1:]):
        return text[1:]
    return text
