"""`yupana pdf SERIE-NUMERO`: the printed representation (PDF) of a signed voucher."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands import add_voucher_arguments

if TYPE_CHECKING:
    from app.core.api import PdfFile


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser(
        "pdf", help=summary,
        description="Escribe la representación impresa (PDF) de un comprobante firmado, en A4 o en ticket de 80 mm "
                    "(por defecto, el formato de la empresa: `yupana company impresion`). La última línea es la "
                    "ruta del archivo.")
    add_voucher_arguments(parser, "F001-123")
    parser.add_argument("--ticket", action="store_true", help="formato ticket de 80 mm")
    parser.add_argument("--a4", action="store_true", help="formato A4 (aunque la empresa imprima tickets)")
    parser.add_argument("--salida", metavar="ARCHIVO",
                        help="archivo PDF o carpeta (por defecto, la carpeta actual con el nombre del comprobante)")
    parser.set_defaults(func=cmd_pdf)


def cmd_pdf(args: argparse.Namespace) -> int:
    from app.commands import open_engine

    formato = "ticket" if args.ticket else "a4" if args.a4 else None
    with open_engine(args) as engine:
        voucher_id = engine.invoicing.find_voucher(args.serie_numero, args.ruc, args.tipo)
        pdf = engine.invoicing.pdf(voucher_id, formato)
        path = write_pdf(pdf, args.salida)
    for aviso in pdf.avisos:  # characters no font has: printed as a visible mark, and said
        print(f"Aviso: {aviso}", file=sys.stderr)
    print(path.resolve())
    return 0


def write_pdf(pdf: PdfFile, target: str | None) -> Path:
    """Write the PDF to `target` (a file, or a folder for its usual name; default: the current folder) through a
    temporary file, so a half-written PDF is never left under the final name (app.core.api.write_bytes)."""
    from app.core.api import write_bytes

    path = Path(target) if target else Path.cwd()
    if path.is_dir():
        path = path / pdf.name
    return write_bytes(path, pdf.content)
