"""`yupana validar RUC TIPO SERIE NUMERO --fecha AAAA-MM-DD [--total IMPORTE]`: SUNAT's consulta integrada de
validez of any voucher (ours or a supplier's)."""

from __future__ import annotations

import argparse
from decimal import Decimal, InvalidOperation

from app.commands import iso_date


def _amount(text: str) -> Decimal:
    try:
        value = Decimal(text.replace(",", ""))
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"«{text}» no es un importe (p. ej. 118.00)") from None
    if not value.is_finite():
        raise argparse.ArgumentTypeError(f"«{text}» no es un importe (p. ej. 118.00)")
    return value


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser(
        "validar", help=summary,
        description="Consulta a SUNAT (consulta integrada de validez, API REST con las credenciales de API de la "
                    "empresa) si un comprobante, propio o de un proveedor, es válido: su estado, el del RUC del "
                    "emisor y la condición de su domicilio. El código de salida es 0 si el comprobante es válido "
                    "(aceptado o autorizado) y 1 si no.")
    parser.add_argument("ruc", metavar="RUC", help="RUC del emisor del comprobante")
    parser.add_argument("tipo", metavar="TIPO", help="01 factura, 03 boleta, 04 liquidación de compra, 07 nota de "
                                                      "crédito, 08 nota de débito, R1 recibo por honorarios, R7 nota "
                                                      "de crédito de recibos")
    parser.add_argument("serie", metavar="SERIE", help="p. ej. F001 (o 0001 en papel)")
    parser.add_argument("numero", metavar="NUMERO", type=int, help="p. ej. 7")
    parser.add_argument("--fecha", metavar="AAAA-MM-DD", type=iso_date, required=True,
                        help="fecha de emisión del comprobante (SUNAT la pide)")
    parser.add_argument("--total", metavar="IMPORTE", type=_amount, help="importe total del comprobante, p. ej. 118.00")
    parser.add_argument("--empresa", metavar="RUC", help="empresa de Yupana que consulta (por defecto, la única)")
    parser.add_argument("--json", action="store_true", help="la respuesta en JSON")
    parser.set_defaults(func=cmd_validar)


def cmd_validar(args: argparse.Namespace) -> int:
    import dataclasses

    from app.commands import open_engine, print_json
    from app.core.api import sunat_catalogues

    with open_engine(args) as engine:
        answer = engine.invoicing.check_validity(args.ruc, args.tipo, args.serie, args.numero, args.fecha,
                                                 args.total, args.empresa)
    if args.json:
        shown = dataclasses.asdict(answer)
        print_json({**shown, "fecha": answer.fecha.isoformat(),
                    "total": None if answer.total is None else f"{answer.total:.2f}"})
        return 0 if answer.valido else 1
    asked = (f"{sunat_catalogues.VALIDITY_DOCUMENT_TYPES[answer.tipo]} {answer.serie}-{answer.numero} del RUC "
             f"{answer.ruc}, de fecha {answer.fecha.strftime('%d/%m/%Y')}")
    if answer.total is not None:
        asked += f", por {answer.total:.2f}"
    print(f"{asked} (consulta la empresa {answer.consultante}):")
    print(f"  Contribuyente: {answer.estado_ruc_nombre} ({answer.estado_ruc or '-'})")
    print(f"  Domicilio fiscal: {answer.cond_domicilio_nombre} ({answer.cond_domicilio or '-'})")
    for note in answer.observaciones:
        print(f"  Observación: {note}")
    verdict = "válido" if answer.valido else "no válido"
    print(f"{answer.serie}-{answer.numero}: {answer.estado} ({answer.detalle}) — {verdict}")
    return 0 if answer.valido else 1
