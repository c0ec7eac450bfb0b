"""One module per feature command of `yupana` (cert, sandbox, serve, padron, demo, …), and what they share.

Each module defines `register(subparsers, summary)` adding its parser with `set_defaults(func=...)`;
the handler takes the parsed arguments and returns the exit code. app/cli.py builds the parser; the
commands never import it back (opening the engine and printing JSON live here).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.core.api import Engine


def stop_requested() -> threading.Event:
    """An event SIGTERM sets. Installed before a command says it is ready, a stop that comes right after is
    kept, not fatal (the command still cleans up what it registered)."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    return stop


def wait_until_stopped(stop: threading.Event | None = None) -> None:
    """Block a serving command until SIGTERM (`stop`, installed earlier, or from now on) or Ctrl+C."""
    stop = stop or stop_requested()
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass


def iso_date(text: str) -> dt.date:
    """An argument's date as AAAA-MM-DD (argparse `type=`): a wrong one is told in Spanish."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"«{text}» no es una fecha AAAA-MM-DD") from None


def add_voucher_arguments(parser: argparse.ArgumentParser, example: str) -> None:
    """The arguments that name one of our vouchers: SERIE-NUMERO, and the type and issuer when it is ambiguous
    (engine.invoicing.find_voucher takes the three)."""
    parser.add_argument("serie_numero", metavar="SERIE-NUMERO", help=f"p. ej. {example}")
    parser.add_argument("--tipo", choices=["01", "03", "07", "08"],
                        help="tipo de comprobante, cuando una factura y su nota comparten la serie")
    parser.add_argument("--ruc", help="RUC del emisor, cuando hay varias empresas")


def open_engine(args: argparse.Namespace) -> Engine:
    from app.core.api import Engine

    return _prompting(Engine(getattr(args, "home", None)))


def open_engine_waiting(args: argparse.Namespace, stop: threading.Event) -> Engine | None:
    """A serving command's engine: a shared database out of reach at start is said on the standard error and tried
    again until it answers; None when `stop` is set (SIGTERM) or Ctrl+C comes meanwhile."""
    from app.core.api import Engine

    def waiting(message: str, seconds: float) -> None:
        print(f"{message} Se vuelve a intentar en {seconds:g} s (Ctrl+C para salir).", file=sys.stderr, flush=True)

    try:
        engine = Engine.open_waiting(getattr(args, "home", None), waiting=waiting, stopped=stop.wait)
    except KeyboardInterrupt:
        return None
    return _prompting(engine) if engine is not None else None


def _prompting(engine: Engine) -> Engine:
    if sys.stdin.isatty() and sys.stderr.isatty():
        engine.admin.set_passphrase_prompt(ask_passphrase)
    return engine


def ask_passphrase(new: bool) -> str | None:
    """The hidden prompt for the data folder's passphrase (only when a person is at the terminal)."""
    import getpass

    from app.core.api import MIN_PASSPHRASE_CHARS

    try:
        if not new:
            return getpass.getpass("Frase secreta de Yupana (no se muestra al escribir): ")
        print("Este equipo no tiene llavero del sistema: las claves de Yupana (certificados, clave SOL, tokens) "
              "se protegen con una frase secreta que solo usted conoce. No se guarda en ninguna parte: "
              "si la olvida, tendrá que volver a importar sus certificados (docs/security.md).", file=sys.stderr)
        return choose_passphrase(f"Elija una frase secreta (al menos {MIN_PASSPHRASE_CHARS} caracteres): ")
    except EOFError:
        return None


def choose_passphrase(prompt: str) -> str:
    """A new passphrase typed twice, hidden, until it is long enough and both match (EOFError: no one typed)."""
    import getpass

    from app.core.api import MIN_PASSPHRASE_CHARS

    while True:
        first = getpass.getpass(prompt)
        if len(first) < MIN_PASSPHRASE_CHARS:
            print(f"Es muy corta: use al menos {MIN_PASSPHRASE_CHARS} caracteres.", file=sys.stderr)
            continue
        if getpass.getpass("Repítala para confirmar: ") == first:
            return first
        print("Las dos frases no coinciden; empiece de nuevo.", file=sys.stderr)


def print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2, default=str))
