"""`yupana --self-test`'s database step is bounded in time (issue 19, point 6): on a large folder SQLite's quick_check
is stopped at the budget and the step says so in Spanish instead of running for a minute; a damaged file still fails."""

from __future__ import annotations

import itertools
import sqlite3

import pytest

from app.core.records import DatabaseCheck
from app.core.storage.sqlite.database import Storage
from app.selftest import _check_database


def stepping_clock(step_s: float = 1.0):
    """A clock that advances `step_s` each time it is read: the budget runs out after a few progress calls."""
    ticks = itertools.count()
    return lambda: next(ticks) * step_s


def test_a_sound_folder_is_checked_whole(engine):
    detail = _check_database(engine)
    assert "quick_check ok" in detail and "tablas" in detail
    assert engine._storage.quick_check(60) == (["ok"], True)


def test_the_check_stops_at_its_budget_and_says_so(engine):
    findings, finished = engine._storage.quick_check(2.5, clock=stepping_clock(), every=50)
    assert (findings, finished) == ([], False)
    detail = _check_database(engine, 2.5, clock=stepping_clock(), every=50)
    assert "se detuvo a los 2.5 s sin terminar" in detail and "no la da por dañada" in detail
    assert engine._storage.quick_check(60) == (["ok"], True)  # the handler is gone: the next check runs to the end
    assert engine._storage.query_one("SELECT count(*) AS n FROM vouchers")["n"] == 0


def test_a_damaged_file_fails_the_step(tmp_path):
    path = tmp_path / "damaged.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x TEXT)")
        conn.execute("CREATE INDEX t_x ON t (x)")
        conn.executemany("INSERT INTO t VALUES (?)", [(f"valor {n:05d} " * 8,) for n in range(2000)])
    conn.close()
    with sqlite3.connect(path) as conn:  # the index's entries no longer in order: a damage quick_check sees
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 't_x'").fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    start = (root - 1) * page_size
    data[start + 100:start + page_size] = bytes(reversed(data[start + 100:start + page_size]))
    path.write_bytes(bytes(data))
    storage = Storage(path)
    try:
        findings, finished = storage.quick_check(60)
        assert finished and findings != ["ok"], findings

        class Admin:  # what _check_database asks of an engine: Administration.check_database on this file
            def check_database(self, budget_s, **bounds):
                findings, finished = storage.quick_check(budget_s, **bounds)
                return DatabaseCheck(findings, finished, storage.path, storage.path.stat().st_size,
                                     storage.table_count())

        class Folder:
            admin = Admin()

        folder = Folder()
        with pytest.raises(RuntimeError, match="está dañada"):
            _check_database(folder)
    finally:
        storage.close()
