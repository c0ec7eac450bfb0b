"""`yupana --version` and `--help` start quickly: they import no cryptography, storage, HTTP, engine or Qt module
(issue 33, start-up). Each order runs as a real process (python -m app) and its imports are read from
the interpreter's sys.modules at exit; a command's module is imported only when that command is parsed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.cli import FEATURE_COMMANDS, build_parser
from tests.helpers.base import ROOT

# What a start that only prints must not pay for: signing and certificates, XML, the storage engines, HTTP clients
# and servers, the data models, the engine itself, the sandboxes, the local API and the windows.
HEAVY = ("cryptography", "signxml", "lxml", "sqlite_utils", "sqlite3", "_sqlite3", "httpx", "http.server",
         "socketserver", "fastapi", "starlette", "uvicorn", "pydantic", "PySide6", "shiboken6", "app.core",
         "app.sandbox", "app.api", "app.gui")


# `python -m app ARGS`, with every module loaded by then written down at exit (after argparse's SystemExit too).
# sys.modules, not `-X importtime`: that report leaves out modules loaded through importlib.import_module.
RUN_AND_LIST = """
import atexit, json, runpy, sys
listing, sys.argv = sys.argv[1], ["yupana", *sys.argv[2:]]
atexit.register(lambda: open(listing, "w").write(json.dumps(sorted(sys.modules))))
runpy.run_module("app", run_name="__main__", alter_sys=True)
"""


def imported_modules(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run `yupana ARGS` in a fresh interpreter; its exit and every module it imported."""
    listing = tmp_path / "modules.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", RUN_AND_LIST, str(listing), *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=60)
    return done, set(json.loads(listing.read_text(encoding="utf-8")))


def heavy_among(names: set[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """The names that are one of the `heavy` modules or under one."""
    return sorted(name for name in names if any(name == top or name.startswith(f"{top}.") for top in heavy))


def window_start(tmp_path: Path, script: str) -> Any:
    """Run a start of the windows (`script`, Qt offscreen, a new data folder) in a fresh interpreter; the JSON it wrote
    to the file named by its first argument."""
    listing = tmp_path / "listing.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), YUPANA_HOME=str(tmp_path / "home"), YUPANA_PASSPHRASE="frase-de-prueba",
               YUPANA_KEYRING="0", QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", script, str(listing)], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(listing.read_text(encoding="utf-8"))


@pytest.mark.parametrize("args", [("--version",), ("--help",)], ids=["version", "help"])
def test_version_and_help_import_nothing_heavy(tmp_path, args):
    done, names = imported_modules(tmp_path, *args)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "app.cli" in names  # the listing was read: the entry point itself is in it
    assert heavy_among(names) == []


def test_help_still_lists_every_command_with_its_summary(tmp_path):
    done, _ = imported_modules(tmp_path, "--help")
    for name, summary in FEATURE_COMMANDS.items():
        assert name in done.stdout
        assert summary[:30] in done.stdout.replace("\n", " ").replace("  ", " ")


def test_a_command_s_help_imports_its_module_only(tmp_path):
    done, names = imported_modules(tmp_path, "pdf", "--help")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--ticket" in done.stdout  # the real parser of the command answered, not a placeholder
    assert "app.commands.pdf" in names
    assert not {f"app.commands.{name}" for name in FEATURE_COMMANDS if name != "pdf"} & names
    assert heavy_among(names) == []


def test_the_lazy_parser_reads_a_command_as_the_complete_one_does():
    argv = ["pdf", "F001-7", "--tipo", "01", "--ticket"]
    lazy, complete = build_parser(lazy=True).parse_args(argv), build_parser().parse_args(argv)
    assert vars(lazy) == vars(complete)
    assert lazy.func.__module__ == "app.commands.pdf"


# ---------------------------------------------------------------- the main window's start (issue 33)

# What the main window's start must not load before it is shown: HTTP clients (httpx brings rich and pygments with
# its command line), cryptography (loaded at the first key or certificate read: the status bar's worker asks for the
# keys' state once the window is up), the CSV sniffer, asyncio (only a request from an event loop needs it), PDFs,
# QR codes, fonts and images, the web stack, the stream's socket.io client, spreadsheets and PostgreSQL. Each of these
# is deferred to its first use (app.core.platform.lazy, or an import inside a function listed in
# tests/core/test_package_layout.py).
WINDOW_MUST_NOT_LOAD = ("httpx", "httpcore", "rich", "pygments", "cryptography", "charset_normalizer",
                        "asyncio", "ssl", "fpdf", "fontTools", "segno", "PIL", "uvicorn", "starlette", "fastapi",
                        "standardwebhooks", "socketio", "engineio", "openpyxl", "psycopg", "keyring")

# As bench/startup.py's child: the modules imported, the engine opened on a new folder and the window built, before
# the event loop first runs (the status bar's first read is then queued on a worker, which may load more).
WINDOW_START = """
import json, sys
listing = sys.argv[1]
sys.argv = sys.argv[:1]
from app.gui.app import application
from app.core.api import Engine
from app.gui.main_window import MainWindow
app = application()
engine = Engine()
window = MainWindow(engine, first_run=False)
names = sorted(sys.modules)
window.close()
engine.close()
open(listing, "w").write(json.dumps(names))
"""


def test_the_main_window_starts_without_loading_what_it_does_not_show(tmp_path):
    names = set(window_start(tmp_path, WINDOW_START))
    assert {"app.gui.main_window", "app.core.engine", "app.gui.vouchers"} <= names  # the window and its first page
    assert heavy_among(names, WINDOW_MUST_NOT_LOAD) == []


# The app's own start path (app.gui.app.start, what `yupana` runs): the list of modules is taken at the first paint of
# any widget of the main window, then again once the engine is attached. What the app starts beside the engine (the
# webhook listener on its configured port, the sandboxes, the local API) is left out: a test takes no fixed port.
APP_START = """
import json, sys
listing = sys.argv[1]
sys.argv = sys.argv[:1]
import app.gui.app as gui
from PySide6.QtCore import QEvent, QObject, QTimer
from app.gui.main_window import MainWindow

seen = {}

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if (event.type() == QEvent.Type.Paint and "painted" not in seen and hasattr(watched, "window")
                and isinstance(watched.window(), MainWindow)):
            seen["painted"] = sorted(sys.modules)
            seen["opening"] = watched.window().opening.text()
        return False

gui.start_services = lambda window: seen.setdefault("started", sorted(sys.modules))
app = gui.application()
spy = FirstPaint()
app.installEventFilter(spy)
window = gui.start()
window.engine_attached.connect(app.quit)
window.engine_open_failed.connect(lambda exc: app.quit())
QTimer.singleShot(60_000, app.quit)  # a start that never ends fails below rather than hanging
app.exec()
seen["attached"] = window.attached
gui.shutdown(window)
open(listing, "w").write(json.dumps(seen))
"""


def test_the_app_s_start_paints_the_window_before_the_engine_is_imported(tmp_path):
    seen = window_start(tmp_path, APP_START)
    assert seen["attached"] is True and seen["opening"] == "Abriendo sus datos…"
    painted, started = set(seen["painted"]), set(seen["started"])
    assert "app.gui.main_window" in painted and "app.core.engine" not in painted  # the frame first, then the engine
    assert {"app.core.engine", "app.gui.vouchers"} <= started  # attached: the engine and the first page
    assert heavy_among(painted, ("sqlite3", "_sqlite3", "sqlite_utils", "pydantic")) == []
