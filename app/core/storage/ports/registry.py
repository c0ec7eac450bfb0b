"""Ports of the lookups' storage: the registry cache and SUNAT's padrón (the offline RUC register).

The registry cache keeps the providers' answers in the engine's database, per environment (RegistryCacheRepository).

The padrón has two parts:
- its register files: SUNAT's padrón reducido loaded into a file of its own under the data folder's `padron/`, written
  once by an import and read-only afterwards. They are local SQLite files on EVERY engine, a PostgreSQL one included
  (PadronFiles, implemented once in app/core/storage/sqlite/padron.py): the 1.5 GB bulk load never goes through the
  engine's database, and a lookup is one index seek in a local file;
- the pointer to the file in use (`padron_current`): one row of the engine's database, switched in one statement
  once an import is complete (PadronPointerRepository, one implementation per engine).

A register file holds the padrón's lines as they are in SUNAT's file (ISO-8859-1 bytes): blocks of consecutive lines
keyed by the RUC of their first line, and the rare lines out of RUC order one by one ("loose" lines).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple, Protocol


class CachedAnswer(NamedTuple):
    """A provider's answer as it was cached: the record's fields and when it was fetched (epoch seconds)."""

    record: dict[str, Any]
    fetched_at: float


class RegistryCacheRepository(Protocol):
    """The providers' answers by environment, kind ('ruc', 'ce', 'placa') and number; one answer per key."""

    def get(self, environment: str, kind: str, numero: str) -> CachedAnswer | None: ...

    def fetched_at(self, environment: str, kind: str, numero: str) -> float | None:
        """When the cached answer was fetched, or None without one (the record itself is not read)."""
        ...

    def put(self, environment: str, kind: str, numero: str, record: dict[str, Any], fetched_at: float) -> None:
        """Store the answer, replacing the one cached before for the same key."""
        ...


class PadronPointerRepository(Protocol):
    """The `padron_current` row of the engine's database: which register file lookups read, and its import's figures."""

    def current_file(self) -> str | None:
        """The file name (inside the data folder's `padron/`) of the register in use, or None before any import."""
        ...

    def status(self) -> dict[str, Any] | None:
        """file, rows, skipped, seconds, source and loaded_at of the register in use, or None before any import."""
        ...

    def switch_to(self, file: str, rows: int, skipped: int, seconds: float, source: str, loaded_at: str) -> None:
        """Make `file` the register in use, in one statement: a lookup sees the old file or the new one, never both."""
        ...


class RegisterUnavailable(Exception):
    """A register file cannot be read now: it was switched and removed between reading its name and opening it, or
    this thread's handle of it was closed (too many threads held one). Reading the pointer again and retrying is the
    answer."""


class PadronLines(Protocol):
    """Where the lines of one register file are."""

    def block_at_or_before(self, ruc: int) -> bytes | None:
        """The block (lines joined by newlines) whose first RUC is the greatest one not above `ruc`, or None."""
        ...

    def loose_line(self, ruc: int) -> bytes | None:
        """The loose line of `ruc`, or None."""
        ...


class PadronFileWriter(PadronLines, Protocol):
    """A new register file being written by an import (one thread). Nothing of it is visible until `commit`."""

    def add_blocks(self, starts: list[int], blocks: list[bytes]) -> None:
        """Add blocks, each keyed by the RUC of its first line (`starts[i]` is the key of `blocks[i]`)."""
        ...

    def add_loose(self, lines: Iterable[tuple[int, bytes]]) -> int:
        """Add (ruc, line) loose lines, in order; a RUC already among the loose lines keeps its first line. The
        iterable is consumed while the lines are written: it may look lines up in this file as it goes. Returns how
        many lines were added."""
        ...

    def commit(self, meta: dict[str, str]) -> None:
        """Record the import's facts (rows, source, loaded_at) in the file, write it out and close it."""
        ...

    def abandon(self) -> None:
        """Drop what was written (a cancelled import) and close the file."""
        ...

    def close(self) -> None:
        """Close the file (after a failure; harmless after commit or abandon)."""
        ...


class PadronFiles(Protocol):
    """The register files of a data folder: written by imports, read by lookups from any thread."""

    def create(self, path: Path) -> PadronFileWriter:
        """A new, empty register file at `path` (which exists already, empty, with the data folder's permissions)."""
        ...

    def reader(self, path: Path) -> PadronLines:
        """This thread's read-only handle of the register file at `path` (opened once per thread and file; the number
        of open handles stays bounded). Raises RegisterUnavailable when the file cannot be opened, and its lookups
        raise it when the handle can no longer be read."""
        ...

    def close(self) -> None:
        """Close every open handle."""
        ...
