"""Where Yupana keeps its data: the user data folder, or `YUPANA_HOME` when set."""

from __future__ import annotations

import os
from pathlib import Path

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


def database_path(home: Path) -> Path:
    return home / DATABASE_NAME


def log_dir(home: Path) -> Path:
    path = home / "logs"
    private_folder(path)
    return path


def package_data(name: str) -> Path:
    """A data file shipped inside the package (app/data), also inside a frozen bundle."""
    return Path(__file__).resolve().parents[2] / "data" / name  # app/core/platform/paths.py -> app/data
