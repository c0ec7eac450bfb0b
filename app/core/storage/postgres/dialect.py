"""The common dialect (app/core/storage/sql.py) as PostgreSQL reads it: the repositories' SQL is written once, in the
SQL SQLite and PostgreSQL share, and each statement is translated here the first time it runs (then kept).

| common dialect (SQLite) | PostgreSQL |
|---|---|
| `?` placeholders | `%s` (psycopg's), and a literal `%` doubled |
| the database's clock in epoch seconds (`sqlite.database.DB_NOW`) | `extract(epoch from clock_timestamp())` |
| `julianday('now')`, `julianday(column)` | the same Julian day from `clock_timestamp()` or the column's text |
| `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')` (the columns' «now» text) | the schema's `{now}` (schema.POSTGRES) |
| `INDEXED BY index` | nothing: the planner chooses |
| `INSERT INTO t …` of a table with a generated key (cursor.lastrowid) | `… RETURNING` that key |

What cannot be said in both (FTS5's MATCH, group_concat over an ordered subquery) is written in the PostgreSQL
repository's own method instead.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from app.core.storage import schema
from app.core.storage.sqlite.database import DB_NOW

EPOCH_NOW = "(extract(epoch from clock_timestamp())::double precision)"
_JULIAN = "({} / 86400.0 + 2440587.5)"
_NOW_TEXT = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
_JULIANDAY = re.compile(r"julianday\(\s*([A-Za-z_][A-Za-z_0-9.]*|'now')\s*\)")
_INDEXED_BY = re.compile(r"\s+INDEXED BY\s+\w+", re.I)
_INSERT_INTO = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)", re.I)
_WRITTEN = re.compile(r"^\s*(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)", re.I)


def _generated_keys() -> dict[str, str]:
    """Each table's generated key column (`{id}` or `{serial}` in the schema's description)."""
    keys = {}
    for table in schema.TABLES:
        for line in table.body.splitlines():
            words = line.split()
            if len(words) == 2 and words[1] in ("{id}", "{serial}"):
                keys[table.name] = words[0]
    return keys


_KEYS = _generated_keys()


@dataclass(frozen=True)
class Statement:
    text: str  # psycopg's SQL
    returns_key: bool  # a RETURNING of the generated key was added (the cursor's lastrowid)
    written: str | None = None  # the table an INSERT, UPDATE or DELETE writes (the cache watch: database.py)


def _julian(found: re.Match[str]) -> str:
    what = found.group(1)
    seconds = EPOCH_NOW if what == "'now'" else f"(extract(epoch from CAST({what} AS timestamptz))::double precision)"
    return _JULIAN.format(seconds)


def _placeholders(sql: str) -> str:
    """`?` outside quotes becomes `%s`; every `%` is doubled (psycopg reads `%` everywhere in a statement)."""
    out, quote = [], ""
    for char in sql:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "?":
            out.append("%s")
            continue
        out.append("%%" if char == "%" else char)
    return "".join(out)


@functools.lru_cache(maxsize=2048)
def translate(sql: str) -> Statement:
    text = sql.replace(DB_NOW, EPOCH_NOW).replace(_NOW_TEXT, schema.POSTGRES.tokens["now"])
    text = _INDEXED_BY.sub("", _JULIANDAY.sub(_julian, text))
    returns_key = False
    inserted = _INSERT_INTO.match(text)
    if inserted and inserted.group(1) in _KEYS and not re.search(r"\bRETURNING\b", text, re.I):
        text = f"{text.rstrip().rstrip(';')} RETURNING {_KEYS[inserted.group(1)]}"
        returns_key = True
    written = _WRITTEN.match(text)
    return Statement(_placeholders(text), returns_key, written.group(1).lower() if written else None)
