"""Draw the Yupana icon (resources/yupana.png and resources/yupana.ico) without extra dependencies.

The motif is a yupana, the Inca counting board: a rounded tile with a grid of
counters. Pure Python (zlib + struct) so it runs on any build host; the output
is committed, rerun this only to change the artwork:

    python installer/make_icon.py resources
"""

from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path

BACKGROUND = (0x0F, 0x6E, 0x5C)  # deep teal
BOARD = (0xF4, 0xEB, 0xD0)  # parchment
COUNTER = (0xC2, 0x41, 0x1F)  # terracotta
EMPTY = (0xD9, 0xC8, 0x9E)  # empty hole on the board
# Which holes of the 3x3 board carry a counter (row-major).
FILLED = (True, False, True, True, True, False, False, True, True)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)


def _inside_rounded_rect(x: float, y: float, x0: float, y0: float, x1: float, y1: float, r: float) -> bool:
    if not (x0 <= x <= x1 and y0 <= y <= y1):
        return False
    cx = min(max(x, x0 + r), x1 - r)
    cy = min(max(y, y0 + r), y1 - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def _shade(u: float, v: float) -> tuple[int, int, int] | None:
    """Colour at unit coordinates (u, v) in [0, 1), or None when transparent."""
    if not _inside_rounded_rect(u, v, 0.02, 0.02, 0.98, 0.98, 0.2):
        return None
    if not _inside_rounded_rect(u, v, 0.14, 0.14, 0.86, 0.86, 0.08):
        return BACKGROUND
    cell = (0.86 - 0.14) / 3
    col = min(int((u - 0.14) / cell), 2)
    row = min(int((v - 0.14) / cell), 2)
    cx = 0.14 + (col + 0.5) * cell
    cy = 0.14 + (row + 0.5) * cell
    if (u - cx) ** 2 + (v - cy) ** 2 <= (cell * 0.34) ** 2:
        return COUNTER if FILLED[row * 3 + col] else EMPTY
    return BOARD


def render(size: int, samples: int = 4) -> bytes:
    """RGBA pixels, row by row, anti-aliased by supersampling."""
    out = bytearray()
    n = samples * samples
    for py in range(size):
        for px in range(size):
            r = g = b = a = 0
            for sy in range(samples):
                for sx in range(samples):
                    colour = _shade((px + (sx + 0.5) / samples) / size, (py + (sy + 0.5) / samples) / size)
                    if colour is not None:
                        r += colour[0]
                        g += colour[1]
                        b += colour[2]
                        a += 1
            if a:
                out += bytes((r // a, g // a, b // a, 255 * a // n))
            else:
                out += b"\0\0\0\0"
    return bytes(out)


def png(size: int, rgba: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    stride = size * 4
    raw = b"".join(b"\0" + rgba[y * stride : (y + 1) * stride] for y in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def ico(images: dict[int, bytes]) -> bytes:
    """An ICO file whose entries are PNG images (valid since Windows Vista)."""
    head = struct.pack("<HHH", 0, 1, len(images))
    offset = 6 + 16 * len(images)
    entries = b""
    body = b""
    for size, data in sorted(images.items()):
        dim = 0 if size >= 256 else size
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset + len(body))
        body += data
    return head + entries + body


def main(argv: list[str]) -> int:
    target = Path(argv[1] if len(argv) > 1 else "resources")
    target.mkdir(parents=True, exist_ok=True)
    images = {size: png(size, render(size, 4 if size <= 64 else 2)) for size in ICO_SIZES}
    (target / "yupana.png").write_bytes(images[256])
    (target / "yupana.ico").write_bytes(ico(images))
    print(f"icon written to {target}/yupana.png and {target}/yupana.ico")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
