"""Benchmark: operation 1 (engine.invoicing.generate_xml) for ten-line facturas, SQLite insert included.

    python bench/vouchers.py [COUNT]

Prints a few lines, then one JSON object of figures as the last line.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from _sizes import size  # noqa: E402 - bench/ is the script's folder

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def ten_line_factura(numero: int) -> dict:
    return {"tipo": "01", "serie": "F001", "numero": numero, "emisor": {"ruc": "20100066603"},
            "receptor": {"ruc": "20601030013", "razon_social": "DISTRIBUIDORA ANDINA S.A.C."},
            "items": [{"descripcion": f"Producto {n} & más", "cantidad": Decimal(n), "precio_unitario":
                       Decimal(f"{n * 3}.75"), "codigo": f"P{n:03d}"} for n in range(1, 11)]}


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else size(2000, 40)
    with tempfile.TemporaryDirectory() as home:
        os.environ.setdefault("YUPANA_PASSPHRASE", "bench")
        os.environ["YUPANA_KEYRING"] = "0"
        from app.core.api import Company, Engine

        engine = Engine(home)
        try:
            engine.admin.set_company(Company(ruc="20100066603", razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                       direccion="AV. ABANCAY 123"))
            requests = [ten_line_factura(n) for n in range(1, count + 1)]
            engine.invoicing.generate_xml(ten_line_factura(99_999_999))  # warm caches
            started = time.perf_counter()
            sizes = [len(engine.invoicing.generate_xml(request).xml) for request in requests]
            elapsed = time.perf_counter() - started
        finally:
            engine.close()
    per_ms = elapsed / count * 1000
    print(f"{count} ten-line facturas in {elapsed:.3f} s: {per_ms:.3f} ms each, {count / elapsed:.0f}/s")
    print(json.dumps({"benchmark": "vouchers", "vouchers": count, "lines_each": 10, "seconds": round(elapsed, 4),
                      "ms_per_voucher": round(per_ms, 4), "vouchers_per_s": round(count / elapsed, 1),
                      "mean_xml_bytes": sum(sizes) // count}))


if __name__ == "__main__":
    main()
