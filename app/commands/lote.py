"""`yupana lote ARCHIVO`: generate and sign many vouchers at once (engine.invoicing.issue_batch)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.commands.padron import ProgressBar

if TYPE_CHECKING:
    from app.core.api import Engine


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser(
        "lote", help=summary,
        description="Genera y firma varios comprobantes de una vez: un archivo JSON Lines (una solicitud de "
                    "/api/v1/facturacion/xml por línea) o un arreglo JSON. Escribe una línea JSON por comprobante, en "
                    "el orden del archivo, y al final una línea de resumen. Volver a ejecutar el mismo archivo "
                    "devuelve los comprobantes ya emitidos, sin duplicarlos.")
    parser.add_argument("file", metavar="ARCHIVO", help="solicitudes: .jsonl (una por línea) o .json (arreglo)")
    parser.add_argument("--certificado", metavar="ID",
                        help="certificado_id con el que se firma (por defecto, el predeterminado de cada emisor)")
    parser.add_argument("--salida", metavar="CARPETA", help="guarda cada XML firmado en esta carpeta")
    parser.add_argument("--pdf", action="store_true",
                        help="guarda también el PDF de cada comprobante (en --salida, o en la carpeta actual)")
    parser.add_argument("--ticket", action="store_true", help="con --pdf: formato ticket de 80 mm en vez del de "
                                                              "la empresa")
    parser.add_argument("--quiet", action="store_true", help="sin barra de avance")
    parser.set_defaults(func=cmd_lote)


def cmd_lote(args: argparse.Namespace) -> int:
    from app.commands import open_engine
    from app.core.api import YupanaError

    path = Path(args.file)
    if not path.is_file():
        print(f"Error: no existe el archivo {path}.", file=sys.stderr)
        return 2
    engine = open_engine(args)
    try:
        batch = engine.invoicing.read_batch(path)  # checked whole first; its lines are read as they are issued
        out_dir = Path(args.salida) if args.salida else None
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
    except BaseException:
        engine.close()
        raise
    pdf_dir = (out_dir or Path.cwd()) if args.pdf else None
    formato = "ticket" if args.ticket else None
    bar = None if args.quiet else ProgressBar(amount=lambda done: f"{done:,} comprobantes")
    started = time.monotonic()
    issued = failed = 0
    total = len(batch)
    try:
        for number, item in enumerate(engine.invoicing.issue_batch(batch, args.certificado), start=1):
            envelope = item.envelope()
            line = _line(number, envelope, out_dir)
            if pdf_dir is not None and envelope["success"]:
                line["pdf"] = str(_write_pdf(engine, envelope["data"], pdf_dir, formato))
            if bar is not None:
                bar.clear()  # stdout and stderr share the terminal: the JSON line must not follow the bar
            print(json.dumps(line, ensure_ascii=False), flush=True)
            if envelope["success"]:
                issued += 1
            else:
                failed += 1
            if bar is not None:
                bar(number, total)
    except KeyboardInterrupt:
        print("Interrumpido: los comprobantes ya mostrados quedaron guardados; vuelva a ejecutar el archivo para "
              "continuar.", file=sys.stderr)
        return 130
    except YupanaError:
        raise  # a refusal: the command line says it as it says any other (app/cli.py)
    except Exception as exc:  # the disk or the database: the block being written was not kept
        # issue_batch answers each voucher's own failure as its item, so what escapes it is the disk or the database
        # failing under a block (the SQLite driver's error today, another engine's error tomorrow: they share no base class).
        logging.getLogger(__name__).exception("batch stopped")
        print(f"Error: el lote se detuvo al guardar ({exc}). Los comprobantes ya mostrados quedaron guardados; "
              "vuelva a ejecutar el archivo para continuar.", file=sys.stderr)
        return 1
    finally:
        if bar is not None:
            bar.finish()
        engine.close()
    print(json.dumps({"emitidos": issued, "con_error": failed, "segundos": round(time.monotonic() - started, 3)}),
          flush=True)
    return 0 if failed == 0 else 1


def _write_pdf(engine: Engine, data: dict[str, Any], folder: Path, formato: str | None) -> Path:
    from app.core.api import pdf_file_name, write_bytes

    chosen = formato or engine.admin.print_options(_issuer(data)).formato
    pdf = engine.invoicing.pdf_from_xml(data["xml_firmado"], chosen)
    return write_bytes(folder / pdf_file_name(data["nombre_archivo"], chosen), pdf)


def _issuer(data: dict[str, Any]) -> str:
    return data["nombre_archivo"].split("-", 1)[0]  # RUC-TT-SERIE-NUMERO.xml


def _line(number: int, envelope: dict[str, Any], out_dir: Path | None) -> dict[str, Any]:
    if not envelope["success"]:
        return {"item": number, "success": False, "error": envelope["error"]}
    data = envelope["data"]
    if out_dir is not None:
        (out_dir / data["nombre_archivo"]).write_text(data["xml_firmado"], encoding="utf-8")
    shown = {key: value for key, value in data.items() if key != "xml_firmado"}
    return {"item": number, "success": True, **shown}
