"""Secrets at rest: private keys, SOL passwords, tokens. Never stored in plain text.

Each secret is encrypted with AES-256-GCM under a master key of the data folder. The master key
lives in the operating system's keyring (`keyring`: Windows Credential Manager, macOS Keychain,
Secret Service). Where no keyring backend exists (CI, headless Linux) it is derived with scrypt
from the passphrase in `YUPANA_PASSPHRASE`; with neither, secrets cannot be stored and the user is
told how to fix it. `YUPANA_KEYRING=0` skips the keyring on purpose.
"""

from __future__ import annotations

import base64
import logging
import os
import secrets as random
import threading

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt
from sqlite_utils import Migrations

from .errors import ErrorCode, YupanaError, not_configured
from .storage import Storage, register_migrations

log = logging.getLogger(__name__)
PASSPHRASE_ENV = "YUPANA_PASSPHRASE"
KEYRING_ENV = "YUPANA_KEYRING"
KEYRING_SERVICE = "Yupana"

migrations = register_migrations(Migrations("yupana.secrets"))


@migrations()
def m001_secrets(db) -> None:
    db.execute("CREATE TABLE secret_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("CREATE TABLE secrets (name TEXT PRIMARY KEY, blob BLOB NOT NULL, "
               "updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))")


def _keyring_enabled() -> bool:
    return os.environ.get(KEYRING_ENV, "1") not in ("0", "false", "no")


class SecretStore:
    """Encrypts, keeps and returns the secrets of one data folder."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._key: bytes | None = None
        self._lock = threading.Lock()
        self.backend = ""

    # -------------------------------------------------------------- the master key

    def _meta(self, key: str) -> str | None:
        row = self._storage.query_one("SELECT value FROM secret_meta WHERE key = ?", (key,))
        return row["value"] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        with self._storage.write() as conn:
            conn.execute("INSERT OR IGNORE INTO secret_meta (key, value) VALUES (?, ?)", (key, value))

    def _folder_id(self) -> str:
        if self._meta("folder_id") is None:
            self._set_meta("folder_id", random.token_hex(16))
        return self._meta("folder_id") or ""

    def _from_keyring(self) -> bytes | None:
        if not _keyring_enabled():
            return None
        try:
            import keyring
            from keyring.backends import fail

            backend = keyring.get_keyring()
            if isinstance(backend, fail.Keyring):
                return None
            account = f"master-key-{self._folder_id()}"
            stored = keyring.get_password(KEYRING_SERVICE, account)
            if stored is None:
                keyring.set_password(KEYRING_SERVICE, account, base64.b64encode(AESGCM.generate_key(256)).decode())
                stored = keyring.get_password(KEYRING_SERVICE, account)
            if stored is None:
                return None
            self.backend = f"keyring:{type(backend).__name__}"
            return base64.b64decode(stored)
        except Exception as exc:  # no usable backend: fall back to the passphrase
            log.info("keyring unavailable (%s); using the passphrase", type(exc).__name__)
            return None

    def _from_passphrase(self) -> bytes | None:
        passphrase = os.environ.get(PASSPHRASE_ENV)
        if not passphrase:
            return None
        if self._meta("scrypt_salt") is None:
            self._set_meta("scrypt_salt", base64.b64encode(os.urandom(16)).decode())
        salt = base64.b64decode(self._meta("scrypt_salt") or "")
        key = Scrypt(salt=salt, length=32, n=2 ** 15, r=8, p=1).derive(passphrase.encode("utf-8"))
        self.backend = "passphrase"
        return key

    def master_key(self) -> bytes:
        with self._lock:
            if self._key is None:
                key = self._from_keyring() or self._from_passphrase()
                if key is None:
                    raise not_configured(
                        "No hay un almacén seguro para claves: este equipo no tiene llavero del sistema. "
                        f"Defina la variable de entorno {PASSPHRASE_ENV} con una frase secreta y vuelva a intentar.")
                self._check_key(key)
                self._key = key
            return self._key

    def _check_key(self, key: bytes) -> None:
        """A known value encrypted once tells a wrong passphrase from a damaged secret."""
        probe = self._meta("probe")
        if probe is None:
            nonce = os.urandom(12)
            self._set_meta("probe", base64.b64encode(nonce + AESGCM(key).encrypt(nonce, b"yupana", b"probe")).decode())
            return
        raw = base64.b64decode(probe)
        try:
            AESGCM(key).decrypt(raw[:12], raw[12:], b"probe")
        except InvalidTag:
            raise YupanaError(ErrorCode.UNAUTHORIZED,
                              f"La frase secreta ({PASSPHRASE_ENV}) o la clave del llavero no corresponde a esta "
                              "carpeta de datos: no se pueden abrir las claves guardadas.") from None

    # -------------------------------------------------------------- encryption

    def encrypt(self, plaintext: bytes, purpose: str) -> bytes:
        nonce = os.urandom(12)
        return nonce + AESGCM(self.master_key()).encrypt(nonce, plaintext, purpose.encode())

    def decrypt(self, blob: bytes, purpose: str) -> bytes:
        try:
            return AESGCM(self.master_key()).decrypt(blob[:12], blob[12:], purpose.encode())
        except InvalidTag:
            raise YupanaError(ErrorCode.INTERNAL, f"El secreto «{purpose}» está dañado o no corresponde a esta "
                                                  "carpeta de datos.") from None

    # -------------------------------------------------------------- named secrets

    def put(self, name: str, value: bytes) -> None:
        blob = self.encrypt(value, name)
        with self._storage.write() as conn:
            conn.execute("INSERT INTO secrets (name, blob) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET "
                         "blob = excluded.blob, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')", (name, blob))

    def get(self, name: str) -> bytes | None:
        row = self._storage.query_one("SELECT blob FROM secrets WHERE name = ?", (name,))
        return self.decrypt(row["blob"], name) if row else None

    def delete(self, name: str) -> bool:
        with self._storage.write() as conn:
            return conn.execute("DELETE FROM secrets WHERE name = ?", (name,)).rowcount > 0
