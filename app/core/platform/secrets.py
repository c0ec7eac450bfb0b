"""Secrets at rest: private keys, SOL passwords, tokens. Never stored in plain text.

Each secret is encrypted with AES-256-GCM under a master key of the data folder. The master key
lives in the operating system's keyring (`keyring`: Windows Credential Manager, macOS Keychain,
Secret Service). Where no keyring backend exists (headless Linux, a locked-down Windows profile,
CI) it is derived with scrypt from a passphrase that the person types: in the windows' passphrase
dialog (`unlock`), at the command line's hidden prompt (`passphrase_prompt`), or, for automation,
from `YUPANA_PASSPHRASE`. The passphrase itself is never stored: a known value encrypted under the
key (the "probe") tells a wrong passphrase from a right one. `YUPANA_KEYRING=0` skips the keyring on
purpose. Where each secret lives and how to recover: docs/security.md.

On a database several desks share (issue 34) no desk's keyring can be the source: the master key is derived from the
business's passphrase (scrypt, its salt and probe in the shared database), typed once on each desk, which then keeps
the derived key in its own keyring (when it has one) so it does not ask again.

A folder whose key lives in a keyring gets a recovery passphrase at its first backup (issue 35): the master key
wrapped by a key scrypt derives from it (AES-256-GCM, its own salt) is kept in `secret_meta`, so every backup of the
database carries it, never in plain text. On a PC whose keyring has no entry for the folder (a restore on another
PC), the recovery passphrase opens the keys as a passphrase folder's passphrase does (the window's dialog, the
command's prompt, `YUPANA_RECOVERY_PASSPHRASE`), and the key is then kept in that PC's keyring when it has one.
"""

from __future__ import annotations

import base64
import logging
import os
import secrets as random
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from app.core.errors import ErrorCode, YupanaError, invalid, not_configured
from app.core.platform.crypto import aead, crypto_exceptions, kdf_scrypt
from app.core.storage.ports.platform import SecretRepository
from app.core.storage.read_cache import ReadCache, Versioned

log = logging.getLogger(__name__)
PASSPHRASE_ENV = "YUPANA_PASSPHRASE"
RECOVERY_ENV = "YUPANA_RECOVERY_PASSPHRASE"
KEYRING_ENV = "YUPANA_KEYRING"
KEYRING_SERVICE = "Yupana"
MIN_PASSPHRASE_CHARS = 8

# What `SecretStore.state()` answers: whether the master key is at hand, and if not, what is needed.
UNLOCKED = "abierto"  # keys can be read and written
NEW_PASSPHRASE = "frase_nueva"  # no keyring and nothing stored yet: a passphrase must be chosen
LOCKED = "bloqueado"  # no keyring: the passphrase chosen before must be typed
KEYRING_MISSING = "sin_llavero"  # the keys were protected by a keyring that this session cannot reach
# Where the master key of a folder comes from, recorded when its first secret is stored.
SOURCE_KEYRING = "keyring"
SOURCE_PASSPHRASE = "passphrase"

# Asked for the passphrase when neither the keyring nor YUPANA_PASSPHRASE gives the key;
# called with True for a folder that has no passphrase yet. Returns None to give up.
PassphrasePrompt = Callable[[bool], str | None]


def _keyring_enabled() -> bool:
    return os.environ.get(KEYRING_ENV, "1") not in ("0", "false", "no")


# scrypt's cost for the salts made from now on. A salt records its cost beside it only when it is not this default
# (`salt_record`), so every folder's record reads as before; the tests lower it in their own process (each new test
# folder otherwise spends ~0.1 s of CPU deriving its key, ~870 times a run), and a folder made so opens anywhere.
UNRECORDED_N = 2 ** 15  # the cost of a salt recorded without one (every folder made before costs were recorded)
SCRYPT_N = UNRECORDED_N
SCRYPT_N_RANGE = (2 ** 10, 2 ** 20)  # a recorded cost outside it is refused: the record is damaged


