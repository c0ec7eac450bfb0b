"""Benchmark: the printed voucher (app.core.invoicing.printing.render_pdf) of ten-line facturas, A4 and 80 mm ticket.

    python bench/pdf.py [COUNT]

Issues COUNT signed ten-line facturas (each with its own number, hash and QR), then renders each from its
signed XML, on one thread, in rounds of 100. Baseline in the same run: fpdf2's own font handling (the font parsed and subset
for every document) on a sample. Prints a few lines, then one JSON object of figures as the last line.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.vouchers import ten_line_factura  # noqa: E402

BASELINE_SAMPLE = 30


def signed_facturas(count: int) -> list[str]:
    from app.core.api import Company, Engine

    with tempfile.TemporaryDirectory() as home:
        engine = Engine(home)
        try:
            engine.admin.set_company(Company(ruc="20100066603", razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                       direccion="AV. ABANCAY 123", nombre_comercial="YUPANA"))
            certificado_id = engine.invoicing.create_test_certificate("20100066603").certificado_id
            requests = [ten_line_factura(n) for n in range(1, count + 1)]
            return [item.voucher.xml_firmado for item in engine.invoicing.issue_batch(requests, certificado_id)]
        finally:
            engine.close()


ROUND = 100


def rate(xmls: list[str], formato: str, **options: object) -> tuple[float, float, float, int]:
    """(per wall-clock second over all, per second of this process's CPU time, per second in the fastest round
    of ROUND vouchers, mean bytes). The machine is shared with other work: the whole run's figure is what it
    did meanwhile; the fastest round is closest to a core of its own. All are printed."""
    from app.core.invoicing.printing import layout, parse, pdf

    started, cpu_started = time.perf_counter(), time.process_time()
    size = 0
    best = float("inf")
    for first in range(0, len(xmls), ROUND):
        block = xmls[first:first + ROUND]
        round_started = time.perf_counter()
        for xml in block:
            size += len(pdf.write(layout.lay_out(parse(xml), formato), **options))
        best = min(best, (time.perf_counter() - round_started) / len(block))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    return len(xmls) / elapsed, len(xmls) / cpu, 1 / best, size // len(xmls)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    os.environ.setdefault("YUPANA_PASSPHRASE", "bench")
    os.environ["YUPANA_KEYRING"] = "0"
    xmls = signed_facturas(count)
    rate(xmls[:5], "a4")  # warm: the font is parsed once per process, the common subset cached
    rate(xmls[:5], "ticket")
    a4_per_s, a4_per_cpu_s, a4_best, a4_bytes = rate(xmls, "a4")
    ticket_per_s, ticket_per_cpu_s, ticket_best, ticket_bytes = rate(xmls, "ticket")
    baseline_per_s, baseline_per_cpu_s, baseline_best, _ = rate(xmls[:BASELINE_SAMPLE], "a4", shared_fonts=False)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load = os.getloadavg()[0]
    print(f"{count} ten-line facturas, one thread (load average {load:.1f}): A4 {a4_per_s:.0f}/s "
          f"({a4_per_cpu_s:.0f} per CPU second, fastest round {a4_best:.0f}/s, {a4_bytes:,} bytes each), "
          f"ticket {ticket_per_s:.0f}/s ({ticket_per_cpu_s:.0f} per CPU second, fastest round {ticket_best:.0f}/s, "
          f"{ticket_bytes:,} bytes each)")
    print(f"baseline, fpdf2's own font handling: A4 {baseline_per_s:.0f}/s ({baseline_per_cpu_s:.0f} per CPU "
          f"second; shared font: {a4_per_cpu_s / baseline_per_cpu_s:.1f} times faster); peak RSS {peak:.0f} MB")
    print(json.dumps({"benchmark": "pdf", "vouchers": count, "a4_per_s": round(a4_per_s, 1),
                      "ticket_per_s": round(ticket_per_s, 1), "a4_per_cpu_s": round(a4_per_cpu_s, 1),
                      "ticket_per_cpu_s": round(ticket_per_cpu_s, 1), "a4_best_round_per_s": round(a4_best, 1),
                      "ticket_best_round_per_s": round(ticket_best, 1), "a4_baseline_per_s": round(baseline_per_s, 1),
                      "a4_baseline_per_cpu_s": round(baseline_per_cpu_s, 1), "a4_bytes": a4_bytes,
                      "ticket_bytes": ticket_bytes, "load_average": round(load, 2), "peak_rss_mb": round(peak, 1)}))


if __name__ == "__main__":
    main()
