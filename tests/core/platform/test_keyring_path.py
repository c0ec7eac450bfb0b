"""The keyring path of the secret store (every other test sets YUPANA_KEYRING=0): a real keyring backend, set
programmatically, keeps the folder's master key; secrets are encrypted under it, read back by a new engine on the
same folder, and never written in plain text to the database."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from app.core.engine import Engine
from app.core.errors import ErrorCode, YupanaError
from app.core.platform import secrets
from app.core.platform.paths import database_path

SECRET = "clave-del-proveedor-que-nadie-debe-leer-7f3a"


def _database_bytes(home) -> bytes:
    path = database_path(home)
    return b"".join(p.read_bytes() for p in (path, path.with_name(path.name + "-wal")) if p.exists())


def test_secrets_live_under_the_keyrings_master_key(home, memory_keyring):
    engine = Engine(home)
    try:
        engine.lookups.set_provider_token("factiliza", SECRET)
        assert engine._secrets.backend == "keyring:MemoryKeyring"
        assert engine._secrets.state() == secrets.UNLOCKED
        assert engine._secrets._meta("key_source") == secrets.SOURCE_KEYRING
        folder_id = engine._secrets._meta("folder_id")
        assert list(memory_keyring.passwords) == [(secrets.KEYRING_SERVICE, f"master-key-{folder_id}")]
        master = base64.b64decode(memory_keyring.passwords[(secrets.KEYRING_SERVICE, f"master-key-{folder_id}")])
        assert len(master) == 32
        row = engine._storage.query_one("SELECT blob FROM secrets WHERE name LIKE '%factiliza%'")
        blob = bytes(row["blob"])
        name = engine._storage.query_one("SELECT name FROM secrets WHERE name LIKE '%factiliza%'")["name"]
        assert AESGCM(master).decrypt(blob[:12], blob[12:], name.encode()).decode() == SECRET
        token = engine.admin.api_token()
    finally:
        engine.close()

    again = Engine(home)  # a new engine on the same folder: the key comes from the keyring again
    try:
        assert again._secrets.get(name) == SECRET.encode()
        assert again.admin.api_token() == token
        assert again._secrets.backend == "keyring:MemoryKeyring"
    finally:
        again.close()

    stored = _database_bytes(home)
    assert SECRET.encode() not in stored
    assert token.encode() not in stored
    assert master not in stored and base64.b64encode(master) not in stored


def test_a_keyring_folder_without_its_keyring_says_so(home, memory_keyring):
    engine = Engine(home)
    try:
        engine._secrets.put("prueba", b"valor")
    finally:
        engine.close()
    memory_keyring.passwords.clear()  # another user's session: the key is not there
    other = Engine(home)
    try:
        with pytest.raises(YupanaError) as caught:
            other._secrets.get("prueba")
        assert caught.value.code == ErrorCode.NOT_CONFIGURED  # no new key is made: it would open nothing here
        assert "llavero del sistema, que aquí no las tiene o no responde" in caught.value.message
        assert memory_keyring.passwords == {}
        assert other.admin.secret_state() == secrets.KEYRING_MISSING
    finally:
        other.close()
