"""Stored texts compressed with stdlib zlib and a preset dictionary (issue 19, point 6): a voucher's XML, request and
signature are kept for years, and each is nearly the previous voucher of its issuer again.

A packed text is a BLOB: `MAGIC`, the 8-byte digest of its dictionary (0 bytes when none), then a raw deflate stream
of its UTF-8. A dictionary is itself an earlier text (the first of its kind and scope: the issuer's XML, the
certificate's signature), stored once in `voucher_dictionaries` and named by its digest, so a reference can never
point at other bytes — not even after a rollback removed a dictionary and another took its place. Unpacking gives
back the exact bytes that were packed (zlib is lossless; the test signs, reads back and verifies with xmlsec1). Texts
stored before are TEXT values (a `str` from the SQLite driver) and are returned as they are: the value's type is the per-row
flag. Pure: no storage here (the voucher store keeps the dictionaries)."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

MAGIC = b"\x1fY1"  # never the start of a UTF-8 text Yupana stores (XML and JSON begin with «<» or «{»)
DIGEST_BYTES = 8
# deflate's level 3 (its fast matcher): with a dictionary that is nearly the text, a voucher's XML packs to ~190 bytes
# against ~150 at level 6, at a third of the time (issue 33: compressing was 17-19 % of a batch). Any level reads back.
LEVEL = 3
MAX_DICTIONARY = 32 * 1024  # deflate's window: bytes further back are never referenced


def digest_of(dictionary: bytes) -> bytes:
    return hashlib.sha256(dictionary).digest()[:DIGEST_BYTES]


def pack(text: str, dictionary: bytes | None = None) -> bytes:
    """`text` as a packed BLOB, compressed against `dictionary` (its last 32 KiB) when given."""
    return pack_bytes(text.encode("utf-8"), dictionary)


def pack_bytes(data: bytes, dictionary: bytes | None = None) -> bytes:
    """`data` (any bytes: a signed XML in its own encoding, a CDR's zip) as a packed BLOB."""
    return Dictionary.of(dictionary).pack_bytes(data)


@dataclass(frozen=True, slots=True)
class Dictionary:
    """A dictionary ready to pack with: its bytes (the last 32 KiB of what it was made of) and its digest, worked out
    once. A store packs thousands of texts against the same one: hashing 32 KiB again for each cost more than
    compressing a small text (issue 33)."""

    data: bytes
    digest: bytes = field(default=b"")

    @classmethod
    def of(cls, data: bytes | None) -> Dictionary:
        """The dictionary made of `data` (None or empty: no dictionary, the digest all zeros)."""
        if not data:
            return cls(b"", bytes(DIGEST_BYTES))
        data = bytes(data[-MAX_DICTIONARY:])
        return cls(data, digest_of(data))

    def pack_bytes(self, data: bytes) -> bytes:
        """`data` as a packed BLOB against this dictionary."""
        if self.data:
            packer = zlib.compressobj(LEVEL, zlib.DEFLATED, -15, zdict=self.data)
        else:
            packer = zlib.compressobj(LEVEL, zlib.DEFLATED, -15)
        return MAGIC + self.digest + packer.compress(data) + packer.flush()


def unpack(value: str | bytes | None, dictionary_of: Callable[[bytes], bytes]) -> str | None:
    """The text of a stored value: a `str` stored before packing as it is, a packed BLOB uncompressed.
    `dictionary_of(digest)` gives the dictionary's bytes (KeyError when unknown: the row cannot be read)."""
    if value is None or isinstance(value, str):
        return value
    if not value.startswith(MAGIC):
        raise ValueError("a stored text that is neither text nor packed")
    return _inflate(value, dictionary_of).decode("utf-8")


def unpack_bytes(value: bytes | None, dictionary_of: Callable[[bytes], bytes]) -> bytes | None:
    """The bytes of a stored BLOB: packed ones uncompressed, the others (stored before packing) as they are. A value
    stored before never begins with MAGIC: it is an XML document («<», a BOM or whitespace first) or a zip («PK»)."""
    if value is None:
        return None
    value = bytes(value)
    return _inflate(value, dictionary_of) if value.startswith(MAGIC) else value


# digest → the dictionary object found to have it. A store hands out the same bytes object for a digest each time
# (it keeps them), so the check is made once per dictionary, not per text: hashing 32 KiB cost more than unpacking a
# voucher's XML (issue 33). Other bytes for a digest are checked again. A few entries: one per issuer and kind.
_checked: dict[bytes, bytes] = {}
MAX_CHECKED = 256


def _checked_dictionary(digest: bytes, dictionary_of: Callable[[bytes], bytes]) -> bytes:
    dictionary = dictionary_of(digest)
    if _checked.get(digest) is not dictionary:
        if digest_of(dictionary) != digest:
            raise ValueError("the dictionary's bytes are not the ones its name says")
        if len(_checked) >= MAX_CHECKED:
            _checked.clear()
        _checked[digest] = dictionary
    return dictionary


def _inflate(value: bytes, dictionary_of: Callable[[bytes], bytes]) -> bytes:
    digest = bytes(value[len(MAGIC):len(MAGIC) + DIGEST_BYTES])
    body = value[len(MAGIC) + DIGEST_BYTES:]
    if digest == bytes(DIGEST_BYTES):
        unpacker = zlib.decompressobj(-15)
    else:
        unpacker = zlib.decompressobj(-15, zdict=_checked_dictionary(digest, dictionary_of))
    data = unpacker.decompress(body) + unpacker.flush()
    if not unpacker.eof:
        raise ValueError("a packed text is cut short")
    return data
