"""`python -m scripts.soak --minutes N` (`make soak MINUTES=N`): a shop's day compressed, then the checks.

Phases: the busy part lasts MINUTES. Its last third, at most 3 minutes, is quiet (the app is not killed; the work
and SUNAT's faults go on); before that the app is SIGKILLed every 20-40 s. Then the work stops, the faults are taken
back, one last `yupana resumen` reports the boletas still signed, and the soak waits (SETTLE_S at most) for SUNAT's
tickets, the vouchers and the webhooks to settle; then it stops the app, reads what happened and checks it. It
prints a table and, last, one JSON line of figures; it exits 1 on any violation.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from app.core.api import Engine
from app.core.sandbox_kit import TICKET_DONE, TICKET_REJECTED
from scripts.soak import checks
from scripts.soak.harness import ISSUER, PASSPHRASE, AppProcess, Stage, Subscriber
from scripts.soak.shop import GATEWAY_PREFIX, Faults, Killer, Shop, run_cli, sender

QUIET_MAX_S = 180.0
MEMORY_AFTER_S = 30.0
SETTLE_GRACE_S = 2.0
SETTLE_S = 150.0  # a delivery in flight when the app was killed is sent again when its lease (120 s) runs out


def phases(minutes: float) -> tuple[float, float]:
    """(seconds with kills, quiet seconds): the quiet phase is the last third of MINUTES, at most 3 minutes."""
    total = minutes * 60
    quiet = min(QUIET_MAX_S, total / 3)
    return total - quiet, quiet


def say(text: str) -> None:
    print(f"[soak {time.strftime('%H:%M:%S')}] {text}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.soak", description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="minutes of work (kills, then a quiet phase)")
    parser.add_argument("--seed", type=int, default=int(time.time()), help="the random choices' seed")
    parser.add_argument("--keep", action="store_true", help="keep the temp data folder and the app's logs")
    args = parser.parse_args()
    if args.minutes < 1.5:
        parser.error("--minutes: at least 1.5 (30 s of the quiet phase come before its memory figure)")
    folder = Path(tempfile.mkdtemp(prefix="yupana-soak-"))
    home = folder / "home"
    home.mkdir()
    os.environ.update(YUPANA_HOME=str(home), YUPANA_PASSPHRASE=PASSPHRASE, YUPANA_KEYRING="0")
    try:
        code = soak(home, folder, args.minutes, args.seed)
    finally:
        if args.keep:
            say(f"data folder and the app's logs kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    return code


def soak(home: Path, folder: Path, minutes: float, seed: int) -> int:
    kill_s, quiet_s = phases(minutes)
    say(f"seed {seed}; {kill_s:.0f} s with kills, {quiet_s:.0f} s quiet, then up to {SETTLE_S:.0f} s to settle")
    started = time.monotonic()
    stage = Stage(home)
    stage.start()
    app = AppProcess(home, folder)
    subscribers = [Subscriber("suscriptor rápido", 0.0), Subscriber("suscriptor lento", 1.5)]
    shop: Shop | None = None
    try:
        app.start()
        shop = Shop(stage, app, seed)
        for subscriber in subscribers:
            url = subscriber.start()
            status, answer = shop.api.call("POST", "/chat/webhook", {"instance": "demo", "url": url,
                                                                      "events": ["message.received"]})
            if status != 200:
                raise RuntimeError(f"operation 5 answered {status}: {answer}")
        figures = run_phases(shop, app, stage, subscribers, kill_s, quiet_s, seed)
        observed = observe(stage, shop, subscribers, figures["memory_kb"])
    finally:
        if shop is not None and not shop.stop.is_set():
            shop.close(30)
        app.stop()
        for subscriber in subscribers:
            subscriber.stop()
        stage.stop()
    figures["seconds"] = round(time.monotonic() - started)
    results = checks.run_all(observed)
    report(shop.ledger.counts, figures, observed, results, subscribers)
    return 0 if all(check.passed for check in results) else 1


def run_phases(shop: Shop, app: AppProcess, stage: Stage, subscribers: list[Subscriber], kill_s: float,
               quiet_s: float, seed: int) -> dict[str, Any]:
    faults = Faults(stage, shop.ledger, seed + 100)
    killer = Killer(app, shop.ledger, seed + 200)
    shop.start()
    faults.start()
    killer.start()
    say("chaos: work, SUNAT faults and SIGKILLs")
    time.sleep(kill_s)
    killer.stop.set()
    killer.join(120)
    if not app.up.is_set():
        app.start()
    say(f"quiet: {killer.kills} kills done; work and faults go on, no kill")
    time.sleep(min(MEMORY_AFTER_S, quiet_s))
    memory_base = app.rss_kb()
    time.sleep(max(0.0, quiet_s - MEMORY_AFTER_S))
    say("settling: work stopped, faults taken back")
    shop.close()
    faults.settle()
    settle(stage, shop, subscribers, vouchers=False)  # the summaries under way answered first: their boletas are not
    # free before, and the boletas no summary took yet reach SUNAT only with the last one
    final = run_cli(shop.ledger, stage, "resumen")  # the boletas still signed, reported and waited for
    shop.ledger.count(f"yupana resumen final salida {final.returncode}")
    settled_after = settle(stage, shop, subscribers)
    memory_end = app.rss_kb()
    return {"kills": killer.kills, "restarts": app.starts - 1, "listener_missing": app.listener_missing,
            "settled_s": settled_after, "memory_kb": (memory_base, memory_end)}


def settle(stage: Stage, shop: Shop, subscribers: list[Subscriber], vouchers: bool = True) -> float | None:
    """Seconds until every acknowledged webhook reached both subscribers, SUNAT holds every voucher and the app was
    told the outcome of every summary (the ones whose sendSummary answer was dropped aside), or None after SETTLE_S."""
    started = time.monotonic()
    while time.monotonic() - started < SETTLE_S:
        if not waiting_for(stage, shop, subscribers, vouchers):
            time.sleep(SETTLE_GRACE_S)  # the app writes what it was just answered
            return round(time.monotonic() - started, 1)
        time.sleep(1.0)
    say(f"not settled after {SETTLE_S:.0f} s: {waiting_for(stage, shop, subscribers, vouchers)[:5]}")
    return None


def waiting_for(stage: Stage, shop: Shop, subscribers: list[Subscriber], vouchers: bool = True) -> list[str]:
    sunat = stage.sunat
    with sunat.lock:
        sunat.summaries.settle_due()  # SUNAT processes a summary whether its ticket is asked for or not
    tickets = [sunat.summaries.ticket(number) for number in sunat.summaries.tickets()]
    dropped = sunat.dropped_summaries
    in_dropped = {checks.key(line.tipo, line.serie, line.numero) for t in tickets if t and t.ident in dropped
                  for line in t.lines}
    missing = [k for k in list(shop.ledger.issued) if vouchers and k not in in_dropped
               and sunat.voucher_status(ISSUER, *k.split("-")) is None]
    with sunat.lock:
        unanswered = [t.ident for t in tickets if t and t.ident not in dropped and t.ident not in sunat.told]
    with shop.ledger.lock:
        acked = list(shop.ledger.acked)
    unforwarded = [gid for gid in acked for subscriber in subscribers if not subscriber.has(peer(gid))]
    return [*missing, *unanswered, *unforwarded]


def peer(gateway_id: str) -> str:
    """Each message comes from its own customer number (shop.Messenger), so its copies are found by sender."""
    return sender(int(gateway_id.removeprefix(GATEWAY_PREFIX)))


def observe(stage: Stage, shop: Shop, subscribers: list[Subscriber], memory_kb: tuple[int, int]) -> checks.Observed:
    """What SUNAT holds (the sandbox), what the app stored (its data folder, read after it stopped), what the soak
    was answered."""
    shop.app.stop()
    sunat = stage.sunat
    observed = checks.Observed(memory_kb=memory_kb)
    with sunat.lock:
        sunat.summaries.settle_due()
        observed.sendbill_registered = {_key(stem): n for stem, n in sunat.processed_counts.items()}
        observed.sendbill_received = {_key(stem): n for stem, n in sunat.received_counts.items()}
        observed.dropped_summaries = set(sunat.dropped_summaries)
    outcome = {TICKET_DONE: checks.TICKET_ACCEPTED, TICKET_REJECTED: checks.TICKET_REJECTED}
    for number in sunat.summaries.tickets():
        ticket = sunat.summaries.ticket(number)
        assert ticket is not None
        observed.tickets.append(checks.SunatTicket(
            ticket.ident, ticket.kind, outcome.get(ticket.status, checks.TICKET_PENDING),
            tuple(checks.TicketLine(checks.key(line.tipo, line.serie, line.numero), line.estado)
                  for line in ticket.lines)))
    with shop.ledger.lock:
        observed.issued = dict(shop.ledger.issued)
        observed.reused_numbers = list(shop.ledger.reused)
        observed.acked_webhooks = set(shop.ledger.acked)
        observed.errors = list(shop.ledger.errors)
    with Engine(stage.home) as engine:
        observed.app_vouchers = app_vouchers(engine)
        observed.app_summaries = [checks.AppSummary(s.ident, s.state, tuple(filter(None, (s.comprobantes or "")
                                                                                      .split(", "))))
                                  for s in engine.invoicing.summaries(limit=1_000_000)]
        observed.outbox_pending = sum(p.pending for p in engine.invoicing.pending_by_environment())
        for gateway_id in observed.acked_webhooks:
            stored = engine.messaging.messages("demo", peer(gateway_id))
            observed.stored_messages[gateway_id] = [m.id for m in stored if m.gateway_id == gateway_id]
    for voucher in observed.app_vouchers:
        tipo, serie, numero = voucher.key.split("-")
        observed.sunat_status[voucher.key] = sunat.voucher_status(ISSUER, tipo, serie, numero)
    for subscriber in subscribers:
        by_sender = subscriber.snapshot()
        observed.forwarded[subscriber.name] = {gid: by_sender.get(peer(gid), set())
                                               for gid in observed.acked_webhooks}
    return observed


def _key(stem: str) -> str:
    _ruc, tipo, serie, numero = stem.split("-")
    return checks.key(tipo, serie, numero)


def app_vouchers(engine: Engine) -> list[checks.AppVoucher]:
    found: list[checks.AppVoucher] = []
    before: int | None = None
    while True:
        page = engine.invoicing.vouchers(limit=500, before_id=before)
        if not page:
            return found
        found += [checks.AppVoucher(checks.key(v.tipo, v.serie, v.numero), v.status, v.hash, v.void_pending)
                  for v in page]
        before = page[-1].id


def report(counts: Any, figures: dict[str, Any], observed: checks.Observed, results: list[checks.Check],
           subscribers: list[Subscriber]) -> None:
    by_status: dict[str, int] = {}
    for voucher in observed.app_vouchers:
        by_status[voucher.status] = by_status.get(voucher.status, 0) + 1
    resends = sum(max(0, n - observed.sendbill_registered.get(k, 0)) for k, n in observed.sendbill_received.items())
    rows = [("duración (s)", figures["seconds"]), ("SIGKILL de la app", figures["kills"]),
            ("reinicios sin receptor de webhooks", figures["listener_missing"]),
            ("comprobantes en la app", len(observed.app_vouchers)),
            *((f"  {status}", n) for status, n in sorted(by_status.items())),
            ("sendBill repetidos de un comprobante ya registrado (1033 o falla)", resends),
            ("resúmenes y bajas recibidos por SUNAT", len(observed.tickets)),
            ("respuestas de sendSummary perdidas por el inyector", len(observed.dropped_summaries)),
            ("webhooks confirmados", len(observed.acked_webhooks)),
            *((f"POST a {s.name}", s.posts) for s in subscribers),
            ("se asentó en (s)", figures["settled_s"] if figures["settled_s"] is not None else "no"),
            ("memoria a 30 s de la fase tranquila (MB)", round(figures["memory_kb"][0] / 1024, 1)),
            ("memoria al final (MB)", round(figures["memory_kb"][1] / 1024, 1)),
            *sorted(counts.items())]
    width = max(len(str(name)) for name, _ in rows)
    print()
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print()
    for check in results:
        print(f"{'OK   ' if check.passed else 'FALLA'} {check.name}: {check.what}")
        for line in check.violations[:20]:
            print(f"        ✗ {line}")
        if len(check.violations) > 20:
            print(f"        … y {len(check.violations) - 20} más")
        for line in check.apart:
            print(f"        · aparte: {line}")
    print(json.dumps({"soak": "ok" if all(c.passed for c in results) else "violations",
                      "seconds": figures["seconds"], "kills": figures["kills"],
                      "vouchers": len(observed.app_vouchers), "by_status": by_status,
                      "faults": sum(n for name, n in counts.items() if name.startswith("fallo: ")),
                      "summaries": len(observed.tickets), "webhooks_acked": len(observed.acked_webhooks),
                      "ruc_lookups": counts.get("consultas RUC", 0),
                      "memory_mb": [round(kb / 1024, 1) for kb in figures["memory_kb"]],
                      "violations": sum(len(c.violations) for c in results),
                      "apart": sum(len(c.apart) for c in results)}, ensure_ascii=False))


if __name__ == "__main__":
    sys.exit(main())
