"""`yupana --self-test [--screenshot PATH]`: prove that an installed bundle works.

Used by `make package` (Linux bundle), `make windows-smoke` (installer under
Wine), the Windows CI workflow, tests and support staff. It starts Qt
offscreen, opens the engine and its database in the data folder
($YUPANA_HOME or the user data folder) and runs SQLite's quick_check (at most DATABASE_BUDGET_S), signs
and verifies a small XML document (lxml, signxml and cryptography's native
code), opens the main window and optionally saves a screenshot of it, then
generates, signs and verifies a factura with a test certificate in a
throw-away folder and prints it to PDF (the user's data is left alone), and serves the local HTTP API (FastAPI on
uvicorn) from that folder on a free loopback port and asks it over HTTP. Each step is reported on stdout (when there is one: a
windowed Windows build has none) and in `<data folder>/logs/self-test.log`.

Returns the process exit code: 0 when every step passed.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app import APP_NAME, __version__

if TYPE_CHECKING:
    from app.core.api import Engine

LOG_NAME = "self-test.log"


class _Report:
    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self.failures = 0
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = log_path.open("w", encoding="utf-8")

    def line(self, text: str) -> None:
        self._log.write(text + "\n")
        self._log.flush()
        stream = sys.stdout
        if stream is not None:
            try:
                stream.write(text + "\n")
                stream.flush()
            except (OSError, ValueError, UnicodeError):
                pass

    def step(self, name: str, action: Callable[[], str]) -> None:
        start = time.perf_counter()
        try:
            detail = action()
        except Exception:  # noqa: BLE001 - every failure is reported, none stops the test
            self.failures += 1
            self.line(f"FALLA {name}")
            for text in traceback.format_exc().rstrip().splitlines():
                self.line(f"      {text}")
            return
        self.line(f"OK    {name} ({(time.perf_counter() - start) * 1000:.0f} ms): {detail}")

    def close(self) -> None:
        self._log.close()


DATABASE_BUDGET_S = 5.0  # the database check stops here: a large folder's whole check takes a minute or more


def _check_database(engine: Engine, budget_s: float = DATABASE_BUDGET_S, **bounds: Any) -> str:
    """SQLite's quick_check, bounded in time (Administration.check_database): a damaged file fails the step; a check
    stopped at the budget passes and says how far it went, in Spanish."""
    check = engine.admin.check_database(budget_s, **bounds)
    size_mb = check.size_bytes / 1_000_000
    if not check.finished:
        return (f"{check.path} ({size_mb:,.0f} MB, {check.tables} tablas): la comprobación (quick_check) se "
                f"detuvo a los {budget_s:g} s sin terminar: la base es grande y revisarla entera tomaría más; la "
                "autoprueba no la da por dañada")
    if check.findings != ["ok"]:
        raise RuntimeError(f"la base de datos {check.path} está dañada: {'; '.join(check.findings)}")
    return f"{check.path} (quick_check ok, {size_mb:,.0f} MB, {check.tables} tablas)"


def _check_signature() -> str:
    from cryptography import __version__ as crypto_version
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID
    from lxml import etree
    from signxml import XMLSigner, XMLVerifier

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Yupana autoprueba")])
    now = _dt.datetime.now(_dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _dt.timedelta(minutes=5))
        .not_valid_after(now + _dt.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    document = etree.fromstring(b"<Invoice><ID>F001-1</ID><Total>118.00</Total></Invoice>")
    signed = XMLSigner().sign(document, key=key, cert=[cert])
    XMLVerifier().verify(signed, x509_cert=cert)
    return f"XML firmado y verificado (cryptography {crypto_version}, lxml {etree.__version__})"


def _check_libraries() -> str:
    import httpx
    import keyring
    import pydantic

    class Sample(pydantic.BaseModel):
        ruc: str
        total: float

    Sample.model_validate({"ruc": "20123456789", "total": "118.00"})
    with httpx.Client(timeout=1):
        pass
    backend = type(keyring.get_keyring()).__name__
    return f"httpx {httpx.__version__}, pydantic {pydantic.__version__}, keyring {backend}"


def _square(number: int) -> int:
    return number * number


def _check_processes() -> str:
    """A worker process started with "spawn", as app.core.lookup.padron does (needs freeze_support when frozen)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        result = pool.apply(_square, (12,))
    if result != 144:
        raise RuntimeError(f"el proceso auxiliar respondió {result}")
    return "proceso auxiliar (spawn) respondió"


