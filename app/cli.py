"""The `yupana` command: a thin layer over the engine's facade.

Its shape is part of the product (scripts and support staff rely on it):
    yupana                              start the windows
    yupana call OPERATION [FILE|-]      one contract operation, JSON in, JSON envelope out
    yupana call ruc|ce|placa NUMERO
    yupana company set|show             issuer profiles
    yupana config get|set|list          settings
    yupana company impresion RUC        print options: A4 or ticket, logo
    yupana cert|sandbox|serve|padron|demo|lote|pdf ...   one module each under app/commands/
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from app.core.api import Engine

from app import __version__
from app.commands import open_engine, print_json

# argparse's own words, in Spanish (it reads them through gettext's `_`).
_ARGPARSE_ES = {
    "usage: ": "uso: ",
    "positional arguments": "argumentos",
    "options": "opciones",
    "optional arguments": "opciones",
    "show this help message and exit": "muestra esta ayuda y termina",
    "show program's version number and exit": "muestra la versión y termina",
    "the following arguments are required: %s": "faltan argumentos obligatorios: %s",
    "unrecognized arguments: %s": "argumentos no reconocidos: %s",
    "invalid choice: %(value)r (choose from %(choices)s)": "opción no válida: %(value)r (elija entre %(choices)s)",
    "%(prog)s: error: %(message)s\n": "%(prog)s: error: %(message)s\n",
    "expected one argument": "se esperaba un argumento",
    "argument %(argument_name)s: %(message)s": "argumento %(argument_name)s: %(message)s",
    "invalid %(type)s value: %(value)r": "valor %(type)s no válido: %(value)r",
    "not allowed with argument %s": "no se permite junto con el argumento %s",
}
argparse._ = lambda text: _ARGPARSE_ES.get(text, text)  # type: ignore[attr-defined]  # gettext's _, read by argparse

# Commands that live in their own module under app/commands/ (each has `register(subparsers)`).
FEATURE_COMMANDS = {
    "cert": "certificados digitales: importar, crear de prueba, listar, borrar",
    "sandbox": "servidores de prueba locales (SUNAT, mensajería, consultas)",
    "serve": "API HTTP local en /api/v1 para un punto de venta en este equipo",
    "padron": "padrón reducido de RUC de SUNAT: importar y consultar sin internet",
    "demo": "demostración completa sin internet",
    "sol": "usuario y clave SOL de una empresa (envío a SUNAT)",
    "lote": "genera y firma varios comprobantes de un archivo (JSON Lines o arreglo JSON)",
    "pdf": "representación impresa (PDF) de un comprobante: A4 o ticket de 80 mm",
    "anular": "anula un comprobante ante SUNAT (comunicación de baja o resumen diario)",
    "resumen": "resumen diario de las boletas de un día, enviado a SUNAT",
    "cdr": "consulta a SUNAT el CDR de cualquier comprobante",
    "validar": "consulta a SUNAT la validez de cualquier comprobante (consulta integrada)",
    "guia": "emite una guía de remisión (remitente o transportista) desde una solicitud JSON",
    "db": "base de datos del puesto: crear, ver el estado y actualizar la compartida (PostgreSQL)",
    "respaldo": "copias de seguridad verificadas de la base de datos: crear, listar, verificar, restaurar",
    "numeracion": "dónde sigue la numeración de cada serie: consulta a SUNAT (series F) y confirma las demás",
    "exportar": "zip para el contador: XML y CDR de un periodo y el registro de ventas (.csv y .xlsx)",
}

LOOKUPS = ("ruc", "ce", "placa")


# ------------------------------------------------------------------ call

def _read_body(source: str | None) -> bytes:
    if source in (None, "-"):
        return sys.stdin.buffer.read()
    try:
        with open(source, "rb") as handle:
            return handle.read()
    except OSError as exc:
        from app.core.api import unreadable_file

        raise unreadable_file("FILE", source, exc) from None


def cmd_call(args: argparse.Namespace) -> int:
    from app.core.api import YupanaError

    with open_engine(args) as engine:
        if args.operation in LOOKUPS:
            status, envelope = engine.call(args.operation, numero=args.argument or "")
        else:
            try:
                body = _read_body(args.argument)
            except YupanaError as exc:
                status, envelope = exc.http_status, exc.to_envelope()
            else:
                status, envelope = engine.call(args.operation, body)
    print_json(envelope)
    return 0 if envelope.get("success") else 1


# ------------------------------------------------------------------ company

def cmd_company_set(args: argparse.Namespace) -> int:
    from app.core.api import Company

    with open_engine(args) as engine:
        company = engine.admin.set_company(Company(
            ruc=args.ruc, razon_social=args.razon_social, ubigeo=args.ubigeo, direccion=args.direccion,
            nombre_comercial=args.nombre_comercial, codigo_establecimiento=args.codigo_establecimiento))
        print_json(company.to_json())
    return 0


def cmd_company_print(args: argparse.Namespace) -> int:
    from pathlib import Path

    from app.core.api import invalid

    logo = None
    if args.logo:
        try:
            logo = Path(args.logo).read_bytes()
        except OSError as exc:
            raise invalid("logo", f"No se pudo leer el logo «{args.logo}»: {exc.strerror}.") from None
    with open_engine(args) as engine:
        options = engine.admin.set_print_options(args.ruc, args.formato, logo, clear_logo=args.sin_logo)
    print_json({"ruc": args.ruc, "formato_impresion": options.formato,
                "logo": f"{options.logo_px[0]}x{options.logo_px[1]} px" if options.logo_px else None})
    return 0


def cmd_company_show(args: argparse.Namespace) -> int:
    with open_engine(args) as engine:
        if args.ruc:
            company = engine.admin.company(args.ruc)
            if company is None:
                print(f"No hay una empresa con RUC {args.ruc}. Regístrela con `yupana company set`.", file=sys.stderr)
                return 1
            print_json(company.to_json())
        else:
            print_json([c.to_json() for c in engine.admin.companies()])
    return 0


# ------------------------------------------------------------------ config

def _environment_change(engine: Engine, key: str, value: str) -> str | None:
    """What a change of environment changes (said after it, on stderr), or None when it is no such change."""
    from app.core.api import NAMES

    target = value.strip()
    if key != "environment" or target not in NAMES or target == engine.admin.environment().name:
        return None
    return engine.admin.switch_summary(target)


def cmd_config(args: argparse.Namespace) -> int:
    from app.core.api import SETTINGS

    with open_engine(args) as engine:
        if args.config_action == "get":
            print(engine.admin.config_get(args.key))
        elif args.config_action == "set":
            summary = _environment_change(engine, args.key, args.value)
            print(engine.admin.config_set(args.key, args.value))
            if summary:
                print(summary, file=sys.stderr)
        else:
            values = {value.key: value.value for value in engine.admin.config_list()}
            if args.json:
                print_json(values)
            else:
                for key, value in values.items():
                    print(f"{key} = {value}\n    {SETTINGS[key].description}")
    return 0


# ------------------------------------------------------------------ GUI and self-test

NO_DISPLAY = ("No hay una pantalla donde abrir las ventanas (DISPLAY y WAYLAND_DISPLAY están vacías). Abra Yupana "
              "desde un escritorio, o use sus órdenes sin ventanas: `yupana --help`, `yupana serve`, "
              "`yupana --self-test`.")


def display_missing(environ: Mapping[str, str], platform: str) -> bool:
    """On Linux without X11 or Wayland, Qt would open its windows nowhere (or abort): say so instead. A platform
    chosen by hand (QT_QPA_PLATFORM, e.g. vnc or offscreen) is the user's choice and is kept."""
    if not platform.startswith("linux") or environ.get("QT_QPA_PLATFORM"):
        return False
    return not (environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))


