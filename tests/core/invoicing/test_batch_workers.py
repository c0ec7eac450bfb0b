"""Batches on every core (issue 33): the engine's signing workers make the vouchers, its writer stores each block in
one durable transaction. Real worker processes, real SQLite files; the only fault injected is a SIGKILL."""

from __future__ import annotations

import base64
import os
import signal
import sys
import threading
from decimal import Decimal
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from app.core.invoicing import batches, xmldsig
from app.core.invoicing.workers import Fallback, Maker, Part, SigningPool, outcome_of, wire
from tests.helpers.base import ISSUER_RUC
from tests.helpers.messaging_support import wait_for
from tests.helpers.voucher_matrix import factura, item


def facturas(first: int, count: int, serie: str = "F910") -> list[dict]:
    return [factura(serie, n, [item("Arroz extra 5 kg", "2", "18.50"), item(f"Servicio {n}", "1", "100")])
            for n in range(first, first + count)]


@pytest.fixture
def pooled(monkeypatch):
    """Every batch, however small, is made by the workers."""
    monkeypatch.setattr(batches, "POOL_FROM", 1)


def sleeping(pid: int) -> bool:
    """The process waits in the kernel (Linux: its state in /proc; elsewhere assumed)."""
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "S"


def stored_numbers(engine, serie: str = "F910") -> list[int]:
    rows = engine._storage.query("SELECT numero FROM vouchers WHERE serie = ? ORDER BY numero", (serie,))
    return [row["numero"] for row in rows]


def test_a_batch_is_made_by_one_worker_per_core_that_stays_for_the_next(engine, company, certificado_id, pooled):
    results = list(engine.invoicing.issue_batch(facturas(1, 40), certificado_id))
    assert [r.index for r in results] == list(range(40)) and all(r.success for r in results)
    pool = engine._batches.pool
    assert len(pool.workers) == (os.cpu_count() or 1)
    pids = [worker.process.pid for worker in pool.workers]
    assert os.getpid() not in pids
    assert all(xmldsig.verify_xml(r.voucher.xml_firmado).valid for r in results[:3])
    row = engine._vouchers.find(ISSUER_RUC, "01", "F910", 7)
    assert row["status"] == "firmado" and row["xml_firmado"] == results[6].voucher.xml_firmado
    assert list(engine.invoicing.issue_batch(facturas(41, 5), certificado_id))[-1].success
    assert [worker.process.pid for worker in pool.workers] == pids  # the same processes: reused, not started again
    assert not any(about["qt_loaded"] for about in pool.about())
    assert stored_numbers(engine) == list(range(1, 46))


def test_an_outcome_crosses_the_pipe_as_a_tuple_and_comes_back_equal(engine, company, certificado_id):
    signer = batches._Signer(engine._batches.signing, certificado_id)
    maker = Maker(engine._batches.generation, signer.material, signer.algorithm)
    request = factura("F910", 1, [item("Arroz extra 5 kg", "2", "18.50"), item("Servicio", "1", "100.10")])
    made = maker.make(3, request)
    assert not isinstance(made, Fallback) and made.doc.total == Decimal("161.78")  # (37.00 + 100.10) × 1.18
    values = wire(made)
    assert all(isinstance(value, str | int | bytes | list | tuple | bool | None) for value in values)
    back = outcome_of(values)
    assert back == made and back.doc.total.as_tuple() == made.doc.total.as_tuple()  # the same digits and exponent
    assert back.doc.fecha == made.doc.fecha and type(back.doc.receptor) is type(made.doc.receptor)
    assert outcome_of(wire(Fallback(7, "20601030013"))) == Fallback(7, "20601030013")
    assert outcome_of(wire(Fallback(8))) == Fallback(8)


def test_a_voucher_in_a_batch_has_no_sync_of_its_own(engine, company, certificado_id, pooled):
    count = 2 * batches.BLOCK + 10  # three blocks
    syncs = engine._storage.syncs
    assert all(r.success for r in engine.invoicing.issue_batch(facturas(1, count), certificado_id))
    assert engine._storage.syncs - syncs == 3  # one durable commit per block, none per voucher
    assert stored_numbers(engine) == list(range(1, count + 1))


