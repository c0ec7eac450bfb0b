"""Stored texts compressed (issue 19, point 6): new vouchers keep their XML, request and signature as zstd BLOBs
against a dictionary (zlib before issue 33: still read); read back, the signed XML is byte for byte what operation 2 returned and verifies with xmlsec1;
texts stored before (TEXT) stay readable; a rolled-back dictionary never leaves a row unreadable."""

from __future__ import annotations

import base64
import shutil
import threading
import zlib

import pytest

from app.core.engine import Engine
from app.core.invoicing import cdr, packed_texts
from app.sandbox.sunat_signer import signature_is_valid
from tests.helpers.base import ISSUER_RUC
from tests.helpers.oracles import xmlsec_verify
from tests.helpers.sunat_support import _credentials, signed_sample
from tests.helpers.voucher_matrix import factura, item

needs_xmlsec = pytest.mark.skipif(shutil.which("xmlsec1") is None, reason="xmlsec1 is not installed")
LINES = [item("Arroz extra 5 kg", "2", "18.50"), item("Aceite vegetal 1 L", "3", "9.90"), item("Azúcar rubia", "1", "4")]


@pytest.fixture
def certificado_id(engine, company) -> str:
    return engine.invoicing.create_test_certificate(company.ruc).certificado_id


def stored_types(engine, voucher_id: int) -> dict[str, str | None]:
    row = engine._storage.conn().execute(
        "SELECT typeof(t.xml), typeof(t.request_json), typeof(t.xml_firmado), typeof(v.signature),"
        " length(t.xml) FROM vouchers v JOIN voucher_texts t ON t.voucher_id = v.id WHERE v.id = ?",
        (voucher_id,)).fetchone()
    return {"xml": row[0], "request_json": row[1], "xml_firmado": row[2], "signature": row[3], "xml_bytes": row[4]}


def test_pack_round_trip_and_refusals():
    text = "<Invoice>ñandú «€» " + "x" * 3000 + "</Invoice>"
    dictionary = ("<Invoice>" + "x" * 2000).encode()
    for packed in (packed_texts.pack(text), packed_texts.pack(text, dictionary)):
        assert packed.startswith(packed_texts.MAGIC) and len(packed) < len(text) // 10
        assert packed_texts.unpack(packed, {packed_texts.digest_of(dictionary): dictionary}.__getitem__) == text
    assert packed_texts.unpack("stored before", {}.__getitem__) == "stored before"
    with pytest.raises(KeyError):
        packed_texts.unpack(packed_texts.pack(text, dictionary), {}.__getitem__)
    with pytest.raises(ValueError):  # bytes that are not the dictionary the text names
        packed_texts.unpack(packed_texts.pack(text, dictionary), lambda digest: b"other bytes")
    with pytest.raises(ValueError):
        packed_texts.unpack(packed_texts.pack(text)[:-5], {}.__getitem__)


def test_a_text_packed_with_deflate_before_zstd_is_still_read():
    """Written as Yupana wrote it before issue 33, with zlib itself (not our code): the old magic, the digest, a raw
    deflate stream against the dictionary."""
    text = "<Invoice>ñandú " + "z" * 3000 + "</Invoice>"
    dictionary = ("<Invoice>" + "z" * 2000).encode()
    packer = zlib.compressobj(3, zlib.DEFLATED, -15, zdict=dictionary)
    old = packed_texts.DEFLATE_MAGIC + packed_texts.digest_of(dictionary) + packer.compress(text.encode()) + packer.flush()
    assert packed_texts.unpack(old, {packed_texts.digest_of(dictionary): dictionary}.__getitem__) == text
    plain = zlib.compressobj(3, zlib.DEFLATED, -15)
    without = packed_texts.DEFLATE_MAGIC + bytes(8) + plain.compress(b"<a/>") + plain.flush()
    assert packed_texts.unpack_bytes(without, {}.__getitem__) == b"<a/>"
    with pytest.raises(ValueError):
        packed_texts.unpack(old[:-3], {packed_texts.digest_of(dictionary): dictionary}.__getitem__)


