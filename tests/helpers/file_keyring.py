"""A keyring backend of our own kept in a JSON file (`YUPANA_TEST_KEYRING_FILE`), so a `yupana` process started by a
test (PYTHON_KEYRING_BACKEND=tests.helpers.file_keyring.FileKeyring, keyring's own switch) and the test itself see
one keyring: «this PC's» keyring in the backup tests. Test-only: it stores keys in plain text."""

from __future__ import annotations

import json
import os
from pathlib import Path

import keyring.backend

FILE_ENV = "YUPANA_TEST_KEYRING_FILE"
BACKEND = "tests.helpers.file_keyring.FileKeyring"


class FileKeyring(keyring.backend.KeyringBackend):
    priority = 1

    def _path(self) -> Path:
        return Path(os.environ[FILE_ENV])

    def _load(self) -> dict[str, str]:
        path = self._path()
        return dict(json.loads(path.read_text())) if path.exists() else {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._load()
        data[f"{service}/{username}"] = password
        self._path().write_text(json.dumps(data))

    def delete_password(self, service: str, username: str) -> None:
        data = self._load()
        data.pop(f"{service}/{username}", None)
        self._path().write_text(json.dumps(data))
