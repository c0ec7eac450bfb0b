"""SQL helpers shared by the repositories of every engine (the common dialect: `?` placeholders)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

CHUNK = 500  # ids per IN (…) list: far below any engine's limit of parameters


def where_equal(where: list[str], params: list, columns: dict[str, object]) -> None:
    """Add `column = ?` to a WHERE clause's terms for each filter the caller was given (None and "" mean no filter)."""
    for column, value in columns.items():
        if value is not None and value != "":
            where.append(f"{column} = ?")
            params.append(value)


def table_names(db) -> set[str]:
    """The tables a SQLite database has now (a migration that reads another set's tables checks they exist yet)."""
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def in_chunks(ids: Iterable[int]) -> Iterator[tuple[list[int], str]]:
    """The ids in lists of at most CHUNK, each with its `?, ?, …` placeholders for an `IN (…)` list."""
    listed = list(ids)
    for start in range(0, len(listed), CHUNK):
        chunk = listed[start:start + CHUNK]
        yield chunk, ", ".join("?" * len(chunk))
