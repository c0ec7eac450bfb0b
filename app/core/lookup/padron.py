"""SUNAT's "padrón reducido de RUC" as an offline register: streaming import and lookups.

Design (docs/registry.md):
- the register lives in its OWN SQLite file in the data folder (`padron/padron-<stamp>.db`), whatever
  the engine's database; the 1.5 GB bulk load never goes through the main database's WAL (the files
  and the `padron_current` pointer are reached through the ports of app/core/storage/ports/registry.py);
- the file comes sorted by RUC, so it is stored in blocks of BLOCK_LINES consecutive lines, as the
  file's own ISO-8859-1 bytes, keyed by the first RUC of the block (`bloques`): an insert per 32
  lines instead of one per line, and a lookup is one index seek plus a search inside 3 KB; the
  rare lines out of order go one by one into `sueltos`; fields are parsed only when looked up;
- an import writes a new file with journal and syncing off, and only once it is complete does it
  record the new file name in the main database (`padron_current`): lookups keep answering from
  the old file until that single-row switch, so they never see a half-loaded register;
- lookups open the current file read-only and immutable, one connection per thread;
- parsing (decompress, split, check every line) runs in a second process for big files, so the two
  cores parse and insert at the same time; small files are parsed in-process.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import secrets
import time
import unicodedata
import zipfile
from collections import deque
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, NamedTuple

from app.core.errors import invalid
from app.core.lookup.padron_lines import check_lines
from app.core.platform.paths import private_file, private_folder
from app.core.storage.ports.registry import (
    PadronFiles,
    PadronFileWriter,
    PadronLines,
    PadronPointerRepository,
    RegisterUnavailable,
)

log = logging.getLogger(__name__)


CHUNK_BYTES = 1 << 20
BLOCK_LINES = 32  # ~2.8 KB; about 22 blocks fill a 64 KiB page
PARALLEL_FROM_BYTES = 64 << 20  # below this, starting a second process costs more than it saves
# The header's column names, without accents (the real file's accents are not always intact).
HEADER_COLUMNS = ("RUC", "NOMBRE O RAZON SOCIAL", "ESTADO DEL CONTRIBUYENTE", "CONDICION DE DOMICILIO", "UBIGEO",
                  "TIPO DE VIA", "NOMBRE DE VIA", "CODIGO DE ZONA", "TIPO DE ZONA", "NUMERO", "INTERIOR", "LOTE",
                  "DEPARTAMENTO", "MANZANA", "KILOMETRO")

Progress = Callable[[int, int], Any]
Cancel = Callable[[], bool]


# ------------------------------------------------------------------ reading the file

def _plain(text: str) -> str:
    """Upper-case without accents, for comparing header names."""
    decomposed = unicodedata.normalize("NFKD", text.strip().upper())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def check_header(line: bytes) -> None:
    """Refuse anything that is not SUNAT's padrón reducido, before loading a single row."""
    names = [_plain(name) for name in line.decode("latin-1").rstrip("\r\n").rstrip("|").split("|")]
    if tuple(names) != HEADER_COLUMNS:
        shown = line.decode("latin-1").strip()[:80]
        raise invalid("archivo", f"El archivo no es el padrón reducido de RUC de SUNAT: su primera línea («{shown}») "
                                 "no es la cabecera esperada «RUC|NOMBRE O RAZÓN SOCIAL|ESTADO DEL CONTRIBUYENTE|…».")


@contextmanager
def open_padron(path: str | os.PathLike[str]) -> Iterator[tuple[IO[bytes], int]]:
    """The text of the padrón (inside the zip or as is) as a binary stream, and its size in bytes."""
    path = Path(path)
    if not path.is_file():
        raise invalid("archivo", f"No existe el archivo «{path}».")
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.infolist() if m.filename.lower().endswith(".txt")]
            if not members:
                raise invalid("archivo", f"El archivo «{path.name}» no contiene el padrón (ningún .txt dentro).")
            with archive.open(members[0]) as stream:
                yield stream, members[0].file_size
    else:
        with open(path, "rb") as stream:
            yield stream, path.stat().st_size


class Chunk(NamedTuple):
    """One piece of the file, parsed: blocks of consecutive lines keyed by their first RUC, lines out of
    RUC order (kept one by one), how many damaged lines were dropped, and the bytes read so far."""

    starts: list[int]
    blocks: list[bytes]
    loose: list[bytes]
    bad: int
    done: int
    total: int


