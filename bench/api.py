"""Benchmark: the local HTTP API (`yupana serve`, FastAPI on uvicorn) driven by wrk on loopback.

    python bench/api.py [--seconds 5] [--rounds 3]

A throw-away data folder gets the demo issuer and 100 RUCs in the lookup cache (asked once from the
registry sandbox). The local API (`LocalApi`, what `yupana serve` runs) serves it from this process, on its own
threads; wrk (Debian package `wrk`) drives it with keep-alive connections:
- cached RUC lookups (GET /api/v1/ruc/{numero}, the 100 RUCs in turn) on 1 and on 16 connections;
- operation 1 (POST /api/v1/facturacion/xml, a new numero each request, three lines) on 16 connections.
The baseline, in this process and the same run: operation 1 through `Engine.call` with the same JSON
bodies, one after another, the same durable way (each voucher's commit is synced to disk before it answers).
Over HTTP the requests that arrive together share one durable commit (issue 33); the syncs are counted by the
storage (`syncs`, one per durable commit) and printed per request for both sides.

Operation 1 is measured fairly on a machine whose disk and cores are shared: in alternating rounds of
the same length (in this process, then over HTTP, `--rounds` times), each starting from a checkpointed,
empty WAL with the kernel's dirty pages written out (`settle`). Without that, the phase measured after
the other pays for the other's writes: the WAL it left behind being checkpointed and flushed meanwhile
made the in-process rate fall to a quarter and the ratio look better than it is.

Targets: RUC ≥ 3,000 req/s on 16 connections with p99 ≤ 10 ms and ≥ 2,000 req/s on one (issue 11);
operation 1 over HTTP on 16 connections ≥ 0.9 of the in-process rate, with ≤ 0.25 syncs per request (issue 33).
Quick mode (YUPANA_BENCH_QUICK=1, bench/_sizes.py): one-second phases, one round.
Last line: {"benchmark": "api", "ruc_1conn_rps", "ruc_1conn_p99_ms", "ruc_16conn_rps", "ruc_16conn_p99_ms",
"xml_16conn_rps", "xml_16conn_p99_ms", "inprocess_xml_per_s", "xml_http_ratio", "xml_16conn_syncs_per_request",
"inprocess_syncs_per_request", "cpus", "loadavg", "targets_met"}: rates are the rounds' medians, the ratio the
median of the rounds' ratios, p99s the worst round's; loadavg is /proc/loadavg's 1-minute figure before and after
(other processes on the machine change every figure).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._sizes import size  # noqa: E402 - after the path is set

ISSUER = "20100066603"
BODY = ('{"tipo": "01", "serie": "%s", "numero": %d, "emisor": {"ruc": "20100066603"}, '
        '"receptor": {"ruc": "20601030013", "razon_social": "DISTRIBUIDORA ANDINA S.A.C."}, "items": ['
        '{"descripcion": "Arroz extra 5 kg", "cantidad": 2, "precio_unitario": "21.50"}, '
        '{"descripcion": "Aceite vegetal 1 L", "cantidad": 3, "precio_unitario": "8.90"}, '
        '{"descripcion": "Servicio de reparto", "cantidad": 1, "precio_unitario": "10.00"}]}')
RUC_SCRIPT = """
rucs = {%s}
i = 0
request = function()
  i = i %% #rucs + 1
  return wrk.format("GET", "/api/v1/ruc/" .. rucs[i])
end
"""
XML_SCRIPT = """
n = 0
template = [[%s]]
wrk.headers["Content-Type"] = "application/json"
request = function()
  n = n + 1
  return wrk.format("POST", "/api/v1/facturacion/xml", nil, string.format(template, n))
end
"""


def prepare(home: Path) -> list[str]:
    """The issuer, and 100 RUCs asked once from the registry sandbox so they sit in the lookup cache."""
    from app.core.api import Company, Engine
    from app.sandbox.registry import RegistrySandbox

    registry = RegistrySandbox()
    registry.start()
    try:
        with Engine(home) as engine:
            engine.admin.set_company(Company(ruc=ISSUER, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                       direccion="AV. ABANCAY 123", nombre_comercial="YUPANA"))
            registry.configure(engine)
            rucs = list(registry.records["ruc"])[:100]
            for ruc in rucs:
                engine.lookups.ruc(ruc)
            if engine.lookups.ruc(rucs[0]).fuente != "cache":
                raise SystemExit("the lookups are not served from the cache")
            engine.admin.api_token()
    finally:
        registry.stop()  # from now on only the cache can answer
    return rucs


def in_process_xml(engine, serie: str, seconds: float) -> tuple[float, int]:
    """Operation 1 through `Engine.call`, one after another, for `seconds`: (vouchers per second, how many)."""
    done, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        status, envelope = engine.call("xml", (BODY % (serie, done + 1)).encode())
        if status != 200:
            raise SystemExit(f"operation 1 failed in process: {envelope}")
        done += 1
    return done / (time.perf_counter() - started), done


def settle(engine) -> None:
    """The previous phase's writes out of the way: the WAL checkpointed and emptied, dirty pages on disk."""
    engine._storage.conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    os.sync()


def syncs(engine) -> int:
    return engine._storage.syncs


