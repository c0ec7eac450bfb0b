"""The guías' vehicles, drivers, carriers and departure and arrival points in the catalogue (issue 36, point 4) on
each engine, SQLite and a real PostgreSQL: remembered by kind and key, a later guía's data replacing an entry's, the
ones used last first, a key prefix found on the key's index. Time is mocked (the repository's clock) so that «used last» is decided."""

from __future__ import annotations

import pytest

from app.core.errors import YupanaError
from app.core.invoicing.catalog.records import CONDUCTOR, PUNTO, TRANSPORTISTA, VEHICULO, TransportEntry, point_key
from app.core.storage.sqlite import catalog as sqlite_catalog
from tests.helpers.guia_matrix import (
    CARRIER_RUC,
    DRIVERS,
    OWN_ESTABLISHMENTS,
    SUPPLIER,
    SUPPLIER_FACTURA,
    SUPPLIER_RUC,
    TO_ONESELF,
    VEHICLES,
    public,
    remitente,
)


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


def test_points_are_found_by_the_first_words_of_their_address(repos):
    """A point's key is its address folded (point_key): what one types of the address, however written, is a range
    of the key's index on both engines; the same address in another district is another point."""
    transport = repos.transport
    lima = TransportEntry(PUNTO, point_key("Av. Abancay 123, Lima", "150101"), ubigeo="150101",
                          direccion="Av. Abancay 123, Lima")
    sjl = TransportEntry(PUNTO, point_key("JR. LOS OLIVOS 456, SJL", "150132", "0002"), ubigeo="150132",
                         direccion="JR. LOS OLIVOS 456, SJL", codigo_establecimiento="0002", ruc="20100066603")
    cusco = TransportEntry(PUNTO, point_key("Av. Abancay 123", "080101"), ubigeo="080101", direccion="Av. Abancay 123")
    transport.remember([lima, sjl, cusco])
    assert lima.clave == "av abancay 123 lima|150101|"
    found = transport.by_key_prefix(PUNTO, "av abancay 12", 10)  # as the catalogue folds «Av. Abancay 12»
    assert [(entry.ubigeo, entry.direccion) for entry in found] == [("150101", "Av. Abancay 123, Lima"),
                                                                    ("080101", "Av. Abancay 123")]
    [olivos] = transport.by_key_prefix(PUNTO, "jr los", 10)
    assert (olivos.codigo_establecimiento, olivos.ruc, olivos.used_at is not None) == ("0002", "20100066603", True)
    assert transport.by_key_prefix(VEHICULO, "jr", 10) == []


def test_a_guia_generated_leaves_its_departure_and_arrival_points_in_the_catalogue(engine, company):
    """Operation 1 stores a guía: its departure and arrival points (ubigeo, address, establishment code and whose it
    is) are offered afterwards as one types the address; a second guía between the same points adds none, whatever
    the case, accents or punctuation it writes them with, and only a new place (or establishment) is a new entry."""
    engine.invoicing.generate_xml(remitente(1))  # AV. ABANCAY 123, LIMA → JR. LOS OLIVOS 456, SAN JUAN DE LURIGANCHO
    points = engine.catalog.transport(PUNTO)
    assert sorted((entry.ubigeo, entry.direccion, entry.codigo_establecimiento) for entry in points) == [
        ("150101", "AV. ABANCAY 123, LIMA", ""), ("150132", "JR. LOS OLIVOS 456, SAN JUAN DE LURIGANCHO", "")]
    engine.invoicing.generate_xml(remitente(2, llegada={"ubigeo": "150132",
                                                        "direccion": "Jr. Los Olivos 456 - San Juan de Lurigancho"}))
    assert len(engine.catalog.transport(PUNTO)) == 2  # the same two points: none added
    [olivos] = engine.catalog.transport(PUNTO, "jr. los oli")
    assert olivos.direccion == "Jr. Los Olivos 456 - San Juan de Lurigancho"  # as the latest guía wrote it
    # between the issuer's own establishments (motive 04): the same street with its code is another entry
    engine.invoicing.generate_xml(remitente(3, motivo_traslado="04", destinatario=TO_ONESELF, **OWN_ESTABLISHMENTS))
    abancay = engine.catalog.transport(PUNTO, "Av Abancay")
    assert sorted((entry.codigo_establecimiento, entry.ruc) for entry in abancay) == [("", ""),
                                                                                    ("0000", company.ruc)]
    [sjl] = engine.catalog.transport(PUNTO, "JR LOS OLIVOS 456, SJL")
    assert (sjl.ubigeo, sjl.codigo_establecimiento) == ("150132", "0002")
    # a purchase leaving a supplier's establishment: whose code it is, remembered with it
    engine.invoicing.generate_xml(remitente(4, **public(), motivo_traslado="02", destinatario=TO_ONESELF,
                                            proveedor=SUPPLIER, documentos_relacionados=[SUPPLIER_FACTURA],
                                            partida={"ubigeo": "040101", "direccion": "ALMACEN DEL PROVEEDOR, AREQUIPA",
                                                     "codigo_establecimiento": "0001", "ruc": SUPPLIER_RUC}))
    [almacen] = engine.catalog.transport(PUNTO, "almacén del")
    assert (almacen.ubigeo, almacen.codigo_establecimiento, almacen.ruc) == ("040101", "0001", SUPPLIER_RUC)
    assert len(engine.catalog.transport(PUNTO)) == 5  # its arrival, JR. LOS OLIVOS, was remembered already
    assert engine.catalog.transport(PUNTO)[0].clave == almacen.clave  # the latest used first
    assert engine.catalog.transport(PUNTO, "calle") == []
