"""The lookups' storage ports on SQLite: the registry cache, the padrón's pointer row and its register files."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.core.lookup.padron import _find_line
from app.core.storage.ports.registry import RegisterUnavailable
from app.core.storage.sqlite.padron import MAX_OPEN_CONNECTIONS, SqlitePadronFiles

RUC_A, RUC_B, RUC_C = 20100066603, 20100066611, 20100066620


@pytest.fixture
def storage(engine_database):
    """A fresh database of each engine in turn (SQLite and PostgreSQL: tests/helpers/postgres.py)."""
    return engine_database


def test_the_cache_keeps_one_answer_per_environment_kind_and_number(storage, repos):
    cache = repos.registry_cache
    assert cache.get("beta", "ruc", "20100066603") is None and cache.fetched_at("beta", "ruc", "20100066603") is None
    cache.put("beta", "ruc", "20100066603", {"ruc": "20100066603", "razon_social": "ACME PERÚ S.A.C."}, 100.5)
    cache.put("sandbox", "ruc", "20100066603", {"razon_social": "INVENTADA"}, 7.0)
    answer = cache.get("beta", "ruc", "20100066603")
    assert answer is not None
    assert answer.record == {"ruc": "20100066603", "razon_social": "ACME PERÚ S.A.C."} and answer.fetched_at == 100.5
    assert "PERÚ" in storage.query_one("SELECT record FROM registry_cache WHERE environment = 'beta'")["record"]
    cache.put("beta", "ruc", "20100066603", {"razon_social": "OTRA"}, 200.0)  # replaces
    assert cache.get("beta", "ruc", "20100066603") == ({"razon_social": "OTRA"}, 200.0)
    assert cache.fetched_at("beta", "ruc", "20100066603") == 200.0
    assert cache.get("sandbox", "ruc", "20100066603") == ({"razon_social": "INVENTADA"}, 7.0)
    assert cache.get("beta", "ce", "20100066603") is None


def test_the_pointer_row_switches_in_one_statement(storage, repos):
    pointer = repos.padron_pointer
    assert pointer.current_file() is None and pointer.status() is None
    pointer.switch_to("padron-1.db", 10, 1, 0.5, "padron.zip", "2025-01-01T00:00:00+00:00")
    pointer.switch_to("padron-2.db", 20, 2, 1.5, "otro.zip", "2025-01-02T00:00:00+00:00")
    assert pointer.current_file() == "padron-2.db"
    assert pointer.status() == {"file": "padron-2.db", "rows": 20, "skipped": 2, "seconds": 1.5, "source": "otro.zip",
                                "loaded_at": "2025-01-02T00:00:00+00:00"}
    assert storage.query_one("SELECT COUNT(*) AS n FROM padron_current")["n"] == 1


def _line(ruc: int, name: str) -> bytes:
    return f"{ruc}|{name}|ACTIVO|HABIDO|150101|-|-|-|-|-|-|-|-|-|-|".encode("latin-1")


def _register(path: Path) -> None:
    path.touch()
    writer = SqlitePadronFiles().create(path)
    writer.add_blocks([RUC_A], [_line(RUC_A, "A") + b"\n" + _line(RUC_B, "B")])
    # Loose lines are written as the iterable is consumed: a later one sees the earlier ones (the import relies on it).
    seen: list[bytes | None] = []
    loose = [(RUC_C, _line(RUC_C, "C")), (RUC_C, _line(RUC_C, "C OTRA"))]
    added = writer.add_loose((ruc, line) for ruc, line in loose if seen.append(writer.loose_line(RUC_C)) is None)
    assert added == 1 and seen == [None, _line(RUC_C, "C")]  # the first line of a repeated RUC stays
    writer.commit({"rows": "3", "source": "x.txt", "loaded_at": "now"})
    writer.close()  # harmless after commit


def test_a_register_file_answers_its_blocks_and_loose_lines(tmp_path):
    path = tmp_path / "padron-1.db"
    _register(path)
    files = SqlitePadronFiles()
    reader = files.reader(path)
    assert files.reader(path) is reader  # one handle per thread and file
    assert _find_line(reader, str(RUC_B)) == _line(RUC_B, "B")
    assert _find_line(reader, str(RUC_C)) == _line(RUC_C, "C")
    assert _find_line(reader, "20100066638") is None
    assert reader.block_at_or_before(RUC_A - 1) is None
    files.close()
    with pytest.raises(RegisterUnavailable):  # its handle was closed: the next look-up reopens it
        reader.loose_line(RUC_C)
    assert _find_line(files.reader(path), str(RUC_A)) == _line(RUC_A, "A")
    files.close()


def test_an_abandoned_register_keeps_nothing_and_a_missing_file_is_unavailable(tmp_path):
    path = tmp_path / "padron-1.db.part"
    path.touch()
    writer = SqlitePadronFiles().create(path)
    writer.add_blocks([RUC_A], [_line(RUC_A, "A")])
    writer.abandon()
    path.unlink()
    with pytest.raises(RegisterUnavailable):
        SqlitePadronFiles().reader(tmp_path / "padron-gone.db")


def test_handles_of_many_threads_stay_bounded(tmp_path):
    path = tmp_path / "padron-1.db"
    _register(path)
    files = SqlitePadronFiles()
    answers: list[bytes | None] = []
    for _ in range(MAX_OPEN_CONNECTIONS + 4):
        worker = threading.Thread(target=lambda: answers.append(_find_line(files.reader(path), str(RUC_B))))
        worker.start()
        worker.join(timeout=10)
    assert answers == [_line(RUC_B, "B")] * (MAX_OPEN_CONNECTIONS + 4)
    assert len(files._opened) == MAX_OPEN_CONNECTIONS
    files.close()
