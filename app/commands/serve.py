"""`yupana serve [--port N] [--show-token] [--new-token]`: the local HTTP API for a point of sale."""

from __future__ import annotations

import argparse
import json

from app.commands import wait_until_stopped


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser("serve", help=summary,
                            description="Sirve las operaciones del contrato en http://127.0.0.1:PUERTO/api/v1/… "
                                        "Cada solicitud necesita la cabecera Authorization: Bearer TOKEN.")
    parser.add_argument("--port", type=int, help="puerto (por defecto el de la configuración api_port)")
    parser.add_argument("--show-token", action="store_true", help="muestra el token y termina")
    parser.add_argument("--new-token", action="store_true",
                        help="crea un token nuevo, lo muestra y termina (el anterior deja de valer al instante, "
                             "también en una API que esté sirviendo)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.cli import open_engine
    from app.core.api import LocalApi

    with open_engine(args) as engine:
        if args.new_token or args.show_token:
            print(engine.new_api_token() if args.new_token else engine.api_token())
            return 0
        api = LocalApi(engine, port=args.port)
        print(json.dumps({"name": "api", "base_url": api.start() + "/api/v1"}), flush=True)
        wait_until_stopped()
        return 0
