"""`yupana db init|estado|actualizar|usar|migrar`: the database of this desk, and the one several desks of a business share
(PostgreSQL, issue 34; docs/configuration.md, `database_url`)."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser("db", help=summary,
                            description="La base de datos de este puesto: SQLite en la carpeta de datos (sin "
                                        "«database_url»), o una base PostgreSQL que comparten varios puestos.")
    db_sub = parser.add_subparsers(dest="db_action", metavar="ACCION", required=True)
    db_sub.add_parser("init", help="crea las tablas de Yupana en la base compartida (vacía)").set_defaults(func=cmd_init)
    state = db_sub.add_parser("estado", help="motor, versión del servidor, esquema y puestos vistos hace poco")
    state.set_defaults(func=cmd_state)
    db_sub.add_parser("actualizar", help="actualiza el esquema de la base compartida a esta versión de Yupana "
                                         "(cuando todos los puestos la tengan)").set_defaults(func=cmd_upgrade)
    use = db_sub.add_parser("usar", help="elige la base de este puesto sin abrirla (sin dirección: SQLite local)")
    use.add_argument("url", metavar="DIRECCION", nargs="?", default="",
                     help="p. ej. postgresql://yupana@caja1/tienda (la contraseña va en el archivo pgpass)")
    use.set_defaults(func=cmd_use)
    move = db_sub.add_parser("migrar", help="copia los datos de esta carpeta (SQLite) a una base compartida vacía y "
                                            "la deja como la base de este puesto")
    move.add_argument("url", metavar="DIRECCION",
                      help="p. ej. postgresql://yupana@caja1/tienda (la contraseña va en el archivo pgpass)")
    move.set_defaults(func=cmd_migrate)


def _home(args: argparse.Namespace):  # noqa: ANN202 - a Path
    from app.core.api import data_home

    return data_home(getattr(args, "home", None))


def cmd_init(args: argparse.Namespace) -> int:
    from app.core.api import shared_database

    created = shared_database.initialise(_home(args))
    print("Tablas de Yupana creadas en la base de datos compartida." if created
          else "La base de datos compartida ya tenía las tablas de Yupana: no se cambió nada.")
    return 0


def cmd_state(args: argparse.Namespace) -> int:
    from app.core.api import shared_database

    state = shared_database.state(_home(args))
    print(f"Motor: {state.engine}" + (f" {state.server_version}" if state.server_version else ""))
    print(f"Base de datos: {state.where}")
    if state.driver:
        print(f"Controlador: {state.driver}")
    if state.schema_version is None:
        print("Esquema: sin tablas de Yupana (ejecute «yupana db init»)")
    else:
        print(f"Esquema: {state.schema_version} (esta versión de Yupana usa el {state.known_version})"
              + ("" if state.current else ": «yupana db actualizar»" if state.schema_version < state.known_version
                 else ": actualice Yupana en este puesto"))
    if state.engine == "PostgreSQL":
        print(f"Puestos vistos en los últimos 15 minutos: {len(state.desks)}")
        for desk in state.desks:
            print(f"  {desk.host}  (Yupana {desk.app_version}, hace {int(desk.seconds_ago)} s)")
    return 0


def cmd_upgrade(args: argparse.Namespace) -> int:
    from app.core.api import shared_database

    ran = shared_database.upgrade(_home(args))
    print(f"Esquema actualizado: {', '.join(str(version) for version in ran)}." if ran
          else "El esquema ya estaba al día: no se cambió nada.")
    return 0


def cmd_use(args: argparse.Namespace) -> int:
    from app.core.api import shared_database

    url = shared_database.use(_home(args), args.url)
    print(f"Este puesto usará la base de datos compartida {url} al abrir." if url
          else "Este puesto usará SQLite en su carpeta de datos al abrir.")
    return 0


def _business_passphrase() -> str | None:
    """Asked (hidden, twice) only for a folder whose keys this computer's keyring protects, and only when a person is at
    the terminal: under it they are copied to the shared database. None: they are left out, to enter again."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return None
    from app.core.api import MIN_PASSPHRASE_CHARS

    from . import choose_passphrase

    print("Las claves de esta carpeta están protegidas por el llavero de este equipo. En la base compartida se "
          "protegen con la frase secreta del negocio, que cada puesto escribe una vez (si la olvida, tendrá que "
          "volver a importar los certificados: docs/security.md).", file=sys.stderr)
    try:
        return choose_passphrase(f"Elija la frase secreta del negocio (al menos {MIN_PASSPHRASE_CHARS} caracteres; "
                                 "no se muestra): ")
    except EOFError:
        return None


def cmd_migrate(args: argparse.Namespace) -> int:
    from app.core.api import shared_database

    print("Copiando los datos de este puesto a la base de datos compartida…", flush=True)
    done = shared_database.migrate(_home(args), args.url, _business_passphrase)
    print(f"Copiado a {done.where}:")
    width = max(len(count.label) for count in done.counts)
    for count in done.counts:
        print(f"  {count.label:<{width}}  {count.rows:>8}")
    print(f"  {'otros datos (ajustes, secretos, consultas…)':<{width}}  {done.other_rows:>8}")
    if done.numbering:
        print("Numeración (el próximo comprobante de cada serie sigue al último):")
        for serie in done.numbering:
            print(f"  {serie.serie} (tipo {serie.tipo}, RUC {serie.emisor_ruc}, {serie.environment}): último "
                  f"{serie.last}, sigue el {serie.last + 1}")
    if done.desk_settings:
        print(f"Ajustes de este puesto, que quedan solo en él: {', '.join(done.desk_settings)}.")
    if done.rewrapped:
        print("Las claves de esta carpeta (certificados, clave SOL, tokens) estaban protegidas por el llavero de este "
              "equipo: se copiaron protegidas ahora por la frase secreta del negocio, que los demás puestos piden una "
              "vez.")
    if done.to_enter_again:
        print("Atención: las claves de esta carpeta estaban protegidas por el llavero de este equipo, que los demás "
              "puestos no alcanzan, y no se copiaron. En la base compartida se protegen con la frase secreta del "
              "negocio (Yupana la pide al guardar la primera). Falta:")
        for line in done.to_enter_again:
            print(f"  - {line}")
    print(f"La base de la carpeta de datos ({done.source}) quedó como estaba: sirve de respaldo.")
    print(f"Este puesto usa desde ahora la base de datos compartida {done.where}.")
    return 0
