"""SQL helpers shared by the repositories of every engine (the common dialect: `?` placeholders)."""

from __future__ import annotations


def where_equal(where: list[str], params: list, columns: dict[str, object]) -> None:
    """Add `column = ?` to a WHERE clause's terms for each filter the caller was given (None and "" mean no filter)."""
    for column, value in columns.items():
        if value is not None and value != "":
            where.append(f"{column} = ?")
            params.append(value)


def table_names(db) -> set[str]:
    """The tables a SQLite database has now (a migration that reads another set's tables checks they exist yet)."""
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
