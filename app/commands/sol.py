"""`yupana sol set|show`: a company's usuario and clave SOL for sending to SUNAT (kept encrypted)."""

from __future__ import annotations

import argparse
import getpass
import sys

from app.commands import open_engine


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser("sol", help=summary,
                            description="Usuario y clave SOL de una empresa, con los que Yupana envía a SUNAT. Se "
                                        "guardan cifrados; la clave nunca se muestra.")
    sol_sub = parser.add_subparsers(dest="sol_action", metavar="ACCION", required=True)
    put = sol_sub.add_parser("set", help="guarda el usuario y la clave SOL de una empresa")
    put.add_argument("ruc", metavar="RUC")
    put.add_argument("--usuario", required=True, help="usuario SOL (sin el RUC)")
    put.add_argument("--clave-stdin", action="store_true", help="lee la clave SOL de la entrada estándar")
    put.set_defaults(func=cmd_set)
    show = sol_sub.add_parser("show", help="muestra el usuario SOL con el que se enviará (nunca la clave)")
    show.add_argument("ruc", metavar="RUC")
    show.add_argument("--ambiente", choices=["beta", "produccion"], default="beta")
    show.set_defaults(func=cmd_show)
    api = sol_sub.add_parser("api", help="guarda las credenciales de una API de SUNAT de una empresa (client_id y "
                                         "client_secret generados en SOL): guías de remisión o consulta de validez")
    api.add_argument("ruc", metavar="RUC")
    api.add_argument("--client-id", required=True, help="client_id generado en SOL")
    api.add_argument("--secret-stdin", action="store_true", help="lee el client_secret de la entrada estándar")
    api.add_argument("--servicio", choices=["guias", "validez"], default="guias",
                     help="guias (por defecto): envío de guías de remisión; validez: consulta de validez")
    api.set_defaults(func=cmd_api)


def cmd_set(args: argparse.Namespace) -> int:
    clave = sys.stdin.readline().rstrip("\r\n") if args.clave_stdin else getpass.getpass("Clave SOL: ")
    with open_engine(args) as engine:
        engine.invoicing.set_sol_credentials(args.ruc, args.usuario, clave)
    print(f"Usuario y clave SOL guardados para el RUC {args.ruc}.")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with open_engine(args) as engine:
        usuario, _ = engine.invoicing.sol_credentials(args.ruc, args.ambiente)
    print(f"{args.ruc}{usuario}")
    return 0


def cmd_api(args: argparse.Namespace) -> int:
    secret = sys.stdin.readline().rstrip("\r\n") if args.secret_stdin else getpass.getpass("client_secret: ")
    with open_engine(args) as engine:
        if args.servicio == "validez":
            engine.invoicing.set_validity_credentials(args.ruc, args.client_id, secret)
        else:
            engine.invoicing.set_gre_credentials(args.ruc, args.client_id, secret)
    what = "de consulta de validez" if args.servicio == "validez" else "de guías"
    print(f"Credenciales de la API {what} guardadas para el RUC {args.ruc}.")
    return 0
