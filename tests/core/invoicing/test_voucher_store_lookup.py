"""Finding a voucher by its text without an index of hashes, and an issued number answering for itself."""

from __future__ import annotations

import copy

import pytest

from app.core.invoicing import voucher_keys, xmldsig
from app.core.platform.companies import Company
from tests.helpers.base import ISSUER_RUC
from tests.helpers.voucher_matrix import MATRIX


@pytest.fixture
def test_cert(engine, company):
    return engine.invoicing.create_test_certificate(ISSUER_RUC)


def test_every_voucher_type_is_found_by_its_text_and_its_signed_text(engine, company, test_cert):
    seen_types = set()
    for _name, request in MATRIX:
        generated = engine.invoicing.generate_xml(copy.deepcopy(request))
        key = (ISSUER_RUC, request["tipo"], request["serie"], request["numero"])
        assert voucher_keys.key_of_text(generated.xml) == key
        signed = engine.invoicing.sign({"xml": generated.xml, "certificado_id": test_cert.certificado_id}).xml_firmado
        assert voucher_keys.key_of_text(signed) == key
        row = engine._vouchers.find(*key)
        assert engine._vouchers.find_by_xml(generated.xml)["id"] == row["id"]
        assert engine._vouchers.find_by_signed_xml(signed)["id"] == row["id"]
        assert engine._vouchers.find_for_signing(generated.xml)["id"] == row["id"]
        seen_types.add(request["tipo"])
    assert seen_types == {"01", "03", "07", "08"}


def test_a_text_pointing_at_a_voucher_but_not_its_own_is_not_found(engine, company, test_cert):
    request = dict(MATRIX)["factura-simple"]
    generated = engine.invoicing.generate_xml(copy.deepcopy(request))
    altered = generated.xml.replace("Servicio de consultoría", "Servicio de consultoria")
    assert voucher_keys.key_of_text(altered) == voucher_keys.key_of_text(generated.xml)  # same serie-número…
    assert engine._vouchers.find_by_xml(altered) is None  # …but not the stored text
    assert engine._vouchers.find_for_signing(altered) is None
    status, envelope = engine.call("firmar", {"xml": altered, "certificado_id": test_cert.certificado_id})
    assert status == 400 and envelope["error"]["details"][0]["field"] == "xml"


def test_new_vouchers_add_no_entry_to_an_index_of_hashes(engine, company):
    engine.invoicing.generate_xml(copy.deepcopy(dict(MATRIX)["factura-simple"]))
    indexes = {row["name"]: row["sql"] for row in engine._storage.query(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'vouchers' AND sql IS NOT NULL")}
    hashed = {name: sql for name, sql in indexes.items() if "sha256" in sql}
    assert hashed and all(sql.endswith("WHERE canonical = 0") for sql in hashed.values())


def test_an_issued_number_answers_for_itself_even_when_its_request_no_longer_builds(engine, company):
    request = dict(MATRIX)["factura-simple"]
    first = engine.invoicing.generate_xml(copy.deepcopy(request))
    engine._companies.delete(ISSUER_RUC)  # the same request would now be refused (unknown issuer)…
    assert engine.invoicing.generate_xml(copy.deepcopy(request)) == first  # …but its number was issued: the stored one
    other = copy.deepcopy(request)
    other["items"][0]["descripcion"] = "Otro servicio"
    status, envelope = engine.call("xml", other)
    assert status == 409 and envelope["error"]["code"] == "CONFLICT"
    engine.admin.set_company(Company(ruc=ISSUER_RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                     direccion="AV. ABANCAY 123"))
    status, envelope = engine.call("xml", other)  # buildable again, refused by the unique index at the insert
    assert status == 409 and envelope["error"]["code"] == "CONFLICT"


def test_the_signed_hash_taken_over_slices_equals_the_hash_of_the_signed_text(engine, company, test_cert):
    import hashlib


    key, certificate = engine._certificates.signing_material(test_cert.certificado_id)
    for name in ("factura-simple", "factura-texto-especial"):  # ASCII, and accents, ñ and an emoji
        xml = engine.invoicing.generate_xml(copy.deepcopy(dict(MATRIX)[name])).xml
        for encoded in (None, xml.encode("utf-8")):
            signed = xmldsig.sign_canonical(xml, key, certificate, encoded=encoded)
            assert signed.sha256 == hashlib.sha256(signed.xml.encode("utf-8")).hexdigest()
    assert not xml.isascii()
