"""Secrets are encrypted at rest and never logged."""

import logging

import pytest

from app.core.engine import Engine
from app.core.errors import YupanaError
from app.core.platform.logs import redact


def test_secret_round_trip_and_no_plain_text_on_disk(engine):
    secret = b"clave-sol-super-secreta-123"
    engine._secrets.put("sol.20100066603.clave", secret)
    assert engine._secrets.get("sol.20100066603.clave") == secret
    engine._storage.conn().execute("PRAGMA wal_checkpoint(FULL)")
    raw = engine.admin.database_file().read_bytes() + engine.admin.database_file().with_name("yupana.db-wal").read_bytes()
    assert secret not in raw
    assert engine._secrets.backend == "passphrase"


def test_a_wrong_passphrase_is_refused(home, monkeypatch):
    first = Engine(home)
    first._secrets.put("x", b"valor")
    first.close()
    monkeypatch.setenv("YUPANA_PASSPHRASE", "otra frase")
    second = Engine(home)
    try:
        with pytest.raises(YupanaError) as caught:
            second._secrets.get("x")
        assert caught.value.http_status == 401
        assert "frase secreta" in caught.value.message
    finally:
        second.close()


def test_without_keyring_or_passphrase_secrets_cannot_be_stored(engine, monkeypatch):
    monkeypatch.delenv("YUPANA_PASSPHRASE")
    with pytest.raises(YupanaError) as caught:
        engine._secrets.put("x", b"valor")
    assert "YUPANA_PASSPHRASE" in caught.value.message


@pytest.mark.parametrize("text, secret", [
    ("Authorization: Bearer abc.def-123", "abc.def-123"),
    ("password=hunter2&user=x", "hunter2"),
    ('{"clave_sol": "moddatos"}', "moddatos"),
    ("<wsse:Password Type='x'>s3cr3t</wsse:Password>", "s3cr3t"),
    ("-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----", "MIIEvQ"),
])
def test_log_redaction(text, secret):
    assert secret not in redact(text)


def test_log_file_never_holds_a_logged_secret(engine):
    logging.getLogger("app.test").warning("login with password=hunter2 and Bearer tok123")
    for handler in logging.getLogger("app").handlers:
        handler.flush()
    content = engine.admin.log_file().read_text(encoding="utf-8")
    assert "password=***" in content
    assert "hunter2" not in content and "tok123" not in content
