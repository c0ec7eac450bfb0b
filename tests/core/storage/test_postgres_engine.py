"""The PostgreSQL engine (issue 34, item 1): the common dialect's translation, a number taken by another desk's
transaction, the schema refused when it is not this desk's version, and the engine opened on a shared database by the
desk's `database_url`, issuing and signing there."""

from __future__ import annotations

import threading
import time

import pytest

from app.core.errors import YupanaError
from app.core.storage import schema
from app.core.storage.engines import open_shared_database, repositories
from app.core.storage.ports.vouchers import NumberTaken
from app.core.storage.postgres.database import PostgresStorage
from app.core.storage.postgres.dialect import translate
from app.core.storage.sqlite.database import DB_NOW
from tests.core.invoicing.test_invoicing_storage import voucher
from tests.helpers.voucher_matrix import factura, item

pytestmark = pytest.mark.postgres


def test_the_common_dialect_is_translated_once_per_statement():
    statement = translate("INSERT INTO vouchers (serie) VALUES (?)")
    assert statement.text == "INSERT INTO vouchers (serie) VALUES (%s) RETURNING id" and statement.returns_key
    assert translate("INSERT INTO settings (key, value) VALUES (?, ?)").returns_key is False  # no generated key
    like = translate("SELECT 1 FROM vouchers WHERE serie LIKE 'B%' AND note = '?' AND numero = ?")
    assert like.text == "SELECT 1 FROM vouchers WHERE serie LIKE 'B%%' AND note = '?' AND numero = %s"
    clock = translate(f"SELECT {DB_NOW}, julianday(updated_at) FROM t INDEXED BY t_index").text
    assert "julianday" not in clock and "INDEXED" not in clock and "clock_timestamp()" in clock
    assert translate("SELECT ?") is translate("SELECT ?")  # kept


def _waiting_on_a_lock(storage: PostgresStorage) -> bool:
    row = storage.conn().execute("SELECT count(*) FROM pg_locks WHERE NOT granted").fetchone()
    return bool(row and row[0])


def test_a_number_another_desk_is_inserting_waits_for_it_then_is_refused(postgres_server):
    url = postgres_server.fresh_database()
    first, second = open_shared_database(url), open_shared_database(url)
    try:
        outcome: list[object] = []
        with first.transaction(durable=True):
            repositories(first).vouchers.add(voucher(7))

            def other_desk() -> None:
                try:
                    outcome.append(repositories(second).vouchers.add(voucher(7)))
                except NumberTaken as taken:
                    outcome.append(taken)

            racer = threading.Thread(target=other_desk)
            racer.start()
            deadline = time.monotonic() + 30
            while not _waiting_on_a_lock(first):  # the other desk's insert waits on the unique index
                assert time.monotonic() < deadline, "the second insert never waited"
                threading.Event().wait(0.01)
        racer.join(30)
        assert len(outcome) == 1 and isinstance(outcome[0], NumberTaken)
        assert [r["numero"] for r in second.query("SELECT numero FROM vouchers")] == [7]
    finally:
        first.close()
        second.close()


def test_a_database_of_another_schema_version_is_refused_in_spanish(postgres_server):
    url = postgres_server.fresh_database()
    storage = PostgresStorage(url)
    try:
        storage.conn().execute("INSERT INTO schema_version (version, how, applied_at) VALUES (?, 'test', 'x')",
                               (schema.VERSION + 1,))
    finally:
        storage.close()
    with pytest.raises(YupanaError, match="más nuevo que el que conoce esta versión de Yupana"):
        open_shared_database(url)


def test_the_engine_opens_the_shared_database_its_desk_names_and_issues_there(postgres_server, home):
    from app.core.engine import Engine
    from app.core.platform.companies import Company
    from app.core.platform.settings import DeskSettings

    url = postgres_server.fresh_database()
    DeskSettings(home).put("database_url", url)
    engine = Engine(home)
    try:
        assert engine.admin.config_get("database_url") == url
        engine.admin.set_company(Company(ruc="20100066603", razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                         direccion="AV. ABANCAY 123"))
        certificado = engine.invoicing.create_test_certificate("20100066603").certificado_id
        generated = engine.invoicing.generate_xml(factura("F001", 1, [item("Arroz Costeño 5 kg", "2", "25.37")]))
        signed = engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado})
        assert "<ds:Signature" in signed.xml_firmado
        [listed] = engine.invoicing.vouchers(search="F001-1")
        assert (listed.serie, listed.numero, listed.status) == ("F001", 1, "firmado")
    finally:
        engine.close()
    shared = open_shared_database(url)
    try:
        assert shared.query_one("SELECT count(*) AS n FROM vouchers") == {"n": 1}
        assert shared.query_one("SELECT count(*) AS n FROM desks") == {"n": 1}  # this desk, seen
    finally:
        shared.close()
    assert not (home / "yupana.db").exists()  # nothing of it in the data folder
