"""The guías' vehicles, drivers and carriers in the catalogue (issue 36, point 4) on each engine, SQLite and a real
PostgreSQL: remembered by kind and key, a later guía's data replacing an entry's, the ones used last first, a key
prefix found on the key's index. Time is mocked (the repository's clock) so that «used last» is decided."""

from __future__ import annotations

import pytest

from app.core.errors import YupanaError
from app.core.invoicing.catalog.records import CONDUCTOR, TRANSPORTISTA, VEHICULO, TransportEntry
from app.core.storage.sqlite import catalog as sqlite_catalog
from tests.helpers.guia_matrix import CARRIER_RUC, DRIVERS, VEHICLES, public, remitente


def test_entries_are_remembered_replaced_and_offered_latest_first(repos, monkeypatch):
    transport = repos.transport
    times = iter(f"2026-12-06T10:00:0{second}.000Z" for second in range(10))
    monkeypatch.setattr(sqlite_catalog, "_now", lambda: next(times))
    transport.remember([TransportEntry(VEHICULO, "ABC123", tuc="15M21028552E"),
                        TransportEntry(CONDUCTOR, "45678912", tipo_documento="1", nombres="JUAN CARLOS",
                                       apellidos="QUISPE MAMANI", licencia="Q45678912")])
    transport.remember([TransportEntry(VEHICULO, "T4X987")])
    transport.remember([TransportEntry(TRANSPORTISTA, "20131312955", nombres="TRANSPORTES RAPIDOS DEL SUR S.A.C.",
                                       registro_mtc="151234567")])
    assert [entry.clave for entry in transport.latest(VEHICULO, 10)] == ["T4X987", "ABC123"]
    transport.remember([TransportEntry(VEHICULO, "ABC123", tuc="15M21028559Z")])  # used again, a new TUC
    latest = transport.latest(VEHICULO, 10)
    assert [(entry.clave, entry.tuc) for entry in latest] == [("ABC123", "15M21028559Z"), ("T4X987", "")]
    assert latest[0].used_at == "2026-12-06T10:00:03.000Z"
    [driver] = transport.latest(CONDUCTOR, 10)
    assert (driver.nombres, driver.apellidos, driver.licencia, driver.tipo_documento) == (
        "JUAN CARLOS", "QUISPE MAMANI", "Q45678912", "1")
    [carrier] = transport.by_key_prefix(TRANSPORTISTA, "2013", 10)
    assert (carrier.nombres, carrier.registro_mtc) == ("TRANSPORTES RAPIDOS DEL SUR S.A.C.", "151234567")
    assert [entry.clave for entry in transport.by_key_prefix(VEHICULO, "T4", 10)] == ["T4X987"]
    assert transport.by_key_prefix(VEHICULO, "2013", 10) == []  # a carrier's key is not a vehicle's


def test_a_guia_generated_leaves_its_vehicles_drivers_and_carrier_in_the_catalogue(engine, company):
    """Operation 1 stores a guía (as the window, `yupana guia` and the local API do): its vehicles, drivers and public
    transport's carrier are offered afterwards (engine.catalog.transport); a voucher leaves none."""
    engine.invoicing.generate_xml(remitente(1, vehiculos=VEHICLES[:2], conductores=DRIVERS[:2]))
    engine.invoicing.generate_xml(remitente(2, **public()))
    assert sorted(entry.clave for entry in engine.catalog.transport(VEHICULO)) == ["ABC123", "T4X987"]
    assert [entry.clave for entry in engine.catalog.transport(CONDUCTOR, "4123")] == ["41234567"]
    [carrier] = engine.catalog.transport(TRANSPORTISTA, CARRIER_RUC[:4])
    assert (carrier.clave, carrier.registro_mtc) == (CARRIER_RUC, "151234567")
    with pytest.raises(YupanaError):
        engine.catalog.transport("barco")
