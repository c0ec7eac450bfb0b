"""`yupana demo`: the whole product on a fresh data folder, offline, step by step in plain Spanish.

Starts the sandboxes in-process, sets up a demo company and a test certificate, issues a factura
(generate → sign → send → CDR "0"), sends its summary by WhatsApp through the gateway sandbox and
receives the customer's reply through the webhook listener, loads a small RUC register and looks a
RUC up in it. Exits 0
only if every step worked.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.core.api import Engine

DEMO_RUC = "20100066603"
DEMO_PASSPHRASE = "yupana-demo"  # only for the throw-away demo folder, never for real data


class DemoFailed(Exception):
    pass


def _say(text: str) -> None:
    print(text, flush=True)


def step(number: int, title: str, action: Callable[[], str]) -> None:
    started = time.perf_counter()
    _say(f"{number}. {title}…")
    try:
        detail = action()
    except Exception as exc:  # every failure is reported in Spanish and ends the demo
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        _say(f"   ✗ falló: {message}")
        raise DemoFailed(title) from exc
    _say(f"   ✓ {detail} ({time.perf_counter() - started:.2f} s)")


def demo_request(numero: int) -> dict[str, Any]:
    return {
        "tipo": "01", "serie": "F001", "numero": numero,
        "emisor": {"ruc": DEMO_RUC},
        "receptor": {"ruc": "20601030013", "razon_social": "CLIENTE DEMOSTRACIÓN S.A.C."},
        "items": [
            {"descripcion": "Cuaderno A4 cuadriculado", "cantidad": 10, "precio_unitario": "8.50", "igv": "15.30"},
            {"descripcion": "Lapicero azul", "cantidad": 24, "precio_unitario": "1.20"},
        ],
    }


def write_demo_register(path: Path, records: list[dict[str, Any]]) -> None:
    """A tiny padrón reducido in SUNAT's layout, from the registry sandbox's generated taxpayers."""
    header = ("RUC|NOMBRE O RAZÓN SOCIAL|ESTADO DEL CONTRIBUYENTE|CONDICIÓN DE DOMICILIO|UBIGEO|TIPO DE VÍA|"
              "NOMBRE DE VÍA|CÓDIGO DE ZONA|TIPO DE ZONA|NÚMERO|INTERIOR|LOTE|DEPARTAMENTO|MANZANA|KILÓMETRO|")
    lines = [header]
    for record in sorted(records, key=lambda r: r["ruc"]):
        lines.append("|".join([record["ruc"], record.get("razon_social") or "-", record.get("estado") or "ACTIVO",
                               record.get("condicion") or "HABIDO", record.get("ubigeo") or "150101", "AV.",
                               "LOS ÁLAMOS", "-", "-", "123", "-", "-", "-", "-", "-"]) + "|")
    path.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))


def run_demo(home: Path) -> int:
    from app.core.api import Company, Engine
    from app.sandbox import available

    sandboxes = [cls() for cls in available().values()]
    engine: Engine | None = None
    state: dict[str, Any] = {}
    try:
        def start_sandboxes() -> str:
            for sandbox in sandboxes:
                sandbox.start()
            return ", ".join(f"{s.name} en {s.base_url}" for s in sandboxes)

        def open_engine() -> str:
            nonlocal engine
            engine = Engine(home)
            engine.admin.config_set("listener_port", "0")  # the demo's webhook listener on any free port
            state["listener"] = engine.messaging.start_listener()
            for sandbox in sandboxes:
                sandbox.configure(engine)
            return f"carpeta de datos {home}; receptor de webhooks en {state['listener']}"

        def opened() -> Engine:
            assert engine is not None, "the engine is opened by the second step"
            return engine

        def set_up_company() -> str:
            company = opened().admin.set_company(Company(
                ruc=DEMO_RUC, razon_social="COMERCIAL YUPANA DEMO S.A.C.", ubigeo="150101",
                direccion="AV. ABANCAY 123, CERCADO DE LIMA"))
            return f"{company.razon_social}, RUC {company.ruc}"

        def create_certificate() -> str:
            info = opened().invoicing.create_test_certificate(DEMO_RUC)
            state["certificado_id"] = info.certificado_id
            return f"certificado de prueba {info.certificado_id}"

        def generate() -> str:
            invoicing = opened().invoicing
            result = invoicing.generate_xml(demo_request(invoicing.next_number(DEMO_RUC, "01", "F001")))
            state["xml"] = result.xml
            state["nombre_archivo"] = result.nombre_archivo
            return f"{result.nombre_archivo} generado"

        def sign() -> str:
            result = opened().invoicing.sign({"xml": state["xml"], "certificado_id": state["certificado_id"]})
            state["xml_firmado"] = result.xml_firmado
            return f"firmado; código hash {result.digest_value}"

        def send() -> str:
            result = opened().invoicing.send({"xml_firmado": state["xml_firmado"], "ambiente": "beta"})
            if result.codigo_respuesta != "0":
                raise DemoFailed(f"SUNAT respondió {result.codigo_respuesta}: {result.descripcion}")
            check = opened().invoicing.verify_signature(_cdr_xml(result.cdr))
            if not check.valid:
                raise DemoFailed(f"la firma del CDR no es válida: {check.reason}")
            state["cdr"] = result.descripcion
            return f"CDR {result.codigo_respuesta}: {result.descripcion} (firma del CDR verificada)"

        steps: list[tuple[str, Callable[[], str]]] = [
            ("Iniciar los servidores de prueba (sandbox)", start_sandboxes),
            ("Abrir una carpeta de datos nueva", open_engine),
            ("Registrar la empresa de demostración", set_up_company),
            ("Crear un certificado digital de prueba", create_certificate),
            ("Generar una factura electrónica (UBL 2.1)", generate),
            ("Firmar la factura", sign),
            ("Enviar la factura a SUNAT (sandbox) y recibir el CDR", send),
        ]
        gateway = next((s for s in sandboxes if s.name == "gateway"), None)
        if gateway is not None:
            steps += _messaging_steps(opened, gateway, home, state)
        registry = next((s for s in sandboxes if s.name == "registry"), None)
        if registry is not None:
            steps += _register_steps(opened, registry, home, state)
        for number, (title, action) in enumerate(steps, start=1):
            step(number, title, action)
    except DemoFailed:
        _say("La demostración no terminó: revise el paso marcado con ✗.")
        return 1
    finally:
        if engine is not None:
            engine.close()
        for sandbox in sandboxes:
            sandbox.stop()
    _say("Demostración completa: todos los pasos funcionaron.")
    return 0


def _cdr_xml(cdr_base64: str) -> bytes:
    from app.core.api import read_zip

    return read_zip(base64.b64decode(cdr_base64)).xml


DEMO_CUSTOMER = "+51987654321"


def _messaging_steps(get_engine: Callable[[], Engine], gateway: Any, home: Path,
                     state: dict[str, Any]) -> list[tuple[str, Callable[[], str]]]:
    import threading

    from app.core.api import events

    def send_summary() -> str:
        engine = get_engine()
        xml = home / state["nombre_archivo"]
        xml.write_text(state["xml_firmado"], encoding="utf-8")
        text = (f"COMERCIAL YUPANA DEMO S.A.C.: su factura {state['nombre_archivo'][:-4]} fue aceptada por SUNAT "
                f"({state['cdr']}). Le adjuntamos el XML firmado.")
        result = engine.messaging.send_message("demo", DEMO_CUSTOMER, text, media_path=xml)
        state["message_id"] = result.id
        sent = gateway.wait_sent(1, timeout=10)
        if not sent or sent[-1]["fileName"] != xml.name:
            raise DemoFailed("la pasarela de prueba no recibió el mensaje")
        return f"mensaje {result.id} ({result.status}) a {result.to} con {xml.name} adjunto"

    def receive_reply() -> str:
        engine = get_engine()
        arrived = threading.Event()
        subscription = engine.admin.subscribe(
            lambda name, payload: arrived.set() if name == events.MESSAGE_RECEIVED else None)
        try:
            gateway.emit(events.MESSAGE_DELIVERED, "demo")
            gateway.emit(events.MESSAGE_READ, "demo")
            gateway.emit(events.MESSAGE_RECEIVED, "demo", sender=DEMO_CUSTOMER, body="Recibido, ¡gracias!",
                         name="Cliente Demostración")
            if not arrived.wait(10):
                raise DemoFailed("el receptor de webhooks no recibió la respuesta")
        finally:
            subscription.cancel()
        messages = engine.messaging.messages("demo", DEMO_CUSTOMER)
        [sent] = [m for m in messages if m.id == state["message_id"]]
        [reply] = [m for m in messages if m.direction == "in"]
        return f"«{reply.body}» de {reply.name} por el receptor; nuestro mensaje quedó «{sent.status}»"

    return [("Enviar el resumen de la factura por WhatsApp (pasarela de prueba)", send_summary),
            ("Recibir la respuesta del cliente por el receptor de webhooks", receive_reply)]


def _register_steps(get_engine: Callable[[], Engine], registry: Any, home: Path,
                    state: dict[str, Any]) -> list[tuple[str, Callable[[], str]]]:
    def load_register() -> str:
        taxpayers = list(registry.records["ruc"].values())[:200]
        path = home / "padron-demo.txt"
        write_demo_register(path, taxpayers)
        summary = get_engine().lookups.import_padron(path)
        state["known_ruc"] = taxpayers[0]["ruc"]
        return f"{summary.rows_loaded} contribuyentes cargados, {summary.rows_skipped} líneas omitidas"

    def look_up() -> str:
        engine = get_engine()
        # no provider in the sandbox environment: the answer can only come from the register
        engine.admin.register_sandbox({"registry_providers": ""})
        record = engine.lookups.ruc(state["known_ruc"])
        return (f"RUC {record.ruc}: {record.razon_social} ({record.distrito}, {record.departamento}); "
                f"fuente: {record.fuente or 'padrón'}")

    return [("Cargar un padrón reducido de RUC pequeño", load_register),
            ("Consultar un RUC en el padrón, sin proveedores en línea", look_up)]


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    parser = sub.add_parser("demo", help=summary,
                            description="Recorre todo el producto sin internet: servidores de prueba, empresa, "
                                        "certificado de prueba, factura firmada y enviada, mensaje por WhatsApp y "
                                        "respuesta recibida, padrón y consulta de RUC.")
    parser.add_argument("--keep", action="store_true", help="conserva la carpeta de datos de la demostración")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # The demo never touches the user's data: it works in a new folder of its own.
    folder = Path(tempfile.mkdtemp(prefix="yupana-demo-"))
    os.environ.setdefault("YUPANA_PASSPHRASE", DEMO_PASSPHRASE)
    os.environ["YUPANA_KEYRING"] = "0"
    try:
        return run_demo(folder)
    finally:
        if args.keep:
            print(f"Carpeta de la demostración: {folder}", file=sys.stderr)
        else:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
