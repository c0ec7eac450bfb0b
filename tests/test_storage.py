"""SQLite storage: WAL, two processes on one folder, migrations applied once."""

import subprocess
import sys
import textwrap
import threading

import pytest
from sqlite_utils import Migrations

from app.core import storage as storage_module
from app.core.paths import database_path
from app.core.storage import Storage
from tests.conftest import ROOT


def test_database_is_in_wal_mode(engine):
    assert engine.storage.query_one("PRAGMA journal_mode")["journal_mode"] == "wal"
    assert engine.storage.path == database_path(engine.home)


def test_write_rolls_back_on_error(engine):
    with pytest.raises(RuntimeError):
        with engine.storage.write() as conn:
            conn.execute("INSERT INTO settings (key, value) VALUES ('environment', 'beta')")
            raise RuntimeError("boom")
    assert engine.config_get("environment") == "sandbox"


def test_threads_write_without_locking_errors(engine):
    errors = []

    def writer(n):
        try:
            for i in range(50):
                with engine.storage.write() as conn:
                    conn.execute("INSERT INTO settings (key, value) VALUES (?, ?) "
                                 "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (f"t{n}-{i}", "x"))
        except Exception as exc:  # collected, asserted below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    assert engine.storage.query_one("SELECT count(*) AS n FROM settings WHERE key LIKE 't%'")["n"] == 200


WRITER = textwrap.dedent("""
    import sys
    from app.core.engine import Engine
    engine = Engine(sys.argv[1])
    for i in range(200):
        with engine.storage.write() as conn:
            conn.execute("INSERT INTO settings (key, value) VALUES (?, ?)", (f"{sys.argv[2]}-{i}", "x"))
    engine.close()
""")


def test_two_processes_open_and_write_the_same_folder(home):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(home), name], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for name in ("a", "b")]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    store = Storage.open(database_path(home))
    try:
        assert store.query_one("SELECT count(*) AS n FROM settings WHERE key LIKE 'a-%' OR key LIKE 'b-%'")["n"] == 400
    finally:
        store.close()


def test_a_migration_added_later_runs_once(home, monkeypatch):
    path = database_path(home)
    first = Storage.open(path)
    first.close()
    runs = []
    later = Migrations("yupana.test-later")

    @later()
    def m001_add_table(db):
        runs.append(1)
        db.execute("CREATE TABLE later_things (id INTEGER PRIMARY KEY)")

    monkeypatch.setattr(storage_module, "_MIGRATION_SETS", [*storage_module._MIGRATION_SETS, later])
    for _ in range(3):
        store = Storage.open(path)
        assert "later_things" in store.db().table_names()
        store.close()
    assert runs == [1]
