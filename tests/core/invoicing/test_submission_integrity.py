"""Issue 12: submission integrity. Never send a voucher twice, never hand out another voucher's CDR,
never leave a state stale. Each test reproduces a finding of the issue (it failed before the fix)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from lxml import etree

from app.core.engine import Engine
from app.core.errors import ErrorCode
from app.core.invoicing import outbox
from app.core.invoicing.ubl_identity import identify
from tests.helpers.base import ROOT
from tests.helpers.sunat_support import SAMPLE_RUC, sign, signed_sample, stem, unsigned_sample

SETTLE_S = 20


def enviar(engine, xml: bytes) -> tuple[int, dict]:
    status, envelope = engine.call("enviar", {"xml_firmado": xml.decode("utf-8")})
    return status, envelope


def submission_of(engine, numero: str) -> dict:
    row = engine._storage.query_one("SELECT * FROM sunat_submissions WHERE numero = ?", (numero,))
    assert row is not None
    return row


def leave_pending(engine, sandbox, xml: bytes) -> dict:
    """A submission SUNAT answered 500 (queued, must reconcile), due again at once, worker kept away."""
    engine.admin.config_set("sunat_retry_base_s", "600")
    engine.admin.config_set("sunat_retry_max_s", "600")
    sandbox.fail_next("500")
    status, envelope = enviar(engine, xml)
    assert status == 503 and envelope["error"]["code"] == ErrorCode.QUEUED, envelope
    engine._outbox.stop()  # this test's own worker stays out: the attempts under test are the only ones
    doc = identify(etree.fromstring(xml))
    return submission_of(engine, doc.numero)


# ---------------------------------------------------------------- 1. single flight

def test_the_caller_never_sends_a_voucher_the_worker_is_sending(sunat_engine, sandbox):
    """Finding 1: the outbox thread and the caller's own `enviar` shared one lease owner, so both sent."""
    row = leave_pending(sunat_engine, sandbox, signed_sample())
    sandbox.fail_next("hang")
    sunat_engine.admin.config_set("sunat_timeout_s", "10")
    worker = threading.Thread(target=sunat_engine._outbox.attempt, args=(row["id"],))  # as the worker thread does
    worker.start()
    try:
        assert sandbox.wait_for_sends(2, 10), "the worker's attempt never reached the sandbox"
        with sunat_engine._storage.write() as conn:  # due now: the caller attempts instead of waiting
            conn.execute("UPDATE sunat_submissions SET next_attempt_at = 0 WHERE id = ?", (row["id"],))
        status, envelope = enviar(sunat_engine, signed_sample())
        assert status == 503 and envelope["error"]["code"] == ErrorCode.QUEUED, envelope
        assert "se está enviando" in envelope["error"]["message"]
    finally:
        sandbox.release()
        worker.join(15)
    assert sandbox.send_count(stem()) == 2  # the 500 and the worker's one: nothing from the caller
    status, envelope = enviar(sunat_engine, signed_sample())
    assert status == 200 and envelope["data"]["estado"] == "aceptado"
    assert sandbox.send_count(stem()) == 2 and sandbox.processed_counts[stem()] == 1


