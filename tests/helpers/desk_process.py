"""One desk of the several-desks tests (tests/core/storage/test_desks.py) and of bench/desks.py: a process with its own
data folder whose `database_url` names the shared PostgreSQL (or none: SQLite in the folder), doing one job.

    python -m tests.helpers.desk_process issue HOME COUNT MARK
        «Emitir» with the serie's next number (F001, factura to a customer named MARK) until this desk has COUNT
        vouchers to MARK (a desk restarted after a SIGKILL issues only what is missing), each sent to the SUNAT sandbox;
        then waits until nothing is pending in the outbox. Prints one JSON line per voucher not accepted, then
        `done SECONDS` (the seconds the issuing took).
    python -m tests.helpers.desk_process save-product HOME PRODUCT_ID VERSION PRICE
        Saves the product with a new price over the version it read; prints `saved VERSION` or `refused MESSAGE`.
    python -m tests.helpers.desk_process void HOME VOUCHER_ID
        «Anular» (a comunicación de baja, not waiting for the ticket); prints the summary's identifier.
    python -m tests.helpers.desk_process resumen HOME [--hold]
        The day's resumen diario (not waiting for the ticket); prints its ident and the serie-números it reports
        (`RC-… B001-1 B001-2`), or `none MESSAGE`. With `--hold` it stops once it has checked which boletas were sent
        alone (inside the transaction that stores its lines): prints `checked` and goes on at a line on its input.
    python -m tests.helpers.desk_process resend HOME VOUCHER_ID [--hold]
        Sends a stored, signed voucher alone (operation 3); prints `sent ESTADO` or `refused MESSAGE`. With `--hold`
        it stops once the outbox has checked that no resumen diario reports it (inside the transaction that queues
        it): prints `checked` and goes on at a line on its input.
    python -m tests.helpers.desk_process listen HOME
        Starts the webhook listener on a port the system picks and prints its URL; ends at a line on its standard
        input.
    python -m tests.helpers.desk_process follow HOME
        Follows the pending summaries' tickets as `yupana serve` and the app do (`watch_summaries`); at each line
        `count` on its standard input prints how many getStatus this desk has asked, and ends at `stop`.
    python -m tests.helpers.desk_process backups HOME
        A desk with a backup folder (its puesto.json's): prints `holding` once it holds the backups' turn; at each line
        `count` on its standard input prints how many vouchers' and RA/RC's files it has still to write, and ends at
        `stop`.

With `--wait` a desk prints `ready` once open and starts its job when a line comes on its standard input: several
desks then start at once.
"""

from __future__ import annotations

import json
import sys
import time
from decimal import Decimal

from app.core.engine import Engine

ISSUER = "20100066603"
SERIE = "F001"
SETTLE_S = 120.0


def request(mark: str) -> dict:
    """A three-line factura to the customer named `mark` (its number is the serie's next, given when stored)."""
    return {"tipo": "01", "serie": SERIE, "numero": 1, "emisor": {"ruc": ISSUER},
            "receptor": {"ruc": "20601030013", "razon_social": mark},
            "items": [{"descripcion": f"Producto {n}", "cantidad": Decimal(n), "precio_unitario": Decimal(f"{n}.50")}
                      for n in range(1, 4)]}


def issued_to(engine: Engine, mark: str) -> int:
    row = engine._storage.query_one("SELECT count(*) AS n FROM vouchers WHERE receptor_nombre = ?", (mark,))
    return int(row["n"]) if row else 0


def settle(engine: Engine) -> None:
    """Wait until no submission is pending, whichever desk holds it (this desk's outbox takes over a dead one's)."""
    deadline = time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        row = engine._storage.query_one("SELECT id FROM sunat_submissions WHERE state = 'pendiente' ORDER BY id")
        if row is None:
            return
        engine._outbox.wake()
        engine._outbox.wait_settled(row["id"], 1.0)
    raise SystemExit("submissions still pending")


