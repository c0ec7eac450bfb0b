"""Several desks, faults (issue 34, item 8): the shared PostgreSQL goes down while a desk issues. The desk says so at
once in Spanish (a YupanaError naming the shared database, never a driver's exception), nothing is half-written, and
the same engine works again once the server is back (its connections are made anew)."""

from __future__ import annotations

import threading

import pytest

from app.core.errors import ErrorCode, YupanaError
from app.core.platform.companies import Company
from app.core.platform.settings import DeskSettings
from tests.helpers.postgres import cluster_with_schema, desk_engine
from tests.helpers.voucher_matrix import factura, item

pytestmark = pytest.mark.postgres

RUC = "20100066603"


@pytest.fixture
def cluster():
    """A server of this test's own: it is stopped and started again (the session's server is shared)."""
    with cluster_with_schema() as server:
        yield server


@pytest.fixture
def desk(cluster, home):
    engine = desk_engine(home, cluster.url)
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


def test_an_engine_opened_while_the_server_is_down_says_so_and_opens_once_it_is_back(cluster, home):
    """The app or `yupana serve` started before the server (issue 34, item 8): Engine.open_waiting tells why in
    Spanish, naming the server, tries again, and hands over a working engine once the server answers."""
    from concurrent.futures import ThreadPoolExecutor

    from app.core.engine import Engine
    from tests.helpers.messaging_support import wait_for

    DeskSettings(home).put("database_url", cluster.url)
    cluster.stop()
    told: list[tuple[str, float]] = []
    given_up = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        opening = pool.submit(Engine.open_waiting, home, waiting=lambda message, s: told.append((message, s)),
                              stopped=given_up.wait)
        try:
            assert wait_for(lambda: len(told) >= 2, 30)  # said, and tried again (still down)
            message, seconds = told[0]
            assert message.startswith(f"No se pudo conectar con la base de datos compartida en 127.0.0.1:{cluster.port}")
            assert "PostgreSQL esté en marcha" in message and seconds > 0 and told[1][1] >= seconds
            assert not opening.done()
            cluster.start()
            engine = opening.result(timeout=60)
        finally:
            given_up.set()
    assert engine is not None
    try:
        engine.admin.set_company(Company(ruc=RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                         direccion="AV. ABANCAY 123"))
        assert [c.ruc for c in engine.admin.companies()] == [RUC]
    finally:
        engine.close()


def test_an_engine_still_waiting_gives_up_when_told_to(cluster, home):
    from app.core.engine import Engine

    DeskSettings(home).put("database_url", cluster.url)
    cluster.stop()
    assert Engine.open_waiting(home, waiting=lambda message, seconds: None, stopped=lambda seconds: True) is None


def test_yupana_serve_started_while_the_server_is_down_waits_then_serves(cluster, home):
    import json
    import os
    import signal
    import subprocess
    import sys

    import httpx

    from tests.helpers.base import ROOT

    DeskSettings(home).put("database_url", cluster.url)
    cluster.stop()
    proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", "0", "--no-listener"], cwd=ROOT,
                            env=dict(os.environ, YUPANA_HOME=str(home)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None and proc.stdout is not None
        said = proc.stderr.readline()
        assert said.startswith(f"No se pudo conectar con la base de datos compartida en 127.0.0.1:{cluster.port}")
        assert "Se vuelve a intentar en" in said and "Traceback" not in said
        cluster.start()
        line = json.loads(proc.stdout.readline())  # serving once the server answered
        assert httpx.get(line["base_url"].removesuffix("/api/v1") + "/openapi.json", timeout=10).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "Traceback" not in err
