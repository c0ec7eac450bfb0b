"""`yupana db init|estado|actualizar|usar` (issue 34, item 1): the desk's database on each engine, the shared
schema created and upgraded only by these commands, and a desk refusing a shared schema that is not its version."""

from __future__ import annotations

import re

import pytest

from app.core.storage import schema
from app.core.storage.postgres.database import PostgresStorage
from tests.helpers.base import run_cli


def _ok(*args: str, home) -> str:
    done = run_cli(*args, home=home)
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    return done.stdout.decode()


def _refused(*args: str, home) -> str:
    done = run_cli(*args, home=home)
    assert done.returncode == 1, done.stdout.decode() + done.stderr.decode()
    return done.stderr.decode()


def test_a_desk_without_a_shared_database_is_on_sqlite(home):
    out = _ok("db", "estado", home=home)
    assert "Motor: SQLite" in out and f"Esquema: {schema.VERSION} " in out and str(home) in out
    assert "no hay base de datos compartida" in _refused("db", "init", home=home)
    assert "contraseña" in _refused("db", "usar", "postgresql://yupana:secreto@caja1/tienda", home=home)
    assert not (home / "puesto.json").exists()  # nothing kept of a refused address


@pytest.mark.postgres
def test_a_shared_database_is_created_shown_and_refused_when_its_schema_is_not_this_desks(postgres_server, home):
    url = postgres_server.empty_database()
    assert "usará la base de datos compartida" in _ok("db", "usar", url, home=home)
    assert "sin tablas de Yupana" in _ok("db", "estado", home=home)
    assert "yupana db init" in _refused("company", "show", home=home)  # the engine does not open on it
    assert "creadas" in _ok("db", "init", home=home)
    assert "ya tenía" in _ok("db", "init", home=home)
    out = _ok("db", "estado", home=home)
    assert "Motor: PostgreSQL 15" in out and f"Esquema: {schema.VERSION} (" in out
    # psycopg's compiled part with its own libpq (what the Windows bundle carries; the Wine smoke reads this line)
    assert re.search(r"^Controlador: psycopg 3\.\S+ \(binary, libpq \d+\.\d+\)$", out, re.M), out
    assert "Puestos vistos en los últimos 15 minutos: 1" in out
    assert "al día" in _ok("db", "actualizar", home=home)

    storage = PostgresStorage(url)
    try:  # a desk of version 1's database: what versions 2 and 3 added is not there yet
        for undo in ("DROP TABLE voucher_drafts", "DROP TABLE voucher_numbering", "DROP TABLE summary_numbering",
                     "DROP TABLE desk_turns", "ALTER TABLE products DROP COLUMN version",
                     "ALTER TABLE deliveries DROP COLUMN lease_holder", "DROP TABLE gre_tickets",
                     "DROP TABLE transport_entries", "DELETE FROM schema_version"):
            storage.conn().execute(undo)
        storage.conn().execute("INSERT INTO schema_version (version, how, applied_at) VALUES (1, 'created', 'x')")
        storage.conn().execute("INSERT INTO products (codigo, descripcion, precio) VALUES ('P1', 'Arroz', '4.50')")
        assert "«yupana db actualizar»" in _refused("company", "show", home=home)
        assert "Esquema actualizado: 2, 3, 4, 5." in _ok("db", "actualizar", home=home)
        assert storage.query_one("SELECT count(*) AS n FROM voucher_drafts") == {"n": 0}
        assert storage.query_one("SELECT count(lease_holder) AS n FROM deliveries") == {"n": 0}
        assert storage.query_one("SELECT count(*) AS n FROM voucher_numbering") == {"n": 0}
        assert storage.query_one("SELECT count(*) AS n FROM transport_entries") == {"n": 0}
        assert storage.query_one("SELECT version FROM products") == {"version": 1}  # a product before it: version 1
        _ok("company", "show", home=home)
        storage.conn().execute("INSERT INTO schema_version (version, how, applied_at) VALUES (?, 'newer', 'x')",
                               (schema.VERSION + 1,))
        assert "actualice Yupana en este puesto" in _refused("company", "show", home=home)
        assert "actualice Yupana en este puesto" in _refused("db", "actualizar", home=home)
    finally:
        storage.close()
    assert "SQLite" in _ok("db", "usar", home=home)
    _ok("company", "show", home=home)  # back on the folder's own database
