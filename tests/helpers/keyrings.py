"""A keyring of our own, in memory (`MemoryKeyring`: the system keyring's interface), and the fixture that puts it in
place of the system's for one test with the keyring path on and no passphrase in the environment (every other test
sets YUPANA_KEYRING=0): only the keyring can open the folder's keys."""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import keyring.backend
import pytest

from app.core.platform import secrets


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring in memory: the same interface as the system's (the engine names it «keyring:MemoryKeyring»)."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.passwords.pop((service, username), None)


@pytest.fixture
def memory_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryKeyring]:
    monkeypatch.setenv(secrets.KEYRING_ENV, "1")
    monkeypatch.delenv(secrets.PASSPHRASE_ENV, raising=False)  # only the keyring can open the keys
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)