def xml_rounds(engine, base: str, token: str, seconds: float, rounds: int, folder: Path) -> dict[str, float]:
    """Operation 1 in this process and over HTTP (16 connections), alternating (which goes first too), `rounds`
    rounds of each."""
    local, http, p99, ratios = [], [], [], []
    counted = {"local_syncs": 0, "local_requests": 0, "http_syncs": 0, "http_requests": 0}
    for n in range(1, 21):  # warm up
        engine.call("xml", (BODY % ("F900", n)).encode())

    def in_process(round_: int) -> None:
        settle(engine)
        before = syncs(engine)
        rate, done = in_process_xml(engine, f"F1{round_:02d}", seconds)
        counted["local_syncs"] += syncs(engine) - before
        counted["local_requests"] += done
        local.append(rate)

    def over_http(round_: int) -> None:
        settle(engine)
        before = syncs(engine)
        result = wrk(base, token, 16, seconds, XML_SCRIPT % (BODY % (f"F2{round_:02d}", 0)).replace(" 0, ", " %d, "),
                     folder)
        counted["http_syncs"] += syncs(engine) - before
        counted["http_requests"] += result["requests"]
        http.append(result["rps"])
        p99.append(result["p99_ms"])

    for round_ in range(rounds):
        for side in ((in_process, over_http) if round_ % 2 == 0 else (over_http, in_process)):
            side(round_)
        ratios.append(http[-1] / local[-1])
        print(f"ronda {round_ + 1}: operación 1 en el proceso {local[-1]:.0f}/s, por HTTP {http[-1]:.0f} req/s "
              f"(p99 {p99[-1]} ms)", flush=True)
    return {"local": statistics.median(local), "http": statistics.median(http), "p99_ms": max(p99),
            "ratio": statistics.median(ratios),
            "http_syncs_per_request": counted["http_syncs"] / max(1, counted["http_requests"]),
            "local_syncs_per_request": counted["local_syncs"] / max(1, counted["local_requests"])}


def loadavg() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except OSError:  # not Linux
        return -1.0


def wrk(url: str, token: str, connections: int, seconds: float, script: str, folder: Path) -> dict[str, float]:
    path = folder / f"script-{connections}-{abs(hash(script))}.lua"
    path.write_text(script)
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "--latency", "-H", f"Authorization: Bearer {token}",
               "-s", str(path), url]
    output = subprocess.run(command, capture_output=True, text=True, check=True, timeout=seconds + 60).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if errors:
        raise SystemExit(f"wrk saw {errors.group(1)} failed answers:\n{output}")
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
            "p99_ms": _ms(re.search(r"99%\s+([\d.]+\w+)", output).group(1)),
            "requests": int(re.search(r"(\d+) requests in", output).group(1))}


def _ms(text: str) -> float:
    number, unit = re.match(r"([\d.]+)(\w+)", text).groups()
    return round(float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit], 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=size(5, 1))
    parser.add_argument("--rounds", type=int, default=size(3, 1), help="rounds of operation 1, each side --seconds long")
    args = parser.parse_args()
    load_before = loadavg()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is missing: apt-get install wrk")
    os.environ.setdefault("YUPANA_PASSPHRASE", "benchmark")
    os.environ["YUPANA_KEYRING"] = "0"
    with tempfile.TemporaryDirectory(prefix="yupana-bench-api-") as scratch:
        folder = Path(scratch)
        home = folder / "home"
        rucs = prepare(home)
        from app.api.local import LocalApi
        from app.core.api import Engine

        with Engine(home) as engine:
            token = engine.admin.api_token()
            api = LocalApi(engine, "127.0.0.1", 0)
            base = api.start()
            try:
                ruc_script = RUC_SCRIPT % ", ".join(f'"{r}"' for r in rucs)
                wrk(base, token, 16, 1, ruc_script, folder)  # warm up
                one = wrk(base, token, 1, args.seconds, ruc_script, folder)
                print(f"RUC en caché, 1 conexión: {one['rps']:.0f} req/s, p99 {one['p99_ms']} ms", flush=True)
                many = wrk(base, token, 16, args.seconds, ruc_script, folder)
                print(f"RUC en caché, 16 conexiones: {many['rps']:.0f} req/s, p99 {many['p99_ms']} ms", flush=True)
                xml = xml_rounds(engine, base, token, args.seconds, args.rounds, folder)
            finally:
                api.stop()
        local = xml["local"]
        print(f"operación 1: en el proceso {local:.0f}/s, por HTTP {xml['http']:.0f} req/s (medianas); "
              f"syncs por solicitud: {xml['local_syncs_per_request']:.2f} en el proceso, "
              f"{xml['http_syncs_per_request']:.3f} por HTTP", flush=True)
    ratio = xml["ratio"]
    targets = {"ruc_16conn": many["rps"] >= 3000 and many["p99_ms"] <= 10, "ruc_1conn": one["rps"] >= 2000,
               "xml_ratio": ratio >= 0.9, "xml_syncs": xml["http_syncs_per_request"] <= 0.25}
    print(json.dumps({"benchmark": "api", "ruc_1conn_rps": round(one["rps"]), "ruc_1conn_p99_ms": one["p99_ms"],
                      "ruc_16conn_rps": round(many["rps"]), "ruc_16conn_p99_ms": many["p99_ms"],
                      "xml_16conn_rps": round(xml["http"]), "xml_16conn_p99_ms": xml["p99_ms"],
                      "inprocess_xml_per_s": round(local), "xml_http_ratio": round(ratio, 3),
                      "xml_16conn_syncs_per_request": round(xml["http_syncs_per_request"], 4),
                      "inprocess_syncs_per_request": round(xml["local_syncs_per_request"], 4),
                      "cpus": os.cpu_count(), "seconds": args.seconds, "rounds": args.rounds,
                      "loadavg": [load_before, loadavg()], "targets_met": targets}))


if __name__ == "__main__":
    main()