def raw_chunks(path: str | os.PathLike[str]) -> Iterator[tuple[bytes, int, int]]:
    """Stream the padrón after checking its header: (whole lines, bytes read so far, total bytes)."""
    with open_padron(path) as (stream, total):
        header = stream.readline()
        check_header(header)
        done = len(header)
        tail = b""
        while chunk := stream.read(CHUNK_BYTES):
            done += len(chunk)
            data = tail + chunk
            cut = data.rfind(b"\n") + 1
            tail = data[cut:]
            yield data[:cut], done, total
        if tail:
            yield tail + b"\n", done, total


def _in_order(good: list[bytes], last: bytes) -> tuple[list[bytes], list[bytes]]:
    """Split lines into those continuing the strictly increasing RUC order after `last` and the rest."""
    ordered, loose = [], []
    for line in good:
        if line[:11] > last:
            ordered.append(line)
            last = line[:11]
        else:
            loose.append(line)
    return ordered, loose


class ChunkAssembler:
    """Turns checked pieces, in file order, into Chunks of blocks; remembers the last RUC between pieces."""

    def __init__(self) -> None:
        self.last = b""

    def __call__(self, checked: tuple[bytes, int, bool], done: int, total: int) -> Chunk:
        blob, bad, ordered = checked
        good = blob.split(b"\n") if blob else []
        loose: list[bytes] = []
        if not ordered or (good and good[0][:11] <= self.last):  # rare: a file not sorted by RUC
            good, loose = _in_order(good, self.last)
        if good:
            self.last = good[-1][:11]
        starts = [int(good[i][:11]) for i in range(0, len(good), BLOCK_LINES)]
        blocks = [b"\n".join(good[i:i + BLOCK_LINES]) for i in range(0, len(good), BLOCK_LINES)]
        return Chunk(starts, blocks, loose, bad, done, total)


def parse_chunks(path: str | os.PathLike[str]) -> Generator[Chunk, None, None]:
    """The whole parse in this process (small files)."""
    assemble = ChunkAssembler()
    for raw, done, total in raw_chunks(path):
        yield assemble(check_lines(raw), done, total)


def parse_chunks_in_pool(path: str | os.PathLike[str], workers: int) -> Generator[Chunk, None, None]:
    """The same with the line checks spread over `workers` processes: a bounded number of pieces in
    flight (memory stays flat), results taken back in file order. Closing the generator stops the pool."""
    assemble = ChunkAssembler()
    context = multiprocessing.get_context("spawn")  # fork is unsafe in a process with Qt and threads
    with context.Pool(workers) as pool:
        pending: deque[tuple[Any, int, int]] = deque()
        for raw, done, total in raw_chunks(path):
            pending.append((pool.apply_async(check_lines, (raw,)), done, total))
            if len(pending) >= 2 * workers:
                result, done_then, total_then = pending.popleft()
                yield assemble(result.get(), done_then, total_then)
        while pending:
            result, done_then, total_then = pending.popleft()
            yield assemble(result.get(), done_then, total_then)


def parsed_chunks(path: Path, parallel: bool | None) -> Generator[Chunk, None, None]:
    """parse_chunks, with a pool of processes when `parallel` (by default: for big files on 2+ cores)."""
    cores = os.cpu_count() or 1
    if parallel is None:
        with open_padron(path) as (_stream, size):
            parallel = size >= PARALLEL_FROM_BYTES and cores > 1
    if not parallel:
        return parse_chunks(path)
    return parse_chunks_in_pool(path, max(2, min(cores, 4)))


# ------------------------------------------------------------------ the register file

def _load(register: PadronFileWriter, chunks: Iterator[Chunk], progress: Progress | None,
          cancel: Cancel | None) -> tuple[int, int, bool]:
    """Write every chunk; returns (rows loaded, rows skipped, cancelled)."""
    loaded = skipped = 0
    for chunk in chunks:
        skipped += chunk.bad
        register.add_blocks(chunk.starts, chunk.blocks)
        loaded += sum(block.count(b"\n") + 1 for block in chunk.blocks)
        if chunk.loose:
            # A repeated RUC keeps its first line: any earlier line of it is already written (in a block
            # or among the loose ones), since a loose line's RUC is not after the last one written.
            added = register.add_loose((int(line[:11]), line) for line in chunk.loose
                                       if _find_line(register, line[:11].decode()) is None)
            loaded += added
            skipped += len(chunk.loose) - added
        if progress is not None:
            progress(chunk.done, chunk.total)
        if cancel is not None and cancel():
            return loaded, skipped, True
    return loaded, skipped, False


