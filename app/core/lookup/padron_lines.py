"""The padrón's line checks, the costly part of an import, in a module light enough to start fast in
the worker processes (it imports nothing of the engine)."""

from __future__ import annotations

from operator import itemgetter

FIELDS = 15
RUC_PREFIXES = {b"10", b"15", b"16", b"17", b"20"}
RUC_OF = itemgetter(slice(0, 11))


def _checked(lines: list[bytes]) -> list[bytes]:
    """The lines that are whole records with a valid RUC (11 digits, known prefix, módulo-11 digit)."""
    # One comprehension, no function calls per line: this is the import's hot loop.
    return [
        line for line in lines
        if line.count(b"|") == FIELDS and line[11:12] == b"|" and line[:11].isdigit() and line[:2] in RUC_PREFIXES
        and (11 - (line[0] * 5 + line[1] * 4 + line[2] * 3 + line[3] * 2 + line[4] * 7 + line[5] * 6 + line[6] * 5
                   + line[7] * 4 + line[8] * 3 + line[9] * 2 - 48 * 41) % 11) % 10 == line[10] - 48
    ]


def check_lines(raw: bytes) -> tuple[bytes, int, bool]:
    """The good lines of `raw` joined by newlines, how many were damaged, and whether the good ones
    are in strictly increasing RUC order. This is the costly part: pool workers run it."""
    if b"\r" in raw:
        raw = raw.replace(b"\r", b"")
    lines = raw.split(b"\n")
    lines.pop()  # raw ends with a newline
    good = _checked(lines)
    # C-level checks over the whole list: sorted as bytes, and no RUC twice.
    ordered = good == sorted(good) and len(set(map(RUC_OF, good))) == len(good)
    return b"\n".join(good), len(lines) - len(good), ordered
