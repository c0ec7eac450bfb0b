"""Operation 1 and the voucher store: legend, hash, numbering, issuer and customer, SUNAT's sheets on demand."""

from __future__ import annotations

import base64
import copy
import hashlib
import threading
from decimal import Decimal

import pytest
from lxml import etree

from app.core.errors import ErrorCode, YupanaError
from app.core.invoicing.amounts import amount_in_words, integer_words
from app.sandbox.registry import RegistrySandbox
from tests.helpers.shared import RULES_DIR
from tests.helpers.voucher_matrix import MATRIX

BASE = dict(MATRIX)
NS = {"cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
      "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"}


def _tree(xml: str):
    return etree.fromstring(xml.encode(), etree.XMLParser(resolve_entities=False, no_network=True))


@pytest.mark.parametrize(("number", "words"), [
    (0, "CERO"), (1, "UNO"), (15, "QUINCE"), (16, "DIECISÉIS"), (21, "VEINTIUNO"), (22, "VEINTIDÓS"),
    (31, "TREINTA Y UNO"), (100, "CIEN"), (101, "CIENTO UNO"), (118, "CIENTO DIECIOCHO"),
    (500, "QUINIENTOS"), (1000, "UN MIL"), (1001, "UN MIL UNO"), (1500, "UN MIL QUINIENTOS"),
    (21000, "VEINTIÚN MIL"), (31000, "TREINTA Y UN MIL"), (101000, "CIENTO UN MIL"),
    (1_000_000, "UN MILLÓN"), (2_000_001, "DOS MILLONES UNO"), (21_000_000, "VEINTIÚN MILLONES"),
    (1_234_567, "UN MILLÓN DOSCIENTOS TREINTA Y CUATRO MIL QUINIENTOS SESENTA Y SIETE"),
])
def test_integer_words(number, words):
    assert integer_words(number) == words


def test_amount_in_words():
    assert amount_in_words(Decimal("118")) == "CIENTO DIECIOCHO CON 00/100 SOLES"
    assert amount_in_words(Decimal("1416.005"), "USD") == "UN MIL CUATROCIENTOS DIECISÉIS CON 01/100 DÓLARES AMERICANOS"


def test_factura_content_and_hash(engine, company):
    result = engine.invoicing.generate_xml(BASE["factura-simple"])
    assert result.nombre_archivo == "20100066603-01-F001-1.xml"
    assert result.hash == base64.b64encode(hashlib.sha256(result.xml.encode("utf-8")).digest()).decode()
    root = _tree(result.xml)
    assert root.findtext("cbc:ID", namespaces=NS) == "F001-1"
    assert root.findtext("cbc:Note[@languageLocaleID='1000']", namespaces=NS) == "CIENTO DIECIOCHO CON 00/100 SOLES"
    assert root.findtext("cac:LegalMonetaryTotal/cbc:PayableAmount", namespaces=NS) == "118.00"
    assert root.findtext("cac:TaxTotal/cbc:TaxAmount", namespaces=NS) == "18.00"
    assert root.findtext(".//cac:RegistrationAddress/cbc:District", namespaces=NS) == "LIMA"
    assert root.findtext("cac:Signature/cac:DigitalSignatureAttachment/cac:ExternalReference/cbc:URI",
                         namespaces=NS) == "#SignatureSP"
    row = engine._vouchers.find("20100066603", "01", "F001", 1)
    assert row["status"] == "generado" and row["xml"] == result.xml and row["total"] == "118.00"
    assert row["hash"] == result.hash and row["receptor_nombre"] == "DISTRIBUIDORA ANDINA S.A.C."


def test_missing_igv_is_computed_and_given_igv_within_a_cent_is_kept(engine, company):
    request = copy.deepcopy(BASE["factura-simple"])
    request["items"][0]["igv"] = Decimal("18.01")
    root = _tree(engine.invoicing.generate_xml(request).xml)
    assert root.findtext("cac:InvoiceLine/cac:TaxTotal/cbc:TaxAmount", namespaces=NS) == "18.01"
    assert root.findtext("cac:LegalMonetaryTotal/cbc:PayableAmount", namespaces=NS) == "118.01"


def test_idempotent_and_stored_once(engine, company):
    seen = []
    engine.admin.subscribe(lambda name, payload: seen.append((name, payload.status)))
    first = engine.invoicing.generate_xml(BASE["factura-mixta"])
    again = engine.invoicing.generate_xml(copy.deepcopy(BASE["factura-mixta"]))
    assert again == first
    assert len(engine.invoicing.vouchers()) == 1
    assert seen == [("voucher.changed", "generado")]


