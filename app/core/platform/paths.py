"""Where Yupana keeps its data: the user data folder, or `YUPANA_HOME` when set."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import platformdirs

from app import APP_NAME

HOME_ENV = "YUPANA_HOME"


DATABASE_NAME = "yupana.db"


def data_home(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data folder: an explicit path, else $YUPANA_HOME, else the platform's user data dir.

    On POSIX it is made 0700 when Yupana creates it, and tightened to 0700 when it is empty or already
    a Yupana folder (a folder of other things the user pointed at keeps its mode; the files stay 0600)."""
    raw = explicit or os.environ.get(HOME_ENV) or platformdirs.user_data_dir(APP_NAME, appauthor=False)
    home = Path(raw).expanduser().resolve()
    private_folder(home, tighten=not home.exists() or not any(home.iterdir()) or (home / DATABASE_NAME).exists())
    return home


def private_folder(path: Path, tighten: bool = True) -> None:
    """Create a folder (0700 on POSIX); `tighten`: also take group and others' access from an existing one."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if tighten and os.name != "nt" and path.stat().st_mode & 0o077:
        os.chmod(path, 0o700)


def private_file(path: Path) -> None:
    """Create `path` readable and writable by its owner only (POSIX), or tighten an existing one, with the
    -wal and -shm companions SQLite creates with the database's mode."""
    if os.name == "nt":
        return
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    for candidate in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if candidate.exists() and candidate.stat().st_mode & 0o077:
            os.chmod(candidate, 0o600)


class PrivateJsonFile:
    """A private JSON file of a data folder (a desk's puesto.json, its sandboxes' addresses), read again only when it
    changed, by this process or another (its stamp: inode, size, mtime; `write` replaces the file, a new inode each
    time), and written whole through a private `.part` file moved over it (a reader never sees half of it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._name = os.fspath(path)  # os.stat on the text: pathlib's stat costs more, and it runs per setting read
        self._read: tuple[tuple[int, int, int] | None, Any] = (None, None)

    def read(self) -> Any:
        """The file's JSON, parsed again only when it changed; None when there is no file (ValueError: not JSON)."""
        try:
            info = os.stat(self._name)
        except FileNotFoundError:
            return None
        stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
        read_stamp, stored = self._read
        if stamp != read_stamp:
            try:
                stored = json.loads(self.path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                return None
            self._read = (stamp, stored)
        return stored

    def write(self, value: Any) -> None:
        """The whole file replaced at once. Each write has a temporary file of its own (two threads writing at once
        never share one), created private, and the file itself is never created empty first: a reader sees no file,
        the previous text or the new one."""
        text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True).encode("utf-8")
        handle, partial = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".part", dir=self.path.parent)
        try:
            with os.fdopen(handle, "wb") as stream:  # mkstemp: readable and writable by its owner only
                stream.write(text)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(partial, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(partial)
            raise


def database_path(home: Path) -> Path:
    return home / DATABASE_NAME


def log_dir(home: Path) -> Path:
    path = home / "logs"
    private_folder(path)
    return path


def package_data(name: str) -> Path:
    """A data file shipped inside the package (app/data), also inside a frozen bundle."""
    return Path(__file__).resolve().parents[2] / "data" / name  # app/core/platform/paths.py -> app/data
