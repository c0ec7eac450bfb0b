"""Live across desks (issue 34, item 6): two desks' engines on one shared PostgreSQL. What one tells on its bus (a
voucher issued, a summary's answer, a company saved) the other hears on its own through LISTEN/NOTIFY, without
polling; a desk hears its own change once; a desk whose feed was cut hears `desk.reconnected` when it is back, then
the others' changes again."""

from __future__ import annotations

import threading

import pytest

from app.core.platform import events
from app.core.platform.companies import Company
from app.core.storage.postgres.database import connect
from tests.helpers.messaging_support import wait_for
from tests.helpers.postgres import desk_engine
from tests.helpers.voucher_matrix import factura, item

pytestmark = pytest.mark.postgres

RUC = "20100066603"
WAIT = 10.0
LISTENING = "LISTEN yupana_changes"  # the change feed's statement, as pg_stat_activity shows it


class Heard:
    """Every event an engine's bus tells, kept for the test to read."""

    def __init__(self, engine) -> None:
        self.events: list[events.Event] = []
        self._lock = threading.Lock()
        self.handle = engine.admin.subscribe(self._on)

    def _on(self, _name: str, payload: events.Event) -> None:
        with self._lock:
            self.events.append(payload)

    def of(self, kind: type) -> list:
        with self._lock:
            return [e for e in self.events if isinstance(e, kind)]


def _listeners(admin_url: str, database: str) -> int:
    """Connections LISTENing for the desks' changes on the shared database (one per desk; the cache watch's listen on
    a channel of their own), as the server shows them."""
    with connect(admin_url) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND query = %s",
                           (database, LISTENING)).fetchone()
    return int(row[0]) if row else 0


def _cut_listeners(admin_url: str, database: str) -> int:
    with connect(admin_url) as conn:
        rows = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                            "AND query = %s", (database, LISTENING)).fetchall()
    return len(rows)


@pytest.fixture
def two_desks(postgres_server, tmp_path):
    url = postgres_server.fresh_database()
    database = url.rsplit("/", 1)[1]
    admin_url = postgres_server.database_url("postgres").replace("yupana@", "postgres@")
    first, second = desk_engine(tmp_path / "caja1", url), desk_engine(tmp_path / "caja2", url)
    try:
        assert wait_for(lambda: _listeners(admin_url, database) == 2, WAIT)
        yield first, second, admin_url, database
    finally:
        first.close()
        second.close()


def test_a_voucher_issued_on_one_desk_is_heard_on_the_other(two_desks):
    first, second, _admin, _db = two_desks
    on_first, on_second = Heard(first), Heard(second)
    first.admin.set_company(Company(ruc=RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                    direccion="AV. ABANCAY 123"))
    assert wait_for(lambda: [e.ruc for e in on_second.of(events.CompanySaved)] == [RUC], WAIT)
    first.invoicing.generate_xml(factura("F001", 1, [item("Arroz Costeño 5 kg", "2", "25.37")]))
    voucher_id = first.invoicing.find_voucher("F001-1")
    assert wait_for(lambda: [e.ids for e in on_second.of(events.VoucherChanged)] == [(voucher_id,)], WAIT)
    [heard] = on_second.of(events.VoucherChanged)
    assert heard.status == first.invoicing.voucher(voucher_id).status
    assert second.invoicing.voucher(voucher_id).serie_numero == "F001-1"  # told after its commit: already readable
    # The desk that issued it heard its own change once (its note coming back is not told again).
    assert len(on_first.of(events.VoucherChanged)) == 1 and len(on_first.of(events.CompanySaved)) == 1


def test_a_desk_cut_off_hears_that_it_is_back_then_hears_again(two_desks):
    first, second, admin_url, database = two_desks
    on_second = Heard(second)
    assert _cut_listeners(admin_url, database) == 2  # the server ends both desks' LISTEN connections
    assert wait_for(lambda: len(on_second.of(events.DeskReconnected)) == 1, WAIT)
    assert wait_for(lambda: _listeners(admin_url, database) == 2, WAIT)
    first.admin.set_company(Company(ruc=RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                    direccion="AV. ABANCAY 123"))
    assert wait_for(lambda: [e.ruc for e in on_second.of(events.CompanySaved)] == [RUC], WAIT)


def test_a_sqlite_desk_has_no_feed(engine):
    from app.core.storage.engines import change_feed

    assert change_feed(engine._storage) is None