def test_two_processes_asking_at_once_send_once(sunat_engine, sandbox, home, tmp_path):
    """Finding 1 with real processes: each opens with the submission pending (its worker starts) and its caller
    asks too. The first sendBill is held at the sandbox: any other attempt meanwhile would be a second send."""
    numero = "00000041"
    row = leave_pending(sunat_engine, sandbox, signed_sample(numero))
    with sunat_engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET next_attempt_at = 0 WHERE id = ?", (row["id"],))
    sunat_engine.admin.config_set("sunat_timeout_s", "10")
    sandbox.fail_next("hang")
    request = tmp_path / "enviar.json"
    request.write_text(json.dumps({"xml_firmado": signed_sample(numero).decode()}), encoding="utf-8")
    env = dict(os.environ, YUPANA_HOME=str(home))
    processes = [subprocess.Popen([sys.executable, "-m", "app", "call", "enviar", str(request)], cwd=ROOT,
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    try:
        assert sandbox.wait_for_sends(2, 30), "no attempt reached the sandbox"
        # Four attempts (two workers, two callers) race while the first sendBill is held; a second sendBill
        # would arrive within this wait. None may.
        assert not sandbox.wait_for_sends(3, 3), sandbox.stats()
    finally:
        sandbox.release()
        outputs = [json.loads(p.communicate(timeout=60)[0]) for p in processes]
    assert all(o["success"] or o["error"]["code"] == ErrorCode.QUEUED for o in outputs), outputs
    row = sunat_engine._outbox.wait_settled(row["id"], SETTLE_S)
    assert row["state"] == outbox.DONE
    assert sandbox.send_count(stem(numero)) == 2, sandbox.stats()  # the 500, then exactly one
    assert sandbox.processed_counts[stem(numero)] == 1
    status, envelope = enviar(sunat_engine, signed_sample(numero))
    assert status == 200 and envelope["data"]["estado"] == "aceptado"


def test_1033_with_get_status_cdr_failing_is_never_a_rejection(sunat_engine, sandbox):
    """Finding 1: getStatusCdr faulting turned SUNAT's 1033 into UPSTREAM_REJECTED for an accepted voucher."""
    sandbox.fail_next("timeout")  # SUNAT registers the voucher; the answer is lost
    sunat_engine.admin.config_set("sunat_retry_base_s", "600")
    sunat_engine.admin.config_set("sunat_retry_max_s", "600")
    status, envelope = enviar(sunat_engine, signed_sample())
    assert status == 503, envelope
    sunat_engine._outbox.stop()  # only this test's calls attempt
    row = submission_of(sunat_engine, "00000031")
    with sunat_engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET next_attempt_at = 0 WHERE id = ?", (row["id"],))
    sandbox.fail_next("fault:0200", count=3, operation="getStatusCdr")
    status, envelope = enviar(sunat_engine, signed_sample())
    assert status == 503 and envelope["error"]["code"] == ErrorCode.QUEUED, envelope
    row = submission_of(sunat_engine, "00000031")
    assert row["state"] == outbox.PENDING
    with sunat_engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET next_attempt_at = 0 WHERE id = ?", (row["id"],))
    assert row["must_reconcile"] == outbox.HELD_BY_SUNAT
    sandbox.fail_next("fault:0200", count=3, operation="getStatusCdr")  # still faulting: still queued,
    sends = sandbox.send_count(stem())
    assert enviar(sunat_engine, signed_sample())[0] == 503
    assert sandbox.send_count(stem()) == sends  # and never sent again: SUNAT has it
    sandbox.reset_failures()  # the look-up works again
    with sunat_engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET next_attempt_at = 0 WHERE id = ?", (row["id"],))
    status, envelope = enviar(sunat_engine, signed_sample())  # the look-up works again: SUNAT's CDR
    assert status == 200 and envelope["data"]["estado"] == "aceptado", envelope
    assert sandbox.processed_counts[stem()] == 1


def test_a_late_failure_never_overwrites_a_stored_cdr(sunat_engine, sandbox):
    """Finding 1: `_fail` of a racing attempt set an accepted submission to `fallido`; `enviar` then sent it again."""
    assert enviar(sunat_engine, signed_sample())[0] == 200
    stale = submission_of(sunat_engine, "00000031")
    stale["state"] = outbox.PENDING
    attempt = sunat_engine._outbox._fail(stale, "1033", "registrado previamente")
    assert attempt.kind == "cdr" and attempt.cdr.estado == "aceptado"
    assert submission_of(sunat_engine, "00000031")["state"] == outbox.DONE
    status, envelope = enviar(sunat_engine, signed_sample())
    assert status == 200 and envelope["data"]["estado"] == "aceptado"
    assert sandbox.send_count(stem()) == 1


# ---------------------------------------------------------------- 2. identity from what is signed

def spoofed(replacement: bytes, original: bytes = b"<cbc:ID>F002-00000031</cbc:ID>") -> bytes:
    xml = unsigned_sample()
    assert original in xml
    return sign(xml.replace(original, replacement, 1))


@pytest.mark.parametrize("inside", [b"<!--x-->", b"<?yupana x?>", b"<cbc:Note>x</cbc:Note>"])
def test_identity_with_a_comment_pi_or_child_is_refused(sunat_engine, sandbox, inside):
    """Finding 2: `F002-3<!--x-->1` kept a valid signature (C14N drops comments) and was read as F002-3."""
    status, envelope = enviar(sunat_engine, spoofed(b"<cbc:ID>F002-3" + inside + b"1</cbc:ID>"))
    assert status == 400, envelope
    message = envelope["error"]["message"]
    assert "cbc:ID" in message and "texto simple" in message
    assert envelope["error"]["details"][0]["field"] == "xml_firmado"
    assert sum(sandbox.received_counts.values()) == 0


@pytest.mark.parametrize(("original", "replacement"), [
    (b'<cbc:ID schemeID="6">20605446788</cbc:ID>', b'<cbc:ID schemeID="6">2060544678<!--x-->8</cbc:ID>'),
    (b'<cbc:InvoiceTypeCode listID="0101">01<', b'<cbc:InvoiceTypeCode listID="0101">0<!--x-->1<'),
    (b"<cbc:IssueDate>2024-05-16<", b"<cbc:IssueDate>2024-05<!--x-->-16<"),
    (b'<cbc:PayableAmount currencyID="PEN">100.30<', b'<cbc:PayableAmount currencyID="PEN">100<?x?>.30<'),
])
def test_other_identity_fields_must_be_plain_text(sunat_engine, sandbox, original, replacement):
    status, envelope = enviar(sunat_engine, spoofed(replacement, original))
    assert status == 400, envelope
    assert "texto simple" in envelope["error"]["message"]
    assert sum(sandbox.received_counts.values()) == 0


def test_the_genuine_voucher_is_sent_after_a_refused_spoof(sunat_engine, sandbox):
    assert enviar(sunat_engine, spoofed(b"<cbc:ID>F002-3<!--x-->1</cbc:ID>"))[0] == 400
    genuine = signed_sample("3")
    status, envelope = enviar(sunat_engine, genuine)
    assert status == 200 and envelope["data"]["descripcion"].startswith("La Factura numero F002-3,")
    assert sandbox.processed_counts[stem("3")] == 1


def test_another_voucher_with_the_same_number_never_gets_the_stored_cdr(sunat_engine, sandbox):
    """Finding 2: a foreign voucher with the same serie-número and other content got the first one's CDR."""
    assert enviar(sunat_engine, signed_sample("00000040"))[0] == 200
    other = sign(unsigned_sample("00000040").replace(b"<cbc:IssueDate>2024-05-16<", b"<cbc:IssueDate>2024-05-17<"))
    assert other != signed_sample("00000040")
    status, envelope = enviar(sunat_engine, other)
    assert status == 409, envelope
    assert envelope["error"]["code"] == ErrorCode.CONFLICT
    assert "F002-00000040" in envelope["error"]["message"]
    assert sandbox.send_count(stem("00000040")) == 1
    status, envelope = enviar(sunat_engine, signed_sample("00000040"))  # the same document: its CDR, as before
    assert status == 200 and envelope["data"]["estado"] == "aceptado"


# ---------------------------------------------------------------- 3. limits before the signature check

def bomb(declarations: int) -> bytes:
    xml = signed_sample()
    extra = b"".join(b' xmlns:n%d="urn:x:%d"' % (n, n) for n in range(declarations))
    return xml.replace(b"<cbc:UBLVersionID", b"<cbc:UBLVersionID" + extra, 1)


def test_a_namespace_bomb_is_refused_in_well_under_a_second(sunat_engine, sandbox):
    """Finding 3: 40k xmlns declarations on one element (1 MB) took 7 s in the signature check."""
    xml = bomb(40_000)
    assert len(xml) > 1_000_000
    started = time.perf_counter()
    status, envelope = enviar(sunat_engine, xml)
    elapsed = time.perf_counter() - started
    assert status == 400, envelope
    assert "espacios de nombres" in envelope["error"]["message"]
    assert elapsed < 1.0, elapsed
    assert sum(sandbox.received_counts.values()) == 0


def test_attribute_and_element_bombs_are_refused_quickly(sunat_engine, sandbox):
    attributes = signed_sample().replace(b"<cbc:UBLVersionID", b"<cbc:UBLVersionID" + b"".join(
        b' a%d="x"' % n for n in range(50_000)), 1)
    elements = signed_sample().replace(b"</cbc:UBLVersionID>", b"</cbc:UBLVersionID>" + b"<x/>" * 300_000, 1)
    for xml, words in ((attributes, "atributos"), (elements, "elementos")):
        started = time.perf_counter()
        status, envelope = enviar(sunat_engine, xml)
        assert time.perf_counter() - started < 1.0
        assert status == 400 and words in envelope["error"]["message"], envelope
    assert sum(sandbox.received_counts.values()) == 0


# ---------------------------------------------------------------- 4. repair on open

def test_a_kill_between_the_cdr_and_the_voucher_status_loses_neither(engine, company, sandbox, home, monkeypatch):
    """Finding 4: a voucher stayed `enviado` with its accepted CDR committed; nothing repaired it. Since issue 33 the
    CDR and the voucher's status commit together: a kill while they are written leaves neither, and the next engine
    asks SUNAT for the CDR (it never sends again) and stores both. (Opening a folder still repairs the state older
    versions could leave: tests/core/invoicing/test_mutation_gaps_outbox.py.)"""
    from tests.helpers.voucher_matrix import factura, item

    sandbox.configure(engine)
    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    xml = engine.invoicing.generate_xml(factura("F001", 7, [item("Servicio", "1", "100")])).xml
    signed = engine.invoicing.sign({"xml": xml, "certificado_id": certificado_id}).xml_firmado

    class Killed(BaseException):
        pass

    real_write_status = engine._vouchers.write_status

    def dies_writing_the_final_status(voucher_id, status):
        if status != "enviado":
            raise Killed  # the process dies here, inside the CDR's transaction
        return real_write_status(voucher_id, status)

    monkeypatch.setattr(engine._vouchers, "write_status", dies_writing_the_final_status)
    with pytest.raises(Killed):
        engine.invoicing.send({"xml_firmado": signed})
    monkeypatch.undo()
    voucher_id = engine._storage.query_one("SELECT id FROM vouchers WHERE numero = 7")["id"]
    assert engine.invoicing.voucher(voucher_id).status == "enviado"
    assert engine._storage.query("SELECT * FROM sunat_cdrs") == []  # the CDR went with the status
    with engine._storage.write() as conn:  # the dead attempt's lease ran out
        conn.execute("UPDATE sunat_submissions SET claimed_by = NULL, claimed_until = NULL")
    reopened = Engine(home)
    try:
        submission_id = reopened._storage.query_one("SELECT id FROM sunat_submissions")["id"]
        assert reopened._outbox.wait_settled(submission_id, SETTLE_S)["state"] == outbox.DONE
        assert reopened.invoicing.voucher(voucher_id).status == "aceptado"
    finally:
        reopened.close()
    assert sandbox.send_count(f"{company.ruc}-01-F001-7") == 1


# ---------------------------------------------------------------- 5. one HTTP client per endpoint

def test_sends_reuse_one_connection_and_the_client_closes_with_the_engine(engine, sandbox, home):
    sandbox.configure(engine)
    for numero in ("00000051", "00000052", "00000053"):
        assert enviar(engine, signed_sample(numero))[0] == 200
    assert sandbox.connections == 1  # one pooled keep-alive connection for the three sendBills
    clients = engine._sunat_http
    assert clients.client(sandbox.bill_url) is clients.client(sandbox.bill_url)
    engine.close()
    assert clients.closed
    with pytest.raises(RuntimeError):
        clients.client(sandbox.bill_url)
    Engine(home).close()  # the fixture closes `engine` again: harmless


# ---------------------------------------------------------------- 6. durability where it counts

def traced(engine) -> list[str]:
    statements: list[str] = []
    engine._storage.conn().set_trace_callback(statements.append)
    return statements


def test_handing_out_a_number_and_storing_a_cdr_are_synced_commits(sunat_engine, company, sandbox):
    from tests.helpers.voucher_matrix import factura, item

    statements = traced(sunat_engine)
    sunat_engine.invoicing.generate_xml(factura("F001", 9, [item("Servicio", "1", "100")]))
    insert = next(i for i, s in enumerate(statements) if s.startswith("INSERT INTO vouchers "))
    commit = next(i for i, s in enumerate(statements) if i > insert and s == "COMMIT")
    assert "PRAGMA synchronous = FULL" in statements[:commit]
    # Statements SQLite runs on its own («-- …», the FTS5 index's flush at the commit) belong to the commit.
    assert [s for s in statements[commit + 1:] if not s.startswith("-- ")][0] == "PRAGMA synchronous = NORMAL"
    statements.clear()
    assert enviar(sunat_engine, signed_sample())[0] == 200
    cdr_insert = next(i for i, s in enumerate(statements) if s.startswith("INSERT INTO sunat_cdrs"))
    begin = max(i for i, s in enumerate(statements[:cdr_insert]) if s.startswith("BEGIN"))
    assert statements[begin - 1] == "PRAGMA synchronous = FULL"
    statements.clear()
    sunat_engine.admin.config_set("sunat_timeout_s", "2")  # a plain setting is not synced on its own
    assert "PRAGMA synchronous = FULL" not in statements


# ---------------------------------------------------------------- 7. private files, numbers by value

@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
def test_data_folder_files_are_private(sunat_engine, sandbox, home):
    assert enviar(sunat_engine, signed_sample())[0] == 200
    sunat_engine._storage.checkpoint("PASSIVE")
    names = {path.name for path in home.rglob("*")}
    assert {"yupana.db", "yupana.db-wal", "yupana.db-shm", "yupana.log"} <= names
    for path in [home, *home.rglob("*")]:
        mode = path.stat().st_mode & 0o777
        assert mode & 0o077 == 0, f"{path.relative_to(home.parent)} is {oct(mode)}"


def test_a_new_data_folder_is_0700(tmp_path):
    if os.name == "nt":
        pytest.skip("POSIX permissions")
    folder = tmp_path / "nueva"
    Engine(folder).close()
    assert folder.stat().st_mode & 0o777 == 0o700


def test_amounts_are_compared_by_value(engine, company):
    """Finding 7: resending 50.0 instead of 50.00 answered 409."""
    from tests.helpers.voucher_matrix import factura, item

    first = engine.call("xml", factura("F001", 11, [item("Servicio", "2", "50.00")]))
    again = engine.call("xml", factura("F001", 11, [item("Servicio", "2.0", "50.0")]))
    assert first.status == 200 and again.status == 200, again
    assert again.envelope["data"]["xml"] == first.envelope["data"]["xml"]
    other = engine.call("xml", factura("F001", 11, [item("Servicio", "2", "50.01")]))
    assert other.status == 409


def test_sandbox_counts_sends_per_voucher(sandbox):
    assert sandbox.send_count(f"{SAMPLE_RUC}-01-F002-1") == 0


def test_the_biggest_voucher_passes_the_limits_with_room_to_spare(engine, company, sandbox):
    """500 lines, each with its code and unit: accepted, and at most half of each cap is used."""
    from app.core.platform import xml_limits
    from tests.helpers.voucher_matrix import factura, item

    sandbox.configure(engine)
    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    lines = [item(f"Producto {n} de la lista de precios", str(n % 7 + 1), f"{n % 90 + 1}.{n % 100:02d}",
                  codigo=f"P{n:05d}", unidad="NIU") for n in range(500)]
    xml = engine.invoicing.generate_xml(factura("F001", 500, lines)).xml
    signed = engine.invoicing.sign({"xml": xml, "certificado_id": certificado_id}).xml_firmado.encode("utf-8")
    root = etree.fromstring(signed)
    assert len(xml_limits._DECLARATION.findall(signed)) * 2 <= xml_limits.MAX_NAMESPACE_DECLARATIONS
    assert sum(1 for _ in root.iter()) * 2 <= xml_limits.MAX_ELEMENTS
    assert max(len(e.attrib) for e in root.iter()) * 2 <= xml_limits.MAX_ATTRIBUTES_PER_ELEMENT
    started = time.perf_counter()
    xml_limits.check_bytes(signed)
    xml_limits.check_tree(root)
    assert time.perf_counter() - started < 0.5
    status, envelope = enviar(engine, signed)
    assert status == 200 and envelope["data"]["estado"] == "aceptado", envelope


def test_the_signature_check_itself_refuses_a_bomb_quickly():
    """`verify_xml` (the GUI's check, the sandbox's) applies the same limits before canonicalising."""
    from app.core.invoicing.xmldsig import verify_xml

    started = time.perf_counter()
    result = verify_xml(bomb(40_000))
    assert time.perf_counter() - started < 1.0
    assert not result.valid and "espacios de nombres" in result.reason


def test_a_lease_left_by_an_attempt_that_died_in_this_process_is_taken_at_once(sunat_engine, sandbox):
    """An attempt of this process that ended with an exception left its lease: the next one need not wait it out."""
    row = leave_pending(sunat_engine, sandbox, signed_sample())
    with sunat_engine._storage.write() as conn:
        conn.execute("UPDATE sunat_submissions SET claimed_by = ?, claimed_until = ?, next_attempt_at = 0 WHERE id = ?",
                     (f"{sunat_engine._outbox.owner}:deadbeef", sunat_engine._outbox.clock() + 600, row["id"]))
    status, envelope = enviar(sunat_engine, signed_sample())
    assert status == 200 and envelope["data"]["estado"] == "aceptado", envelope
    assert sandbox.processed_counts[stem()] == 1
