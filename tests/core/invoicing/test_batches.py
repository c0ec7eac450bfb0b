"""Batch issuing (engine.invoicing.issue_batch, `yupana lote`): the same vouchers, answers and refusals as operations
1 and 2 one by one, stored signed in one transaction per block, verified by xmlsec1 and SUNAT's checker."""

from __future__ import annotations

import json
import shutil
import sqlite3
from decimal import Decimal

import pytest

from app.core.engine import Engine
from app.core.invoicing import batches, builder, xmldsig
from tests.helpers.base import ISSUER_RUC, run_cli
from tests.helpers.oracles import load_sunat_check, xmlsec_verify
from tests.helpers.voucher_matrix import CUSTOMER_RUC, MATRIX, TODAY, factura, item

needs_xmlsec = pytest.mark.skipif(shutil.which("xmlsec1") is None, reason="xmlsec1 is not installed")


def facturas(first: int, count: int, serie: str = "F900") -> list[dict]:
    return [factura(serie, n, [item("Arroz extra 5 kg", "2", "18.50"), item(f"Servicio {n}", "1", "100")])
            for n in range(first, first + count)]


@pytest.fixture
def certificado_id(engine, company) -> str:
    return engine.invoicing.create_test_certificate(company.ruc).certificado_id


def stored(engine, request: dict) -> dict:
    return engine._vouchers.find(ISSUER_RUC, request["tipo"], request["serie"], request["numero"])


