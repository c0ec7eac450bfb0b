"""Benchmark: operation 3 against the local SUNAT sandbox (generate and sign first, then time the sends).

    python bench/sunat_submission.py [COUNT]

Measures sendBill round trips (zip, SOAP, the sandbox's signature check and signed CDR, CDR stored),
the answer for a voucher already accepted (served from the database), and how long the outbox
takes to recover a lost answer (connection dropped after sending) with a 50 ms retry base.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RUC = "20100066603"


def factura(numero: int) -> dict:
    return {"tipo": "01", "serie": "F001", "numero": numero, "emisor": {"ruc": RUC},
            "receptor": {"ruc": "20601030013", "razon_social": "DISTRIBUIDORA ANDINA S.A.C."},
            "items": [{"descripcion": f"Producto {n}", "cantidad": Decimal(n), "precio_unitario": Decimal("9.90")}
                      for n in range(1, 6)]}


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    os.environ.setdefault("YUPANA_PASSPHRASE", "bench")
    os.environ["YUPANA_KEYRING"] = "0"
    from app.core.companies import Company
    from app.core.engine import Engine
    from app.sandbox.sunat import SunatSandbox

    with tempfile.TemporaryDirectory() as home, SunatSandbox() as sandbox:
        engine = Engine(home)
        try:
            engine.set_company(Company(ruc=RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                       direccion="AV. ABANCAY 123"))
            sandbox.configure(engine)
            engine.config_set("sunat_retry_base_s", "0.05")
            cert = engine.create_test_certificate(RUC).certificado_id
            signed = [engine.firmar({"xml": engine.generar_xml(factura(n)).xml, "certificado_id": cert}).xml_firmado
                      for n in range(1, count + 2)]
            times = []
            for xml in signed[:count]:
                start = time.perf_counter()
                result = engine.enviar({"xml_firmado": xml})
                times.append(time.perf_counter() - start)
                assert result.codigo_respuesta == "0"
            start = time.perf_counter()
            for xml in signed[:count]:
                engine.enviar({"xml_firmado": xml})
            stored_ms = (time.perf_counter() - start) / count * 1000
            sandbox.fail_next("drop_after_receive")
            start = time.perf_counter()
            status, _ = engine.call("enviar", {"xml_firmado": signed[count]})
            assert status == 503
            submission_id = engine.storage.query_one("SELECT MAX(id) AS id FROM sunat_submissions")["id"]
            row = engine.outbox.wait_settled(submission_id, 30)
            recovery_ms = (time.perf_counter() - start) * 1000
            assert row["state"] == "terminado"
        finally:
            engine.close()
    figures = {"sends": count, "send_ms_median": round(statistics.median(times) * 1000, 1),
               "send_ms_p95": round(sorted(times)[int(0.95 * (count - 1))] * 1000, 1),
               "sends_per_s": round(count / sum(times), 1), "already_accepted_ms": round(stored_ms, 2),
               "lost_answer_recovery_ms": round(recovery_ms, 1)}
    print(f"{count} vouchers sent to the sandbox; median {figures['send_ms_median']} ms")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