def test_concurrent_same_number_gives_one_document(engine, company):
    results, errors = [], []
    barrier = threading.Barrier(4)

    def worker() -> None:
        barrier.wait(timeout=10)
        try:
            results.append(engine.invoicing.generate_xml(BASE["factura-usd"]).xml)
        except YupanaError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == [] and len(set(results)) == 1 and len(engine.invoicing.vouchers()) == 1


def test_unknown_issuer_is_400(engine):
    status, envelope = engine.call("xml", BASE["factura-simple"])
    assert status == 400 and envelope["error"]["details"][0]["field"] == "emisor.ruc"


def test_customer_name_from_registry_or_a_clear_400(engine, company):

    request = copy.deepcopy(BASE["factura-simple"])
    del request["receptor"]["razon_social"]
    status, envelope = engine.call("xml", request)  # the registry is not configured here
    assert status == 400 and envelope["error"]["details"][0]["field"] == "receptor.razon_social"
    registry = RegistrySandbox(records_per_kind=5)
    registry.start()
    try:
        registry.configure(engine)  # the real lookup, over HTTP, as the engine makes it
        record = next(r for r in registry.records["ruc"].values() if r["ruc"].startswith("20"))
        request["receptor"]["ruc"] = record["ruc"]
        result = engine.invoicing.generate_xml(request)
        assert f"<cbc:RegistrationName>{record['razon_social']}</cbc:RegistrationName>" in result.xml
        assert registry.requests >= 1
    finally:
        registry.stop()


def test_store_api_for_signing_and_sending(engine, company):
    result = engine.invoicing.generate_xml(BASE["boleta-dni"])
    row = engine._vouchers.find_by_xml(result.xml)
    assert row is not None and row["nombre_archivo"] == result.nombre_archivo
    assert engine._vouchers.find_by_xml(result.xml + " ") is None
    seen = []
    engine.admin.subscribe(lambda name, payload: seen.append(payload))
    signed = result.xml.replace("<ext:ExtensionContent></ext:ExtensionContent>", "<ext:ExtensionContent>firma</ext:ExtensionContent>")
    engine._vouchers.record_signature(row["id"], signed, "ZGlnZXN0", "c2ln", "cert-1")
    stored = engine._vouchers.find_by_signed_xml(signed)
    assert stored["status"] == "firmado" and stored["digest_value"] == "ZGlnZXN0" and stored["certificado_id"] == "cert-1"
    engine._vouchers.set_status(row["id"], "aceptado")
    assert engine.invoicing.voucher(row["id"]).status == "aceptado"
    assert [p.status for p in seen] == ["firmado", "aceptado"]
    with pytest.raises(YupanaError) as bad:
        engine._vouchers.set_status(row["id"], "perdido")
    assert bad.value.code == ErrorCode.INVALID_INPUT
    with pytest.raises(YupanaError) as missing:
        engine._vouchers.set_status(999, "aceptado")
    assert missing.value.code == ErrorCode.NOT_FOUND


def test_list_and_next_numero(engine, company):
    for name in ("factura-simple", "factura-igv-dado", "boleta-dni", "boleta-sin-documento"):
        engine.invoicing.generate_xml(BASE[name])
    listed = engine.invoicing.vouchers()
    assert [v.serie_numero for v in listed] == ["B001-1", "B001-2", "F001-2", "F001-1"]
    assert [v.numero for v in engine.invoicing.vouchers(search="QUISPE")] == [2]
    assert engine.invoicing.vouchers(status="firmado") == []
    assert engine.invoicing.next_number("20100066603", "01", "F001") == 3
    assert engine.invoicing.next_number("20100066603", "01", "F009") == 1


@pytest.mark.sunat_files
def test_sunat_rules_dir_runs_the_official_sheets(engine, company):
    engine.admin.config_set("sunat_rules_dir", str(RULES_DIR))
    assert engine.invoicing.generate_xml(BASE["factura-mixta"]).observaciones == []
    # Ask the sheets about documents altered after generation: SUNAT's codes come back.
    import re

    from app.core.invoicing import sunat_rules

    def altered(name: str) -> str:
        xml = engine.invoicing.generate_xml(BASE[name]).xml
        return re.sub(r'(<cbc:PayableAmount currencyID="PEN">)[0-9.]+', r"\g<1>999.00", xml)

    boleta = sunat_rules.check(str(RULES_DIR), altered("boleta-dni"), "20100066603-03-B001-2.xml")
    assert boleta.rejection is None and boleta.observations == ["4312"]
    factura = sunat_rules.check(str(RULES_DIR), altered("factura-simple"), "20100066603-01-F001-1.xml")
    assert factura.rejection == "3280"
