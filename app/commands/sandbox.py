"""`yupana sandbox [NAME] [--port N] [--configure]`: start the local sandboxes and keep them running.

`yupana sandbox emit EVENT --instance NAME [--from +51…] [--body TEXT] [--name TEXT] [--message-id ID]
[--times N]` asks a running gateway sandbox (the one the instance is bound to) to post EVENT to the
instance's registered webhook, in Evolution's shape.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from app.commands import stop_requested, wait_until_stopped

if TYPE_CHECKING:
    from app.sandbox.base import Sandbox


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser("sandbox", help=summary,
                            description="Inicia servidores locales que se comportan como SUNAT beta, los proveedores "
                                        "de consultas y la pasarela de mensajería. Imprime una línea JSON por servidor.")
    parser.add_argument("name", nargs="?", metavar="NOMBRE",
                        help="solo este servidor (sunat, sunat_gre, registry, gateway), o «emit» para que la "
                             "pasarela de prueba publique un evento")
    parser.add_argument("event", nargs="?", metavar="EVENTO",
                        help="con emit: message.received, message.delivered, message.read, instance.connected o "
                             "instance.disconnected")
    parser.add_argument("--instance", help="con emit: la instancia (por defecto la de prueba de este puesto: demo, o "
                                           "demo-<equipo>-… en una base compartida)")
    parser.add_argument("--from", dest="sender", default="+51987654321", help="con emit: número del remitente")
    parser.add_argument("--body", default="Hola, ¿me envía mi comprobante?", help="con emit: texto del mensaje")
    parser.add_argument("--name", dest="sender_name", default="Cliente", help="con emit: nombre del remitente")
    parser.add_argument("--message-id", help="con emit: id del mensaje en la pasarela (por defecto: nuevo, o el "
                                             "último enviado para delivered/read)")
    parser.add_argument("--times", type=int, default=1, help="con emit: cuántas veces publicarlo (duplicados)")
    parser.add_argument("--port", type=int, default=0, help="puerto (con NOMBRE); 0 elige uno libre")
    parser.add_argument("--host", default="127.0.0.1", help="dirección (por defecto 127.0.0.1)")
    parser.add_argument("--configure", action="store_true",
                        help="el entorno sandbox de la carpeta de datos actual usa estos servidores mientras estén en "
                             "marcha (la configuración de beta y producción no cambia)")
    parser.set_defaults(func=run)


def emit(args: argparse.Namespace) -> int:
    """Ask the gateway sandbox that serves `--instance` to post an event to its webhook."""
    import httpx

    from app.commands import open_engine
    from app.core.api import CONTRACT_EVENTS, YupanaError, normalise_phone

    if args.event not in CONTRACT_EVENTS:
        print(f"Evento «{args.event}» desconocido. Válidos: {', '.join(CONTRACT_EVENTS)}.", file=sys.stderr)
        return 2
    try:
        sender = normalise_phone(args.sender, "from")
        with open_engine(args) as engine:
            args.instance = args.instance or engine.messaging.sandbox_instance_name()
            base_url = engine.messaging.instance_base_url(args.instance)  # a sandbox's, whatever is in use
    except YupanaError as exc:
        print(exc.message, file=sys.stderr)
        return 1
    body = {"event": args.event, "instance": args.instance, "from": sender, "body": args.body,
            "name": args.sender_name, "message_id": args.message_id, "times": args.times}
    try:
        response = httpx.post(base_url + "/_control/emit", json=body, timeout=30)
    except httpx.HTTPError:
        print(f"La pasarela de prueba no responde en {base_url}: ¿está corriendo `yupana sandbox`?", file=sys.stderr)
        return 1
    if response.status_code != 200:
        print(f"La pasarela de prueba rechazó el evento: {response.text}", file=sys.stderr)
        return 1
    statuses = response.json()["posted"]
    print(json.dumps({"event": args.event, "instance": args.instance, "listener_status": statuses}), flush=True)
    return 0 if all(200 <= s < 300 for s in statuses) else 1


def run(args: argparse.Namespace) -> int:
    from app.sandbox import available  # the servers (http.server and the engine's parts) only when they start

    if args.name == "emit":
        return emit(args)
    classes = available()
    if args.name and args.name not in classes:
        print(f"No existe el servidor de prueba «{args.name}». Disponibles: {', '.join(classes)}.", file=sys.stderr)
        return 2
    chosen = {args.name: classes[args.name]} if args.name else classes
    running = []
    stop = stop_requested()  # a SIGTERM right after the servers are announced still removes their rows
    try:
        for cls in chosen.values():
            sandbox = cls(host=args.host, port=args.port if args.name else 0)
            sandbox.start()
            running.append(sandbox)
        if args.configure:
            _configure(args, running, release=False)
        for sandbox in running:
            print(json.dumps({"name": sandbox.name, "base_url": sandbox.base_url}), flush=True)
        wait_until_stopped(stop)
    finally:
        if args.configure and running:
            _configure(args, running, release=True)  # their addresses go with them
        for sandbox in running:
            sandbox.stop()
    return 0


def _configure(args: argparse.Namespace, running: list[Sandbox], release: bool) -> None:
    """Give (or take back) the data folder's sandbox environment these servers' addresses."""
    from app.commands import open_engine

    with open_engine(args) as engine:
        for sandbox in running:
            (sandbox.unconfigure if release else sandbox.configure)(engine)
