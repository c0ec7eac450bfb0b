"""Benchmark: the customers and products catalogue (issue 19) — CSV import speed and completion search latency.

    python bench/catalog.py [--products 50000] [--customers 20000] [--queries 4000]

Synthetic, deterministic data (a fixed seed): products with codes by family («BEB-00017»), 13-digit barcodes and
descriptions of Peruvian shop words with accents; customers with valid RUCs and DNIs and Spanish names. Both are
written as CSV files in the export format (not timed) and imported with `import_file` into a new data folder (timed:
rows/s, one transaction each). Then `search()` (what completion calls) runs on typed text of each kind: code
prefixes of 1 to 7 characters, exact barcodes (found and not), word prefixes of descriptions and names (one or
two words, 1 character to the whole word), document-number prefixes.

Memory (issue 31): a products file of --memory-rows rows (200,000) is imported by an engine in a fresh process
(`engine.catalog.import_csv`, as the windows call it); the process's peak RSS (ru_maxrss) is read after opening the
engine and a 10-row warm-up import, then after the import: the growth is what the import cost. The same is measured
for a file a tenth as long in the same run (the baseline): a streamed import costs about the same for both.

Last line: {"benchmark": "catalog", "search_p99_ms", "import_rows_per_s", "import_peak_growth_mb", ...}. Targets:
search p99 ≤ 20 ms at 50,000 products; a 200,000-row import raises the engine process's peak memory by ≤ 80 MB.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from _sizes import size  # noqa: E402 - bench/ is the script's folder

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.invoicing.catalog import csvfiles  # noqa: E402
from app.core.invoicing.catalog.customers import Customers  # noqa: E402
from app.core.invoicing.catalog.products import Products  # noqa: E402
from app.core.invoicing.catalog.records import Customer, Product  # noqa: E402
from app.core.platform.identifiers import ruc_check_digit  # noqa: E402
from app.core.storage.engines import open_database  # noqa: E402
from app.core.storage.sqlite.catalog import SqliteCustomerRepository, SqliteProductRepository  # noqa: E402

FAMILIES = {"BEB": ["Gaseosa", "Agua mineral", "Jugo", "Néctar", "Cerveza", "Energizante", "Té helado"],
            "ABA": ["Arroz", "Azúcar", "Aceite", "Fideos", "Lentejas", "Harina", "Sal", "Avena", "Atún"],
            "LAC": ["Leche evaporada", "Yogurt", "Queso fresco", "Mantequilla", "Leche chocolatada"],
            "LIM": ["Detergente", "Lejía", "Jabón", "Lavavajilla", "Papel higiénico", "Suavizante"],
            "FER": ["Clavo", "Tornillo", "Pintura", "Cemento", "Tubo PVC", "Cable eléctrico", "Bisagra"],
            "SER": ["Servicio de instalación", "Mantenimiento", "Transporte de carga", "Asesoría contable"]}
BRANDS = ["Andina", "Inca", "Señorial", "Pacífico", "Cóndor", "Vicuña", "Huáscar", "Ñusta", "Amazonas", "Misti",
          "Qhapaq", "Chasqui", "Tambo", "Pachamama", "Illari", "Wayra"]
VARIANTS = ["clásico", "light", "sin azúcar", "familiar", "económico", "premium", "natural", "extra", "integral",
            "rojo", "azul", "verde", "grande", "mediano", "pequeño"]
SIZES = ["250 ml", "500 ml", "1 L", "2.5 L", "1 kg", "5 kg", "400 g", "170 g", "1/2\"", "3/4\"", "x 12", "x 6", "50 kg"]
FIRST = ["José", "María", "Juan", "Rosa", "Luis", "Ana", "Jesús", "Carmen", "Jorge", "Lucía", "César", "Inés",
         "Raúl", "Sofía", "Ángel", "Noemí", "Víctor", "Mónica", "Germán", "Beatriz"]
LAST = ["Quispe", "Mamani", "Flores", "Rodríguez", "Sánchez", "García", "Huamán", "Ramírez", "Chávez", "Pérez",
        "Gómez", "Vásquez", "Condori", "Díaz", "Túpac", "Peña", "Ccori", "Yupanqui", "Núñez", "Ibáñez"]
COMPANY_WORDS = ["Distribuidora", "Comercial", "Inversiones", "Corporación", "Importaciones", "Servicios",
                 "Constructora", "Agroindustrias", "Transportes", "Ferretería", "Minimarket", "Textiles"]


def make_products(n: int, rng: random.Random) -> list[Product]:
    families = list(FAMILIES)
    out = []
    for i in range(n):
        family = families[i % len(families)]
        words = f"{rng.choice(FAMILIES[family])} {rng.choice(BRANDS)} {rng.choice(VARIANTS)} {rng.choice(SIZES)}"
        barcode = f"775{i:09d}{i % 10}" if i % 4 else None  # three in four have one
        out.append(Product(codigo=f"{family}-{i:05d}", descripcion=f"{words} {i}", precio=_price(rng),
                           unidad="ZZ" if family == "SER" else rng.choice(["NIU", "NIU", "KGM", "BX"]),
                           precio_incluye_igv=rng.random() < 0.8, codigo_barras=barcode,
                           codigo_detraccion="037" if family == "SER" and i % 3 == 0 else None))
    return out


def _price(rng: random.Random) -> Decimal:
    return Decimal(rng.randint(10, 500_000)).scaleb(-2)


def make_customers(n: int, rng: random.Random) -> list[Customer]:
    out = []
    for i in range(n):
        if i % 2:
            first10 = f"20{i:08d}"
            name = f"{rng.choice(COMPANY_WORDS)} {rng.choice(LAST)} {rng.choice(BRANDS)} S.A.C."
            out.append(Customer("6", first10 + ruc_check_digit(first10), name, direccion=f"Av. {rng.choice(LAST)} {i}"))
        else:
            name = f"{rng.choice(FIRST)} {rng.choice(LAST)} {rng.choice(LAST)}"
            out.append(Customer("1", f"{40_000_000 + i:08d}", name,
                                whatsapp=f"+519{i:08d}" if i % 3 == 0 else None))
    return out


def prefix(word: str, rng: random.Random) -> str:
    return word[:rng.randint(1, len(word))]


def queries(products: list[Product], customers: list[Customer], count: int, rng: random.Random
            ) -> dict[str, list[str]]:
    def words_of(text: str) -> list[str]:
        return [w for w in text.split() if w.isalpha()]

    per_kind = max(1, count // 6)
    out: dict[str, list[str]] = {"code": [], "barcode": [], "description": [], "customer_number": [],
                                 "customer_name": [], "two_words": []}
    for _ in range(per_kind):
        p = rng.choice(products)
        out["code"].append(p.codigo[:rng.randint(1, 7)])
        out["barcode"].append(p.codigo_barras or f"999{rng.randint(0, 10**10):010d}")  # some not found
        out["description"].append(prefix(rng.choice(words_of(p.descripcion)), rng))
        words = words_of(p.descripcion)
        out["two_words"].append(f"{prefix(words[0], rng)} {prefix(words[-1], rng)}")
        c = rng.choice(customers)
        out["customer_number"].append(c.numero[:rng.randint(1, len(c.numero))])
        out["customer_name"].append(" ".join(prefix(w, rng) for w in rng.sample(words_of(c.nombre), 1 + (rng.random() < .3))))
    return out


MEMORY_LIMIT_MB = 80  # issue 31: a 200,000-row import raises the engine process's peak memory by at most this

MEMORY_CHILD = r"""
import json, resource, sys
from pathlib import Path
from app.core.api import Engine

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux

