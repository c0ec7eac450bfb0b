"""Operation 2 without parsing (canonical vouchers) and the signature stored apart from the document.

The oracle of the no-parse signer is the parsing signer (`sign_xml`, itself checked by xmlsec1 and
SUNAT's checker): PKCS#1 v1.5 is deterministic, so both must give the same bytes.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal

import pytest
import sqlite_utils

from app.core.engine import Engine
from app.core.invoicing import packed_texts, ubl, voucher_keys, xmldsig
from app.core.platform.paths import database_path
from app.core.storage.sqlite.migrations import SETS
from tests.helpers.base import ISSUER_RUC
from tests.helpers.voucher_matrix import MATRIX


@pytest.fixture
def test_cert(engine, company):
    return engine.invoicing.create_test_certificate(ISSUER_RUC)


def _factura(numero: int = 1) -> dict:
    return {"tipo": "01", "serie": "F001", "numero": numero, "emisor": {"ruc": ISSUER_RUC},
            "receptor": {"ruc": "20601030013", "razon_social": "CLIENTE & HIJOS S.A.C."},
            "items": [{"descripcion": 'TUBO 1/2" <PVC>', "cantidad": Decimal("3"), "precio_unitario": Decimal("4.5")}]}


@pytest.mark.parametrize("algorithm", ["rsa-sha1", "rsa-sha256"])
def test_canonical_signature_equals_the_parsed_one(engine, test_cert, algorithm):
    key, certificate = engine._certificates.signing_material(test_cert.certificado_id)
    for _name, request in MATRIX:
        xml = engine.invoicing.generate_xml(request).xml
        fast = xmldsig.sign_canonical(xml, key, certificate, algorithm=algorithm)
        parsed = xmldsig.sign_xml(xml, key, certificate, algorithm=algorithm)
        assert fast.xml.encode("utf-8") == parsed.xml
        assert (fast.digest_value, fast.signature_value) == (parsed.digest_value, parsed.signature_value)
        assert fast.xml == xml[:fast.offset] + fast.signature + xml[fast.offset:]
    assert xmldsig.verify_xml(fast.xml).valid


def test_sign_canonical_refuses_other_texts(engine, test_cert):
    key, certificate = engine._certificates.signing_material(test_cert.certificado_id)
    xml = engine.invoicing.generate_xml(_factura()).xml
    for other in (xml.replace(ubl.EMPTY_EXTENSION_CONTENT, "<ext:ExtensionContent/>"),
                  xml.replace(ubl.XML_DECLARATION, ""),
                  xml.replace(ubl.EMPTY_EXTENSION_CONTENT, ubl.EMPTY_EXTENSION_CONTENT * 2)):
        with pytest.raises(ValueError):
            xmldsig.sign_canonical(other, key, certificate)


def test_the_signed_document_is_not_stored_twice(engine, test_cert):
    generated = engine.invoicing.generate_xml(_factura())
    result = engine.invoicing.sign({"xml": generated.xml, "certificado_id": test_cert.certificado_id})
    row = engine._vouchers.find_by_xml(generated.xml)
    texts = engine._storage.query_one("SELECT xml, xml_firmado FROM voucher_texts WHERE voucher_id = ?", (row["id"],))
    assert texts["xml_firmado"] is None  # only the generated text is kept (packed: docs/vouchers.md)
    assert packed_texts.unpack(texts["xml"], engine._vouchers._dictionary_of) == generated.xml
    assert row["signature"].startswith('<ds:Signature Id="SignatureSP">') and len(row["signature"]) < 4000
    # Every way of reading the voucher shows the signed XML as returned.
    assert engine.invoicing.voucher(row["id"]).xml_firmado == result.xml_firmado
    assert engine._vouchers.find_by_signed_xml(result.xml_firmado)["id"] == row["id"]
    assert engine._vouchers.find(ISSUER_RUC, "01", "F001", 1)["xml_firmado"] == result.xml_firmado
    assert xmldsig.verify_xml(engine.invoicing.voucher(row["id"]).xml_firmado).valid


def test_another_certificate_is_a_409_on_the_fast_path(engine, test_cert):
    generated = engine.invoicing.generate_xml(_factura())
    engine.invoicing.sign({"xml": generated.xml, "certificado_id": test_cert.certificado_id})
    other = engine._certificates.create_test_certificate(ISSUER_RUC, "OTRO")
    status, envelope = engine.call("firmar", {"xml": generated.xml, "certificado_id": other.certificado_id})
    assert status == 409 and envelope["error"]["details"][0]["field"] == "certificado_id"


def test_vouchers_stored_before_the_canonical_form_are_signed_by_parsing(engine, test_cert):
    generated = engine.invoicing.generate_xml(_factura())
    old_text = generated.xml.replace(ubl.EMPTY_EXTENSION_CONTENT, "<ext:ExtensionContent/>")
    row = engine._vouchers.find_by_xml(generated.xml)
    with engine._storage.write() as conn:  # as an older version stored it
        conn.execute("UPDATE vouchers SET canonical = 0, xml_sha256 = ? WHERE id = ?",
                     (voucher_keys.sha256_hex(old_text), row["id"]))
        conn.execute("UPDATE voucher_texts SET xml = ? WHERE voucher_id = ?", (old_text, row["id"]))
    result = engine.invoicing.sign({"xml": old_text, "certificado_id": test_cert.certificado_id})
    assert xmldsig.verify_xml(result.xml_firmado).valid
    assert result.xml_firmado.startswith(old_text.split("<ext:ExtensionContent/>")[0])
    assert engine.invoicing.voucher(row["id"]).xml_firmado == result.xml_firmado


def test_migration_moves_the_texts_of_existing_vouchers(tmp_path):
    home = tmp_path / "old"
    home.mkdir()
    db = sqlite_utils.Database(sqlite3.connect(database_path(home), isolation_level=None))
    for migrations in SETS:  # the folder as the previous version left it
        migrations.apply(db, stop_before="m002_texts_apart")
    db.execute("INSERT INTO vouchers (emisor_ruc, tipo, serie, numero, nombre_archivo, xml, hash, xml_sha256,"
               " request_json, content_key, status, moneda, total, fecha_emision, xml_firmado, signed_sha256)"
               " VALUES ('20100066603', '01', 'F001', 7, 'f.xml', '<Invoice/>', 'h', ?, '{}', 'k', 'firmado', 'PEN',"
               " '1.00', '2024-01-01', '<Invoice><firma/></Invoice>', ?)",
               (voucher_keys.sha256_hex("<Invoice/>"), voucher_keys.sha256_hex("<Invoice><firma/></Invoice>")))
    db.conn.close()
    with Engine(home) as engine:
        row = engine._vouchers.find_by_signed_xml("<Invoice><firma/></Invoice>")
        assert row["xml"] == "<Invoice/>" and row["request_json"] == "{}" and row["numero"] == 7
        assert row["xml_firmado"] == "<Invoice><firma/></Invoice>" and row["status"] == "firmado"
        assert engine.invoicing.next_number("20100066603", "01", "F001") == 8