def test_a_small_batch_made_here_also_syncs_once(engine, company, certificado_id):
    syncs = engine._storage.syncs
    assert all(r.success for r in engine.invoicing.issue_batch(facturas(1, 5), certificado_id))
    assert engine._storage.syncs - syncs == 1
    assert engine._batches.pool.workers == []  # too small to start the workers


def test_the_texts_dictionaries_are_written_once(engine, company, certificado_id, pooled):
    written: list[str] = []
    engine._storage.watch(lambda _conn, sql: written.append(sql) if "INTO voucher_dictionaries" in sql else None)
    try:
        list(engine.invoicing.issue_batch(facturas(1, batches.BLOCK + 1), certificado_id))
        first = len(written)
        list(engine.invoicing.issue_batch(facturas(batches.BLOCK + 2, 20), certificado_id))
    finally:
        engine._storage.watch(None)
    assert first == 3  # the request's, the XML's and the signature's, for 251 vouchers in two blocks
    assert set(engine._batches.pool._dictionaries) == {  # the workers pack against them from then on
        f"request:{ISSUER_RUC}", f"xml:{ISSUER_RUC}:01", f"signature:{certificado_id}"}
    assert len(written) == first  # known to be stored: never written again
    row = engine._vouchers.find(ISSUER_RUC, "01", "F910", batches.BLOCK + 5)
    assert xmldsig.verify_xml(row["xml_firmado"]).valid  # packed against them, read back whole


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_worker_killed_mid_block_leaves_nothing_of_it_and_numbering_goes_on(engine, company, certificado_id,
                                                                              pooled, monkeypatch):
    count = 3 * batches.BLOCK
    made = engine._batches
    pool = made.pool
    finish, restart = made._finish, pool.restart
    killed: list[int] = []
    stored_at_restart: list[list[int]] = []

    def kill_while_the_next_block_is_made(signer, block, first, *rest):
        if first == 0:
            # Block 2 is in the workers' hands and none of it was read yet: each part is 125 vouchers whose texts come
            # unpacked (a new data folder's first blocks: no dictionary stored yet), ~2.5 MB, far more than the
            # connection holds until read: the worker cannot have given its part back whole. It is mid-block.
            victim = pool.workers[0]
            killed.append(victim.process.pid)
            os.kill(victim.process.pid, signal.SIGKILL)
            victim.process.join(30)
            assert victim.process.exitcode == -signal.SIGKILL
        yield from finish(signer, block, first, *rest)

    def restart_and_look():
        stored_at_restart.append(stored_numbers(engine))
        restart()

    monkeypatch.setattr(made, "_finish", kill_while_the_next_block_is_made)
    monkeypatch.setattr(pool, "restart", restart_and_look)
    results = list(engine.invoicing.issue_batch(facturas(1, count), certificado_id))
    assert killed and stored_at_restart == [list(range(1, batches.BLOCK + 1))]  # nothing of block 2 was kept
    assert [r.index for r in results] == list(range(count)) and all(r.success for r in results)
    assert stored_numbers(engine) == list(range(1, count + 1))  # no gap, no number twice
    assert killed[0] not in [worker.process.pid for worker in pool.workers]
    assert all(worker.alive() for worker in pool.workers)
    assert [r.voucher.nombre_archivo for r in results[batches.BLOCK:batches.BLOCK + 2]] == [
        f"{ISSUER_RUC}-01-F910-{batches.BLOCK + 1}.xml", f"{ISSUER_RUC}-01-F910-{batches.BLOCK + 2}.xml"]


def test_refusals_and_unknown_issuers_are_answered_as_operation_1_gives_them(engine, company, certificado_id,
                                                                           pooled):
    good = facturas(1, 3)
    foreign = factura("F910", 4, [item("Pan", "1", "1")])
    foreign["emisor"] = {"ruc": "20601030013"}  # another issuer: the certificate asked for is not its own
    broken = '{"tipo": "01", roto'
    results = list(engine.invoicing.issue_batch([good[0], foreign, good[1], broken, good[2]], certificado_id))
    assert [r.success for r in results] == [True, False, True, False, True]
    assert "es del RUC 20100066603, pero el comprobante lo emite el RUC 20601030013" in results[1].refusal.message
    assert results[3].envelope() == engine.call("xml", broken).envelope
    assert stored_numbers(engine) == [1, 2, 3]