def issue(engine: Engine, count: int, mark: str) -> None:
    started = time.perf_counter()
    for _ in range(count - issued_to(engine, mark)):
        emission = engine.invoicing.issue(request(mark), next_number=True)
        if emission.outcome is None or emission.outcome.estado != "aceptado":
            print(json.dumps({"voucher": emission.nombre_archivo, "outcome": str(emission.outcome)}), flush=True)
    took = time.perf_counter() - started
    settle(engine)
    print(f"done {took:.6f}", flush=True)


def save_product(engine: Engine, product_id: int, version: int, price: str) -> None:
    from app.core.api import YupanaError

    [product] = [p for p in engine.catalog.products("", 10_000) if p.id == product_id]
    data = {**product.data(), "precio": Decimal(price)}
    try:
        saved = engine.catalog.save_product(data, product_id, version=version)
    except YupanaError as refusal:
        print(f"refused {refusal.message}", flush=True)
        return
    print(f"saved {saved.version}", flush=True)


def void(engine: Engine, voucher_id: int) -> None:
    outcome = engine.invoicing.void(voucher_id, "Error en el precio", wait=False)
    print(outcome.ident, flush=True)


def follow(engine: Engine) -> None:
    tickets = engine._voids.tickets
    asked = [0]
    check = tickets.check

    def counted(summary_id: int):  # this desk's getStatus, counted (the summary's own code runs as it is)
        asked[0] += 1
        return check(summary_id)

    tickets.check = counted
    engine.invoicing.watch_summaries()
    for line in sys.stdin:
        if line.strip() == "stop":
            break
        print(asked[0], flush=True)


def backups(engine: Engine) -> None:
    writer = engine._backup_files
    while not writer.holding():
        writer.loop.wait_round(writer.loop.rounds, timeout=10)
    print("holding", flush=True)
    for line in sys.stdin:
        if line.strip() == "stop":
            break
        print(writer.pending(), flush=True)


def held(call):
    """`call`, then `checked` said and a line on the standard input waited for (where the test runs the other desk)."""
    def holding(*args, **kwargs):
        answer = call(*args, **kwargs)
        print("checked", flush=True)
        sys.stdin.readline()
        return answer
    return holding


def resumen(engine: Engine, hold: bool) -> None:
    from app.core.api import YupanaError
    from app.core.platform import clock

    if hold:
        book = engine._voids.book
        book._not_sent_alone = held(book._not_sent_alone)
    try:
        outcomes = engine.invoicing.daily_summary(clock.today(), wait=False)
    except YupanaError as refusal:
        print(f"none {refusal.message}", flush=True)
        return
    for outcome in outcomes:
        print(" ".join([outcome.ident, *(v.serie_numero for v in outcome.vouchers)]), flush=True)


def resend(engine: Engine, voucher_id: int, hold: bool) -> None:
    from app.core.api import YupanaError

    if hold:
        engine._outbox._check_one_path = held(engine._outbox._check_one_path)
    try:
        emission = engine.invoicing.resend(voucher_id)
    except YupanaError as refusal:
        print(f"refused {refusal.message}", flush=True)
        return
    print(f"sent {emission.outcome.estado if emission.outcome else None}", flush=True)


def listen(engine: Engine) -> None:
    print(engine.messaging.start_listener("127.0.0.1", 0), flush=True)
    sys.stdin.readline()


def main(argv: list[str]) -> None:
    wait, hold = "--wait" in argv, "--hold" in argv
    job, home, *args = [arg for arg in argv if arg not in ("--wait", "--hold")]
    with Engine(home) as engine:
        if wait:
            print("ready", flush=True)
            sys.stdin.readline()
        if job == "issue":
            issue(engine, int(args[0]), args[1])
        elif job == "save-product":
            save_product(engine, int(args[0]), int(args[1]), args[2])
        elif job == "void":
            void(engine, int(args[0]))
        elif job == "resumen":
            resumen(engine, hold)
        elif job == "resend":
            resend(engine, int(args[0]), hold)
        elif job == "listen":
            listen(engine)
        elif job == "follow":
            follow(engine)
        elif job == "backups":
            backups(engine)
        else:
            raise SystemExit(f"unknown job {job}")


if __name__ == "__main__":
    main(sys.argv[1:])
