"""`make mutation` end to end on a project of two functions: mutmut as the Makefile calls it, then
`scripts/mutation_report.py` reading mutmut's results (a full run over Yupana's modules takes hours: docs/testing.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers.base import ROOT

MODULE = '''import sqlite3


def cents_half_up(value: int) -> int:
    return (value + 50) // 100


def count_rows(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COUNT(*) AS n FROM items").fetchone()[0]


def untested(value: int) -> int:
    return value * 3
'''

TESTS = '''import sqlite3

from app.tiny import cents_half_up, count_rows


def test_cents_half_up():
    assert cents_half_up(150) == 2
    assert cents_half_up(149) == 1


def test_count_rows():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE items (name TEXT)")
    conn.execute("INSERT INTO items VALUES ('arroz')")
    assert count_rows(conn) == 1
'''

CONFIG = '''[tool.mutmut]
source_paths = ["app"]
only_mutate = ["app/tiny.py"]
pytest_add_cli_args_test_selection = ["tests/test_tiny.py"]
pytest_add_cli_args = ["-p", "no:cacheprovider", "-q"]
'''


def _project(root: Path) -> None:
    for path, text in {"app/__init__.py": "", "app/tiny.py": MODULE, "tests/test_tiny.py": TESTS,
                       "pyproject.toml": CONFIG}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    (root / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "mutation_report.py", root / "scripts")


def test_mutation_runs_mutmut_and_reports_killed_surviving_and_equivalent_mutants(tmp_path):
    _project(tmp_path)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("MUTANT", "PYTEST"))}
    run = subprocess.run([sys.executable, "-m", "mutmut", "run"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = subprocess.run([sys.executable, "scripts/mutation_report.py"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60, check=True)
    figures = json.loads(report.stdout.strip().splitlines()[-1])["modules"]["app/tiny.py"]
    # cents_half_up: its 4 mutants die; count_rows: 3 die (broken SQL, no SQL, another column), `select count(*) as
    # n` is SQLite's same text (equivalent), `AS N` is not set apart (the code could read the name by it); untested:
    # its 2 mutants are reached by no test and count as surviving.
    assert {key: figures[key] for key in ("killed", "survived", "equivalent", "not_run")} == {
        "killed": 7, "survived": 4, "equivalent": 1, "not_run": 0}
    assert (figures["killed_percent"], figures["score_percent"]) == (63.6, 70.0)
    assert "app/tiny.py" in report.stdout and "70.0" in report.stdout
