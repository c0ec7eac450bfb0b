"""Several desks, faults (issue 34, item 8): the shared PostgreSQL goes down while a desk issues. The desk says so at
once in Spanish (a YupanaError naming the shared database, never a driver's exception), nothing is half-written, and
the same engine works again once the server is back (its connections are made anew)."""

from __future__ import annotations

import pytest

from app.core.errors import ErrorCode, YupanaError
from app.core.platform.companies import Company
from app.core.platform.settings import DeskSettings
from tests.helpers.postgres import require, restartable_postgres
from tests.helpers.voucher_matrix import factura, item

pytestmark = pytest.mark.postgres

RUC = "20100066603"


@pytest.fixture
def cluster():
    """A server of this test's own: it is stopped and started again (the session's server is shared)."""
    require()
    from app.core.storage.postgres.database import PostgresStorage
    from app.core.storage.postgres.schema import create

    with restartable_postgres(durable=False) as server:
        storage = PostgresStorage(server.url)
        try:
            create(storage)
        finally:
            storage.close()
        yield server


@pytest.fixture
def desk(cluster, home):
    from app.core.engine import Engine

    DeskSettings(home).put("database_url", cluster.url)
    engine = Engine(home)
    engine.admin.set_company(Company(ruc=RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                     direccion="AV. ABANCAY 123"))
    yield engine
    engine.close()


def _numbers(engine) -> list[str]:
    return sorted(v.serie_numero for v in engine.invoicing.vouchers())


def test_the_server_down_while_issuing_is_said_in_spanish_and_work_resumes_when_it_is_back(cluster, desk):
    desk.invoicing.generate_xml(factura("F001", 1, [item("Arroz Costeño 5 kg", "2", "25.37")]))
    cluster.stop()
    with pytest.raises(YupanaError) as caught:
        desk.invoicing.generate_xml(factura("F001", 2, [item("Azúcar rubia 1 kg", "1", "4.20")]))
    assert caught.value.code == ErrorCode.UPSTREAM_UNAVAILABLE
    assert "base de datos compartida" in caught.value.message
    with pytest.raises(YupanaError) as again:  # still down: said again, never a driver's traceback
        desk.invoicing.vouchers()
    assert again.value.code == ErrorCode.UPSTREAM_UNAVAILABLE
    cluster.start()
    assert _numbers(desk) == ["F001-1"]  # nothing of F001-2 was written
    desk.invoicing.generate_xml(factura("F001", 2, [item("Azúcar rubia 1 kg", "1", "4.20")]))
    assert _numbers(desk) == ["F001-1", "F001-2"]
