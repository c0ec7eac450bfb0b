"""`yupana sandbox [NAME] [--port N] [--configure]`: start the local sandboxes and keep them running."""

from __future__ import annotations

import argparse
import json
import sys

from app.commands import wait_until_stopped
from app.optional import load_optional
from app.sandbox import SANDBOXES
from app.sandbox.base import Sandbox


def available() -> dict[str, type[Sandbox]]:
    """The sandboxes whose module exists in this version, by name."""
    classes = {name: load_optional(target) for name, target in SANDBOXES.items()}
    return {name: cls for name, cls in classes.items() if cls is not None}


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser("sandbox", help=summary,
                            description="Inicia servidores locales que se comportan como SUNAT beta, los proveedores "
                                        "de consultas y la pasarela de mensajería. Imprime una línea JSON por servidor.")
    parser.add_argument("name", nargs="?", metavar="NOMBRE", help="solo este servidor (sunat, registry, gateway)")
    parser.add_argument("--port", type=int, default=0, help="puerto (con NOMBRE); 0 elige uno libre")
    parser.add_argument("--host", default="127.0.0.1", help="dirección (por defecto 127.0.0.1)")
    parser.add_argument("--configure", action="store_true",
                        help="el entorno sandbox de la carpeta de datos actual usa estos servidores mientras estén en "
                             "marcha (la configuración de beta y producción no cambia)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    classes = available()
    if args.name and args.name not in classes:
        print(f"No existe el servidor de prueba «{args.name}». Disponibles: {', '.join(classes)}.", file=sys.stderr)
        return 2
    chosen = {args.name: classes[args.name]} if args.name else classes
    running = []
    try:
        for cls in chosen.values():
            sandbox = cls(host=args.host, port=args.port if args.name else 0)
            sandbox.start()
            running.append(sandbox)
        if args.configure:
            _configure(args, running, release=False)
        for sandbox in running:
            print(json.dumps({"name": sandbox.name, "base_url": sandbox.base_url}), flush=True)
        wait_until_stopped()
    finally:
        if args.configure and running:
            _configure(args, running, release=True)  # their addresses go with them
        for sandbox in running:
            sandbox.stop()
    return 0


def _configure(args: argparse.Namespace, running: list[Sandbox], release: bool) -> None:
    """Give (or take back) the data folder's sandbox environment these servers' addresses."""
    from app.cli import open_engine

    with open_engine(args) as engine:
        for sandbox in running:
            (sandbox.unconfigure if release else sandbox.configure)(engine)
