"""The unit of work and what every engine offers beside the repositories."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from app.core.errors import ErrorCode, YupanaError


def database_unavailable(detail: str, *, committing: bool = False) -> YupanaError:
    """The shared database out of reach (server down, network cut), in Spanish: what the desk tells at once. The
    transaction under way was rolled back by the server, unless the cut came while it was committing."""
    after = ("No se sabe si lo último se guardó: revise la lista antes de repetirlo." if committing else
             "Nada quedó a medias; repita la operación cuando el servidor vuelva (Yupana se reconecta sola).")
    return YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE,
                       f"No hay conexión con la base de datos compartida ({detail}). {after}")


class RequestGroup(Protocol):
    """Independent requests sharing one transaction: `with group.each(): …` is one request, rolled back alone (its
    exception goes on) while the others commit."""

    failed: int

    def each(self) -> AbstractContextManager[None]: ...


class Database(Protocol):
    """One data folder's database, shared by every thread of the engine.

    Repositories write inside `transaction()`: a repository's own write joins the transaction the caller opened, so
    several writes of several repositories commit together (or not at all). `durable=True` makes the commit reach
    the disk before it returns (a number handed out, a CDR stored); a nested durable block makes the outer commit
    durable."""

    path: Path
    syncs: int  # durable commits so far (each one sync of the log to the disk)

    def transaction(self, durable: bool = False) -> AbstractContextManager[None]: ...

    def group(self, durable: bool = False) -> AbstractContextManager[RequestGroup]:
        """Several independent requests in one (durable) commit, each failing alone (a group commit)."""
        ...

    def steady_reads(self) -> AbstractContextManager[None]:
        """Within the block, cached reads (ReadCache) check for other writers once instead of at every read."""
        ...

    def steady_epoch(self) -> int: ...

    def data_version(self) -> int:
        """Changes exactly when another connection committed since this thread's last look (ReadCache)."""
        ...

    def change_counter(self) -> int:
        """Changes whenever any connection commits (caches kept outside the database: the local API's memory)."""
        ...

    def quick_check(self, budget_s: float, *, clock: Callable[[], float] = ...,
                    every: int = 10_000) -> tuple[list[str], bool]: ...

    def table_count(self) -> int: ...

    def close(self) -> None: ...


class ChangeFeed(Protocol):
    """Short notes that every desk of a shared database hears (issue 34: live across desks), outside any transaction:
    each desk tells what it changed after the change is committed, and hears the others'. A note is a text of at most
    `MAX_NOTE` bytes; delivery is best effort (a desk that was cut off hears nothing of what happened meanwhile, and
    reads the database again when it is back: `listen`'s `on_back`)."""

    def publish(self, note: str) -> None:
        """Tell every listening desk (this one too) `note`; a failure is logged, never raised."""
        ...

    def listen(self, on_note: Callable[[str], None], on_back: Callable[[], None]) -> None:
        """Call `on_note(note)` for each note heard, on a thread of the feed's, until `close()`; `on_back()` after a
        lost connection is made again."""
        ...

    def close(self) -> None: ...
