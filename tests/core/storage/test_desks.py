"""Several desks over one PostgreSQL (issue 34, item 5): real desk processes (tests/helpers/desk_process.py), each with
its own data folder naming the shared database, against the SUNAT sandbox running in the test's process.

- numbering and the outbox: three desks issue on one serie at once, one SIGKILLed mid-run and restarted: numbers
  1..N with no gap or duplicate, each voucher sent to SUNAT once, all accepted, nothing left pending. N is 3 ×
  YUPANA_DESKS_VOUCHERS (40 in `make test`; `make desks` runs the issue's 3 × 1,000);
- a lease of a desk on another host runs out on the database's clock before another desk takes its voucher over;
- voids: two desks voiding at once on one day make RA-…-1 and RA-…-2;
- the catalogue: two desks saving one product over the version they both read: one is saved, the other refused.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.platform.environments import DESK_SANDBOX_FILE
from app.core.platform.settings import DeskSettings
from tests.helpers.base import ISSUER_RUC, ROOT
from tests.helpers.desk_process import SERIE
from tests.helpers.voucher_matrix import factura, item

pytestmark = pytest.mark.postgres

VOUCHERS_PER_DESK = int(os.environ.get("YUPANA_DESKS_VOUCHERS", "40"))
PROCESS_S = 60 + VOUCHERS_PER_DESK * 0.5  # a desk's whole run, generous on a loaded 2-core machine


def desk_home(tmp_path: Path, name: str, shared) -> Path:
    """A desk's data folder on the first desk's database, using the sandboxes running for the first desk (this test's:
    a desk's sandbox addresses are its own, in its folder)."""
    home = tmp_path / name
    home.mkdir()
    DeskSettings(home).put("database_url", shared.url)
    running = shared._home / DESK_SANDBOX_FILE
    if running.exists():
        shutil.copy(running, home / DESK_SANDBOX_FILE)
    return home


def start(job: str, home: Path, *args: str, wait: bool = True) -> subprocess.Popen:
    """A desk process doing `job`; with `wait`, it is open (it said `ready`) and waits for `go`."""
    command = [sys.executable, "-m", "tests.helpers.desk_process", job, str(home), *args, *(["--wait"] if wait else [])]
    process = subprocess.Popen(command, cwd=ROOT, env=dict(os.environ, YUPANA_HOME=str(home)), text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if wait:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.strip() == "ready", line + process.communicate(timeout=30)[1][-3000:]
    return process


def go(*desks: subprocess.Popen) -> None:
    for desk in desks:
        assert desk.stdin is not None
        desk.stdin.write("go\n")
        desk.stdin.flush()


def finish(desk: subprocess.Popen, timeout: float = PROCESS_S) -> list[str]:
    out, err = desk.communicate(timeout=timeout)
    assert desk.returncode == 0, err[-3000:]
    return [line for line in out.splitlines() if line.strip()]


@pytest.fixture
def shared(postgres_server, home, sandbox):
    """The first desk's engine on a fresh shared database: the issuer, its default test certificate, the SUNAT
    sandbox; short time-outs and retries."""
    from app.core.engine import Engine
    from app.core.platform.companies import Company

    url = postgres_server.fresh_database()
    DeskSettings(home).put("database_url", url)
    engine = Engine(home)
    try:
        engine.admin.set_company(Company(ruc=ISSUER_RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                         direccion="AV. ABANCAY 123"))
        engine.invoicing.create_test_certificate(ISSUER_RUC)
        sandbox.configure(engine)
        engine.admin.config_set("sunat_timeout_s", "5")
        engine.admin.config_set("sunat_retry_base_s", "0.05")
        engine.admin.config_set("sunat_retry_max_s", "0.3")
        engine.url = url  # where the other desks go
        yield engine
    finally:
        engine.close()


def test_three_desks_issue_on_one_serie_at_once_one_killed_no_gap_no_duplicate_each_sent_once(shared, sandbox,
                                                                                               tmp_path):
    homes = [desk_home(tmp_path, f"caja{n}", shared) for n in (1, 2, 3)]
    marks = [f"CLIENTE DE LA CAJA {n}" for n in (1, 2, 3)]
    desks = [start("issue", home, str(VOUCHERS_PER_DESK), mark) for home, mark in zip(homes, marks, strict=True)]
    go(*desks)
    total = 3 * VOUCHERS_PER_DESK
    # Caja 1 is SIGKILLed once SUNAT has a third of the vouchers: mid-send (its sendBill just arrived) or anywhere.
    assert sandbox.wait_for_sends(total // 3, PROCESS_S), sandbox.sends()
    os.kill(desks[0].pid, signal.SIGKILL)
    desks[0].communicate(timeout=30)
    desks[0] = start("issue", homes[0], str(VOUCHERS_PER_DESK), marks[0], wait=False)
    lines = [line for desk in desks for line in finish(desk)]
    assert [line for line in lines if not line.startswith("done ")] == []  # every voucher accepted as issued

    rows = shared._storage.query("SELECT numero, status, receptor_nombre FROM vouchers WHERE serie = ? ORDER BY numero",
                                 (SERIE,))
    assert [row["numero"] for row in rows] == list(range(1, total + 1))  # no gap, no duplicate
    assert {row["status"] for row in rows} == {"aceptado"}
    assert sorted(row["receptor_nombre"] for row in rows) == sorted(marks * VOUCHERS_PER_DESK)
    stems = {f"{ISSUER_RUC}-01-{SERIE}-{n}" for n in range(1, total + 1)}
    assert set(sandbox.received_counts) == stems and set(sandbox.received_counts.values()) == {1}  # sent once each
    assert set(sandbox.processed_counts) == stems
    assert shared._storage.query("SELECT id FROM sunat_submissions WHERE state <> 'terminado'") == []  # none pending
    assert shared._storage.query_one("SELECT count(*) AS n FROM sunat_cdrs") == {"n": total}


def test_a_desk_on_another_host_holding_a_voucher_is_taken_over_once_its_lease_runs_out(shared, sandbox, tmp_path):
    """The lease is written and compared on the server's clock: a desk of another host (whose process cannot be
    looked at) keeps its voucher until the lease ends, then another desk's outbox sends it, once."""
    sandbox.fail_next("500")  # SUNAT out of order: the voucher waits in the outbox
    emission = shared.invoicing.issue(factura(SERIE, 1, [item("Arroz Costeño 5 kg", "2", "25.37")]))
    assert emission.outcome.estado == "pendiente"
    shared._outbox.stop()  # this desk leaves it to the others
    with shared._storage.write() as conn:  # taken by a desk of another PC that died mid-send: its lease ends in 3 s
        until = conn.execute("UPDATE sunat_submissions SET claimed_by = ?, next_attempt_at = 0,"
                             " claimed_until = extract(epoch from clock_timestamp()) + 3 RETURNING claimed_until",
                             ("caja-de-otra-pc/4242:muerta",)).fetchone()[0]
    desk = start("issue", desk_home(tmp_path, "caja2", shared), "0", "NADIE", wait=False)
    assert finish(desk)[-1].startswith("done")  # its outbox took the voucher over once the lease ran out
    assert shared._storage.query_one("SELECT state FROM sunat_submissions") == {"state": "terminado"}
    stored = shared._storage.query_one("SELECT extract(epoch from CAST(received_at AS timestamptz)) AS at FROM sunat_cdrs")
    assert stored["at"] >= until  # not before the lease ran out, on the server's clock
    assert sandbox.processed_counts[f"{ISSUER_RUC}-01-{SERIE}-1"] == 1


def test_two_desks_voiding_at_once_on_one_day_number_their_summaries_once(shared, sandbox, tmp_path):
    ids = [shared.invoicing.issue(factura(SERIE, n, [item("Servicio", "1", "100")])).voucher_id for n in (1, 2)]
    desks = [start("void", desk_home(tmp_path, f"caja{n}", shared), str(voucher_id))
             for n, voucher_id in zip((1, 2), ids, strict=True)]
    go(*desks)
    idents = sorted(finish(desk)[-1] for desk in desks)
    assert [ident.rsplit("-", 1)[1] for ident in idents] == ["1", "2"] and idents[0][:-1] == idents[1][:-1]
    rows = shared._storage.query("SELECT ident, counter FROM sunat_summaries ORDER BY counter")
    assert [(row["ident"], row["counter"]) for row in rows] == [(idents[0], 1), (idents[1], 2)]


def test_two_desks_saving_one_product_over_the_same_version_one_is_refused(shared, tmp_path):
    product = shared.catalog.save_product({"codigo": "ARR-5", "descripcion": "Arroz Costeño 5 kg", "precio": "25.37"})
    assert product.version == 1
    desks = [start("save-product", desk_home(tmp_path, f"caja{n}", shared), str(product.id), "1", price)
             for n, price in ((1, "26.00"), (2, "27.00"))]
    go(*desks)
    answers = sorted(finish(desk)[-1] for desk in desks)
    assert answers[0] == "refused Otro puesto cambió este producto; revise y guarde de nuevo", answers
    assert answers[1] == "saved 2"
    [stored] = shared.catalog.products("Arroz")
    assert stored.version == 2 and str(stored.precio) in ("26.00", "27.00")
    with pytest.raises(Exception, match="Otro puesto cambió este producto"):  # this desk read version 1 too
        shared.catalog.save_product({**product.data(), "precio": "30.00"}, product.id, version=1)



def holder_pid(storage, job: str) -> int:
    """The process whose turn it is to run `job` (its owner text «host/pid:tag»)."""
    row = storage.query_one("SELECT holder FROM desk_turns WHERE name = ?", (job,))
    return int(row["holder"].split(":", 1)[0].rpartition("/")[2])


def asked(desk: subprocess.Popen) -> int:
    """How many getStatus the `follow` desk has asked so far."""
    go(desk)
    assert desk.stdout is not None
    return int(desk.stdout.readline())


def test_the_summary_poller_runs_on_one_desk_at_a_time_and_another_takes_over_when_it_dies(shared, sandbox, tmp_path):
    from app.core.storage.engines import open_shared_database

    sandbox.summaries.configure(pending_polls=1_000_000)  # the ticket stays pending: followed again and again
    voucher_id = shared.invoicing.issue(factura(SERIE, 1, [item("Servicio", "1", "100")])).voucher_id
    ticket = shared.invoicing.void(voucher_id, "Error en el precio", wait=False).ticket
    assert ticket
    shared.close()  # this desk leaves: two others follow the ticket
    desks = [start("follow", desk_home(tmp_path, f"caja{n}", shared)) for n in (1, 2)]
    storage = open_shared_database(shared.url)
    try:
        before = sandbox.summaries.ticket(ticket).polls  # those of the desk that left
        go(*desks)
        assert sandbox.summaries.wait_for_polls(ticket, before + 6, 60)
        holder = holder_pid(storage, "summary-poller")
        [first] = [desk for desk in desks if desk.pid == holder]
        [other] = [desk for desk in desks if desk.pid != holder]
        assert asked(first) >= 6 and asked(other) == 0  # the turn's holder alone asks SUNAT
        polls = sandbox.summaries.ticket(ticket).polls
        os.kill(first.pid, signal.SIGKILL)
        first.communicate(timeout=30)
        assert sandbox.summaries.wait_for_polls(ticket, polls + 6, 60)  # taken over: its process is gone
        assert asked(other) >= 6 and holder_pid(storage, "summary-poller") == other.pid
        other.stdin.write("stop\n")
        assert finish(other) == []
    finally:
        storage.close()
        for desk in desks:
            if desk.poll() is None:
                desk.kill()
                desk.communicate()


def test_a_webhook_posted_to_two_desks_listeners_at_once_is_stored_once_and_forwarded_once(shared, tmp_path):
    """A gateway posting the same event to two desks (its retry reaching the other desk, or two desks registered):
    one event stored, one delivery, one POST to the subscriber (whichever desk forwards it)."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from app.sandbox.gateway import GatewaySandbox
    from tests.helpers.messaging_support import Subscriber, wait_for

    with GatewaySandbox() as gateway:
        gateway.configure(shared)
        receiver = Subscriber()
        receiver.start()
        try:
            shared.messaging.subscribe({"instance": gateway.instance_name, "url": receiver.url, "events": ["message.received"]})
            desks = [start("listen", desk_home(tmp_path, f"caja{n}", shared), wait=False) for n in (1, 2)]
            urls = [desk.stdout.readline().strip() for desk in desks]
            assert all(url.startswith("http://127.0.0.1:") for url in urls), urls
            post = gateway.webhook_body("message.received", gateway.instance_name, body="Pedido 42")
            registered = httpx.URL(wait_for(lambda: gateway.webhook_of(gateway.instance_name), timeout=30))  # a desk told it
            path = f"{registered.path}?{registered.query.decode()}"  # with the instance's token
            with ThreadPoolExecutor(2) as pool:  # both at once
                answers = list(pool.map(lambda url: httpx.post(url + path, json=post, timeout=30).status_code, urls))
            assert all(200 <= status < 300 for status in answers), answers
            delivered = wait_for(lambda: shared._storage.query(
                "SELECT state, attempts FROM deliveries WHERE state = 'delivered'") or None, timeout=30)
            assert delivered == [{"state": "delivered", "attempts": 1}]
            assert [payload["data"]["body"] for payload in receiver.payloads()] == ["Pedido 42"]
            assert shared._storage.query_one("SELECT count(*) AS n FROM webhook_events") == {"n": 1}
            assert shared._storage.query_one("SELECT count(*) AS n FROM deliveries") == {"n": 1}
            for desk in desks:
                go(desk)
                assert finish(desk) == []
        finally:
            receiver.stop()
            gateway.unconfigure(shared)


# ---------------------------------------------------------------- one path per boleta across desks

def waiting_on_a_lock(storage, desk: subprocess.Popen) -> bool:
    """The desk has ended, or one of the shared database's sessions waits for a row another holds."""
    row = storage.query_one("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                            " AND datname = current_database()")
    return desk.poll() is not None or row["n"] > 0


def until(condition, timeout: float = 60) -> bool:
    from tests.helpers.messaging_support import wait_for

    return bool(wait_for(lambda: condition() or None, timeout=timeout))


def said_checked(desk: subprocess.Popen) -> None:
    assert desk.stdout is not None
    line = desk.stdout.readline()
    assert line.strip() == "checked", line + desk.communicate(timeout=30)[1][-3000:]


def sent_alone_and_reported(shared) -> list[dict]:
    """The boletas with both a submission (sent alone, or queued to be) and an adding line in a resumen diario."""
    return shared._storage.query(
        "SELECT s.serie, s.numero FROM sunat_submissions s JOIN sunat_summary_lines l ON l.voucher_id = s.voucher_id"
        " WHERE l.condition <> '3'")


def test_a_boleta_sent_alone_on_one_desk_while_another_makes_the_resumen_is_refused(shared, sandbox, tmp_path):
    """Caja 1's resumen diario has checked which boletas were sent alone and is signing its lines (not committed)
    when caja 2 sends one of them alone: caja 2 waits for caja 1's commit, then sees the line and refuses. Before, on
    PostgreSQL neither saw the other's uncommitted row: the boleta went by sendBill and in the RC."""
    from tests.core.invoicing.test_one_path_per_boleta import signed_only

    first, _ = signed_only(shared, "B003", 1), signed_only(shared, "B003", 2)
    summary = start("resumen", desk_home(tmp_path, "caja1", shared), "--hold")
    go(summary)
    said_checked(summary)
    alone = start("resend", desk_home(tmp_path, "caja2", shared), str(first), wait=False)
    assert until(lambda: waiting_on_a_lock(shared._storage, alone))
    go(summary)
    [reported] = finish(summary)
    [answer] = finish(alone)
    assert reported.split()[1:] == ["B003-1", "B003-2"], reported
    assert answer.startswith("refused El comprobante B003-1 va en el resumen diario") and "RC-" in answer, answer
    assert sandbox.send_count(f"{ISSUER_RUC}-03-B003-1") == 0 and sandbox.sends() == 0  # never by sendBill
    assert sent_alone_and_reported(shared) == []


def test_a_boleta_queued_alone_on_one_desk_while_another_makes_the_resumen_is_left_out(shared, sandbox, tmp_path):
    """Caja 2 has checked that no resumen diario reports its boleta and is queuing it (not committed) when caja 1's
    resumen diario picks the day's boletas: caja 1 waits for caja 2's commit, then leaves that boleta out. Before, the
    RC reported it too."""
    from tests.core.invoicing.test_one_path_per_boleta import signed_only

    alone, _ = signed_only(shared, "B004", 2), signed_only(shared, "B004", 1)
    sender = start("resend", desk_home(tmp_path, "caja2", shared), str(alone), "--hold")
    go(sender)
    said_checked(sender)
    summary = start("resumen", desk_home(tmp_path, "caja1", shared), wait=False)
    assert until(lambda: waiting_on_a_lock(shared._storage, summary))
    go(sender)
    [answer] = finish(sender)
    [reported] = finish(summary)
    assert answer == "sent aceptado"
    assert reported.split()[1:] == ["B004-1"], reported
    assert sandbox.send_count(f"{ISSUER_RUC}-03-B004-2") == 1
    assert sent_alone_and_reported(shared) == []
