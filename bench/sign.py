"""Benchmark: generate (engine.generar_xml) and sign (engine.firmar) ten-line facturas on one core, next to the
raw RSA-2048 signing rate of the same key measured in the same run.

    python bench/sign.py [COUNT]

Target (docs/signing.md): vouchers_per_s >= 0.6 x rsa_sign_per_s. Prints a few lines, then one JSON object
of figures as the last line.
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


def raw_rsa_rate(key, count: int) -> float:
    """RSA-2048 PKCS#1 v1.5 SHA-1 signatures per second over a SignedInfo-sized message, nothing else."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    message = b"<ds:SignedInfo>" + b"x" * 900 + b"</ds:SignedInfo>"
    started = time.perf_counter()
    for n in range(count):
        key.sign(message + n.to_bytes(4, "big"), padding.PKCS1v15(), hashes.SHA1())
    return count / (time.perf_counter() - started)


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
            requests = [ten_line_factura(n) for n in range(1, count + 1)]
            key, _certificate = engine.certificates.signing_material(certificado_id)
            rsa_before = raw_rsa_rate(key, count // 2)
            # Two timed phases (all generated, then all signed) so the figures show where the time goes;
            # their sum is the generate+sign time of the COUNT vouchers.
            started = time.perf_counter()
            generated = [engine.generar_xml(request).xml for request in requests]
            generating = time.perf_counter() - started
            started = time.perf_counter()
            for xml in generated:
                engine.firmar({"xml": xml, "certificado_id": certificado_id})
            signing = time.perf_counter() - started
            rsa_after = raw_rsa_rate(key, count // 2)
        finally:
            engine.close()
    elapsed = generating + signing
    rsa_rate = (rsa_before + rsa_after) / 2
    vouchers_per_s = count / elapsed
    ratio = vouchers_per_s / rsa_rate
    print(f"one core ({pinned}): {count} ten-line facturas generated in {generating:.3f} s "
          f"({count / generating:.0f}/s) and signed in {signing:.3f} s ({count / signing:.0f}/s)")
    print(f"generate+sign {vouchers_per_s:.0f}/s; raw RSA-2048 sign {rsa_rate:.0f}/s; ratio {ratio:.2f} "
          f"(target 0.60); signing alone {count / signing / rsa_rate:.2f} of the raw rate")
    print(json.dumps({"benchmark": "sign", "vouchers": count, "lines_each": 10, "seconds": round(elapsed, 3),
                      "ms_per_voucher": round(elapsed / count * 1000, 4), "vouchers_per_s": round(vouchers_per_s, 1),
                      "rsa_sign_per_s": round(rsa_rate, 1), "ratio": round(ratio, 3),
                      "generate_per_s": round(count / generating, 1), "sign_per_s": round(count / signing, 1),
                      "sign_ratio": round(count / signing / rsa_rate, 3)}))


if __name__ == "__main__":
    main()
