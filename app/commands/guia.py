"""`yupana guia SOLICITUD.json`: issue a guía de remisión (remitente 09 or transportista 31) from a JSON request:
generate, sign with the issuer's default certificate and send to SUNAT's GRE platform (docs/guias.md)."""

from __future__ import annotations

import argparse
import json
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

from app.commands import open_engine


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser(
        "guia", help=summary,
        description="Emite una guía de remisión electrónica (remitente 09 o transportista 31) desde una solicitud "
                    "JSON: la genera, la firma con el certificado predeterminado del emisor y la envía a la "
                    "plataforma de guías de SUNAT (en sandbox y beta, al sandbox). La última línea dice el número "
                    "de la guía y su estado.")
    parser.add_argument("solicitud", metavar="SOLICITUD.json", help="la solicitud (docs/guias.md); «-» la lee de la "
                                                                    "entrada estándar")
    parser.add_argument("--certificado-id", help="el certificado con que firmar (por defecto, el del emisor)")
    parser.set_defaults(func=cmd_guia)


def _read(path: str) -> dict[str, Any]:
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    found = json.loads(text, parse_float=Decimal)
    if not isinstance(found, dict):
        raise ValueError("debe ser un objeto JSON")
    return found


def cmd_guia(args: argparse.Namespace) -> int:
    from app.core.api import YupanaError, statuses

    try:
        request = _read(args.solicitud)
    except (OSError, ValueError) as exc:
        print(f"No se pudo leer la solicitud «{args.solicitud}»: {exc}", file=sys.stderr)
        return 2
    with open_engine(args) as engine:
        try:
            emission = engine.invoicing.issue(request, args.certificado_id)
        except YupanaError as exc:
            for detail in exc.details or []:
                code = f" [{detail.sunat_code}]" if detail.sunat_code else ""
                print(f"  {detail.field or '-'}: {detail.message}{code}", file=sys.stderr)
            print(exc.message, file=sys.stderr)
            return 1
        voucher = engine.invoicing.voucher(emission.voucher_id)
    assert voucher is not None  # just issued
    outcome = emission.outcome
    print(f"Archivo: {emission.nombre_archivo}")
    if outcome is not None and outcome.codigo_respuesta:
        print(f"SUNAT ({outcome.codigo_respuesta}): {outcome.descripcion}")
    if outcome is not None and outcome.motivo_pendiente:
        print(f"Pendiente: {outcome.motivo_pendiente}")
    estado = outcome.estado if outcome is not None else voucher.status
    print(f"{voucher.serie}-{voucher.numero} {estado}")
    return 0 if estado in (statuses.ACEPTADO, statuses.OBSERVADO, statuses.PENDIENTE) else 1
