"""Stored texts compressed with Zstandard and a preset dictionary (issue 19, point 6; zstd since issue 33): a voucher's
XML, request and signature are kept for years, and each is nearly the previous voucher of its issuer again.

A packed text is a BLOB: `MAGIC`, the 8-byte digest of its dictionary (0 bytes when none), then one zstd frame of its
UTF-8 (its size written in it, no checksum, no dictionary id: the digest names it). A dictionary is itself an earlier
text (the first of its kind and scope: the issuer's XML, the certificate's signature), stored once in
`voucher_dictionaries` and named by its digest, so a reference can never point at other bytes — not even after a
rollback removed a dictionary and another took its place. Unpacking gives back the exact bytes that were packed (the
test signs, reads back and verifies with xmlsec1). Texts packed before zstd (`DEFLATE_MAGIC`: a raw deflate stream
after the digest) are read as they were; texts stored before packing are TEXT values (a `str` from the SQLite driver)
and are returned as they are: the value's type is the per-row flag. Pure: no storage here (the voucher store keeps
the dictionaries).

Why zstd: with zlib, each text paid for loading its dictionary into a new compressor (deflate has no reusable
prepared dictionary): 57 µs of a batch voucher's ~600, more than its XML's own compression. A zstd dictionary is
prepared once per thread and reused: the three texts of a voucher pack in ~10 µs, to fewer bytes."""

from __future__ import annotations

import hashlib
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import zstandard

MAGIC = b"\x1fY2"  # never the start of a UTF-8 text Yupana stores (XML and JSON begin with «<» or «{»)
DEFLATE_MAGIC = b"\x1fY1"  # what Yupana packed before zstd: still read
DIGEST_BYTES = 8
LEVEL = 3  # zstd's default: a voucher's XML against its issuer's dictionary packs to a few dozen bytes
MAX_DICTIONARY = 32 * 1024  # the dictionary's last 32 KiB (deflate's window, kept for zstd: the texts are smaller)
MAX_CODERS = 64  # prepared compressors and decompressors per thread: one per issuer and kind of text
Coder = TypeVar("Coder", zstandard.ZstdCompressor, zstandard.ZstdDecompressor)


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
        return MAGIC + self.digest + _packer(self.digest, self.data).compress(data)


class _Coders(threading.local):
    """This thread's prepared zstd coders, by dictionary digest: (the dictionary's bytes, the coder). A coder is
    not safe to share between threads, and preparing one costs more than a voucher's texts (~20 µs, 200 µs with
    its dictionary digested), so each thread keeps its own."""

    def __init__(self) -> None:
        self.packers: dict[bytes, tuple[bytes, zstandard.ZstdCompressor]] = {}
        self.unpackers: dict[bytes, tuple[bytes, zstandard.ZstdDecompressor]] = {}


_coders = _Coders()


def _prepared(dictionary: bytes) -> zstandard.ZstdCompressionDict | None:
    return zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT) if dictionary else None


def _kept(coders: dict[bytes, tuple[bytes, Coder]], digest: bytes, dictionary: bytes) -> Coder | None:
    """The coder kept for `digest`, when it was made from these very bytes (the same object, or equal ones)."""
    found = coders.get(digest)
    if found is None or (found[0] is not dictionary and found[0] != dictionary):
        return None
    return found[1]


def _packer(digest: bytes, dictionary: bytes) -> zstandard.ZstdCompressor:
    packer = _kept(_coders.packers, digest, dictionary)
    if packer is None:
        prepared = _prepared(dictionary)
        if prepared is not None:
            prepared.precompute_compress(level=LEVEL)
        packer = zstandard.ZstdCompressor(level=LEVEL, dict_data=prepared, write_content_size=True,
                                          write_checksum=False, write_dict_id=False)
        _remember(_coders.packers, digest, dictionary, packer)
    return packer


def _unpacker(digest: bytes, dictionary: bytes) -> zstandard.ZstdDecompressor:
    unpacker = _kept(_coders.unpackers, digest, dictionary)
    if unpacker is None:
        unpacker = zstandard.ZstdDecompressor(dict_data=_prepared(dictionary))
        _remember(_coders.unpackers, digest, dictionary, unpacker)
    return unpacker


def _remember(coders: dict[bytes, tuple[bytes, Coder]], digest: bytes, dictionary: bytes, coder: Coder) -> None:
    if len(coders) >= MAX_CODERS:
        coders.clear()
    coders[digest] = (dictionary, coder)


def unpack(value: str | bytes | None, dictionary_of: Callable[[bytes], bytes]) -> str | None:
    """The text of a stored value: a `str` stored before packing as it is, a packed BLOB uncompressed.
    `dictionary_of(digest)` gives the dictionary's bytes (KeyError when unknown: the row cannot be read)."""
    if value is None or isinstance(value, str):
        return value
    if not is_packed(value):
        raise ValueError("a stored text that is neither text nor packed")
    return _inflate(value, dictionary_of).decode("utf-8")


def unpack_bytes(value: bytes | None, dictionary_of: Callable[[bytes], bytes]) -> bytes | None:
    """The bytes of a stored BLOB: packed ones uncompressed, the others (stored before packing) as they are. A value
    stored before never begins with either magic: it is an XML document («<», a BOM or whitespace first) or a zip («PK»)."""
    if value is None:
        return None
    value = bytes(value)
    return _inflate(value, dictionary_of) if is_packed(value) else value


def is_packed(value: bytes) -> bool:
    """Whether stored bytes are a packed BLOB (of now, or of before zstd)."""
    return value.startswith(MAGIC) or value.startswith(DEFLATE_MAGIC)


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
    dictionary = b"" if digest == bytes(DIGEST_BYTES) else _checked_dictionary(digest, dictionary_of)
    if value.startswith(DEFLATE_MAGIC):
        return _inflate_deflate(body, dictionary)
    try:
        return _unpacker(digest, dictionary).decompress(body)
    except zstandard.ZstdError as exc:
        raise ValueError(f"a packed text that cannot be read ({exc})") from None


def _inflate_deflate(body: bytes, dictionary: bytes) -> bytes:
    unpacker = zlib.decompressobj(-15, zdict=dictionary) if dictionary else zlib.decompressobj(-15)
    data = unpacker.decompress(body) + unpacker.flush()
    if not unpacker.eof:
        raise ValueError("a packed text is cut short")
    return data
