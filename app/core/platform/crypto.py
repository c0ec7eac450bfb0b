"""The parts of cryptography the engine uses (keys, certificates, signatures, the secrets' cipher), each loaded at its
first use (app.core.platform.lazy: cryptography is ~260 ms of imports the main window's start does without). One home
for the lazy stand-ins and their imports for the type checker: a module imports the names it needs from here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.platform.lazy import lazy_module

if TYPE_CHECKING:
    import cryptography.exceptions as crypto_exceptions
    import cryptography.hazmat.primitives.ciphers.aead as aead
    import cryptography.hazmat.primitives.kdf.scrypt as kdf_scrypt
    import cryptography.x509.oid as x509_oid
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa
    from cryptography.hazmat.primitives.serialization import pkcs12
else:
    crypto_exceptions = lazy_module("cryptography.exceptions")
    aead = lazy_module("cryptography.hazmat.primitives.ciphers.aead")
    kdf_scrypt = lazy_module("cryptography.hazmat.primitives.kdf.scrypt")
    x509_oid = lazy_module("cryptography.x509.oid")
    x509 = lazy_module("cryptography.x509")
    hashes = lazy_module("cryptography.hazmat.primitives.hashes")
    serialization = lazy_module("cryptography.hazmat.primitives.serialization")
    padding = lazy_module("cryptography.hazmat.primitives.asymmetric.padding")
    rsa = lazy_module("cryptography.hazmat.primitives.asymmetric.rsa")
    pkcs12 = lazy_module("cryptography.hazmat.primitives.serialization.pkcs12")

__all__ = [
    "aead",
    "crypto_exceptions",
    "hashes",
    "kdf_scrypt",
    "padding",
    "pkcs12",
    "rsa",
    "serialization",
    "x509",
    "x509_oid",
]
