"""`yupana cert …`: digital certificates — create a test one, import, list, show, choose the default, delete."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import TYPE_CHECKING

from app.commands import open_engine, print_json

if TYPE_CHECKING:
    from app.core.api import CertificateInfo


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser("cert", help=summary, description="Certificados digitales con los que se firman los "
                                                              "comprobantes. La clave privada se guarda cifrada.")
    cert_sub = parser.add_subparsers(dest="cert_command", metavar="ACCIÓN", required=True)

    new_test = cert_sub.add_parser("new-test", help="crea un certificado autofirmado de prueba (SUNAT beta, sandbox)")
    new_test.add_argument("--ruc", required=True, help="RUC del emisor")
    new_test.set_defaults(func=cmd_new_test)

    imp = cert_sub.add_parser("import", help="importa un certificado PFX/P12 o PEM; imprime su certificado_id")
    imp.add_argument("file", metavar="ARCHIVO", help="archivo .pfx, .p12 o .pem")
    imp.add_argument("--key", metavar="ARCHIVO_CLAVE", help="clave privada PEM, si está en otro archivo")
    imp.add_argument("--password-stdin", action="store_true", help="lee la contraseña de la entrada estándar")
    imp.set_defaults(func=cmd_import)

    listing = cert_sub.add_parser("list", help="lista los certificados guardados")
    listing.add_argument("--ruc", help="solo los de este RUC")
    listing.add_argument("--json", action="store_true", help="en formato JSON")
    listing.set_defaults(func=cmd_list)

    show = cert_sub.add_parser("show", help="muestra un certificado")
    show.add_argument("id", metavar="CERTIFICADO_ID")
    show.set_defaults(func=cmd_show)

    default = cert_sub.add_parser("default", help="elige el certificado con el que firma una empresa")
    default.add_argument("ruc", metavar="RUC")
    default.add_argument("id", metavar="CERTIFICADO_ID")
    default.set_defaults(func=cmd_default)

    delete = cert_sub.add_parser("delete", help="borra un certificado y su clave privada")
    delete.add_argument("id", metavar="CERTIFICADO_ID")
    delete.set_defaults(func=cmd_delete)

    verify = cert_sub.add_parser("verify", help="verifica la firma de un XML firmado")
    verify.add_argument("file", metavar="ARCHIVO")
    verify.set_defaults(func=cmd_verify)


def _read(path: str, field: str) -> bytes:
    from app.core.api import unreadable_file

    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise unreadable_file(field, path, exc) from None


def _password(args: argparse.Namespace, data: bytes) -> str | None:
    if args.password_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    if b"-----BEGIN" in data[:4096] and b"ENCRYPTED" not in data and not args.key:
        return None  # a PEM with a plain key needs no password
    if sys.stdin.isatty():
        return getpass.getpass("Contraseña del certificado: ")
    return None


def _describe(info: CertificateInfo) -> str:
    badges = [label for flag, label in [(info.predeterminado, "predeterminado"), (info.es_prueba, "prueba"),
                                        (info.por_vencer(), "POR VENCER"), (info.vencido(), "VENCIDO")] if flag]
    return (f"{info.certificado_id}  RUC {info.ruc}  vence {info.valido_hasta.date().isoformat()}"
            f"{'  [' + ', '.join(badges) + ']' if badges else ''}\n    {info.sujeto}")


def _warn_if_expiring(info: CertificateInfo) -> None:
    if info.por_vencer():
        print(f"Aviso: el certificado vence en {info.dias_restantes()} días ({info.valido_hasta.date()}).",
              file=sys.stderr)


def cmd_new_test(args: argparse.Namespace) -> int:
    with open_engine(args) as engine:
        info = engine.invoicing.create_test_certificate(args.ruc)
    print(f"Certificado de prueba creado para el RUC {info.ruc} (solo para SUNAT beta y el sandbox).")
    print(info.certificado_id)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    data = _read(args.file, "ARCHIVO")
    key_data = _read(args.key, "ARCHIVO_CLAVE") if args.key else None
    password = _password(args, key_data or data)
    with open_engine(args) as engine:
        info = engine.invoicing.import_certificate(data, password, key_data=key_data)
    _warn_if_expiring(info)
    print(info.certificado_id)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with open_engine(args) as engine:
        found = engine.invoicing.certificates(args.ruc)
    if args.json:
        print_json([info.to_json() for info in found])
    elif not found:
        print("No hay certificados. Cree uno de prueba con `yupana cert new-test --ruc RUC` o importe el suyo con "
              "`yupana cert import ARCHIVO`.")
    else:
        for info in found:
            print(_describe(info))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with open_engine(args) as engine:
        print_json(engine.invoicing.certificate(args.id).to_json())
    return 0


def cmd_default(args: argparse.Namespace) -> int:
    with open_engine(args) as engine:
        info = engine.invoicing.set_default_certificate(args.ruc, args.id)
    print(f"El RUC {info.ruc} firmará con {info.certificado_id}.")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    with open_engine(args) as engine:
        engine.invoicing.delete_certificate(args.id)
    print(f"Certificado {args.id} borrado, con su clave privada.")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from app.core.api import verify_xml

    result = verify_xml(_read(args.file, "ARCHIVO"))
    subject = result.certificate.subject.rfc4514_string() if result.certificate else "-"
    print(f"{'Firma válida' if result.valid else 'Firma NO válida'}: {result.reason}.")
    print(f"Código hash (DigestValue): {result.digest_value or '-'}")
    print(f"Certificado: {subject}")
    return 0 if result.valid else 1
