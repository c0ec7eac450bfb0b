"""Opening a data folder's database: the engine's one way into storage."""

from __future__ import annotations

from pathlib import Path

from app.core.storage.sqlite.database import Storage
from app.core.storage.sqlite.migrations import SETS
from app.core.storage.sqlite.schema import adopt


def open_database(path: Path) -> Storage:
    """The data folder's database (SQLite in the data folder), its schema brought up to date: the history's pending
    steps run, then the folder is adopted as the described schema's version (app/core/storage/sqlite/schema.py)."""
    storage = Storage.open(path, SETS)
    adopt(storage)
    return storage