@needs_xmlsec
@pytest.mark.slow  # the whole matrix through xmlsec1, three vouchers through SUNAT's sheets
def test_the_matrix_as_one_batch_is_what_operations_1_and_2_give(engine, company, certificado_id, tmp_path):
    # Issued at a fixed moment, so that both engines write the same IssueDate and IssueTime.
    matrix = [(name, {"fecha_emision": TODAY.isoformat(), "hora_emision": "10:30:00", **request})
              for name, request in MATRIX]
    results = list(engine.invoicing.issue_batch([request for _, request in matrix], certificado_id))
    assert [r.success for r in results] == [True] * len(MATRIX), [r.envelope() for r in results if not r.success][:1]
    certificate = engine._certificates.signing_material(certificado_id)[1]
    one_by_one = Engine(tmp_path / "one-by-one")  # the same company, operations 1 and 2 for each voucher
    try:
        one_by_one.admin.set_company(company)
        other_id = one_by_one.invoicing.create_test_certificate(company.ruc).certificado_id
        for (name, request), result in zip(matrix, results, strict=True):
            data = result.envelope()["data"]
            expected = one_by_one.invoicing.generate_xml(request)
            signed = one_by_one.invoicing.sign({"xml": expected.xml, "certificado_id": other_id})
            row = stored(engine, request)
            assert row["xml"] == expected.xml, name  # the same voucher, byte for byte
            assert (data["nombre_archivo"], data["hash"]) == (expected.nombre_archivo, expected.hash), name
            assert data["digest_value"] == signed.digest_value, name  # the «código hash» of the printed voucher
            assert row["status"] == "firmado" and row["xml_firmado"] == data["xml_firmado"], name
            assert xmldsig.verify_xml(data["xml_firmado"]).valid, name
            path = tmp_path / data["nombre_archivo"]
            path.write_text(data["xml_firmado"], encoding="utf-8")
            assert xmlsec_verify(path, certificate).returncode == 0, name
    finally:
        one_by_one.close()
    oracle = load_sunat_check()
    for index in (0, len(MATRIX) // 2, len(MATRIX) - 1):
        verdict = oracle.check(str(tmp_path / results[index].voucher.nombre_archivo))
        assert verdict["ok"] and not verdict["sunat"]["observations"], (MATRIX[index][0], verdict)


def test_a_stored_batch_voucher_is_the_one_operation_2_and_sending_find(engine, company, certificado_id):
    request = facturas(1, 1)[0]
    data = next(engine.invoicing.issue_batch([request], certificado_id)).voucher
    again = engine.invoicing.sign({"xml": stored(engine, request)["xml"], "certificado_id": certificado_id})
    assert (again.xml_firmado, again.signature_value) == (data.xml_firmado, data.signature_value)
    assert engine._vouchers.find_by_signed_xml(data.xml_firmado)["numero"] == 1


def test_refusals_are_answered_as_operation_1_gives_them_and_the_rest_is_issued(engine, company, certificado_id):
    good = facturas(1, 3)
    wrong_igv = factura("F900", 10, [item("Arroz", "2", "10.50", igv=Decimal("9"))])
    no_items = factura("F900", 11, [])
    batch = [good[0], wrong_igv, good[1], '{"tipo": "01", roto', no_items, good[2]]
    results = list(engine.invoicing.issue_batch(batch, certificado_id))
    assert [r.success for r in results] == [True, False, True, False, False, True]
    assert results[1].envelope() == engine.call("xml", wrong_igv).envelope
    assert results[1].envelope()["error"]["details"][0]["field"] == "items[0].igv"
    assert results[3].envelope() == engine.call("xml", '{"tipo": "01", roto').envelope
    assert results[4].envelope() == engine.call("xml", no_items).envelope
    assert [r.serie_numero for r in engine.invoicing.vouchers()] == ["F900-3", "F900-2", "F900-1"]


def test_running_a_batch_again_answers_from_the_store_and_a_changed_voucher_is_a_conflict(engine, company,
                                                                                          certificado_id):
    batch = facturas(1, 5)
    first = [r.envelope() for r in engine.invoicing.issue_batch(batch, certificado_id)]
    changed = [*batch[:4], factura("F900", 5, [item("Otro producto", "1", "1")])]
    second = [r.envelope() for r in engine.invoicing.issue_batch(changed, certificado_id)]
    assert second[:4] == first[:4]
    assert second[4]["error"]["code"] == "CONFLICT" and "F900-5" in second[4]["error"]["message"]
    assert len(engine.invoicing.vouchers()) == 5


def test_without_a_usable_certificate_nothing_is_generated(engine, company):
    refused = [r.envelope() for r in engine.invoicing.issue_batch(facturas(1, 2))]
    assert all(r["error"]["details"][0]["field"] == "certificado_id" for r in refused)
    foreign = engine.invoicing.create_test_certificate("20601030013").certificado_id  # another RUC's certificate
    refused = [r.envelope() for r in engine.invoicing.issue_batch(facturas(1, 2), foreign)]
    assert all("es del RUC 20601030013" in r["error"]["message"] for r in refused)
    assert engine.invoicing.vouchers() == []
    own = engine.invoicing.create_test_certificate(company.ruc)
    engine.invoicing.set_default_certificate(company.ruc, own.certificado_id)
    assert all(r.success for r in engine.invoicing.issue_batch(facturas(1, 2)))  # the issuer's default certificate


def test_blocks_report_progress_and_a_cancel_stops_between_blocks(engine, company, certificado_id, monkeypatch):
    monkeypatch.setattr(batches, "BLOCK", 2)
    requests = facturas(1, 5)
    # each item is handed out once its whole block is stored: counting the items gives the progress per block
    stored_when_handed = [(done, _count(engine)) for done, _item in
                          enumerate(engine.invoicing.issue_batch(requests, certificado_id), 1)]
    assert stored_when_handed == [(1, 2), (2, 2), (3, 4), (4, 4), (5, 5)]
    seen = [(done, len(requests)) for done, stored in stored_when_handed if done == stored]
    assert seen == [(2, 5), (4, 5), (5, 5)] and len(stored_when_handed) == 5
    cancelled = []
    results = []
    batch = engine.invoicing.issue_batch(facturas(20, 5), certificado_id)
    for done, result in enumerate(batch, 1):
        results.append(result)
        if done % batches.BLOCK == 0:  # a block is done: its progress is reported, then the batch is cancelled
            cancelled.append((done, 5))
            break
    batch.close()
    assert len(results) == 2 and cancelled == [(2, 5)]
    assert sorted(v.numero for v in engine.invoicing.vouchers() if v.numero >= 20) == [20, 21]


def _count(engine) -> int:
    return len(engine.invoicing.vouchers(limit=1000))


def test_a_failed_transaction_stores_nothing_of_its_block(engine, company, certificado_id, monkeypatch):
    made_here = engine._batches._made_here

    def second_text_cannot_be_written(signer, block, first):
        made = made_here(signer, block, first)
        made[1].request = None  # failure injection: its text row breaks a NOT NULL constraint
        return made

    monkeypatch.setattr(engine._batches, "_made_here", second_text_cannot_be_written)
    with pytest.raises(sqlite3.IntegrityError):
        list(engine.invoicing.issue_batch(facturas(1, 3), certificado_id))
    assert engine.invoicing.vouchers() == []  # the first voucher's rows went with the rest of the block
    assert engine._storage.query_one("SELECT COUNT(*) AS n FROM voucher_texts")["n"] == 0


# ---------------------------------------------------------------- repeated lines

def test_equal_lines_give_the_same_xml_however_their_numbers_are_written(engine, company):
    builder._line_cache.clear()
    first = engine.invoicing.generate_xml(factura("F901", 1, [item("Leche", "1", "3.50")])).xml
    cached = engine.invoicing.generate_xml(factura("F901", 2, [item("Leche", "1.000", "3.5000")])).xml
    builder._line_cache.clear()
    fresh = engine.invoicing.generate_xml(factura("F901", 3, [item("Leche", "1.000", "3.5000")])).xml

    def lines(xml: str) -> str:
        return xml[xml.index("<cac:InvoiceLine>"):]

    assert lines(first) == lines(cached) == lines(fresh)


def test_a_refused_line_is_not_kept(engine, company):
    builder._line_cache.clear()
    bad = item("Azúcar", "2", "4.00", igv=Decimal("5"))
    assert engine.call("xml", factura("F902", 1, [bad])).status == 400
    assert engine.call("xml", factura("F902", 1, [bad])).envelope["error"]["details"][0]["field"] == "items[0].igv"
    assert not builder._line_cache


# ---------------------------------------------------------------- yupana lote

@needs_xmlsec
def test_the_lote_command_issues_a_file_and_saves_the_signed_files(engine, company, certificado_id, home, tmp_path):
    engine.close()
    lines = [json.dumps(request, default=str) for request in facturas(1, 3)]
    lines.insert(1, "")
    lines.append('{"tipo": "01"}')
    source = tmp_path / "lote.jsonl"
    source.write_text("\n".join(lines), encoding="utf-8")
    done = run_cli("lote", str(source), "--certificado", certificado_id, "--salida", str(tmp_path / "xml"),
                   "--quiet", home=home)
    assert done.returncode == 1, done.stderr.decode()  # one request was refused
    out = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [o.get("success") for o in out[:4]] == [True, True, True, False]
    assert out[3]["error"]["code"] == "INVALID_INPUT" and out[-1]["emitidos"] == 3 and out[-1]["con_error"] == 1
    saved = tmp_path / "xml" / out[0]["nombre_archivo"]
    reopened = Engine(home)
    try:
        certificate = reopened._certificates.signing_material(certificado_id)[1]
    finally:
        reopened.close()
    assert xmlsec_verify(saved, certificate).returncode == 0
    again = run_cli("lote", str(source), "--certificado", certificado_id, "--quiet", home=home)
    assert [json.loads(line) for line in again.stdout.decode().splitlines()][:3] == out[:3]  # nothing issued twice


def test_a_customer_without_a_name_is_looked_up_as_operation_1_does(engine, company, certificado_id):
    request = factura("F903", 1, [item("Pan", "10", "0.50")])
    request["receptor"] = {"ruc": CUSTOMER_RUC}  # no name given, no register loaded, no provider answering
    result = next(engine.invoicing.issue_batch([request], certificado_id)).envelope()
    assert result["error"]["details"][0]["field"] == "receptor.razon_social"
    assert result == engine.call("xml", request).envelope
