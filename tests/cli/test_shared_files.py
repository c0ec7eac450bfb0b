"""A clone without SUNAT's reference files (../shared): the tests that need them are skipped with one line, and
under CI=true the run stops at collection naming the folder (tests/helpers/shared.py, tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers import shared
from tests.helpers.base import ROOT

# A module that needs the files at collection (its samples are parameters) and a fixture that reads them.
NEEDS_FILES = ["tests/core/invoicing/test_cdr.py", "tests/core/invoicing/test_verifier_refusals.py::"
               "test_two_signatures_are_refused"]


def _pytest(tmp_path, *args: str, ci: str | None) -> subprocess.CompletedProcess:
    # Without the installed plugins (hypothesis, schemathesis, pytest-qt, xdist: two seconds of imports per run,
    # three runs): these files use none of them, and what is checked is this project's conftest
    env = {**os.environ, shared.ENVIRONMENT_VARIABLE: str(tmp_path / "no-shared-here"),
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("CI", None)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)


def test_without_the_folder_the_tests_that_need_it_are_skipped_in_one_line(tmp_path):
    done = _pytest(tmp_path, "-rs", *NEEDS_FILES, ci=None)
    assert done.returncode == 0, done.stdout[-3000:]
    skip_lines = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skip_lines) == 1, skip_lines
    assert str(tmp_path / "no-shared-here") in skip_lines[0]
    assert "../shared" in skip_lines[0] and shared.ENVIRONMENT_VARIABLE in skip_lines[0]
    assert " passed" not in done.stdout.splitlines()[-1]  # nothing of these ran without the files


def test_under_ci_a_missing_folder_fails_even_a_collection(tmp_path):
    done = _pytest(tmp_path, "--collect-only", "tests/core/invoicing/test_cdr.py", ci="true")
    assert done.returncode != 0
    assert str(tmp_path / "no-shared-here") in done.stdout + done.stderr
    assert "CI=true" in done.stdout + done.stderr


def test_without_ci_a_collection_without_the_folder_passes(tmp_path):
    done = _pytest(tmp_path, "--collect-only", "tests/core/invoicing/test_cdr.py", ci=None)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_the_folder_is_found_beside_the_clone_or_where_the_variable_says():
    if os.environ.get(shared.ENVIRONMENT_VARIABLE):
        assert shared.SHARED == shared.Path(os.environ[shared.ENVIRONMENT_VARIABLE]).resolve()
    else:
        assert shared.SHARED == (ROOT.parent / "shared").resolve()
