"""`yupana serve [--port N] [--show-token] [--new-token] [--no-listener]`: the local HTTP API for a point of sale,
and the messaging webhook listener beside it."""

from __future__ import annotations

import argparse
import json
import sys

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
    parser.add_argument("--no-listener", action="store_true",
                        help="no inicia el receptor de webhooks de mensajería (listener_host:listener_port)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.api.local import LocalApi
    from app.commands import open_engine_waiting, stop_requested
    from app.core.api import YupanaError

    stop = stop_requested()  # SIGTERM while the shared database is still awaited ends the wait too
    opened = open_engine_waiting(args, stop)
    if opened is None:
        return 0
    with opened as engine:
        if args.new_token or args.show_token:
            print(engine.admin.new_api_token() if args.new_token else engine.admin.api_token())
            return 0
        # Both servers start before anything is printed: whoever reads the first line may stop us at
        # once, and SIGTERM is handled only from wait_until_stopped() on.
        listener_url = None
        if not args.no_listener:  # the webhook listener: gateways post the instances' events here
            try:
                listener_url = engine.messaging.start_listener()
            except YupanaError as exc:  # the API still serves; the shop is told why events will not arrive
                print(f"Aviso: {exc.message}", file=sys.stderr, flush=True)
            notice = engine.messaging.listener_state().notice  # its port changed: what to change by hand
            if notice:
                print(f"Aviso: {notice}", file=sys.stderr, flush=True)
        engine.invoicing.watch_summaries()  # RA/RC sent by `yupana anular`/`resumen` meanwhile: followed here too
        api = LocalApi(engine, port=args.port)
        print(json.dumps({"name": "api", "base_url": api.start() + "/api/v1"}), flush=True)
        if listener_url:
            print(json.dumps({"name": "listener", "base_url": listener_url}), flush=True)
        wait_until_stopped(stop)
        return 0
