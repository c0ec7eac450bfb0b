"""Benchmark: operation 3 against the local SUNAT sandbox (generate and sign first, then time the sends).

    python bench/sunat_submission.py [COUNT]

Measures sendBill round trips (zip, SOAP, the sandbox's signature check and signed CDR, CDR stored with a
synced commit) through the engine's reused HTTP client (one per SUNAT endpoint, keep-alive, one SSL context),
and, in the same run and interleaved send by send, the same with a new HTTP client per send as before issue 12
(the baseline: it builds an SSL context, loading the CA bundle, and opens a new connection each time). Also:
the answer for a voucher already accepted (served from the database), how long the outbox takes to recover a
lost answer (connection dropped after sending) with a 50 ms retry base, and what a synced commit costs here
against a plain one (synchronous=FULL against NORMAL, the same small write).
Prints a few lines, then one JSON object of figures as the last line.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from _sizes import size  # noqa: E402 - bench/ is the script's folder

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RUC = "20100066603"
COMMITS = 200


def factura(numero: int) -> dict:
    return {"tipo": "01", "serie": "F001", "numero": numero, "emisor": {"ruc": RUC},
            "receptor": {"ruc": "20601030013", "razon_social": "DISTRIBUIDORA ANDINA S.A.C."},
            "items": [{"descripcion": f"Producto {n}", "cantidad": Decimal(n), "precio_unitario": Decimal("9.90")}
                      for n in range(1, 6)]}


def commit_ms(engine, durable: bool) -> float:
    """Mean time of a small write committed with or without a sync."""
    started = time.perf_counter()
    for n in range(COMMITS):
        with engine._storage.write(durable=durable) as conn:
            conn.execute("INSERT OR REPLACE INTO settings (key, value) VALUES ('bench_commit', ?)", (str(n),))
    return (time.perf_counter() - started) / COMMITS * 1000


def ms(values: list[float], quantile: float = 0.5) -> float:
    return round(sorted(values)[int(quantile * (len(values) - 1))] * 1000, 1)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else size(100, 5)
    os.environ.setdefault("YUPANA_PASSPHRASE", "bench")
    os.environ["YUPANA_KEYRING"] = "0"
    from app.core.api import Company, Engine
    from app.core.invoicing.soap import SunatClient
    from app.sandbox.sunat import SunatSandbox

    with tempfile.TemporaryDirectory() as home, SunatSandbox() as sandbox:
        engine = Engine(home)
        try:
            engine.admin.set_company(Company(ruc=RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                       direccion="AV. ABANCAY 123"))
            sandbox.configure(engine)
            engine.admin.config_set("sunat_retry_base_s", "0.05")
            cert = engine.invoicing.create_test_certificate(RUC).certificado_id
            signed = [engine.invoicing.sign({"xml": engine.invoicing.generate_xml(factura(n)).xml,
                                       "certificado_id": cert}).xml_firmado
                      for n in range(1, 2 * count + 2)]
            reused = engine._outbox.client_factory

            def new_client_each_send(ambiente: str, ruc: str) -> SunatClient:
                pooled = engine._sunat_clients(ambiente, ruc)
                return SunatClient(pooled.url, pooled._username, pooled._password, pooled.timeout,
                                   consult_url=pooled.consult_url)

            times: dict[str, list[float]] = {"reused": [], "new": []}
            for index, xml in enumerate(signed[:2 * count]):
                kind = "reused" if index % 2 else "new"
                engine._outbox.client_factory = reused if kind == "reused" else new_client_each_send
                start = time.perf_counter()
                result = engine.invoicing.send({"xml_firmado": xml})
                times[kind].append(time.perf_counter() - start)
                assert result.codigo_respuesta == "0"
            engine._outbox.client_factory = reused
            start = time.perf_counter()
            for xml in signed[:count]:
                engine.invoicing.send({"xml_firmado": xml})
            stored_ms = (time.perf_counter() - start) / count * 1000
            sandbox.fail_next("drop_after_receive")
            start = time.perf_counter()
            status, _ = engine.call("enviar", {"xml_firmado": signed[2 * count]})
            assert status == 503
            submission_id = engine._storage.query_one("SELECT MAX(id) AS id FROM sunat_submissions")["id"]
            row = engine._outbox.wait_settled(submission_id, 30)
            recovery_ms = (time.perf_counter() - start) * 1000
            assert row["state"] == "terminado"
            plain_commit_ms, synced_commit_ms = commit_ms(engine, False), commit_ms(engine, True)
            connections = sandbox.connections
        finally:
            engine.close()
    reused_times, new_times = times["reused"], times["new"]
    figures = {"benchmark": "sunat_submission", "sends": count, "send_ms_median": ms(reused_times), "send_ms_p95": ms(reused_times, 0.95),
               "sends_per_s": round(count / sum(reused_times), 1),
               "new_client_send_ms_median": ms(new_times), "new_client_send_ms_p95": ms(new_times, 0.95),
               "reuse_speedup": round(statistics.median(new_times) / statistics.median(reused_times), 2),
               "tcp_connections": connections,
               "already_accepted_ms": round(stored_ms, 2), "lost_answer_recovery_ms": round(recovery_ms, 1),
               "plain_commit_ms": round(plain_commit_ms, 3), "synced_commit_ms": round(synced_commit_ms, 3)}
    print(f"{count} vouchers sent through the reused client: median {figures['send_ms_median']} ms; {count} with a "
          f"new client each (interleaved): median {figures['new_client_send_ms_median']} ms "
          f"({figures['reuse_speedup']}x); {connections} TCP connections in all")
    print(f"a commit: {figures['plain_commit_ms']} ms plain, {figures['synced_commit_ms']} ms synced (FULL)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
