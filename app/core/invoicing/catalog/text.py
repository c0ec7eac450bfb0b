"""Text as the catalogue's search sees it: lower case, accents folded («Pérez» → «perez»), split into words.

The same folding as SQLite FTS5's `unicode61 remove_diacritics 2` tokenizer, which indexes the names and
descriptions: a word is a run of letters and digits, anything else separates words.
"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[^\W_]+")  # letters and digits (the tokenizer treats «_» as a separator too)
# FTS5's tokenizer for the name and description indexes; prefix indexes of 1 to 3 characters keep the short
# prefixes a person types first as fast as longer ones.
FTS_TOKENIZE = "unicode61 remove_diacritics 2"
FTS_PREFIXES = "1 2 3"


def fold(text: str) -> str:
    """Lower case without accents: «Ñandú PÉREZ» → «nandu perez»."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


def words(text: str) -> list[str]:
    return _WORD.findall(fold(text))


def key(text: str) -> str:
    """The words of `text` joined by single spaces: equal for «José  Pérez» and «jose perez»."""
    return " ".join(words(text))


def prefix_query(text: str) -> str | None:
    """An FTS5 query matching rows with a word starting with each word typed (all of them), or None when
    nothing searchable was typed. Each word is quoted, so nothing typed is read as FTS5 syntax."""
    found = words(text)
    return " ".join(f'"{word}"*' for word in found) if found else None


def upper_bound(prefix: str) -> str:
    """The smallest text above every text starting with `prefix`: `col >= prefix AND col < upper_bound(prefix)`
    is a prefix search an index answers."""
    return prefix + "\U0010ffff"
