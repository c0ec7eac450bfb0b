"""Secrets on several desks (issue 34, item 3): on a shared PostgreSQL the keys are encrypted under a key derived from
the business's passphrase (scrypt; salt and probe in the shared database), never under one desk's keyring; every desk
that types the passphrase opens them, a wrong one opens nothing, and a desk with a keyring keeps the derived key there
so it does not ask again."""

from __future__ import annotations

import base64

import pytest

from app.core.errors import ErrorCode, YupanaError
from app.core.platform import secrets
from app.core.platform.settings import DeskSettings
from tests.helpers.base import ISSUER_RUC

pytestmark = pytest.mark.postgres

BUSINESS_PASSPHRASE = "frase del negocio 2026"


@pytest.fixture
def shared_url(postgres_server):
    return postgres_server.fresh_database()


def _desk(tmp_path, name: str, url: str):
    from app.core.engine import Engine

    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    DeskSettings(folder).put("database_url", url)
    return Engine(folder)


def test_every_desk_opens_the_keys_with_the_business_passphrase(shared_url, tmp_path, monkeypatch):
    monkeypatch.setenv(secrets.PASSPHRASE_ENV, BUSINESS_PASSPHRASE)
    first = _desk(tmp_path, "caja1", shared_url)
    try:
        certificado = first.invoicing.create_test_certificate(ISSUER_RUC).certificado_id
        assert first._secrets.shared and first._secrets._meta("key_source") == secrets.SOURCE_PASSPHRASE
    finally:
        first.close()
    second = _desk(tmp_path, "caja2", shared_url)
    try:  # another desk reads the key the first one stored: it can sign with it
        assert second.invoicing.default_certificate(ISSUER_RUC).certificado_id == certificado
        assert second._secrets.state() == secrets.UNLOCKED
    finally:
        second.close()
    monkeypatch.setenv(secrets.PASSPHRASE_ENV, "otra frase cualquiera")
    third = _desk(tmp_path, "caja3", shared_url)
    try:
        with pytest.raises(YupanaError) as caught:
            third._secrets.master_key()
        assert caught.value.code == ErrorCode.UNAUTHORIZED and "frase secreta no es correcta" in caught.value.message
    finally:
        third.close()


def test_a_desk_with_a_keyring_asks_once_then_remembers_the_business_key(shared_url, tmp_path, memory_keyring):
    desk = _desk(tmp_path, "caja1", shared_url)
    try:  # a keyring at hand does not make a key of its own: the business chooses a passphrase
        assert desk._secrets.state() == secrets.NEW_PASSPHRASE
        desk._secrets.unlock(BUSINESS_PASSPHRASE)
        desk.invoicing.create_test_certificate(ISSUER_RUC)
        folder_id = desk._secrets._meta("folder_id")
    finally:
        desk.close()
    assert list(memory_keyring.passwords) == [(secrets.KEYRING_SERVICE, f"business-key-{folder_id}")]
    again = _desk(tmp_path, "caja1", shared_url)  # the same desk, started again: nothing asked
    try:
        assert again._secrets.state() == secrets.UNLOCKED and again._secrets.backend == "passphrase+keyring"
        assert again.invoicing.default_certificate(ISSUER_RUC) is not None
    finally:
        again.close()
    stale_key = base64.b64encode(bytes(32)).decode()  # a key of another passphrase
    memory_keyring.passwords[(secrets.KEYRING_SERVICE, f"business-key-{folder_id}")] = stale_key
    stale = _desk(tmp_path, "caja1", shared_url)
    try:  # a remembered key that no longer opens the keys: the passphrase is asked again
        assert stale._secrets.state() == secrets.LOCKED
    finally:
        stale.close()
