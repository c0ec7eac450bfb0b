"""Shared fixtures: every test gets its own data folder; nothing touches the user's real one."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.gui.collector import collect_if_due

# The SUNAT submission tests' fixtures (sandbox, sunat_engine) live beside their helpers.
pytest_plugins = ["tests.sunat_support", "tests.messaging_support"]

ROOT = Path(__file__).resolve().parent.parent
# `make mutation` runs the tests from a copy in mutants/: it names the reference folder itself.
SHARED = Path(os.environ.get("YUPANA_TESTS_SHARED") or ROOT.parent / "shared").resolve()
SUNAT_CHECK = SHARED / "tools" / "sunat_check.py"
RULES_DIR = SHARED / "sunat" / "validation"

# A real, valid RUC used as the demo issuer throughout the tests.
ISSUER_RUC = "20100066603"
TEST_PASSPHRASE = "frase de prueba de los tests"


@pytest.fixture(autouse=True)
def _garbage_collected_on_the_main_thread():
    """Automatic collection may start on a worker thread and free a cycle holding a Qt object there,
    which crashes Qt (the app itself uses app.gui.collector for the same reason). In tests, cycles are
    collected between tests, on the main thread."""
    gc.disable()
    yield
    gc.disable()  # a test of the collector turns it back on
    collect_if_due()


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "yupana-home"
    home.mkdir()
    monkeypatch.setenv("YUPANA_HOME", str(home))
    monkeypatch.setenv("YUPANA_PASSPHRASE", TEST_PASSPHRASE)
    monkeypatch.setenv("YUPANA_KEYRING", "0")
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    return home


@pytest.fixture
def home(_isolated_home: Path) -> Path:
    return _isolated_home


@pytest.fixture
def engine(home: Path):
    from app.core.engine import Engine

    eng = Engine(home)
    yield eng
    eng.close()


@pytest.fixture
def company(engine):
    """The demo issuer, registered in the engine."""
    from app.core.companies import Company

    return engine.set_company(Company(ruc=ISSUER_RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                      direccion="AV. ABANCAY 123", nombre_comercial="YUPANA"))


def run_cli(*args: str, stdin: str | bytes | None = None, home: Path | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `yupana ARGS` as a real process (python -m app) in this checkout."""
    env = dict(os.environ)
    if home is not None:
        env["YUPANA_HOME"] = str(home)
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, "-m", "app", *args], input=data, capture_output=True, cwd=ROOT, env=env,
                          timeout=timeout)
