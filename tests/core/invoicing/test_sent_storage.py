"""What a voucher sent to SUNAT stores (issue 19, point 6): the outbox keeps no second copy of a voucher Yupana keeps
(it sends the voucher's own stored signed text, byte for byte); a foreign voucher keeps its copy; the migration empties
only the copies that are byte for byte their voucher's text. A CDR is kept as its signed XML (packed) and the name it
had in the zip; the zip handed out is made again, the same bytes every time, and SUNAT's signature still verifies."""

from __future__ import annotations

import base64
import io
import shutil
import sqlite3
import zipfile

import pytest
from sqlite_utils import Database

from app.core.engine import Engine
from app.core.invoicing import cdr, outbox, packed_texts
from app.core.storage.sqlite.migrations import outbox as outbox_migrations
from tests.helpers.base import ISSUER_RUC
from tests.helpers.oracles import xmlsec_verify
from tests.helpers.sunat_support import signed_sample
from tests.helpers.voucher_matrix import factura, item

needs_xmlsec = pytest.mark.skipif(shutil.which("xmlsec1") is None, reason="xmlsec1 is not installed")
LINES = [item("Arroz extra 5 kg", "2", "18.50"), item("Aceite vegetal 1 L", "3", "9.90"), item("Azúcar rubia", "1", "4")]


@pytest.fixture
def issued(sunat_engine, company) -> list[int]:
    """Three vouchers of the company, issued and signed (not sent)."""
    certificado_id = sunat_engine.invoicing.create_test_certificate(ISSUER_RUC).certificado_id
    results = list(sunat_engine.invoicing.issue_batch([factura("F001", n, LINES) for n in (1, 2, 3)], certificado_id))
    assert all(result.success for result in results), [result.envelope() for result in results]
    return [sunat_engine._vouchers.find(ISSUER_RUC, "01", "F001", n)["id"] for n in (1, 2, 3)]


def stored_copy(engine, voucher_id: int) -> bytes:
    return engine._storage.query_one("SELECT xml FROM sunat_submissions WHERE voucher_id = ?", (voucher_id,))["xml"]


def test_our_voucher_is_sent_from_its_own_text_without_a_copy(sunat_engine, sandbox, issued):
    engine = sunat_engine
    by_id = engine.invoicing.resend(issued[0]).sent  # the windows
    signed = engine.invoicing.voucher(issued[1]).xml_firmado
    status, envelope = engine.call("enviar", {"xml_firmado": signed, "ambiente": "beta"})  # operation 3, by text
    assert by_id.codigo_respuesta == "0" and status == 200 and envelope["data"]["codigo_respuesta"] == "0"
    for voucher_id in issued[:2]:
        assert stored_copy(engine, voucher_id) == outbox.NO_COPY
        row = engine._storage.query_one("SELECT id FROM sunat_submissions WHERE voucher_id = ?", (voucher_id,))
        assert engine._outbox.submission(row["id"])["xml"] == engine.invoicing.voucher(voucher_id).xml_firmado.encode()
    stem = f"{ISSUER_RUC}-01-F001-2"
    assert sandbox.processed_counts[stem] == 1
    status, again = engine.call("enviar", {"xml_firmado": signed, "ambiente": "beta"})  # the stored CDR, not sent
    assert status == 200 and again["data"]["cdr"] == envelope["data"]["cdr"] and sandbox.send_count(stem) == 1


def test_a_foreign_voucher_keeps_its_own_copy(sunat_engine, sandbox):
    xml = signed_sample("00000033")
    status, envelope = sunat_engine.call("enviar", {"xml_firmado": xml.decode("utf-8"), "ambiente": "beta"})
    assert status == 200, envelope
    row = sunat_engine._storage.query_one("SELECT id, voucher_id, xml FROM sunat_submissions")
    assert row["voucher_id"] is None and row["xml"].startswith(packed_texts.MAGIC)
    assert sunat_engine._outbox.submission(row["id"])["xml"] == xml


