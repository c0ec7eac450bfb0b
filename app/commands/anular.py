"""`yupana anular SERIE-NUMERO --motivo TEXTO`: void a voucher with a comunicación de baja (RA) or a resumen diario
(RC, status 3), wait for SUNAT's ticket and print each voucher's final state as the last line(s).

A voucher whose baja is still unknown («Baja por confirmar») is refused with the engine's reason, naming the baja
it waits for; one whose earlier baja was taken as not made is voided again, with the engine's warning first."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands import add_voucher_arguments

if TYPE_CHECKING:
    from app.core.api import Engine, Event, SummaryOutcome

# Exit codes: 0 SUNAT accepted, 1 refused (an error, or the summary rejected), 3 the ticket still pending.
PENDING_EXIT = 3


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser(
        "anular", help=summary,
        description="Anula un comprobante aceptado por SUNAT: una comunicación de baja (RA) para facturas y sus "
                    "notas, un resumen diario con estado 3 (RC) para boletas y sus notas. Espera la respuesta de "
                    "SUNAT al ticket mostrando el avance; la última línea es el estado final del comprobante, "
                    "p. ej. «F001-7 anulado».")
    add_voucher_arguments(parser, "F001-7")
    parser.add_argument("--motivo", required=True, metavar="TEXTO", help="motivo de la baja (hasta 100 caracteres)")
    add_ticket_arguments(parser, "de la RA o RC")
    parser.set_defaults(func=cmd_anular)


def add_ticket_arguments(parser: argparse.ArgumentParser, which: str) -> None:
    """--salida and --no-esperar, shared by the commands that send a RA or RC and wait for its ticket."""
    parser.add_argument("--salida", metavar="CARPETA", help=f"carpeta donde escribir el XML firmado {which}")
    parser.add_argument("--no-esperar", action="store_true",
                        help="no esperar la respuesta de SUNAT (el ticket se sigue consultando al abrir Yupana)")


def cmd_anular(args: argparse.Namespace) -> int:
    from app.commands import open_engine

    with open_engine(args) as engine:
        voucher_id = engine.invoicing.find_voucher(args.serie_numero, args.ruc, args.tipo)
        with following_tickets(engine, not args.no_esperar):
            outcome = engine.invoicing.void(voucher_id, args.motivo, wait=not args.no_esperar)
        return report([outcome], args.salida)


@contextlib.contextmanager
def following_tickets(engine: Engine, waiting: bool) -> Iterator[None]:
    """While the command waits for SUNAT: the progress line of each RA/RC it sends, from the engine's events."""
    if not waiting:
        yield
        return
    handle = engine.admin.subscribe(TicketProgress())
    try:
        yield
    finally:
        handle.cancel()


class TicketProgress:
    """A listener of SummaryChanged: once a RA/RC this command prepared has its ticket, one line on the error output
    while SUNAT's answer is pending (rewritten in place on a terminal; once per ticket otherwise). Summaries the
    background worker follows, prepared before, are not this command's and are not shown."""

    def __init__(self) -> None:
        self._prepared: set[int] = set()
        self._announced: set[int] = set()

    def __call__(self, name: str, payload: Event) -> None:
        from app.core.api import events, statuses

        if not isinstance(payload, events.SummaryChanged) or payload.state != statuses.SUBMISSION_PENDING:
            return
        if payload.ticket is None:  # just prepared, about to be sent
            self._prepared.add(payload.id)
            return
        if payload.id not in self._prepared or payload.id in self._announced:
            return
        self._announced.add(payload.id)
        kind = payload.ident[:2]  # RA-AAAAMMDD-N or RC-AAAAMMDD-N
        to = "a la comunicación de baja" if kind == "RA" else "al resumen diario"
        text = f"Esperando la respuesta de SUNAT {to} {payload.ident} (ticket {payload.ticket})…"
        if sys.stderr.isatty():
            print(f"\r{text}", end="", file=sys.stderr, flush=True)
        else:
            print(text, file=sys.stderr, flush=True)


def report(outcomes: list[SummaryOutcome], salida: str | None) -> int:
    """Write each signed RA/RC to `salida`, say how each ended, and end with each voucher's state."""
    from app.core.api import statuses

    if sys.stderr.isatty():
        print(file=sys.stderr)
    code = 0
    for outcome in outcomes:
        if salida:
            folder = Path(salida)
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{outcome.emisor_ruc}-{outcome.ident}.xml"
            path.write_text(outcome.xml_firmado, encoding="utf-8")
            print(f"XML firmado: {path.resolve()}")
        if outcome.aviso:
            print(outcome.aviso)
        document = f"{_document(outcome.kind).capitalize()} {outcome.ident}"
        if outcome.state == statuses.SUBMISSION_DONE:
            ending = _ending(outcome.kind)
            how = f"ticket {outcome.ticket}" if outcome.ticket else \
                f"confirmad{ending} consultando el estado del comprobante"
            print(f"{document}: aceptad{ending} por SUNAT ({how}).")
        elif outcome.received_without_ticket:  # SUNAT holds it, its ticket lost: the engine confirms it meanwhile
            print(f"{document}: {outcome.descripcion}. Yupana lo seguirá consultando; mientras tanto el comprobante "
                  "queda «Baja por confirmar».")
            code = max(code, PENDING_EXIT)
        elif outcome.state == statuses.SUMMARY_UNCONFIRMED:
            print(f"{document}: {outcome.descripcion}.")
            code = 1
        elif outcome.state == statuses.SUBMISSION_PENDING:
            waiting = f"al ticket {outcome.ticket}" if outcome.ticket else "al envío"
            print(f"{document}: SUNAT aún no responde {waiting}; Yupana lo seguirá intentando.")
            code = max(code, PENDING_EXIT)
        else:
            print(f"{document}: rechazad{_ending(outcome.kind)} por SUNAT (código {outcome.codigo or 'sin código'}): "
                  f"{outcome.descripcion or 'sin descripción'}.")
            code = 1
    for outcome in outcomes:
        for voucher in outcome.vouchers:  # the shown status: «baja_por_confirmar» while the outcome is unknown
            print(f"{voucher.serie_numero} {voucher.status}")
    return code


def _document(kind: str) -> str:
    return "comunicación de baja" if kind == "RA" else "resumen diario"


def _ending(kind: str) -> str:
    """The participle's ending for the document's gender: «comunicación … aceptada», «resumen … aceptado»."""
    return "a" if kind == "RA" else "o"
