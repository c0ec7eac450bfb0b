"""`yupana cdr RUC TIPO SERIE NUMERO`: ask SUNAT (getStatusCdr) for the CDR of any voucher, ours or not."""

from __future__ import annotations

import argparse
import base64


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser(
        "cdr", help=summary,
        description="Consulta a SUNAT (getStatusCdr, con el usuario y clave SOL de la empresa) la constancia de "
                    "recepción (CDR) de cualquier comprobante, también de los emitidos en otro sistema. Si el "
                    "comprobante es de Yupana, el CDR se guarda.")
    parser.add_argument("ruc", metavar="RUC", help="RUC del emisor")
    parser.add_argument("tipo", metavar="TIPO", choices=["01", "03", "07", "08"], help="01, 03, 07 u 08")
    parser.add_argument("serie", metavar="SERIE", help="p. ej. F001")
    parser.add_argument("numero", metavar="NUMERO", type=int, help="p. ej. 7")
    parser.add_argument("--salida", metavar="ARCHIVO", help="archivo donde escribir el zip del CDR")
    parser.add_argument("--json", action="store_true", help="la respuesta en JSON (el CDR en base64)")
    parser.set_defaults(func=cmd_cdr)


def cmd_cdr(args: argparse.Namespace) -> int:
    import dataclasses
    from pathlib import Path

    from app.commands import open_engine, print_json
    from app.core.api import check_ruc

    check_ruc(args.ruc)
    serie = args.serie.strip().upper()
    with open_engine(args) as engine:
        answer = engine.invoicing.query_cdr(args.ruc, args.tipo, serie, args.numero)
    if args.salida and answer.cdr_zip:
        Path(args.salida).write_bytes(answer.cdr_zip)
    if args.json:
        shown = {key: value for key, value in dataclasses.asdict(answer).items() if key != "cdr_zip"}
        cdr_zip = answer.cdr_zip
        print_json({**shown, "cdr": base64.b64encode(cdr_zip).decode("ascii") if cdr_zip else None})
        return 0 if answer.codigo is not None else 1
    print(f"SUNAT ({answer.status_code}): {answer.status_message}")
    if answer.codigo is None:
        print(f"{serie}-{args.numero} sin CDR")
        return 1
    for nota in answer.notas:
        print(f"  {nota}")
    if answer.guardado:
        print("CDR guardado en Yupana.")
    print(f"{serie}-{args.numero} {answer.estado or 'excepción'} (código {answer.codigo}): {answer.descripcion}")
    return 0