def cmd_gui(args: argparse.Namespace) -> int:
    import os

    if display_missing(os.environ, sys.platform):
        print(NO_DISPLAY, file=sys.stderr)
        return 2
    from app.gui.app import run

    return run(getattr(args, "home", None))


def cmd_self_test(args: argparse.Namespace) -> int:
    from app.selftest import run_self_test

    return run_self_test(screenshot=args.screenshot)


# ------------------------------------------------------------------ parser

class CommandsOnDemand(argparse._SubParsersAction):
    """The feature commands, each listed by its summary and its module imported only once it is chosen: `--help`
    and `--version` then end before any command (and through it the engine) is imported. A placeholder parser
    stands for each until then; the module's `register` puts the real one in its place."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.unloaded: dict[str, str] = {}  # command -> its summary

    def add_on_demand(self, name: str, summary: str) -> None:
        self.add_parser(name, help=summary)
        self.unloaded[name] = summary

    def load(self, name: str) -> None:
        summary = self.unloaded.pop(name, None)
        if summary is None:
            return
        del self._name_parser_map[name]
        self._choices_actions = [action for action in self._choices_actions if action.dest != name]
        importlib.import_module(f"app.commands.{name}").register(self, summary)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        self.load(values[0])
        super().__call__(parser, namespace, values, option_string)


def build_parser(lazy: bool = False) -> argparse.ArgumentParser:
    """The whole `yupana` parser; `lazy`: each feature command's module imported only when that command is parsed
    (what `main` uses; the complete tree is for what inspects the parser, such as the documentation's test)."""
    parser = argparse.ArgumentParser(
        prog="yupana",
        description="Yupana: comprobantes electrónicos SUNAT, mensajería y consultas. Sin argumentos abre la aplicación.")
    parser.add_argument("--version", action="version", version=f"Yupana {__version__}",
                        help="muestra la versión y termina")
    parser.add_argument("--home", metavar="CARPETA",
                        help="carpeta de datos (por defecto la del usuario, o la variable YUPANA_HOME)")
    parser.add_argument("--self-test", action="store_true",
                        help="prueba de arranque: abre la aplicación sin pantalla, verifica la base de datos y termina")
    parser.add_argument("--screenshot", metavar="PNG", help="con --self-test: guarda una captura de la ventana")
    sub = cast(CommandsOnDemand, parser.add_subparsers(dest="command", metavar="COMANDO", title="comandos",
                                                       action=CommandsOnDemand))

    call = sub.add_parser("call", help="ejecuta una operación del contrato con una solicitud JSON",
                          description="Ejecuta una operación con una solicitud JSON (archivo o entrada estándar) "
                                      "e imprime la respuesta JSON. Termina con 0 si tuvo éxito y 1 si no.")
    call.add_argument("operation", metavar="OPERACION",
                      choices=["xml", "firmar", "enviar", "guia-enviar", "validar", "chat-send", "chat-webhook",
                               *LOOKUPS],
                      help="xml, firmar, enviar, guia-enviar, validar, chat-send, chat-webhook, ruc, ce o placa")
    call.add_argument("argument", nargs="?", metavar="ARCHIVO|-|NUMERO",
                      help="archivo JSON o - para la entrada estándar; para ruc, ce y placa, el número")
    call.set_defaults(func=cmd_call)

    company = sub.add_parser("company", help="empresas emisoras (perfil del emisor)")
    company_sub = company.add_subparsers(dest="company_action", metavar="ACCION", required=True)
    company_set = company_sub.add_parser("set", help="registra o actualiza una empresa emisora")
    company_set.add_argument("--ruc", required=True, help="RUC de la empresa (11 dígitos)")
    company_set.add_argument("--razon-social", required=True, help="razón social")
    company_set.add_argument("--ubigeo", required=True, help="ubigeo del domicilio fiscal (6 dígitos)")
    company_set.add_argument("--direccion", required=True, help="dirección del domicilio fiscal")
    company_set.add_argument("--nombre-comercial", help="nombre comercial (opcional)")
    company_set.add_argument("--codigo-establecimiento", default="0000",
                             help="código de establecimiento anexo (0000: domicilio fiscal)")
    company_set.set_defaults(func=cmd_company_set)
    company_show = company_sub.add_parser("show", help="muestra una empresa, o todas")
    company_show.add_argument("ruc", nargs="?", help="RUC de la empresa")
    company_show.set_defaults(func=cmd_company_show)
    company_print = company_sub.add_parser(
        "impresion", help="formato de impresión (A4 o ticket) y logo de la representación impresa",
        description="Cambia lo indicado y muestra cómo se imprimen los comprobantes de la empresa.")
    company_print.add_argument("ruc", metavar="RUC")
    company_print.add_argument("--formato", choices=["a4", "ticket"], help="formato por defecto del PDF")
    logo = company_print.add_mutually_exclusive_group()
    logo.add_argument("--logo", metavar="ARCHIVO", help="logo PNG o JPEG (hasta 1 MiB)")
    logo.add_argument("--sin-logo", action="store_true", help="quita el logo")
    company_print.set_defaults(func=cmd_company_print)

    config = sub.add_parser("config", help="configuración (ver docs/configuration.md)")
    config_sub = config.add_subparsers(dest="config_action", metavar="ACCION", required=True)
    config_get = config_sub.add_parser("get", help="muestra un valor")
    config_get.add_argument("key", metavar="CLAVE")
    config_set = config_sub.add_parser("set", help="cambia un valor")
    config_set.add_argument("key", metavar="CLAVE")
    config_set.add_argument("value", metavar="VALOR")
    config_list = config_sub.add_parser("list", help="muestra toda la configuración")
    config_list.add_argument("--json", action="store_true", help="en formato JSON")
    config.set_defaults(func=cmd_config)

    for name, summary in FEATURE_COMMANDS.items():
        sub.add_on_demand(name, summary)
        if not lazy:
            sub.load(name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if getattr(sys, "frozen", False):  # a frozen app started as a signing worker does its work here (issue 33)
        __import__("multiprocessing").freeze_support()
    args = build_parser(lazy=True).parse_args(argv)  # --help and --version end here, before the engine is imported
    from app.core.api import YupanaError

    if args.home:
        import os

        os.environ["YUPANA_HOME"] = args.home
    try:
        if args.self_test:
            return cmd_self_test(args)
        if args.command is None:
            return cmd_gui(args)
        return args.func(args)
    except YupanaError as exc:
        print(f"Error: {exc.message}", file=sys.stderr)
        for detail in exc.details[1:]:
            print(f"  - {detail.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _reader_went_away()


def _reader_went_away() -> int:
    """`yupana … | head`: the reader stopped reading. End quietly, as other command-line tools do."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush must not fail again
    os.close(devnull)
    return 141  # 128 + SIGPIPE, what a shell reports for a tool ended by a closed pipe


if __name__ == "__main__":
    sys.exit(main())
