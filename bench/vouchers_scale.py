"""Benchmark: vouchers at scale (issue 19, point 6) — N three-line facturas issued with the batch path, then search
latency, a page of the list and the bytes stored per voucher.

    python bench/vouchers_scale.py [--n 300000] [--queries 300] [--page 50] [--sent 500]

Synthetic, deterministic data (a fixed seed): 5,000 customers with valid RUCs and Spanish names with accents, 300
products; every voucher a three-line factura of series F001, issued by `engine.invoicing.issue_batch` (operations 1
and 2, signed with a test certificate). Then `engine.invoicing.vouchers` (what the Comprobantes list calls): searches by exact
serie-número, serie-número prefix (all but the last two digits), serie-número as typed (one to three digits: F001-1
matches a ninth of all), RUC prefix (6 digits) and name word prefix (the first 3 to 6 letters of a word of a
customer's name, typed without accents); the first page and pages anywhere (keyset `before_id`). The data
folder's database is measured after the engine closes (its `TRUNCATE` checkpoint): bytes per voucher = file size / N.
Then a sample of `--sent` of those vouchers (chosen at random) is sent to the local SUNAT sandbox (app/sandbox/sunat.py,
on loopback; each answered with a signed CDR that is stored) and the file measured again after the engine closes:
bytes per sent voucher = bytes per voucher + the growth of the file's pages in use / the sample (what sending adds:
the submission, the CDR, the voucher's new status; pages in use = page_count - freelist_count, since the file may
first fill free pages the issuing left behind and not grow at all). `--sent 0` skips it.
The requests are a generator: the batch takes them a block at a time, and the peak memory of this process plus its
signing workers (one per core, app.core.invoicing.workers; Linux's VmHWM of each) is printed.
Last line: {"benchmark": "vouchers_scale", "n", "bytes_per_voucher", "search_p99_ms", "list_page_ms",
"issued_per_s", "peak_memory_mb", "signing_workers", "bytes_per_sent_voucher", "sent"}.
Targets at 300,000: search p99 ≤ 20 ms, a page ≤ 20 ms, ≤ 4 KB per three-line factura, peak memory ≤ 250 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import unicodedata
from decimal import Decimal
from pathlib import Path

from _sizes import size  # noqa: E402 - bench/ is the script's folder

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.platform.identifiers import ruc_check_digit  # noqa: E402

ISSUER = "20100066603"
KINDS = ["DISTRIBUIDORA", "COMERCIAL", "INVERSIONES", "PANADERÍA", "FERRETERÍA", "BODEGA", "FARMACIA", "CONSTRUCTORA",
         "TRANSPORTES", "IMPORTACIONES", "LIBRERÍA", "RESTAURANTE", "AGROINDUSTRIAS", "TEXTIL", "MULTISERVICIOS"]
NAMES = ["QUISPE", "MAMANI", "HUAMÁN", "ÑAUPARI", "CONDORI", "GARCÍA", "RODRÍGUEZ", "PÉREZ", "CHÁVEZ", "TORRES",
         "FLORES", "RAMÍREZ", "CASTILLO", "VARGAS", "MENDOZA", "ROJAS", "ANDINA", "DEL SUR", "SEÑOR DE SIPÁN",
         "LOS ÁNGELES", "SANTA ROSA", "EL MISTI", "PACHACÚTEC", "AMAZÓNICA", "INCA", "VILLA RICA", "SAN MARTÍN"]
SUFFIXES = ["S.A.C.", "E.I.R.L.", "S.R.L.", "S.A."]
PRODUCTS = ["Arroz extra", "Azúcar rubia", "Aceite vegetal", "Fideos spaghetti", "Leche evaporada", "Atún en trozos",
            "Detergente", "Cemento Portland", "Clavo de 3\"", "Pintura látex", "Servicio de transporte", "Mantenimiento"]
UNITS = ["1 kg", "5 kg", "50 kg", "400 g", "1 L", "x 12", "galón", "caja"]


def customers(rng: random.Random, count: int) -> list[dict]:
    out = []
    for _ in range(count):
        first10 = "20" + "".join(rng.choice("0123456789") for _ in range(8))
        name = f"{rng.choice(KINDS)} {rng.choice(NAMES)} {rng.choice(NAMES)} {rng.choice(SUFFIXES)}"
        out.append({"ruc": first10 + ruc_check_digit(first10), "razon_social": name})
    return out


def factura(rng: random.Random, numero: int, pool: list[dict], products: list[tuple[str, Decimal]]) -> dict:
    lines = [{"descripcion": name, "cantidad": Decimal(rng.randint(1, 20)), "precio_unitario": price}
             for name, price in rng.sample(products, 3)]
    return {"tipo": "01", "serie": "F001", "numero": numero, "emisor": {"ruc": ISSUER}, "receptor": rng.choice(pool),
            "items": lines}


def folded(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c)).lower()


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def timed(call) -> tuple[float, object]:
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=size(300_000, 300))
    parser.add_argument("--queries", type=int, default=size(300, 20))
    parser.add_argument("--page", type=int, default=50)
    parser.add_argument("--sent", type=int, default=size(500, 20))
    args = parser.parse_args()
    rng = random.Random(19)
    pool = customers(rng, 5000)
    products = [(f"{name} {unit} {brand}", Decimal(f"{rng.randint(1, 400)}.{rng.randint(0, 99):02d}"))
                for name in PRODUCTS for unit in UNITS for brand in ("Andina", "Cóndor", "Ñusta")][:300]
    os.environ.setdefault("YUPANA_PASSPHRASE", "bench")
    os.environ["YUPANA_KEYRING"] = "0"
    from app.core.api import Company, Engine
    from app.core.invoicing.workers import peak_rss_bytes
    from app.core.platform.paths import database_path

    with tempfile.TemporaryDirectory() as home:
        engine = Engine(home)
        try:
            engine.admin.set_company(Company(ruc=ISSUER, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                       direccion="AV. ABANCAY 123"))
            certificado_id = engine.invoicing.create_test_certificate(ISSUER).certificado_id
            started = time.perf_counter()
            requests = (factura(rng, numero, pool, products) for numero in range(1, args.n + 1))
            failed = sum(not item.success for item in engine.invoicing.issue_batch(requests, certificado_id))
            issued_s = time.perf_counter() - started
            assert failed == 0, f"{failed} vouchers were refused"
            workers = engine._batches.pool.about()  # the signing workers' own peaks, before they end
            own_mb = (peak_rss_bytes() or 0) / 1e6
            peak_mb = own_mb + sum(worker["peak_rss_bytes"] or 0 for worker in workers) / 1e6
            print(f"{args.n} three-line facturas issued in {issued_s:.1f} s ({args.n / issued_s:.0f}/s); peak memory "
                  f"of this process and its {len(workers)} signing workers {peak_mb:.0f} MB (this process "
                  f"{own_mb:.0f} MB; target 250 MB)")

            searches: dict[str, list[str]] = {"serie-número": [], "serie-número prefix": [], "RUC prefix": [],
                                              "name word prefix": [], "serie-número as typed": []}
            for _ in range(args.queries):
                numero = rng.randint(1, args.n)
                searches["serie-número"].append(f"F001-{numero}")
                searches["serie-número prefix"].append(f"F001-{str(numero)[:max(1, len(str(numero)) - 2)]}")
                customer = rng.choice(pool)
                searches["RUC prefix"].append(customer["ruc"][:6])
                word = rng.choice([w for w in customer["razon_social"].split() if len(w) > 3 and w.isalpha()])
                searches["name word prefix"].append(folded(word)[:rng.randint(3, 6)])
                searches["serie-número as typed"].append(f"F001-{str(numero)[:rng.randint(1, 3)]}")
            every: list[float] = []
            for kind, texts in searches.items():
                engine.invoicing.vouchers(search=texts[0], limit=args.page)  # warm
                times = []
                for text in texts:
                    elapsed, rows = timed(lambda text=text: engine.invoicing.vouchers(search=text, limit=args.page))
                    assert rows or kind != "serie-número", text
                    times.append(elapsed)
                every += times
                print(f"search by {kind}: p50 {sorted(times)[len(times) // 2]:.2f} ms, p99 {p99(times):.2f} ms")
            worst = {}  # what one types first: a whole serie, a single letter (not in the p99 above)
            for text in ("F001", "F001-", "F001-1", "a", "d"):
                engine.invoicing.vouchers(search=text, limit=args.page)
                worst[text] = min(timed(lambda text=text: engine.invoicing.vouchers(search=text, limit=args.page))[0]
                                  for _ in range(3))
            print("broad searches (best of 3): " + ", ".join(f"«{t}» {ms:.1f} ms" for t, ms in worst.items()))
            pages = []
            for _ in range(args.queries):
                before = rng.randint(args.page + 1, args.n + 1)
                elapsed, rows = timed(lambda before=before: engine.invoicing.vouchers(limit=args.page, before_id=before))
                assert len(rows) == args.page
                pages.append(elapsed)
            first_page, _ = timed(lambda: engine.invoicing.vouchers(limit=args.page))
            print(f"a page of {args.page}: first {first_page:.2f} ms, anywhere p50 {sorted(pages)[len(pages) // 2]:.2f}"
                  f" ms, p99 {p99(pages):.2f} ms")
        finally:
            engine.close()
        database = database_path(Path(home))
        total = database.stat().st_size
        print(f"database {total / 1e6:.1f} MB after the closing checkpoint: {total / args.n:.0f} bytes per voucher")
        sent = min(args.sent, args.n)
        per_sent = send_sample(Engine, home, rng, sent, args.n) if sent else None
    print(json.dumps({"benchmark": "vouchers_scale", "n": args.n, "bytes_per_voucher": round(total / args.n),
                      "search_p99_ms": round(p99(every), 2), "list_page_ms": round(max(p99(pages), first_page), 2),
                      "issued_per_s": round(args.n / issued_s), "peak_memory_mb": round(peak_mb, 1),
                      "signing_workers": len(workers), "bytes_per_sent_voucher": per_sent, "sent": sent}))


def used_bytes(database: Path) -> int:
    """The bytes of the file's pages in use (free pages, left by earlier writes, are filled first)."""
    from app.core.storage.sqlite.database import Storage

    storage = Storage.open(database)  # the file as it is: no step runs on opening it
    try:
        pages, free, size = (next(iter(storage.query_one(f"PRAGMA {name}").values()))
                             for name in ("page_count", "freelist_count", "page_size"))
    finally:
        storage.close()
    return (pages - free) * size


