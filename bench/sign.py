"""Benchmark: generate and sign ten-line facturas on one core, next to the raw RSA-2048 signing rate of the
same key measured in the same run.

    python bench/sign.py [COUNT]

Two ways, COUNT vouchers each (docs/signing.md «Velocidad»):
- batch (`engine.emitir_lote`, the figures `vouchers_per_s` and `ratio`): what a point of sale or an accountant
  sends as a file; blocks of vouchers stored already signed, one durable transaction per block;
- per call (`engine.generar_xml` then `engine.firmar` for each voucher, the `per_call_*` figures): two
  operations, each durable before it answers, as an API client calls them one by one.
Target: vouchers_per_s >= 0.6 x rsa_sign_per_s. Vouchers go in blocks of BLOCK; between blocks, RSA_SAMPLE raw
signatures are timed, so both rates are sampled across the same stretch of time (the machine is shared: its
load drifts during a run). Prints a few lines, then one JSON object of figures as the last line.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RUC = "20100066603"
BLOCK = 100
RSA_SAMPLE = 25


def ten_line_factura(numero: int) -> dict:
    return {"tipo": "01", "serie": "F001", "numero": numero, "emisor": {"ruc": RUC},
            "receptor": {"ruc": "20601030013", "razon_social": "DISTRIBUIDORA ANDINA S.A.C."},
            "items": [{"descripcion": f"Producto {n}", "cantidad": Decimal(n), "precio_unitario":
                       Decimal(f"{n * 3}.75"), "codigo": f"P{n:03d}"} for n in range(1, 11)]}


def pin_to_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
        return f"core {core}"
    return "not pinned (no sched_setaffinity here)"


def raw_rsa_seconds(key, count: int) -> float:
    """Time of `count` RSA-2048 PKCS#1 v1.5 SHA-1 signatures over a SignedInfo-sized message, nothing else."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    message = b"<ds:SignedInfo>" + b"x" * 900 + b"</ds:SignedInfo>"
    started = time.perf_counter()
    for n in range(count):
        key.sign(message + n.to_bytes(4, "big"), padding.PKCS1v15(), hashes.SHA1())
    return time.perf_counter() - started


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    pinned = pin_to_one_core()
    with tempfile.TemporaryDirectory() as home:
        os.environ.setdefault("YUPANA_PASSPHRASE", "bench")
        os.environ["YUPANA_KEYRING"] = "0"
        from app.core.companies import Company
        from app.core.engine import Engine

        engine = Engine(home)
        try:
            engine.set_company(Company(ruc=RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                       direccion="AV. ABANCAY 123"))
            certificado_id = engine.create_test_certificate(RUC).certificado_id
            warm = engine.generar_xml(ten_line_factura(99_999_999))
            engine.firmar({"xml": warm.xml, "certificado_id": certificado_id})  # loads the key once
            list(engine.emitir_lote([ten_line_factura(99_999_998)], certificado_id))
            key, _certificate = engine.certificates.signing_material(certificado_id)
            clock = time.perf_counter
            batch = rsa_batch = 0.0
            generating = signing = rsa_call = 0.0
            batch_requests = [ten_line_factura(n) for n in range(1, count + 1)]
            call_requests = [ten_line_factura(n) for n in range(count + 1, 2 * count + 1)]
            for first in range(0, count, BLOCK):
                started = clock()
                results = list(engine.emitir_lote(batch_requests[first:first + BLOCK], certificado_id))
                batch += clock() - started
                assert all(result["success"] for result in results), results[0]
                rsa_batch += raw_rsa_seconds(key, RSA_SAMPLE)
            for first in range(0, count, BLOCK):
                for request in call_requests[first:first + BLOCK]:
                    started = clock()
                    xml = engine.generar_xml(request).xml
                    generated = clock()
                    engine.firmar({"xml": xml, "certificado_id": certificado_id})
                    generating += generated - started
                    signing += clock() - generated
                rsa_call += raw_rsa_seconds(key, RSA_SAMPLE)
        finally:
            engine.close()
    samples = RSA_SAMPLE * -(-count // BLOCK)
    rsa_rate = samples / rsa_batch
    vouchers_per_s = count / batch
    ratio = vouchers_per_s / rsa_rate
    call_rsa_rate = samples / rsa_call
    call_rate = count / (generating + signing)
    call_ratio = call_rate / call_rsa_rate
    print(f"one core ({pinned}), {count} ten-line facturas each way")
    print(f"batch (emitir_lote, blocks of {BLOCK}): {vouchers_per_s:.0f}/s; raw RSA-2048 sign {rsa_rate:.0f}/s; "
          f"ratio {ratio:.2f} (target 0.60)")
    print(f"per call (generar_xml + firmar): generated {count / generating:.0f}/s, signed {count / signing:.0f}/s, "
          f"both {call_rate:.0f}/s; raw RSA {call_rsa_rate:.0f}/s; ratio {call_ratio:.2f}")
    print(json.dumps({"benchmark": "sign", "vouchers": count, "lines_each": 10, "seconds": round(batch, 3),
                      "ms_per_voucher": round(batch / count * 1000, 4), "vouchers_per_s": round(vouchers_per_s, 1),
                      "rsa_sign_per_s": round(rsa_rate, 1), "ratio": round(ratio, 3),
                      "per_call_vouchers_per_s": round(call_rate, 1), "per_call_ratio": round(call_ratio, 3),
                      "per_call_generate_per_s": round(count / generating, 1),
                      "per_call_sign_per_s": round(count / signing, 1)}))


if __name__ == "__main__":
    main()