def test_threads_packing_and_unpacking_at_once_each_get_their_own_texts():
    """Each thread keeps its own prepared coders (a zstd coder is not shared between threads)."""
    dictionary = packed_texts.Dictionary.of(("<Invoice>" + "w" * 4000).encode())
    lookup = {dictionary.digest: dictionary.data}.__getitem__
    wrong: list[str] = []

    def work(number: int) -> None:
        for n in range(300):
            text = f"<Invoice>{number}-{n}" + "w" * (3000 + n) + "</Invoice>"
            if packed_texts.unpack(dictionary.pack_bytes(text.encode()), lookup) != text:
                wrong.append(text)

    threads = [threading.Thread(target=work, args=(number,)) for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong


def test_a_dictionary_is_checked_once_per_object_and_other_bytes_under_its_name_again(monkeypatch):
    text = "<Invoice>" + "y" * 3000 + "</Invoice>"
    dictionary = ("<Invoice>" + "y" * 2000 + "<!-- once -->").encode()
    digest = packed_texts.digest_of(dictionary)
    packed = packed_texts.pack(text, dictionary)
    hashed: list[bytes] = []
    real_digest_of = packed_texts.digest_of
    monkeypatch.setattr(packed_texts, "digest_of", lambda data: hashed.append(data) or real_digest_of(data))
    for _ in range(3):
        assert packed_texts.unpack(packed, {digest: dictionary}.__getitem__) == text
    assert hashed == [dictionary]  # the store's one object: hashed the first time only
    forged = bytes(len(dictionary))  # another object under the same name: checked, and refused
    with pytest.raises(ValueError):
        packed_texts.unpack(packed, lambda _digest: forged)
    assert packed_texts.unpack(packed, {digest: dictionary}.__getitem__) == text


@needs_xmlsec
def test_a_signed_voucher_read_back_from_compressed_storage_verifies(engine, company, certificado_id, tmp_path):
    generated = engine.invoicing.generate_xml(factura("F001", 1, LINES))
    signed = engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado_id})  # operation 2
    voucher_id = engine._vouchers.find("20100066603", "01", "F001", 1)["id"]
    types = stored_types(engine, voucher_id)
    assert types["xml"] == types["request_json"] == types["signature"] == "blob"
    assert types["xml_bytes"] < len(generated.xml.encode()) // 3
    home = engine.admin.home()
    engine.close()  # read back by another engine: nothing from the first one's memory
    again = Engine(home)
    try:
        row = again.invoicing.voucher(voucher_id)
        assert row.xml == generated.xml
        assert row.xml_firmado.encode("utf-8") == signed.xml_firmado.encode("utf-8")
        path = tmp_path / "read-back.xml"
        path.write_bytes(row.xml_firmado.encode("utf-8"))
        certificate = again._certificates.signing_material(certificado_id)[1]
        assert xmlsec_verify(path, certificate).returncode == 0
        assert again._vouchers.find_by_signed_xml(signed.xml_firmado)["id"] == voucher_id
    finally:
        again.close()


@needs_xmlsec
def test_batch_vouchers_are_stored_packed_and_read_back_exact(engine, company, certificado_id, tmp_path):
    answers = list(engine.invoicing.issue_batch([factura("F002", n, LINES) for n in range(1, 4)], certificado_id))
    certificate = engine._certificates.signing_material(certificado_id)[1]
    for answer in answers:
        data = answer.envelope()["data"]
        row = engine._vouchers.find("20100066603", "01", "F002", answers.index(answer) + 1)
        assert stored_types(engine, row["id"])["signature"] == "blob"
        assert row["xml_firmado"] == data["xml_firmado"]
        path = tmp_path / data["nombre_archivo"]
        path.write_bytes(row["xml_firmado"].encode("utf-8"))
        assert xmlsec_verify(path, certificate).returncode == 0
    scopes = [r[0] for r in engine._storage.conn().execute("SELECT scope FROM voucher_dictionaries ORDER BY id")]
    assert sorted(scopes) == sorted([f"request:{ISSUER_RUC}", f"xml:{ISSUER_RUC}:01", f"signature:{certificado_id}"])


def test_the_parsing_path_packs_the_whole_signed_text(engine, company):
    generated = engine.invoicing.generate_xml(factura("F003", 1, LINES))
    voucher_id = engine._vouchers.find(ISSUER_RUC, "01", "F003", 1)["id"]
    signed = generated.xml.replace("<ext:ExtensionContent></ext:ExtensionContent>",
                                   "<ext:ExtensionContent>firma ñ</ext:ExtensionContent>")
    engine._vouchers.record_signature(voucher_id, signed, "ZGlnZXN0", "c2ln", "cert-1")
    assert stored_types(engine, voucher_id)["xml_firmado"] == "blob"
    assert engine.invoicing.voucher(voucher_id).xml_firmado == signed


