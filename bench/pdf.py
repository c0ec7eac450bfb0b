"""Benchmark: the printed voucher (app.core.invoicing.printing.render_pdf) of ten-line facturas, A4 and 80 mm ticket.

    python bench/pdf.py [COUNT]

Issues COUNT signed ten-line facturas (each with its own number, hash and QR), then renders each from its
signed XML, on one thread, in rounds of 100. Baseline in the same run: fpdf2's own font handling (the font parsed and subset
for every document) on a sample. Then line wrapping (issue 31): the time to wrap a text and one twice as long, for an
unbroken text and for words in Spanish, Chinese, Japanese, Cyrillic and emoji (the ratio should be about 2: linear),
and the rate of ten-line facturas whose lines hold those scripts (the fallback fonts embedded). Prints a few lines,
then one JSON object of figures as the last line.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _sizes import size  # noqa: E402 - bench/ is the script's folder

from bench.vouchers import ten_line_factura  # noqa: E402

BASELINE_SAMPLE = size(30, 5)


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


WRAP_LENGTH = size(10_000, 500)
WRAP_ROUNDS = size(15, 2)
MIXED_WORDS = ("café", "ñandú", "炒饭", "日本語", "ひらがな", "Пельмени", "Ελληνικά", "😀", "🥑", "precio")


def wrap_ratios() -> dict[str, tuple[float, float]]:
    """(seconds for WRAP_LENGTH characters, seconds for twice as many) per kind of text: the least CPU time of
    WRAP_ROUNDS rounds, the two lengths taking turns (the machine's other work weighs on both alike)."""
    from app.core.invoicing.printing.layout import wrap

    texts = {"unbroken": lambda n: "x" * n,
             "mixed": lambda n: (" ".join(MIXED_WORDS * n))[:n]}
    found = {}
    for kind, make in texts.items():
        pair = [make(WRAP_LENGTH), make(2 * WRAP_LENGTH)]
        for text in pair:
            wrap(text, 60, 8)  # warm: the fallback fonts' metrics are read once
        best = [float("inf"), float("inf")]
        gc.disable()  # a collection inside one timing is noise, not wrapping
        try:
            for _ in range(WRAP_ROUNDS):
                for index, text in enumerate(pair):
                    started = time.process_time()
                    wrap(text, 60, 8)
                    best[index] = min(best[index], time.process_time() - started)
        finally:
            gc.enable()
        found[kind] = (best[0], best[1])
    return found


def mixed_rate(xmls: list[str]) -> float:
    """Ten-line facturas whose descriptions hold Spanish, Chinese, Japanese, Cyrillic and emoji, per second."""
    from app.core.invoicing.printing import layout, parse, pdf

    mixed = [xml.replace("Producto", "炒饭 ラーメン Пельмени 😀 Producto") for xml in xmls]
    pdf.write(layout.lay_out(parse(mixed[0]), "a4"))  # warm: the fallback fonts are parsed once per process
    started = time.perf_counter()
    for xml in mixed:
        pdf.write(layout.lay_out(parse(xml), "a4"))
    return len(mixed) / (time.perf_counter() - started)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else size(1000, 10)
    os.environ.setdefault("YUPANA_PASSPHRASE", "bench")
    os.environ["YUPANA_KEYRING"] = "0"
    xmls = signed_facturas(count)
    rate(xmls[:5], "a4")  # warm: the font is parsed once per process, the common subset cached
    rate(xmls[:5], "ticket")
    a4_per_s, a4_per_cpu_s, a4_best, a4_bytes = rate(xmls, "a4")
    ticket_per_s, ticket_per_cpu_s, ticket_best, ticket_bytes = rate(xmls, "ticket")
    baseline_per_s, baseline_per_cpu_s, baseline_best, _ = rate(xmls[:BASELINE_SAMPLE], "a4", shared_fonts=False)
    ratios = wrap_ratios()
    mixed_per_s = mixed_rate(xmls[:size(100, 5)])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load = os.getloadavg()[0]
    print(f"{count} ten-line facturas, one thread (load average {load:.1f}): A4 {a4_per_s:.0f}/s "
          f"({a4_per_cpu_s:.0f} per CPU second, fastest round {a4_best:.0f}/s, {a4_bytes:,} bytes each), "
          f"ticket {ticket_per_s:.0f}/s ({ticket_per_cpu_s:.0f} per CPU second, fastest round {ticket_best:.0f}/s, "
          f"{ticket_bytes:,} bytes each)")
    print(f"baseline, fpdf2's own font handling: A4 {baseline_per_s:.0f}/s ({baseline_per_cpu_s:.0f} per CPU "
          f"second; shared font: {a4_per_cpu_s / baseline_per_cpu_s:.1f} times faster); peak RSS {peak:.0f} MB")
    for kind, (once, twice) in ratios.items():
        print(f"wrapping a {kind} text: {WRAP_LENGTH:,} characters {once * 1000:.1f} ms, twice as long "
              f"{twice * 1000:.1f} ms: ratio {twice / once:.2f} (linear: about 2, at most 2.2)")
    print(f"ten-line facturas in Spanish, Chinese, Japanese, Cyrillic and emoji: A4 {mixed_per_s:.0f}/s "
          f"(Latin only: {a4_per_s:.0f}/s)")
    print(json.dumps({"benchmark": "pdf", "vouchers": count, "a4_per_s": round(a4_per_s, 1),
                      "ticket_per_s": round(ticket_per_s, 1), "a4_per_cpu_s": round(a4_per_cpu_s, 1),
                      "ticket_per_cpu_s": round(ticket_per_cpu_s, 1), "a4_best_round_per_s": round(a4_best, 1),
                      "ticket_best_round_per_s": round(ticket_best, 1), "a4_baseline_per_s": round(baseline_per_s, 1),
                      "a4_baseline_per_cpu_s": round(baseline_per_cpu_s, 1), "a4_bytes": a4_bytes,
                      "ticket_bytes": ticket_bytes, "load_average": round(load, 2), "peak_rss_mb": round(peak, 1),
                      "wrap_ratio_unbroken": round(ratios["unbroken"][1] / ratios["unbroken"][0], 2),
                      "wrap_ratio_mixed": round(ratios["mixed"][1] / ratios["mixed"][0], 2),
                      "a4_mixed_scripts_per_s": round(mixed_per_s, 1)}))


if __name__ == "__main__":
    main()