def _find_line(register: PadronLines, ruc: str) -> bytes | None:
    """The file's line of `ruc`: in the block that starts at or before it, else among the loose lines."""
    lines = register.block_at_or_before(int(ruc))
    if lines is not None:
        key = ruc.encode() + b"|"
        start = 0 if lines.startswith(key) else lines.find(b"\n" + key) + 1
        if start or lines.startswith(key):
            end = lines.find(b"\n", start)
            return lines[start:] if end < 0 else lines[start:end]
    return register.loose_line(int(ruc))


# ------------------------------------------------------------------ the register as the engine sees it

class PadronRegister:
    """Import into a new file, switch atomically, look up from the current file."""

    def __init__(self, pointer: PadronPointerRepository, files: PadronFiles, home: Path) -> None:
        self._pointer = pointer  # the `padron_current` row of the engine's database
        self._files = files  # the register files: local SQLite files on every engine (ports.registry)
        self.folder = home / "padron"

    # -------------------------------------------------------------- import

    def import_file(self, source: str | os.PathLike[str], progress: Progress | None = None,
                    cancel: Cancel | None = None, parallel: bool | None = None) -> dict[str, Any]:
        source = Path(source)
        started = time.perf_counter()
        private_folder(self.folder)
        self._remove_leftovers()
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        name = f"padron-{stamp}-{secrets.token_hex(3)}.db"
        partial = self.folder / (name + ".part")
        private_file(partial)  # 0600 like every file of the data folder
        register = self._files.create(partial)
        try:
            chunks = parsed_chunks(source, parallel)
            try:
                loaded, skipped, cancelled = _load(register, chunks, progress, cancel)
            finally:
                chunks.close()  # stops the pool of a cancelled or failed import
            seconds = round(time.perf_counter() - started, 3)
            summary = {"rows_loaded": loaded, "rows_skipped": skipped, "seconds": seconds}
            if cancelled:
                register.abandon()
                partial.unlink(missing_ok=True)
                return {**summary, "cancelled": True}
            loaded_at = datetime.now(UTC).isoformat(timespec="seconds")
            register.commit({"rows": str(loaded), "source": source.name, "loaded_at": loaded_at})
        except BaseException:
            register.close()
            partial.unlink(missing_ok=True)
            raise
        partial.replace(self.folder / name)
        self._switch_to(name, loaded, skipped, seconds, source.name, loaded_at)
        log.info("padrón imported from %s: %s", source.name, summary)
        return summary

    def _switch_to(self, name: str, rows: int, skipped: int, seconds: float, source: str, loaded_at: str) -> None:
        previous = self.current_file()
        self._pointer.switch_to(name, rows, skipped, seconds, source, loaded_at)
        if previous and previous != name:
            self._try_remove(self.folder / previous)  # readers still holding it keep reading (POSIX)

    def _remove_leftovers(self) -> None:
        """Old registers that could not be deleted at the last switch (Windows keeps open files)."""
        current = self.current_file()
        settled = time.time() - 600  # a file just finished by another process may not be current yet
        for old in self.folder.glob("padron-*.db"):
            if old.name != current and old.stat().st_mtime < settled:
                self._try_remove(old)

    @staticmethod
    def _try_remove(path: Path) -> None:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            log.info("old register %s still in use; removed at the next import", path.name)

    # -------------------------------------------------------------- lookups

    def current_file(self) -> str | None:
        return self._pointer.current_file()

    def status(self) -> dict[str, Any]:
        row = self._pointer.status()
        if row is None:
            return {"loaded": False, "rows": 0, "loaded_at": None, "source": None, "file": None}
        return {"loaded": True, **row}

    def find(self, ruc: str) -> list[str | None] | None:
        """The register's fifteen fields of `ruc` ('-' as None), or None when it is not there."""
        for _attempt in range(3):
            name = self.current_file()
            if name is None:
                return None
            try:
                # Switched and removed since its name was read, or this thread's handle closed: read the name again.
                line = _find_line(self._files.reader(self.folder / name), ruc)
            except RegisterUnavailable:
                continue
            if line is None:
                return None
            fields = line.decode("latin-1").rstrip("|").split("|")
            return [None if value.strip() in ("", "-") else value.strip() for value in fields]
        return None

    def is_loaded(self) -> bool:
        return self.current_file() is not None

    def close(self) -> None:
        self._files.close()