@contextlib.contextmanager
def _scratch_engine():
    """An engine on a throw-away data folder whose secrets use a random passphrase (YUPANA_KEYRING=0).

    The user's folder, certificates and keyring are never touched."""
    import secrets
    import tempfile

    from app.core.api import Engine

    saved = {name: os.environ.get(name) for name in ("YUPANA_KEYRING", "YUPANA_PASSPHRASE")}
    os.environ["YUPANA_KEYRING"] = "0"
    os.environ["YUPANA_PASSPHRASE"] = secrets.token_urlsafe(24)
    try:
        with tempfile.TemporaryDirectory(prefix="yupana-autoprueba-", ignore_cleanup_errors=True) as scratch:
            with Engine(scratch) as engine:
                yield engine
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _check_voucher() -> str:
    """Generate, sign and verify a factura in a throw-away data folder."""
    from app.core.api import Company

    ruc = "20100066603"
    with _scratch_engine() as engine:
        engine.admin.set_company(Company(ruc=ruc, razon_social="EMPRESA DE AUTOPRUEBA S.A.C.", ubigeo="150101",
                                   direccion="AV. AUTOPRUEBA 1, CERCADO DE LIMA"))
        certificate = engine.invoicing.create_test_certificate(ruc)
        generated = engine.invoicing.generate_xml({
            "tipo": "01", "serie": "F001", "numero": 1,
            "emisor": {"ruc": ruc},
            "receptor": {"ruc": "20601030013", "razon_social": "CLIENTE DE AUTOPRUEBA S.A.C."},
            "items": [{"descripcion": "Servicio de autoprueba", "cantidad": 1, "precio_unitario": "100.00"}],
        })
        signed = engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificate.certificado_id})
        verification = engine.invoicing.verify_signature(signed.xml_firmado)
        if not verification.valid:
            raise RuntimeError(f"la firma del comprobante no es válida: {verification.reason}")
        # The printed voucher: fpdf2, segno and the bundled font (app/data/fonts) are in the bundle.
        pdf = engine.invoicing.pdf(engine.invoicing.find_voucher("F001-1")).content
        if not (pdf.startswith(b"%PDF-") and b"YupanaSans" in pdf):
            raise RuntimeError("el PDF del comprobante no se generó con la fuente incluida")
    return (f"{generated.nombre_archivo} generado, firmado y verificado (hash {signed.digest_value}), "
            f"PDF de {len(pdf):,} bytes")


def _check_api() -> str:
    """The local HTTP API (FastAPI on uvicorn) from a throw-away folder, asked over loopback."""
    import httpx

    from app.api.local import LocalApi

    with _scratch_engine() as engine:
        api = LocalApi(engine, port=0)
        base_url = api.start()  # stopped when the engine closes
        health = httpx.get(base_url + "/api/v1/health", timeout=10)
        if health.status_code != 200 or health.json().get("success") is not True:
            raise RuntimeError(f"/api/v1/health respondió {health.status_code}: {health.text[:200]}")
        document = httpx.get(base_url + "/openapi.json", timeout=10).json()
        lookup = httpx.get(base_url + "/api/v1/ruc/20100066604", timeout=10,
                           headers={"Authorization": f"Bearer {engine.admin.api_token()}"})
        if lookup.status_code != 400 or lookup.json()["error"]["details"][0]["field"] != "numero":
            raise RuntimeError(f"/api/v1/ruc respondió {lookup.status_code}: {lookup.text[:200]}")
    return f"API local en {base_url}: health, /openapi.json ({len(document['paths'])} rutas) y una consulta"


def _check_gui(engine: Engine, screenshot: str | None) -> str:
    from PySide6.QtCore import qVersion

    from app.gui.app import application
    from app.gui.main_window import MainWindow

    app = application()
    window = MainWindow(engine)
    window.show()
    for _ in range(5):
        app.processEvents()
    detail = f"Qt {qVersion()} ({app.platformName()}), ventana principal «{window.windowTitle()}»"
    if screenshot:
        target = Path(screenshot).expanduser().resolve()
        target.parent.mkdir(parents=True, exist_ok=True)
        pixmap = window.grab()
        if pixmap.isNull() or not pixmap.save(str(target), "PNG"):
            raise RuntimeError(f"no se pudo guardar la captura en {target}")
        detail += f", captura {target} ({pixmap.width()}x{pixmap.height()})"
    window.close()
    app.processEvents()
    return detail


def run_self_test(screenshot: str | None = None) -> int:
    """Run every check; return 0 when all passed. A frozen build exits the process itself."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if sys.platform == "win32" and os.environ["QT_QPA_PLATFORM"] == "offscreen" and "QT_QPA_FONTDIR" not in os.environ:
        # Qt's offscreen platform does not ask Windows for fonts; point it at them.
        os.environ["QT_QPA_FONTDIR"] = os.path.join(os.environ.get("WINDIR", r"C:\Windows"), "Fonts")
    from app.core.api import data_home, log_dir

    home = data_home()
    report = _Report(log_dir(home) / LOG_NAME)
    frozen = bool(getattr(sys, "frozen", False))
    report.line(f"Autoprueba de {APP_NAME} {__version__}")
    report.line(f"  Python {sys.version.split()[0]} en {sys.platform}, empaquetado: {'sí' if frozen else 'no'}")
    report.line(f"  carpeta de datos: {home}")
    engine = None
    try:
        from app.core.api import Engine

        engine = Engine(home)
        report.line(f"OK    motor abierto en {home}")
    except Exception:  # noqa: BLE001
        report.failures += 1
        report.line("FALLA motor")
        for text in traceback.format_exc().rstrip().splitlines():
            report.line(f"      {text}")
    if engine is not None:
        report.step("base de datos", lambda: _check_database(engine))
    report.step("firma XML", _check_signature)
    report.step("bibliotecas", _check_libraries)
    if engine is not None:
        report.step("interfaz", lambda: _check_gui(engine, screenshot))
        engine.close()
    report.step("comprobante", _check_voucher)
    report.step("API local", _check_api)
    report.step("procesos", _check_processes)
    code = 0 if report.failures == 0 else 1
    report.line("autoprueba correcta" if code == 0 else f"AUTOPRUEBA FALLIDA: {report.failures} paso(s)")
    report.close()
    if frozen:
        # Tearing Qt down can hang under Wine (QApplication.quit()); a bundle has
        # nothing left to flush, so leave at once.
        if sys.stdout is not None:
            sys.stdout.flush()
        os._exit(code)
    return code
