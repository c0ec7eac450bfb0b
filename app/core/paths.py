"""Where Yupana keeps its data: the user data folder, or `YUPANA_HOME` when set."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from app import APP_NAME

HOME_ENV = "YUPANA_HOME"


def data_home(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data folder: an explicit path, else $YUPANA_HOME, else the platform's user data dir."""
    raw = explicit or os.environ.get(HOME_ENV) or platformdirs.user_data_dir(APP_NAME, appauthor=False)
    home = Path(raw).expanduser().resolve()
    home.mkdir(parents=True, exist_ok=True)
    return home


def database_path(home: Path) -> Path:
    return home / "yupana.db"


def log_dir(home: Path) -> Path:
    path = home / "logs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def package_data(name: str) -> Path:
    """A data file shipped inside the package (app/data), also inside a frozen bundle."""
    return Path(__file__).resolve().parent.parent / "data" / name