def test_the_requests_are_taken_a_block_at_a_time(engine, company, certificado_id, pooled):
    taken = 0

    def stream():
        nonlocal taken
        for request in facturas(1, 4 * batches.BLOCK):
            taken += 1
            yield request

    results = engine.invoicing.issue_batch(stream(), certificado_id)
    first = next(results)
    # The first block (stored), and the AHEAD blocks the workers hold meanwhile: the one they make, the next
    assert first.success and taken <= (1 + batches.AHEAD) * batches.BLOCK < 4 * batches.BLOCK
    results.close()  # cancelled: what was handed out is stored, the workers are left idle for the next batch
    assert list(engine.invoicing.issue_batch(facturas(2000, 3), certificado_id))[0].success
    assert stored_numbers(engine)[:batches.BLOCK] == list(range(1, batches.BLOCK + 1))


def test_a_pool_closed_with_the_engine_leaves_no_process(engine, company, certificado_id, pooled):
    list(engine.invoicing.issue_batch(facturas(1, 2), certificado_id))
    processes = [worker.process for worker in engine._batches.pool.workers]
    engine.close()
    assert processes and not any(process.is_alive() for process in processes)


def test_the_key_goes_to_each_worker_once_through_its_pipe(engine, company, certificado_id, pooled):
    pool: SigningPool = engine._batches.pool
    list(engine.invoicing.issue_batch(facturas(1, 4), certificado_id))
    list(engine.invoicing.issue_batch(facturas(5, 4), certificado_id))
    assert all(worker.keys_sent == {certificado_id} for worker in pool.workers)
    der = engine._certificates.signing_material(certificado_id)[0].private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    if sys.platform.startswith("linux"):  # what the system shows of each worker: its command line and environment
        for worker in pool.workers:
            for part in ("cmdline", "environ"):
                shown = Path(f"/proc/{worker.process.pid}/{part}").read_bytes()
                assert der not in shown and base64.b64encode(der)[:64] not in shown and b"PRIVATE KEY" not in shown


