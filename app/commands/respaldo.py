"""`yupana respaldo crear|listar|verificar|restaurar|frase`: verified backups of this desk's database (issue 35, docs/backups.md)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from app.core.api import Engine, NumberingCheck, SerieFinding


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser("respaldo", help=summary,
                            description="Copias de seguridad de la base de datos de este puesto (SQLite, o la compartida "
                                        "PostgreSQL), hechas con "
                                        "Yupana en marcha y verificadas al escribirlas.")
    actions = parser.add_subparsers(dest="respaldo_action", metavar="ACCION", required=True)
    create = actions.add_parser("crear", help="hace una copia verificada en una carpeta fuera de la carpeta de datos",
                                description="Hace una copia consistente de la base de datos (sin detener la emisión), "
                                            "comprimida y con su manifiesto, y la verifica. La última línea es la "
                                            "ruta de la copia.")
    create.add_argument("carpeta", metavar="CARPETA", help="carpeta destino (una memoria USB, una carpeta sincronizada)")
    create.epilog = ("Si las claves de esta carpeta las guarda el llavero del sistema, la primera copia pide una frase de "
                     "recuperación (o la toma de YUPANA_RECOVERY_PASSPHRASE): con ella se abren los certificados y "
                     "la clave SOL al restaurar en otro equipo.")
    create.set_defaults(func=cmd_create)
    listing = actions.add_parser("listar", help="las copias de una carpeta, la más reciente primero")
    listing.add_argument("carpeta", metavar="CARPETA")
    listing.set_defaults(func=cmd_list)
    check = actions.add_parser("verificar", help="comprueba una copia: zip, manifiesto, integridad, cuentas y firmas",
                               description="Comprueba una copia sin abrir Yupana: termina con 0 si está bien y con 1 "
                                           "si no, diciendo qué está mal.")
    check.add_argument("archivo", metavar="ARCHIVO", help="yupana-respaldo-AAAAMMDD-HHMMSS.zip")
    check.set_defaults(func=cmd_verify)
    back = actions.add_parser("restaurar", help="pone una copia en una carpeta de datos vacía (otro equipo, un disco "
                                                "nuevo)",
                              description="Verifica la copia y pone su base de datos en la carpeta de datos (la de "
                                          "--home o YUPANA_HOME), que no debe tener una. Dice el último número de "
                                          "cada serie que trae la copia.")
    back.add_argument("archivo", metavar="ARCHIVO", help="yupana-respaldo-AAAAMMDD-HHMMSS.zip")
    add_numbering_arguments(back)
    back.set_defaults(func=cmd_restore)
    phrase = actions.add_parser("frase", help="elige o cambia la frase de recuperación de las copias",
                                description="Con las claves en el llavero del sistema, elige la frase de recuperación "
                                            "o la cambia por otra: las copias que se hagan desde ahora se abren con "
                                            "la nueva; las hechas antes, con la anterior. La frase nueva se escribe "
                                            "dos veces en una terminal o se toma de YUPANA_RECOVERY_PASSPHRASE.")
    phrase.set_defaults(func=cmd_passphrase)


def add_numbering_arguments(parser: argparse.ArgumentParser) -> None:
    """The check of the numbering after a restore (and `yupana numeracion verificar`)."""
    parser.add_argument("--ultimo", action="append", default=[], metavar="SERIE=NUMERO",
                        help="el último número impreso de una serie que SUNAT no puede confirmar (boletas; beta; sin "
                             "conexión), p. ej. B001=1234; repetible. Sin él, en una terminal se pregunta")
    parser.add_argument("--archivos", metavar="CARPETA",
                        help="carpeta de las copias con los comprobantes escritos al emitir (por omisión, la del "
                             "archivo restaurado o la configurada)")


def cmd_create(args: argparse.Namespace) -> int:
    from app.commands import open_engine

    with open_engine(args) as engine:
        recovery = _new_recovery_passphrase() if engine.admin.needs_recovery_passphrase() else None
        check = engine.admin.create_backup(args.carpeta, recovery)
    assert check.info is not None  # a backup that verified has its manifest read
    print(f"Copia verificada: {check.info.vouchers:,} comprobantes, {check.info.size / (1024 * 1024):,.1f} MiB, "
          f"{check.signatures_checked} firmas comprobadas.", file=sys.stderr)
    if check.rotated:
        print(f"Copias antiguas retiradas (se guardan 7 diarias, 4 semanales y 12 mensuales): "
              f"{', '.join(check.rotated)}", file=sys.stderr)
    print(check.path)
    return 0


FIRST_RECOVERY = ("Las claves de esta carpeta (certificados, clave SOL) las guarda el llavero de este equipo: la "
                  "primera copia necesita una frase de recuperación para abrirlas en otro equipo.")
FIRST_RECOVERY_HELP = (
    "Las claves de Yupana (certificados, clave SOL, tokens) las guarda el llavero de este equipo, que no viaja con la "
    "copia. Elija una frase de recuperación: la copia lleva la clave maestra cifrada con ella, y al restaurar en otro "
    "equipo se la pedirá. No se guarda en ninguna parte: anótela en un lugar seguro.")
NEW_RECOVERY_HELP = (
    "Elija la nueva frase de recuperación: las copias que se hagan desde ahora llevarán la clave maestra cifrada con "
    "ella. Las copias hechas antes siguen abriéndose solo con la frase anterior. No se guarda en ninguna parte: "
    "anótela en un lugar seguro.")


def _new_recovery_passphrase(why: str = FIRST_RECOVERY, explanation: str = FIRST_RECOVERY_HELP) -> str:
    """A recovery passphrase to choose (a keyring folder's first backup, or a new one): from
    YUPANA_RECOVERY_PASSPHRASE, else typed twice at the terminal after `explanation`; without either the command
    stops saying `why` and how to give it."""
    import os

    from app.core.api import MIN_PASSPHRASE_CHARS, RECOVERY_ENV, invalid

    given = os.environ.get(RECOVERY_ENV)
    if given:
        return given
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise invalid("frase_recuperacion", f"{why} Escríbala con Yupana en una terminal o dela en la variable de "
                                            f"entorno {RECOVERY_ENV}.")
    print(explanation, file=sys.stderr)
    from . import choose_passphrase

    return choose_passphrase(f"Frase de recuperación (al menos {MIN_PASSPHRASE_CHARS} caracteres): ")


def cmd_passphrase(args: argparse.Namespace) -> int:
    from app.commands import open_engine

    with open_engine(args) as engine:
        changing = engine.admin.has_recovery_passphrase()
        if not changing and not engine.admin.needs_recovery_passphrase():
            print("Esta carpeta no necesita una frase de recuperación: sus claves no las guarda el llavero del "
                  "sistema (se abren con la frase secreta de Yupana, o todavía no tiene ninguna).", file=sys.stderr)
            return 1
        if changing:
            passphrase = _new_recovery_passphrase("Para cambiar la frase de recuperación hay que escribir la nueva.",
                                                  NEW_RECOVERY_HELP)
        else:
            passphrase = _new_recovery_passphrase()
        engine.admin.change_recovery_passphrase(passphrase)
    if changing:
        print("Frase de recuperación cambiada: las copias que se hagan desde ahora se abren con la nueva. Las copias "
              "hechas antes siguen abriéndose solo con la frase anterior: guárdela mientras las conserve, o haga una "
              "copia ahora (yupana respaldo crear CARPETA).")
    else:
        print("Frase de recuperación guardada: las copias llevan la clave maestra cifrada con ella. Anótela en un "
              "lugar seguro: Yupana no la guarda.")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from app.core.api import backups

    found = backups.backups(args.carpeta)
    if not found:
        print(f"No hay copias de Yupana en «{args.carpeta}».", file=sys.stderr)
    for info in found:
        print(f"{info.created_at}  Yupana {info.app_version}  {info.vouchers:>9,} comprobantes  "
              f"{info.size / (1024 * 1024):>8,.1f} MiB  {info.path}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from app.core.api import backups

    check = backups.verify(args.archivo)
    if not check.ok:
        print(f"La copia «{args.archivo}» NO está bien:", file=sys.stderr)
        for problem in check.problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    assert check.info is not None
    print(f"Copia correcta: {check.info.created_at}, Yupana {check.info.app_version}, {check.info.vouchers:,} "
          f"comprobantes, {check.signatures_checked} firmas comprobadas.")
    return 0


def _open_restored_keys(engine: Engine) -> None:
    """A backup from a PC whose keyring kept the keys: here they open with the recovery passphrase (from
    YUPANA_RECOVERY_PASSPHRASE, or typed), then live in this PC's keyring when it has one."""
    import getpass

    from app.core.api import LOCKED, UNLOCKED

    def typed(error: str) -> str | None:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            return None
        if error:
            print(error, file=sys.stderr)
        return getpass.getpass("Frase de recuperación de la copia (la que eligió al hacer la primera copia; "
                               "no se muestra): ")

    engine.admin.open_locked_secrets(typed)
    state = engine.admin.secret_state()
    if state == UNLOCKED:
        print("Claves abiertas: los certificados y la clave SOL de la copia están disponibles.", file=sys.stderr)
    elif state == LOCKED:
        print("Las claves de la copia (certificados, clave SOL) se abren con su frase de recuperación o frase "
              "secreta: Yupana la pedirá al firmar o enviar.", file=sys.stderr)


def cmd_restore(args: argparse.Namespace) -> int:
    from pathlib import Path

    from app.commands import open_engine
    from app.core.api import backups, data_home

    restored = backups.restore(args.archivo, data_home(getattr(args, "home", None)))
    with open_engine(args) as engine:  # opens it as Yupana will: the schema checked and brought up to date
        home = engine.admin.home()
        _open_restored_keys(engine)
        numbering = engine.invoicing.check_numbering(args.archivos or Path(args.archivo).resolve().parent,
                                                     confirm_from(args.ultimo), after_restore=True)
    print(f"Copia del {restored.backup.created_at} restaurada en «{home}»: {restored.backup.vouchers:,} "
          "comprobantes.")
    print(restored.environment_note())
    if restored.series:
        print("Último número de cada serie en la copia:")
        for serie in restored.series:
            print(f"  {serie['serie']}-{serie['ultimo']}  (tipo {serie['tipo']}, RUC {serie['ruc']}, {serie['entorno']})")
    print_numbering(numbering)
    return 0


def confirm_from(given: list[str]) -> Callable[[SerieFinding], int | None]:
    """The last number printed of a serie SUNAT cannot confirm: from --ultimo SERIE=N, else asked at a terminal."""
    from app.core.api import invalid

    typed: dict[str, int] = {}
    for item in given:
        serie, _, number = item.partition("=")
        if not number.strip().isdigit():
            raise invalid("ultimo", f"«{item}» no es SERIE=NUMERO (p. ej. B001=1234).")
        typed[serie.strip().upper()] = int(number)

    def confirm(finding: SerieFinding) -> int | None:
        if finding.serie in typed:
            return typed[finding.serie]
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            return None
        proposed = finding.sigue_en - 1
        while True:
            print(f"{finding.serie} (tipo {finding.tipo}, RUC {finding.emisor_ruc}): {finding.motivo}. El último número "
                  f"conocido es {proposed}.", file=sys.stderr)
            answer = input(f"Último número impreso de {finding.serie} [Enter: {proposed}]: ").strip()
            if not answer:
                return proposed
            if answer.isdigit():
                return int(answer)
            print("Escriba solo el número.", file=sys.stderr)

    return confirm


def print_numbering(numbering: NumberingCheck) -> None:
    """What the check found, serie by serie, and where each goes on."""
    for line in numbering.lines(lambda finding: f"use --ultimo {finding.serie}=N"):
        print(line)