def test_the_migration_empties_only_copies_identical_to_their_voucher(sunat_engine, sandbox, issued, home):
    engine = sunat_engine
    for voucher_id in issued:
        engine.invoicing.resend(voucher_id)
    texts = {voucher_id: engine.invoicing.voucher(voucher_id).xml_firmado.encode() for voucher_id in issued}
    with engine._storage.write() as conn:  # as folders stored before: a packed copy per submission; one differs
        for voucher_id, text in texts.items():
            copy = text if voucher_id != issued[2] else text.replace(b"Arroz", b"Arr0z")
            conn.execute("UPDATE sunat_submissions SET xml = ? WHERE voucher_id = ?",
                         (engine._vouchers.pack_bytes(f"signed:{ISSUER_RUC}:01", copy), voucher_id))
        conn.execute("UPDATE sunat_submissions SET xml = ? WHERE voucher_id = ?", (texts[issued[1]], issued[1]))
    engine.close()

    db = Database(sqlite3.connect(home / "yupana.db"))
    with db.conn:
        outbox_migrations.m004_no_copy_of_our_vouchers(db)
    db.conn.close()

    again = Engine(home)
    try:
        assert stored_copy(again, issued[0]) == stored_copy(again, issued[1]) == outbox.NO_COPY  # packed or not
        kept = stored_copy(again, issued[2])
        assert again._vouchers.unpack_bytes(kept) == texts[issued[2]].replace(b"Arroz", b"Arr0z")  # never lost
        for voucher_id in issued[:2]:
            row = again._storage.query_one("SELECT id FROM sunat_submissions WHERE voucher_id = ?", (voucher_id,))
            assert again._outbox.submission(row["id"])["xml"] == texts[voucher_id]
    finally:
        again.close()


@needs_xmlsec
def test_a_cdr_is_stored_as_its_xml_and_handed_out_in_a_zip_made_again(sunat_engine, sandbox, issued, tmp_path):
    engine = sunat_engine
    results = [engine.invoicing.resend(voucher_id).sent for voucher_id in issued]
    client = engine._submission.clients(engine._submission.clients.addresses.current(), ISSUER_RUC)
    received = client.get_status_cdr(ISSUER_RUC, "01", "F001", 1).content  # the zip as SUNAT hands it out
    original = cdr.read_zip(received)
    rows = engine._storage.query("SELECT c.cdr_zip, c.cdr_xml, c.cdr_member FROM sunat_cdrs c JOIN sunat_submissions s"
                                 " ON s.id = c.submission_id ORDER BY s.voucher_id")
    assert [(row["cdr_zip"], row["cdr_member"]) for row in rows] == [
        (b"", f"R-{ISSUER_RUC}-01-F001-{n}.xml") for n in (1, 2, 3)]
    assert all(row["cdr_xml"].startswith(packed_texts.MAGIC) for row in rows)
    assert len(rows[2]["cdr_xml"]) < len(received) // 2, (len(rows[2]["cdr_xml"]), len(received))  # dictionary

    handed = base64.b64decode(results[0].cdr)  # operation 3's answer
    again = cdr.read_zip(handed)
    assert (again.xml, again.member, again.hash_cdr) == (original.xml, original.member, original.hash_cdr)
    with zipfile.ZipFile(io.BytesIO(handed)) as archive:
        [entry] = archive.infolist()  # SUNAT's `dummy/` entry is not kept
        assert (entry.filename, entry.date_time, entry.compress_type) == (
            original.member, cdr.REBUILT_DATE_TIME, zipfile.ZIP_DEFLATED)
    assert engine.invoicing.voucher_cdr(issued[0]).cdr_zip == handed  # the windows and exports: the very same bytes
    assert cdr.rebuild_zip(original.member, original.xml) == handed

    path = tmp_path / "cdr.xml"
    path.write_bytes(again.xml)
    assert xmlsec_verify(path, sandbox.signer.certificate).returncode == 0  # SUNAT's signature, after a round trip
    path.write_bytes(again.xml.replace(b"ha sido aceptada", b"ha sido rechazada"))
    assert xmlsec_verify(path, sandbox.signer.certificate).returncode != 0


def test_a_cdr_stored_before_as_its_zip_is_read_as_it_is(sunat_engine, sandbox, issued):
    engine = sunat_engine
    engine.invoicing.resend(issued[0])
    client = engine._submission.clients(engine._submission.clients.addresses.current(), ISSUER_RUC)
    legacy = client.get_status_cdr(ISSUER_RUC, "01", "F001", 1).content
    with engine._storage.write() as conn:  # as rows stored before m005: the zip as received, packed
        conn.execute("UPDATE sunat_cdrs SET cdr_zip = ?, cdr_xml = NULL, cdr_member = NULL",
                     (engine._vouchers.pack_bytes("cdr:beta", legacy),))
    assert engine.invoicing.voucher_cdr(issued[0]).cdr_zip == legacy
    status, envelope = engine.call("enviar", {"xml_firmado": engine.invoicing.voucher(issued[0]).xml_firmado, "ambiente": "beta"})
    assert status == 200 and base64.b64decode(envelope["data"]["cdr"]) == legacy
