"""`yupana resumen [--fecha AAAA-MM-DD]`: report a day's signed boletas (and their notes) to SUNAT in a resumen
diario (RC, status 1), one per issuer; wait for the ticket and end with each boleta's state. A boleta sent alone,
or queued to be, is left out by the engine (one path per boleta, docs/sunat.md)."""

from __future__ import annotations

import argparse
import datetime as dt

from app.commands.anular import add_ticket_arguments, following_tickets, report


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser(
        "resumen", help=summary,
        description="Informa a SUNAT, en un resumen diario (RC), las boletas firmadas de un día que no se enviaron "
                    "ni están en cola para enviarse una por una (una RC por empresa; cada boleta llega a SUNAT por "
                    "un solo camino). Espera la respuesta al ticket mostrando el avance; las últimas líneas son el "
                    "estado final de cada boleta.")
    parser.add_argument("--fecha", metavar="AAAA-MM-DD", help="día de emisión de las boletas (por defecto, hoy)")
    add_ticket_arguments(parser, "de cada RC")
    parser.set_defaults(func=cmd_resumen)


def cmd_resumen(args: argparse.Namespace) -> int:
    from app.commands import open_engine
    from app.core.api import clock, invalid

    try:
        fecha = dt.date.fromisoformat(args.fecha) if args.fecha else clock.today()  # the day in Peru
    except ValueError:
        raise invalid("fecha", f"La fecha «{args.fecha}» (opción --fecha) no es AAAA-MM-DD.") from None
    with open_engine(args) as engine:
        with following_tickets(engine, not args.no_esperar):
            outcomes = engine.invoicing.daily_summary(fecha, wait=not args.no_esperar)
        return report(outcomes, args.salida)