def test_while_a_block_is_stored_each_worker_holds_the_next_two(engine, company, certificado_id, pooled, monkeypatch):
    made = engine._batches
    pool = made.pool
    finish = made._finish
    held: dict[int, list[list[int]]] = {}

    def look_then_finish(signer, block, first, *rest):
        held[first] = [[part.first for part in worker.parts] for worker in pool.workers]
        yield from finish(signer, block, first, *rest)

    monkeypatch.setattr(made, "_finish", look_then_finish)
    count = 3 * batches.BLOCK + 4  # three whole blocks and a small last one
    results = list(engine.invoicing.issue_batch(facturas(1, count), certificado_id))
    assert all(r.success for r in results) and stored_numbers(engine) == list(range(1, count + 1))
    share = -(-batches.BLOCK // len(pool.workers))
    # Block 1 stored while each worker makes its part of block 2 and has its part of block 3 waiting: never idle
    assert held[0] == [[batches.BLOCK + n * share, 2 * batches.BLOCK + n * share] for n in range(len(pool.workers))]
    assert all(not worker.parts for worker in pool.workers)  # every part taken back at the end


@pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP is POSIX")
def test_a_part_is_taken_back_as_soon_as_it_is_whole_whichever_worker_finishes_first(engine, company,
                                                                                      certificado_id, pooled):
    list(engine.invoicing.issue_batch(facturas(1, 2), certificado_id))  # the workers started and set up
    pool = engine._batches.pool
    if len(pool.workers) < 2:
        pytest.skip("one core: one worker")
    slow, quick = pool.workers[0], pool.workers[1]
    os.kill(slow.process.pid, signal.SIGSTOP)  # it cannot finish its part until it is let go on
    try:
        pool.send(slow, Part.of(0, facturas(100, 3)))
        pool.send(quick, Part.of(3, facturas(103, 3)))
        assert pool.first_finished([slow, quick]) is quick  # not held up by the first in line
        assert [outcome.index for outcome in pool.receive(quick)] == [3, 4, 5]
    finally:
        os.kill(slow.process.pid, signal.SIGCONT)
    assert [outcome.index for outcome in pool.receive(slow)] == [0, 1, 2] and not slow.busy


def test_a_packed_signature_crosses_the_pipe_alone_and_is_unpacked_by_the_writer(engine, company, certificado_id,
                                                                                 pooled):
    list(engine.invoicing.issue_batch(facturas(1, batches.BLOCK + 1), certificado_id))  # its dictionaries stored
    store = engine._batches.store
    signer = batches._Signer(engine._batches.signing, certificado_id)
    request = facturas(batches.BLOCK + 2, 1)[0]
    plain = Maker(engine._batches.generation, signer.material, signer.algorithm).make(0, request)
    packing = Maker(engine._batches.generation, signer.material, signer.algorithm, store.kept_dictionaries())
    packed = packing.make(0, request)
    assert not isinstance(plain, Fallback) and not isinstance(packed, Fallback)
    assert packed.signature == "" and packed.packed_signature and plain.signature.startswith("<ds:Signature")
    assert len(repr(wire(packed))) < len(repr(wire(plain))) - 1500  # the 2.3 kB element is not sent twice

    def unpack(data: bytes) -> bytes:
        text = store.unpack_bytes(data)
        assert text is not None
        return text

    assert packed.signed(unpack) == plain.signed(unpack)
    assert xmldsig.verify_xml(packed.signed(unpack).xml).valid


@pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP is POSIX")
def test_large_vouchers_never_leave_the_engine_and_a_worker_each_waiting_for_the_other_to_read(
        engine, company, certificado_id, pooled, monkeypatch):
    """Reproduces a deadlock: the engine hands a worker its next part (larger than a pipe holds) while that worker
    is blocked sending a piece of the part it makes (larger too) that the engine does not read meanwhile. Each
    worker's messages are read by a thread of its own, so the engine's send always ends."""
    def lines(numero: int) -> list[dict]:
        return [item(f"Producto {n:03d} del pedido {numero}, con una descripción larga " + "x" * 60, "3", f"{n}.25")
                for n in range(1, 61)]

    requests = [factura("F910", n, lines(n)) for n in range(1, 3 * batches.BLOCK + 1)]  # a part: ~2 MB
    list(engine.invoicing.issue_batch(facturas(5000, 2, "F911"), certificado_id))  # the workers started
    made = engine._batches
    pool = made.pool
    if len(pool.workers) < 2:
        pytest.skip("one core: one worker")
    ahead_of_the_other, behind = pool.workers
    collect = made._collect

    def one_worker_far_ahead(first, block):
        if first == 0:  # the first worker finishes its part and is blocked sending a piece of the next one
            os.kill(behind.process.pid, signal.SIGSTOP)
            try:
                pool.first_finished([ahead_of_the_other])
                # It sent a piece and sleeps mid-part: blocked sending the next (the engine reads nothing now)
                wait_for(lambda: ahead_of_the_other.conn.poll() and sleeping(ahead_of_the_other.process.pid),
                         timeout=60)
            finally:
                os.kill(behind.process.pid, signal.SIGCONT)
        return collect(first, block)

    monkeypatch.setattr(made, "_collect", one_worker_far_ahead)
    results: list = []
    batch = threading.Thread(target=lambda: results.extend(engine.invoicing.issue_batch(requests, certificado_id)))
    batch.start()
    batch.join(120)
    stuck = batch.is_alive()
    if stuck:  # let the test end: the workers' deaths break the engine's send
        for worker in pool.workers:
            os.kill(worker.process.pid, signal.SIGKILL)
        batch.join(60)
    assert not stuck, "the engine and a worker waited for each other"
    assert len(results) == len(requests) and all(r.success for r in results)
    assert stored_numbers(engine) == list(range(1, len(requests) + 1))
