"""Issue 19, the catalogue wired in the engine: customers remembered from issued vouchers (one by one and in
batches) and from registry look-ups; items priced with IGV (`precio_con_igv`). Real engine on a temp folder."""

from __future__ import annotations

import copy

import pytest

from app.core.errors import YupanaError
from app.core.invoicing.catalog import records
from tests.helpers.base import ISSUER_RUC
from tests.helpers.padron_files import make_padron

CUSTOMER_RUC = "20601030013"


def _factura(numero: int, nombre: str = "DISTRIBUIDORA ANDINA S.A.C.", direccion: str | None = "AV. LOS ANDES 123",
             ruc: str = CUSTOMER_RUC) -> dict:
    receptor = {"ruc": ruc, "razon_social": nombre}
    if direccion:
        receptor["direccion"] = direccion
    return {"tipo": "01", "serie": "F001", "numero": numero, "emisor": {"ruc": ISSUER_RUC}, "receptor": receptor,
            "items": [{"descripcion": "Arroz extra", "cantidad": "2", "precio_unitario": "3.50"}]}


def _boleta(numero: int, receptor: dict) -> dict:
    return {"tipo": "03", "serie": "B001", "numero": numero, "emisor": {"ruc": ISSUER_RUC}, "receptor": receptor,
            "items": [{"descripcion": "Pan", "cantidad": "10", "precio_unitario": "0.25"}]}


def test_an_issued_voucher_remembers_its_customer(engine, company):
    assert engine.customers.count() == 0
    engine.generar_xml(_factura(1))
    saved = engine.customers.get("6", CUSTOMER_RUC)
    assert (saved.nombre, saved.direccion) == ("DISTRIBUIDORA ANDINA S.A.C.", "AV. LOS ANDES 123")
    # What was typed by hand stays; a new name on a later voucher replaces the old one, an absent address does not
    engine.customers.update(saved.id, records.customer(**{**saved.data(), "whatsapp": "987654321"}))
    engine.generar_xml(_factura(2, nombre="DISTRIBUIDORA ANDINA S.A.", direccion=None))
    again = engine.customers.get("6", CUSTOMER_RUC)
    assert (again.id, again.nombre, again.direccion, again.whatsapp) == (
        saved.id, "DISTRIBUIDORA ANDINA S.A.", "AV. LOS ANDES 123", "+51987654321")
    assert engine.customers.search("andina") == [again]


def test_a_boleta_remembers_a_dni_but_not_a_customer_without_document(engine, company):
    engine.generar_xml(_boleta(1, {"tipo_documento": "1", "numero_documento": "45678912",
                                   "razon_social": "MARÍA QUISPE"}))
    engine.generar_xml(_boleta(2, {"tipo_documento": "0", "numero_documento": "-",
                                   "razon_social": "CLIENTES VARIOS"}))
    assert [(c.tipo_documento, c.numero, c.nombre) for c in engine.customers.all()] == [
        ("1", "45678912", "MARÍA QUISPE")]


def test_a_batch_remembers_its_customers_once_each(engine, company):
    engine.create_test_certificate(ISSUER_RUC)
    requests = [_factura(n, ruc=ruc, nombre=f"CLIENTE {ruc} V{n}") for n, ruc in
                enumerate(["20601030013", "20131312955", "20601030013", "20123456786"], start=1)]
    requests.append(_boleta(1, {"tipo_documento": "1", "numero_documento": "45678912", "razon_social": "ANA"}))
    results = list(engine.emitir_lote(copy.deepcopy(requests)))
    assert all(r["success"] for r in results), results
    stored = {(c.tipo_documento, c.numero): c.nombre for c in engine.customers.all()}
    assert stored == {("6", "20601030013"): "CLIENTE 20601030013 V3", ("6", "20131312955"): "CLIENTE 20131312955 V2",
                      ("6", "20123456786"): "CLIENTE 20123456786 V4", ("1", "45678912"): "ANA"}


def test_issuing_does_not_fail_when_remembering_the_customer_does(engine, company, monkeypatch):
    def broken(parties):
        raise RuntimeError("disk trouble")

    monkeypatch.setattr(engine.customers, "remember_all", broken)  # failure injection
    generated = engine.generar_xml(_factura(1))
    assert generated.nombre_archivo == f"{ISSUER_RUC}-01-F001-1.xml"
    assert engine.vouchers.id_of(ISSUER_RUC, "01", "F001", 1) is not None


def test_a_registry_lookup_of_a_ruc_saves_the_customer(engine, tmp_path):
    path = tmp_path / "padron.zip"
    known = make_padron(50, path)
    engine.import_padron(path)
    ruc, razon_social = known[0][0], known[0][1]
    record = engine.ruc(ruc)
    assert record.razon_social == razon_social
    saved = engine.customers.get("6", ruc)
    assert saved is not None and saved.nombre == razon_social.strip()
    assert engine.customers.search(ruc[:6])[0].numero == ruc


def test_a_lookup_of_an_unknown_ruc_saves_nothing(engine):
    with pytest.raises(YupanaError):  # not found: nothing is remembered
        engine.ruc("20000000001")
    assert engine.customers.count() == 0
