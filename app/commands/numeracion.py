"""`yupana numeracion verificar`: where each serie's numbering goes on, asked of SUNAT for F series (issue 35)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser("numeracion", help=summary,
                            description="Comprueba dónde sigue la numeración de cada serie, como al restaurar una copia.")
    actions = parser.add_subparsers(dest="numeracion_action", metavar="ACCION", required=True)
    check = actions.add_parser(
        "verificar", help="consulta a SUNAT los números posteriores de las series F y confirma los demás",
        description="Para cada serie F (facturas y sus notas) consulta a SUNAT los números posteriores al último "
                    "conocido (hasta 50 seguidos que SUNAT no tiene) y recupera sus CDR; para las demás (boletas) "
                    "pide el último número impreso. La numeración sigue después del mayor.")
    from app.commands.respaldo import add_numbering_arguments

    add_numbering_arguments(check)
    check.add_argument("--tras-restaurar", action="store_true",
                       help="como tras restaurar una copia: lee de vuelta los comprobantes escritos al emitir y los RA "
                            "y RC de hoy siguen 10 números después (lo hace `respaldo restaurar`; para una copia "
                            "restaurada desde las ventanas)")
    check.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    from app.commands import open_engine
    from app.commands.respaldo import confirm_from, print_numbering

    with open_engine(args) as engine:
        folder = args.archivos or engine.admin.config_get("backup_folder") or None
        print_numbering(engine.invoicing.check_numbering(folder, confirm_from(args.ultimo),
                                                         after_restore=args.tras_restaurar))
    return 0