def test_texts_stored_before_packing_stay_readable(engine, company):
    generated = engine.invoicing.generate_xml(factura("F004", 1, LINES))
    voucher_id = engine._vouchers.find(ISSUER_RUC, "01", "F004", 1)["id"]
    request_json = engine.invoicing.voucher(voucher_id).request_json
    with engine._storage.write() as conn:  # as m002..m005 left it: TEXT values
        conn.execute("UPDATE voucher_texts SET xml = ?, request_json = ? WHERE voucher_id = ?",
                     (generated.xml, request_json, voucher_id))
    assert stored_types(engine, voucher_id)["xml"] == "text"
    row = engine.invoicing.voucher(voucher_id)
    assert (row.xml, row.request_json) == (generated.xml, request_json)


def test_a_rolled_back_dictionary_is_written_again_with_the_next_text(engine, company):
    scope = f"xml:{ISSUER_RUC}:01"
    with pytest.raises(RuntimeError), engine._storage.transaction():
        engine._vouchers._pack(scope, "<Invoice>" + "a dictionary that is rolled back " * 50)
        raise RuntimeError("the block fails")
    assert engine._storage.conn().execute("SELECT count(*) FROM voucher_dictionaries").fetchone()[0] == 0
    generated = engine.invoicing.generate_xml(factura("F005", 1, LINES))  # packed against the dictionary in memory
    home = engine.admin.home()
    engine.close()
    again = Engine(home)
    try:
        assert again._vouchers.find(ISSUER_RUC, "01", "F005", 1)["xml"] == generated.xml
    finally:
        again.close()


@needs_xmlsec
def test_a_sent_voucher_and_its_cdr_are_stored_packed_and_read_back_exact(sunat_engine, tmp_path):
    """What operation 3 keeps: the signed XML as sent (in its own encoding) and SUNAT's CDR as its XML, both packed,
    both given back byte for byte (the CDR in a zip made again); the XML read back verifies with xmlsec1, the CDR
    keeps SUNAT's signature."""
    engine = sunat_engine
    answers = {}
    for numero in ("00000031", "00000032"):  # the second is packed against the dictionaries the first made
        xml = signed_sample(numero)
        answers[numero] = (xml, engine.call("enviar", {"xml_firmado": xml.decode("utf-8"), "ambiente": "beta"}))
    for numero, (xml, (status, envelope)) in answers.items():
        assert status == 200, envelope
        row = engine._storage.query_one("SELECT s.id, s.xml, c.cdr_xml FROM sunat_submissions s JOIN sunat_cdrs c"
                                        " ON c.submission_id = s.id WHERE s.numero LIKE ?", (f"%{int(numero)}",))
        received = base64.b64decode(envelope["data"]["cdr"])  # the zip made again from the stored CDR (m005)
        assert row["xml"].startswith(packed_texts.MAGIC) and row["cdr_xml"].startswith(packed_texts.MAGIC)
        if numero == "00000032":  # against the first one's bytes: a fraction of the XML, less than the zip
            assert len(row["xml"]) < len(xml) // 5, len(row["xml"])
            assert len(row["cdr_xml"]) < len(received) // 2, (len(row["cdr_xml"]), len(received))
        assert engine._outbox.submission(row["id"])["xml"] == xml
        stored = engine._outbox.stored_cdr(row["id"])
        assert stored.zip == received
        assert signature_is_valid(cdr.read_zip(stored.zip).xml)
        path = tmp_path / f"{numero}.xml"
        path.write_bytes(engine._outbox.submission(row["id"])["xml"])
        assert xmlsec_verify(path, _credentials()[1]).returncode == 0
    status, again = engine.call("enviar", {"xml_firmado": answers["00000031"][0].decode("utf-8"), "ambiente": "beta"})
    first_cdr = answers["00000031"][1].envelope["data"]["cdr"]
    assert status == 200 and again["data"]["cdr"] == first_cdr  # the same CDR bytes


def test_bytes_stored_before_packing_are_read_as_they_are(engine, company):
    legacy_xml, legacy_zip = b"<?xml version='1.0' encoding='ISO-8859-1'?><Invoice>\xf1</Invoice>", b"PK\x03\x04..."
    assert engine._vouchers.unpack_bytes(legacy_xml) == legacy_xml
    assert engine._vouchers.unpack_bytes(legacy_zip) == legacy_zip
    with engine._storage.transaction():
        packed = engine._vouchers.pack_bytes("cdr:sandbox", legacy_xml)
    assert packed.startswith(packed_texts.MAGIC) and engine._vouchers.unpack_bytes(packed) == legacy_xml