warm_up, big, home = sys.argv[1:4]
engine = Engine(home)
try:
    report = engine.catalog.import_csv("productos", warm_up)  # the code and caches an import needs, loaded
    assert report.ok, report.errors[:3]
    before = peak_mb()
    report = engine.catalog.import_csv("productos", big)
    after = peak_mb()
    assert report.ok, report.errors[:3]
    print(json.dumps({"imported": report.imported, "before_mb": before, "after_mb": after}))
finally:
    engine.close()
"""


def product_rows(n: int, rng: random.Random):
    """`make_products` 10,000 at a time, with codes and barcodes unique over the whole file: a file of any length
    is written without holding its rows."""
    for start in range(0, n, 10_000):
        for i, product in enumerate(make_products(min(10_000, n - start), rng), start=start):
            yield dataclasses.replace(product, codigo=f"{product.codigo}-{start // 10_000}",
                                      codigo_barras=product.codigo_barras and f"775{i:09d}{i % 10}")


def import_memory(rows: int, folder: Path) -> dict:
    """Peak RSS of a fresh engine process before and after importing a products file of `rows` rows."""
    rng = random.Random(31)
    warm_up, big = folder / f"calentar-{rows}.csv", folder / f"productos-{rows}.csv"
    csvfiles.write(csvfiles.PRODUCTS, [dataclasses.replace(p, codigo=f"CAL-{p.codigo}", codigo_barras=None)
                                       for p in make_products(10, rng)], warm_up)
    csvfiles.write(csvfiles.PRODUCTS, product_rows(rows, rng), big)
    home = folder / f"datos-{rows}"
    env = dict(os.environ, YUPANA_KEYRING="0", YUPANA_PASSPHRASE="bench", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(warm_up), str(big), str(home)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode:
        raise SystemExit(f"the import's child process failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["imported"] == rows, figures
    big.unlink()
    return figures


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--products", type=int, default=size(50_000, 500))
    parser.add_argument("--customers", type=int, default=size(20_000, 200))
    parser.add_argument("--queries", type=int, default=size(6_000, 60))
    parser.add_argument("--memory-rows", type=int, default=size(200_000, 2_000))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="yupana-bench-catalog-memory-") as folder:
        baseline = import_memory(max(10, args.memory_rows // 10), Path(folder))
        measured = import_memory(args.memory_rows, Path(folder))
    growth = measured["after_mb"] - measured["before_mb"]
    baseline_growth = baseline["after_mb"] - baseline["before_mb"]
    rng = random.Random(19)
    products, customers = make_products(args.products, rng), make_customers(args.customers, rng)
    with tempfile.TemporaryDirectory(prefix="yupana-bench-catalog-") as folder:
        folder = Path(folder)
        csvfiles.write(csvfiles.PRODUCTS, products, folder / "productos.csv")
        csvfiles.write(csvfiles.CUSTOMERS, customers, folder / "clientes.csv")
        (folder / "datos").mkdir()
        storage = open_database(folder / "datos" / "yupana.db")
        try:
            product_store = Products(storage, SqliteProductRepository(storage))
            customer_store = Customers(storage, SqliteCustomerRepository(storage))
            started = time.perf_counter()
            report = csvfiles.products_file(product_store).import_file(folder / "productos.csv")
            product_seconds = time.perf_counter() - started
            assert report.ok and report.imported == len(products), report.errors[:3]
            started = time.perf_counter()
            report = csvfiles.customers_file(customer_store).import_file(folder / "clientes.csv")
            customer_seconds = time.perf_counter() - started
            assert report.ok and report.imported == len(customers), report.errors[:3]
            storage.checkpoint("TRUNCATE")
            db_mb = (folder / "datos" / "yupana.db").stat().st_size / 1e6

            typed = queries(products, customers, args.queries, rng)
            timings: dict[str, list[float]] = {kind: [] for kind in typed}
            found = 0
            for _round in range(2):  # the first round warms the page cache; the second is measured
                for kind, texts in typed.items():
                    store = customer_store if kind.startswith("customer") else product_store
                    for text in texts:
                        t0 = time.perf_counter()
                        result = store.search(text)
                        elapsed = (time.perf_counter() - t0) * 1000
                        if _round:
                            timings[kind].append(elapsed)
                            found += bool(result)
        finally:
            storage.close()
    every = [t for values in timings.values() for t in values]
    figures = {
        "benchmark": "catalog",
        "products": len(products), "customers": len(customers), "queries": len(every),
        "found_share": round(found / len(every), 3),
        "search_p50_ms": round(statistics.median(every), 3),
        "search_p99_ms": round(percentile(every, 0.99), 3),
        "search_max_ms": round(max(every), 3),
        "p99_ms_by_kind": {kind: round(percentile(values, 0.99), 3) for kind, values in timings.items()},
        "import_rows_per_s": round(len(products) / product_seconds),
        "customers_import_rows_per_s": round(len(customers) / customer_seconds),
        "db_mb": round(db_mb, 1),
        "memory_rows": args.memory_rows,
        "engine_peak_before_import_mb": round(measured["before_mb"], 1),
        "import_peak_growth_mb": round(growth, 1),
        "import_peak_growth_limit_mb": MEMORY_LIMIT_MB,
        "import_peak_growth_ok": growth <= MEMORY_LIMIT_MB,
        "baseline_rows": baseline["imported"],
        "baseline_import_peak_growth_mb": round(baseline_growth, 1),
        "import_peak_growth_ratio": round(growth / max(baseline_growth, 1.0), 2),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