def salt_record(salt: bytes, cost: int) -> str:
    """What `secret_meta` keeps of a salt: its base64, and `$cost` after it when the cost is not SCRYPT_N's default."""
    text = base64.b64encode(salt).decode()
    return text if cost == UNRECORDED_N else f"{text}${cost}"


def read_salt_record(record: str) -> tuple[bytes, int]:
    """(salt, scrypt cost) of a `salt_record` (UNRECORDED_N when it records none); ValueError when it is damaged."""
    text, _, cost_text = record.partition("$")
    if cost_text and not cost_text.isdigit():
        raise ValueError(f"unreadable scrypt cost in a salt record: {cost_text!r}")
    cost = int(cost_text) if cost_text else UNRECORDED_N
    low, high = SCRYPT_N_RANGE
    if not low <= cost <= high or cost & (cost - 1):  # scrypt takes a power of two
        raise ValueError(f"scrypt cost out of range in a salt record: {cost}")
    return base64.b64decode(text), cost


class SecretStore:
    """Encrypts, keeps and returns the secrets of one data folder."""

    def __init__(self, repository: SecretRepository, shared: bool = False, database: Versioned | None = None) -> None:
        self._repository = repository
        # The stored (encrypted) blobs, kept until written here or by any other connection, when the database is
        # given: every send reads the SOL credentials
        self._blobs = ReadCache(database) if database is not None else None
        self.shared = shared  # a database several desks share: the business passphrase, remembered per desk
        self._key: bytes | None = None
        self._lock = threading.Lock()
        self.backend = ""
        self.passphrase_prompt: PassphrasePrompt | None = None

    # -------------------------------------------------------------- the master key

    def _meta(self, key: str) -> str | None:
        return self._repository.meta(key)

    def _set_meta(self, key: str, value: str) -> None:
        self._repository.set_meta_once(key, value)

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
            if stored is None and self._meta("probe") is not None:
                return None  # this keyring never held the folder's key (another PC): a new one would open nothing
            if stored is None:
                keyring.set_password(KEYRING_SERVICE, account, base64.b64encode(aead.AESGCM.generate_key(256)).decode())
                stored = keyring.get_password(KEYRING_SERVICE, account)
            if stored is None:
                return None
            self.backend = f"keyring:{type(backend).__name__}"
            return base64.b64decode(stored)
        except Exception as exc:  # no usable backend: fall back to the passphrase
            log.info("keyring unavailable (%s); using the passphrase", type(exc).__name__)
            return None

    def _business_account(self) -> str:
        return f"business-key-{self._folder_id()}"

    def _remembered_business_key(self) -> bytes | None:
        """The business key this desk kept in its keyring after the passphrase opened it once; None otherwise."""
        if not _keyring_enabled():
            return None
        try:
            import keyring

            stored = keyring.get_password(KEYRING_SERVICE, self._business_account())
        except Exception as exc:  # no usable backend: the passphrase is asked
            log.info("keyring unavailable (%s); asking for the business passphrase", type(exc).__name__)
            return None
        if stored is None:
            return None
        self.backend = "passphrase+keyring"
        return base64.b64decode(stored)

    def _remember_business_key(self, key: bytes) -> None:
        """Kept in this desk's keyring, so this desk opens the shared keys without asking again (never elsewhere)."""
        self._keep_in_keyring(self._business_account(), key)

    def _keep_in_keyring(self, account: str, key: bytes) -> None:
        if not _keyring_enabled():
            return
        try:
            import keyring
            from keyring.backends import fail

            if isinstance(keyring.get_keyring(), fail.Keyring):
                return
            keyring.set_password(KEYRING_SERVICE, account, base64.b64encode(key).decode())
        except Exception as exc:  # not remembered: the passphrase is asked at the next start
            log.info("key not kept in the keyring (%s)", type(exc).__name__)

    def _derive(self, passphrase: str, salt_name: str = "scrypt_salt") -> bytes:
        """The one derivation of a key from a passphrase (the folder's, the business's, the recovery one)."""
        if self._meta(salt_name) is None:
            self._set_meta(salt_name, salt_record(os.urandom(16), SCRYPT_N))
        salt, cost = read_salt_record(self._meta(salt_name) or "")
        return kdf_scrypt.Scrypt(salt=salt, length=32, n=cost, r=8, p=1).derive(passphrase.encode("utf-8"))

    # -------------------------------------------------------------- the recovery passphrase (backups)

    def needs_recovery(self) -> bool:
        """A folder whose keys a keyring protects and that has no recovery passphrase yet (its first backup asks)."""
        return (not self.shared and self._meta("key_source") == SOURCE_KEYRING
                and self._meta("recovery_key") is None)

    def key_source(self) -> str | None:
        """SOURCE_KEYRING or SOURCE_PASSPHRASE once a secret was stored; None before."""
        return self._meta("key_source")

    def has_recovery(self) -> bool:
        return self._meta("recovery_key") is not None

    def set_recovery(self, passphrase: str) -> None:
        """Keep the master key wrapped by `passphrase` (once: another one replaces it only by `change_recovery`)."""
        _check_recovery(passphrase)
        if self.has_recovery():
            self._unwrap(passphrase)  # the same one again is fine; another one is refused there
            return
        self._set_meta("recovery_key", self._wrapped(self.master_key(), passphrase))

    def change_recovery(self, passphrase: str) -> None:
        """Replace the recovery passphrase (the first one when there is none): the master key is kept wrapped by the
        new one, so the backups made from now on carry it; those made before carry the key wrapped by the old one,
        and keep opening with it. Only where the master key is open (this PC's keyring, or the recovery passphrase
        typed here): the old phrase is not asked, so a forgotten one can be replaced."""
        _check_recovery(passphrase)
        if not self.has_recovery():
            self.set_recovery(passphrase)
            return
        key = self.master_key(ask=False)  # not open here: the keys' own Spanish message
        self._repository.set_meta("recovery_key", self._wrapped(key, passphrase))

    def _wrapped(self, key: bytes, passphrase: str) -> str:
        """The master key wrapped by a recovery passphrase, as `recovery_key` keeps it."""
        nonce = os.urandom(12)
        wrapped = nonce + aead.AESGCM(self._derive(passphrase, "recovery_salt")).encrypt(nonce, key, b"recovery")
        return base64.b64encode(wrapped).decode()

    def _unwrap(self, passphrase: str) -> bytes:
        raw = base64.b64decode(self._meta("recovery_key") or "")
        try:
            return aead.AESGCM(self._derive(passphrase, "recovery_salt")).decrypt(raw[:12], raw[12:], b"recovery")
        except crypto_exceptions.InvalidTag:
            raise YupanaError(ErrorCode.UNAUTHORIZED, "La frase de recuperación no es correcta: no abre las claves "
                              "de esta carpeta de datos. Escríbala de nuevo (distingue mayúsculas y minúsculas)."
                              ) from None

    def _from_recovery(self, ask: bool) -> bytes | None:
        """The master key unwrapped by the recovery passphrase (no keyring entry here), then kept in this PC's
        keyring when it has one."""
        if not self.has_recovery():
            return None
        passphrase = os.environ.get(RECOVERY_ENV) or os.environ.get(PASSPHRASE_ENV)
        if not passphrase and ask and self.passphrase_prompt is not None:
            passphrase = self.passphrase_prompt(False)
        if not passphrase:
            return None
        key = self._unwrap(passphrase)
        self._keep_in_keyring(f"master-key-{self._folder_id()}", key)
        self.backend = "recovery"
        return key

    def _from_passphrase(self, ask: bool) -> bytes | None:
        passphrase = os.environ.get(PASSPHRASE_ENV)
        if passphrase:
            return self._derive(passphrase)
        if ask and self.passphrase_prompt is not None:
            typed = self.passphrase_prompt(self._meta("probe") is None)
            if typed:
                self._check_new_passphrase(typed)
                return self._derive(typed)
        return None

    def _check_new_passphrase(self, passphrase: str) -> None:
        if self._meta("probe") is None and len(passphrase) < MIN_PASSPHRASE_CHARS:
            raise invalid("frase", f"La frase secreta debe tener al menos {MIN_PASSPHRASE_CHARS} caracteres.")

    def master_key(self, ask: bool = True) -> bytes:
        """The folder's key; `ask=False` never calls `passphrase_prompt` (for `state()`)."""
        with self._lock:
            if self._key is None:
                # A folder keeps the source its first secret was stored with: a keyring that appears
                # later does not lock out a passphrase folder, nor the reverse.
                recorded = self._meta("key_source")
                if self.shared:
                    return self._business_key(ask, recorded)
                key, source = None, SOURCE_KEYRING
                if recorded != SOURCE_PASSPHRASE:
                    key = self._from_keyring()
                if key is None and recorded == SOURCE_KEYRING:
                    key = self._from_recovery(ask)
                if key is None and recorded != SOURCE_KEYRING:
                    key, source = self._from_passphrase(ask), SOURCE_PASSPHRASE
                if key is None:
                    raise self._no_key_error()
                self._check_key(key, source)
                self._key = key
                self.backend = self.backend if source == SOURCE_KEYRING else "passphrase"
            return self._key

    def _business_key(self, ask: bool, recorded: str | None) -> bytes:
        """A shared database's key (holding `_lock`): this desk's remembered one, else from the business passphrase
        (then remembered). A key a desk's keyring made (a folder moved before this rule) opens nowhere else."""
        if recorded == SOURCE_KEYRING:
            raise not_configured(
                "Las claves de esta base de datos compartida están protegidas por el llavero de un solo equipo: los "
                "demás puestos no pueden abrirlas. Vuelva a guardar los certificados y las claves desde un puesto con "
                "la frase secreta del negocio (docs/security.md).")
        remembered = self._remembered_business_key()
        if remembered is not None:
            try:
                self._check_key(remembered, SOURCE_PASSPHRASE)
                self._key = remembered
                return remembered
            except (YupanaError, ValueError):  # the business passphrase changed since (or the entry is damaged)
                log.info("the business key this desk kept no longer opens the shared keys: asking again")
        key = self._from_passphrase(ask)
        if key is None:
            raise self._no_key_error()
        self._check_key(key, SOURCE_PASSPHRASE)
        self._key = key
        self.backend = "passphrase"
        self._remember_business_key(key)
        return key

    def _no_key_error(self) -> YupanaError:
        if self._meta("key_source") == SOURCE_KEYRING and self.has_recovery():
            return not_configured(
                "Las claves de esta carpeta de datos se protegieron con el llavero de otro equipo (una copia "
                "restaurada): ábralas con la frase de recuperación de las copias, en la ventana de Yupana o con la "
                f"variable de entorno {RECOVERY_ENV}.")
        if self._meta("key_source") == SOURCE_KEYRING:
            return not_configured(
                "Las claves de esta carpeta de datos están protegidas por el llavero del sistema, que aquí no las "
                "tiene o no responde. Inicie sesión con el mismo usuario del equipo o vea docs/security.md para recuperarlas.")
        return not_configured(
            "Las claves guardadas están protegidas por una frase secreta: ábralas con la frase en la ventana de "
            f"Yupana, o defina la variable de entorno {PASSPHRASE_ENV} para usar el comando sin preguntas.")

    def state(self) -> str:
        """UNLOCKED, NEW_PASSPHRASE, LOCKED or KEYRING_MISSING; never asks anybody anything."""
        with self._lock:
            if self._key is not None:
                return UNLOCKED
        try:
            self.master_key(ask=False)
            return UNLOCKED
        except YupanaError as exc:
            if self._meta("key_source") == SOURCE_KEYRING and not self.shared and not self.has_recovery():
                return KEYRING_MISSING
            if exc.code in (ErrorCode.NOT_CONFIGURED, ErrorCode.UNAUTHORIZED):
                return NEW_PASSPHRASE if self._meta("probe") is None else LOCKED
            raise

    def unlock(self, passphrase: str) -> None:
        """Open the keys with the passphrase typed in a window; the first one typed becomes the folder's. A folder
        restored from a keyring PC's backup takes its recovery passphrase here."""
        if not self.shared and self._meta("key_source") == SOURCE_KEYRING and self.has_recovery():
            key = self._unwrap(passphrase)
            with self._lock:
                self._check_key(key, SOURCE_KEYRING)
                self._key = key
                self.backend = "recovery"
                self._keep_in_keyring(f"master-key-{self._folder_id()}", key)
            return
        self._check_new_passphrase(passphrase)
        key = self._derive(passphrase)
        with self._lock:
            self._check_key(key, SOURCE_PASSPHRASE)
            self._key = key
            self.backend = "passphrase"
            if self.shared:
                self._remember_business_key(key)

    def _check_key(self, key: bytes, source: str) -> None:
        """A known value encrypted once tells a wrong passphrase from a damaged secret."""
        probe = self._meta("probe")
        if probe is None:
            nonce = os.urandom(12)
            self._set_meta("key_source", source)
            self._set_meta("probe", base64.b64encode(nonce + aead.AESGCM(key).encrypt(nonce, b"yupana", b"probe")).decode())
            return
        raw = base64.b64decode(probe)
        try:
            aead.AESGCM(key).decrypt(raw[:12], raw[12:], b"probe")
        except crypto_exceptions.InvalidTag:
            if source == SOURCE_KEYRING:
                raise YupanaError(ErrorCode.UNAUTHORIZED, "La clave del llavero del sistema no corresponde a esta "
                                  "carpeta de datos: no se pueden abrir las claves guardadas.") from None
            raise YupanaError(ErrorCode.UNAUTHORIZED, "La frase secreta no es correcta: no abre las claves de esta "
                              "carpeta de datos. Escríbala de nuevo (distingue mayúsculas y minúsculas).") from None

    # -------------------------------------------------------------- encryption

    def encrypt(self, plaintext: bytes, purpose: str) -> bytes:
        nonce = os.urandom(12)
        return nonce + aead.AESGCM(self.master_key()).encrypt(nonce, plaintext, purpose.encode())

    def decrypt(self, blob: bytes, purpose: str) -> bytes:
        try:
            return aead.AESGCM(self.master_key()).decrypt(blob[:12], blob[12:], purpose.encode())
        except crypto_exceptions.InvalidTag:
            raise YupanaError(ErrorCode.INTERNAL, f"El secreto «{purpose}» está dañado o no corresponde a esta "
                                                  "carpeta de datos.") from None

    # -------------------------------------------------------------- named secrets

    def put(self, name: str, value: bytes) -> None:
        try:
            self._repository.put(name, self.encrypt(value, name), _now_text())
        finally:
            self._forget()

    def get(self, name: str) -> bytes | None:
        if self._blobs is None:
            blob = self._repository.get(name)
        else:
            blob = self._blobs.get(name, lambda: self._repository.get(name))
        return self.decrypt(blob, name) if blob is not None else None

    def delete(self, name: str) -> bool:
        try:
            return self._repository.delete(name)
        finally:
            self._forget()

    def _forget(self) -> None:
        if self._blobs is not None:
            self._blobs.clear()


def _check_recovery(passphrase: str) -> None:
    if len(passphrase) < MIN_PASSPHRASE_CHARS:
        raise invalid("frase_recuperacion",
                      f"La frase de recuperación debe tener al menos {MIN_PASSPHRASE_CHARS} caracteres.")


def _now_text() -> str:
    """UTC now as the database's other timestamps write it («2026-11-25T12:00:00.000000Z»)."""
    return datetime.now(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