def send_sample(engine_class, home: str, rng: random.Random, sent: int, n: int) -> int:
    """Send `sent` of the issued vouchers to the SUNAT sandbox; bytes per sent voucher, measured as above."""
    from app.core.platform.paths import database_path
    from app.sandbox.sunat import SunatSandbox

    database = database_path(Path(home))
    issued_bytes, used_before = database.stat().st_size, used_bytes(database)

    with SunatSandbox() as sandbox:
        engine = engine_class(home)
        try:
            sandbox.configure(engine)
            started = time.perf_counter()
            for numero in rng.sample(range(1, n + 1), sent):
                result = engine.invoicing.resend(engine._vouchers.id_of(ISSUER, "01", "F001", numero))
                assert result.outcome is not None and result.outcome.codigo_respuesta == "0", result
            sent_s = time.perf_counter() - started
        finally:
            engine.close()
    grown = used_bytes(database) - used_before
    per_sent = round(issued_bytes / n + grown / sent)
    print(f"{sent} of them sent to the SUNAT sandbox in {sent_s:.1f} s, their CDRs stored: the pages in use grew "
          f"{grown / 1e3:.1f} kB (the file {(database.stat().st_size - issued_bytes) / 1e3:.1f} kB), "
          f"{grown / sent:.0f} bytes per sent voucher more: {per_sent} bytes per sent voucher")
    return per_sent


if __name__ == "__main__":
    main()
