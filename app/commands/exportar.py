"""`yupana exportar --desde --hasta --salida`: the period's zip for the accountant (issue 35, docs/backups.md)."""

from __future__ import annotations

import argparse
import sys

from app.commands import iso_date


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser(
        "exportar", help=summary,
        description="Escribe un zip para el contador con el XML firmado y el CDR de cada comprobante emitido entre "
                    "dos fechas (con los nombres de archivo de SUNAT) y el registro de ventas en .csv y .xlsx, con "
                    "las columnas del archivo de importación del RVIE de SIRE. La última línea es la ruta del zip.")
    parser.add_argument("--desde", required=True, type=iso_date, metavar="AAAA-MM-DD", help="primer día (incluido)")
    parser.add_argument("--hasta", required=True, type=iso_date, metavar="AAAA-MM-DD", help="último día (incluido)")
    parser.add_argument("--salida", required=True, metavar="ARCHIVO", help="el zip a escribir, p. ej. noviembre.zip")
    parser.add_argument("--silencioso", action="store_true", help="sin barra de progreso")
    parser.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from app.commands import open_engine
    from app.commands.padron import ProgressBar

    bar = None if args.silencioso else ProgressBar(amount=lambda done: f"{done:,} comprobantes")
    result = None
    with open_engine(args) as engine:
        for step in engine.invoicing.export_period_steps(args.desde, args.hasta, Path(args.salida)):
            if bar is not None:
                bar(step.done, step.total)
            result = step.result or result
    if bar is not None:
        bar.finish()
    assert result is not None  # the last step always carries it
    print(f"{result.vouchers:,} comprobantes, {result.cdrs:,} CDR, total del registro {result.total:,.2f} "
          f"({result.register} y .xlsx)", file=sys.stderr)
    print(Path(result.path).resolve())
    return 0
