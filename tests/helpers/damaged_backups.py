"""A backup with one flipped byte that really damages what it holds. Deflate has bytes whose flip decodes to the very
same data (seen: 2 in ~3 600 positions of a small backup), and a zip has header fields no reader checks: such a copy
is whole, and the app rightly restores it. So the byte is chosen inside the database's compressed data, from the
middle on, and kept only when zipfile (not the app) reads that member back changed or not at all."""

from __future__ import annotations

import zipfile
from pathlib import Path

from app.core.invoicing import backups


def _member_start(data: bytes | bytearray, info: zipfile.ZipInfo) -> int:
    header = info.header_offset
    return (header + 30 + int.from_bytes(data[header + 26:header + 28], "little")
            + int.from_bytes(data[header + 28:header + 30], "little"))


def _reads_back(path: Path, member: str) -> bytes | None:
    try:
        with zipfile.ZipFile(path) as archive:
            return archive.read(member)
    except Exception:  # BadZipFile (its CRC), zlib.error, EOFError…: damaged
        return None


def flipped_byte_copy(backup: Path, target: Path, flip: int = 0x01, member: str = backups.DATABASE) -> Path:
    """`backup` written to `target` with one byte of `member`'s compressed data flipped (xor `flip`), the first from
    its middle on whose flip changes what the member holds."""
    data = backup.read_bytes()
    with zipfile.ZipFile(backup) as archive:
        info = archive.getinfo(member)
        original = archive.read(member)
    start = _member_start(data, info)
    for offset in range(info.compress_size // 2, info.compress_size):
        damaged = bytearray(data)
        damaged[start + offset] ^= flip
        target.write_bytes(bytes(damaged))
        if _reads_back(target, member) != original:
            return target
    raise AssertionError(f"no byte of {member}'s second half damages it when flipped")
