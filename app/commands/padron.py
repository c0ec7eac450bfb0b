"""`yupana padron import FILE` and `yupana padron status`: SUNAT's padrón reducido, offline."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from app.core.api import PadronStatus


class ProgressBar:
    """Progress on stderr: one line redrawn in place on a terminal (at most a few times a second), whole lines
    elsewhere (a log or a pipe shared with stdout must not get a line without its end)."""

    WIDTH = 30

    def __init__(self, stream: TextIO = sys.stderr, every_s: float = 0.2,
                 amount: Callable[[int], str] = lambda done: f"{done / (1024 * 1024):,.0f} MiB") -> None:
        self.stream = stream
        self.every_s = every_s
        self.amount = amount
        self._last = 0.0
        self._started = time.monotonic()
        self._in_place = stream.isatty()
        self._drawn = 0  # characters of the line drawn in place and not yet ended

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self._last < self.every_s and done < total:
            return
        self._last = now
        fraction = min(1.0, done / total) if total else 1.0
        filled = int(fraction * self.WIDTH)
        text = (f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {fraction:6.1%}  {self.amount(done)}  "
                f"{now - self._started:,.0f} s")
        if self._in_place:
            self.stream.write(f"\r{text}")
            self._drawn = len(text)
        else:
            self.stream.write(f"{text}\n")
        self.stream.flush()

    def clear(self) -> None:
        """Take the line drawn in place off the terminal before something else is printed there; the next call
        draws it again."""
        if self._drawn:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self.stream.flush()
            self._drawn, self._last = 0, 0.0

    def finish(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = 0


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser("padron", help=summary,
                            description="Padrón reducido de RUC de SUNAT (padron_reducido_ruc.zip) para consultar RUC "
                                        "sin internet.")
    actions = parser.add_subparsers(dest="padron_action", metavar="ACCION", required=True)
    load = actions.add_parser("import", help="importa el padrón (.zip de SUNAT o el .txt que contiene)",
                              description="Importa el padrón sin cargarlo en memoria. Las consultas siguen usando el "
                                          "padrón anterior hasta que el nuevo esté completo. Muestra el avance en la "
                                          "salida de errores y termina con una línea JSON de resumen.")
    load.add_argument("file", metavar="ARCHIVO", help="padron_reducido_ruc.zip o padron_reducido_ruc.txt")
    load.add_argument("--quiet", action="store_true", help="sin barra de avance")
    load.set_defaults(func=cmd_import)
    status = actions.add_parser("status", help="muestra el padrón cargado (filas, fecha, archivo)")
    status.set_defaults(func=cmd_status)


def cmd_import(args: argparse.Namespace) -> int:
    from app.commands import open_engine

    engine = open_engine(args)
    bar = None if args.quiet else ProgressBar()
    result = None
    try:
        for step in engine.lookups.import_padron_steps(args.file):
            if step.result is not None:
                result = step.result
            elif bar is not None:
                bar(step.done, step.total or 0)
    finally:
        if bar is not None:
            bar.finish()
        engine.close()
    assert result is not None  # the steps end with the result, or raise
    summary = {"rows_loaded": result.rows_loaded, "rows_skipped": result.rows_skipped, "seconds": result.seconds}
    print(json.dumps({**summary, "cancelled": True} if result.cancelled else summary), flush=True)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from app.commands import open_engine, print_json

    with open_engine(args) as engine:
        print_json(status_json(engine.lookups.padron_status()))
    return 0


def status_json(status: PadronStatus) -> dict[str, Any]:
    """`yupana padron status`'s JSON: what is loaded, in the order the command has always printed it."""
    if not status.loaded:
        return {"loaded": False, "rows": status.rows, "loaded_at": None, "source": None, "file": None}
    return {"loaded": True, "file": status.file, "rows": status.rows, "skipped": status.skipped,
            "seconds": status.seconds, "source": status.source, "loaded_at": status.loaded_at}
