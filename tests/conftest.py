"""Fixtures for every test: each gets its own data folder; nothing touches the user's real one.

The suite mirrors the package: tests/core (the engine, never Qt), tests/gui (real widgets, marked `gui`
automatically), tests/cli (the `yupana` command, make targets, bundles); shared helpers in tests/helpers.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import costs, shared  # noqa: F401 - costs: imported for what it sets (tests/helpers/costs.py)
from tests.helpers.base import ISSUER_RUC, ROOT, TEST_PASSPHRASE

# The SUNAT submission and messaging fixtures (sandbox, sunat_engine, gateway…) live beside their helpers.
pytest_plugins = ["tests.helpers.sunat_support", "tests.helpers.messaging_support", "tests.helpers.voids_support",
                  "tests.helpers.registry_support", "tests.helpers.postgres", "tests.helpers.keyrings"]

GUI_TESTS = ROOT / "tests" / "gui"


# Under `make mutation` (mutmut names the mutant in MUTANT_UNDER_TEST) the fast exact tests go first: a mutant they
# kill stops there (pytest -x) instead of after the slow ones that happen to come earlier.
EXACT_FIRST = ("test_golden_", "test_mutation_gaps_", "test_deliberate_bugs", "test_verifier_refusals")


def pytest_configure(config: pytest.Config) -> None:
    """Under CI (CI=true) SUNAT's files are part of the run: without them it stops before collecting anything,
    naming the folder, instead of skipping the checks that matter most."""
    if shared.MISSING and shared.in_ci():
        raise pytest.UsageError(f"CI=true and {shared.MISSING}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/gui is marked `gui` (`pytest -m "not gui"` runs the rest without windows); under
    mutmut the exact tests are moved to the front (a stable sort: the others keep their order)."""
    for item in items:
        if GUI_TESTS in Path(item.fspath).parents:
            item.add_marker(pytest.mark.gui)
    if os.environ.get("MUTANT_UNDER_TEST"):
        items.sort(key=lambda item: not Path(item.fspath).name.startswith(EXACT_FIRST))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Every skip for SUNAT's missing files is reported at one place, so pytest folds them into one line with their
    count (it would name each test's own line otherwise)."""
    outcome = yield
    report = outcome.get_result()
    if shared.MISSING and report.skipped and isinstance(report.longrepr, tuple) \
            and shared.MISSING in str(report.longrepr[2]):
        report.longrepr = (str(shared.HELPER), 1, report.longrepr[2])


@pytest.fixture(autouse=True)
def _sunat_files(request: pytest.FixtureRequest) -> None:
    """A test marked `sunat_files` (or in a module so marked) needs SUNAT's reference files (tests/helpers/shared.py):
    without them it is skipped. Autouse fixtures run first, so no fixture of the test touches the missing files."""
    if request.node.get_closest_marker("sunat_files"):
        shared.require()


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "yupana-home"
    home.mkdir()
    monkeypatch.setenv("YUPANA_HOME", str(home))
    monkeypatch.setenv("YUPANA_PASSPHRASE", TEST_PASSPHRASE)
    monkeypatch.setenv("YUPANA_KEYRING", "0")
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    return home


@pytest.fixture(autouse=True)
def _fresh_line_cache() -> None:
    """Each test builds its voucher lines anew. The builder keeps lines it made (with their XML) for the next
    voucher, and ubl.py each TaxCategory it wrote; one kept by an earlier test, or under `make mutation` by the
    process mutmut forks each mutant from, would hide the code under test."""
    from app.core.invoicing import builder, ubl

    builder._line_cache.clear()
    ubl._tax_categories.clear()


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
    from app.core.platform.companies import Company

    return engine.admin.set_company(Company(ruc=ISSUER_RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                            direccion="AV. ABANCAY 123", nombre_comercial="YUPANA"))
