"""`python -m app.gui.screenshots FOLDER`: render each window offscreen with sample data into FOLDER.

Used by `make screenshots` (docs/screenshots/, shown in the README). Sample data lives in a
throw-away data folder; nothing touches the user's own.

The same checkout gives the same PNGs byte for byte (tests/gui/test_screenshots_deterministic.py), so
regenerating them leaves `git status` clean: the wall clock (app.core.api.clock) stands at the sample instant in
Lima's time zone, so issue dates and times, digests, QR codes, CDR dates and message times are fixed; the
sandbox's made-up numbers (CDR ids) come from a seeded generator; ports chosen at random are painted as
fixed ones (SHOWN_PORTS); and the windows use one named font at a fixed size and resolution.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import tempfile
import time
import unicodedata
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

SAMPLE_CUSTOMERS = [("20601030013", "BODEGA SAN MARTÍN S.A.C."), ("20100070970", "SUPERMERCADOS PERUANOS S.A."),
                    ("20131312955", "SUNAT"), ("20100047218", "BANCO DE CRÉDITO DEL PERÚ")]
SAMPLE_TIME = (2026, 11, 23, 10, 30)  # a Monday morning in Lima (sample_instant)
SAMPLE_SEED = 16
FONT = ("DejaVu Sans", 9)  # what fontconfig gives Qt's «Sans Serif» on Debian and Ubuntu, named so it never varies
LOOPBACK_PORT = re.compile(r"(127\.0\.0\.1|localhost):(\d+)")


def _settle(app, window) -> None:
    """Let background work finish and the widgets repaint."""
    from PySide6.QtTest import QTest

    deadline = time.monotonic() + 60  # a loaded machine can take seconds; a picture taken early is wrong
    while True:
        app.processEvents()
        if window.workers.running == 0 or time.monotonic() > deadline:
            break
        QTest.qWait(20)
    # Nested layouts (a scroll area sized to its contents, sections shown on a type's change) settle over several
    # posted layout requests: a few rounds, or the picture depends on the machine's speed.
    for _round in range(5):
        app.sendPostedEvents()
        app.processEvents()
        QTest.qWait(10)


def _sample_data(engine, sandboxes) -> None:
    """A company, a test certificate and four facturas sent to the local SUNAT sandbox."""
    from app.core.api import Company

    from .emission import emit

    engine.admin.set_company(Company(ruc="20100066603", razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                     direccion="AV. ABANCAY 123, CERCADO DE LIMA", nombre_comercial="YUPANA"))
    engine.invoicing.create_test_certificate("20100066603")
    engine.admin.config_set("listener_port", "0")  # the gateway sandbox posts to this listener
    engine.messaging.start_listener()
    sandboxes.start()
    for numero, (ruc, name) in enumerate(SAMPLE_CUSTOMERS, start=1):
        request = {"tipo": "01", "serie": "F001", "numero": numero, "emisor": {"ruc": "20100066603"},
                   "receptor": {"ruc": ruc, "razon_social": name},
                   "items": [{"descripcion": "Arroz extra 5 kg", "cantidad": Decimal(numero * 3),
                              "precio_unitario": Decimal("21.50")}]}
        try:
            emit(engine, request, lambda _: None)
        except Exception as exc:  # noqa: BLE001 - a screenshot without that row is still useful
            print(f"aviso: no se generó el comprobante de ejemplo {numero}: {exc}", file=sys.stderr)
    _sample_void(engine, sandboxes)
    _sample_catalogue(engine)


def _sample_void(engine, sandboxes) -> None:
    """F001-2 voided by a comunicación de baja, SUNAT's ticket answered at once: «Resúmenes y bajas» has a row."""
    try:
        sandboxes.running["sunat"].summaries.configure(delay_s=0, pending_polls=0)
        voucher_id = engine.invoicing.find_voucher("F001-2")
        outcome = engine.invoicing.void(voucher_id, "ERROR EN LA CANTIDAD", timeout_s=30)
        if not outcome.accepted:
            raise RuntimeError(f"{outcome.ident} {outcome.state}: {outcome.descripcion}")
    except Exception as exc:  # noqa: BLE001 - the other screenshots are still useful
        print(f"aviso: no se anuló el comprobante de ejemplo F001-2: {exc}", file=sys.stderr)


SAMPLE_PRODUCTS = [  # code, barcode, description, unit, price, with IGV, affectation, bag
    ("ARR-5", "7751234000011", "Arroz extra 5 kg", "NIU", "25.37", True, "10", False),
    ("AZU-1", "7751234000028", "Azúcar rubia 1 kg", "KGM", "4.20", True, "10", False),
    ("BOL-1", None, "Bolsa plástica", "NIU", "0.10", True, "10", True),
    ("GAS-500", "7750182000017", "Gaseosa 500 ml", "NIU", "2.50", True, "10", False),
    ("LIB-01", None, "Libro «Cuentos andinos»", "NIU", "35.00", True, "20", False),
    ("SRV-INS", None, "Servicio de instalación", "ZZ", "100.00", False, "10", False),
]


def _sample_catalogue(engine) -> None:
    """Products for «Productos»; the customers of the sample facturas were remembered when they were issued, and
    one of them gets the WhatsApp and e-mail typed in «Clientes»."""
    try:
        for codigo, barras, descripcion, unidad, precio, con_igv, afectacion, bolsa in SAMPLE_PRODUCTS:
            engine.catalog.save_product({"codigo": codigo, "codigo_barras": barras, "descripcion": descripcion,
                                         "unidad": unidad, "precio": precio, "precio_incluye_igv": con_igv,
                                         "tipo_afectacion_igv": afectacion, "icbper": bolsa})
        ruc, name = SAMPLE_CUSTOMERS[0]
        engine.catalog.save_customer({"tipo_documento": "6", "numero": ruc, "nombre": name,
                                      "whatsapp": "+51987654321", "email": "compras@example.pe"},
                                     engine.catalog.customers(ruc, 1)[0].id)
    except Exception as exc:  # noqa: BLE001 - the other screenshots are still useful
        print(f"aviso: no se generó el catálogo de ejemplo: {exc}", file=sys.stderr)


def _sample_messages(engine, gateway) -> None:
    """A short exchange on the sandbox instance «demo»: sent, delivered, read, and two customers writing."""
    from app.core.api import events

    try:
        gateway.emit(events.MESSAGE_RECEIVED, "demo", sender="+51912345678", body="¿Tienen arroz de 50 kg?",
                     name="Bodega San Martín")
        engine.messaging.send_message("demo", "+51987654321",
                                      "Buenos días, le enviamos su factura F001-1. ¡Gracias por su compra!")
        gateway.emit(events.MESSAGE_DELIVERED, "demo")
        gateway.emit(events.MESSAGE_READ, "demo")
        gateway.emit(events.MESSAGE_RECEIVED, "demo", sender="+51987654321", body="Recibido, muchas gracias",
                     name="Rosa Quispe")
    except Exception as exc:  # noqa: BLE001 - the other screenshots are still useful
        print(f"aviso: no se generaron los mensajes de ejemplo: {exc}", file=sys.stderr)


# The screen the windows are pictured on: a 1366×768 laptop at 100 %, less a 40 px taskbar (the windows size
# themselves to the work area: app.gui.widgets.fit_to_screen). Keys of Qt's offscreen plugin (qoffscreenintegration.cpp).
SCREEN = {"name": "laptop", "x": 0, "y": 0, "width": 1366, "height": 728, "logicalDpi": 96, "logicalBaseDpi": 96,
          "dpr": 1.0}


def _steady_environment() -> None:
    """What the pixels depend on outside the sample data: Qt's platform, screen and resolution, the time zone."""
    if os.environ.setdefault("QT_QPA_PLATFORM", "offscreen") == "offscreen":
        config = Path(tempfile.gettempdir()) / "yupana-screenshots-screen.json"
        config.write_text(json.dumps({"screens": [SCREEN]}), encoding="utf-8")
        os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"
    os.environ["QT_FONT_DPI"] = "96"
    os.environ["QT_SCALE_FACTOR"] = "1"
    os.environ["TZ"] = "America/Lima"  # message times are shown in local time
    if hasattr(time, "tzset"):
        time.tzset()
    random.seed(SAMPLE_SEED)


def _steady_font(app) -> None:
    from PySide6.QtGui import QFont, QFontDatabase

    family, size = FONT
    if family in QFontDatabase.families():
        font = QFont(family, size)
        font.setHintingPreference(QFont.HintingPreference.PreferDefaultHinting)
        app.setFont(font)
    else:
        print(f"aviso: falta la fuente {family} (fonts-dejavu-core): las capturas saldrán con otra letra",
              file=sys.stderr)


def sample_instant() -> datetime:
    from app.core.api import clock

    return datetime(*SAMPLE_TIME, tzinfo=clock.PERU)


def render(folder: Path) -> list[Path]:
    # The engine is imported only now, after the seed: importing it draws from `random` (a library's import does),
    # and the sandbox's made-up numbers come after that draw.
    _steady_environment()
    os.environ.setdefault("YUPANA_KEYRING", "0")
    os.environ.setdefault("YUPANA_PASSPHRASE", "capturas de pantalla")
    from app.core.api import clock

    with clock.frozen(sample_instant()):
        return _render(folder)


def _render(folder: Path) -> list[Path]:
    from app.core.api import Engine
    from app.gui.app import application
    from app.gui.main_window import SECTIONS, MainWindow
    from app.sandbox.mode import SandboxMode

    folder.mkdir(parents=True, exist_ok=True)
    app = application()
    _steady_font(app)
    saved = []
    with tempfile.TemporaryDirectory(prefix="yupana-shots-") as home:
        engine = Engine(home)
        try:
            sandboxes = SandboxMode(engine)
            _sample_data(engine, sandboxes)
            _show_fixed_ports(engine, sandboxes)
            if "gateway" in sandboxes.running:
                _sample_messages(engine, sandboxes.running["gateway"])
            window = MainWindow(engine, sandboxes, first_run=False)
            window.show()
            _settle(app, window)
            for name in SECTIONS:
                page = window.show_section(name)
                _settle(app, window)
                if name == "Consultas":
                    _look_up_a_sample(app, window, page, sandboxes)
                saved.append(_save(window, folder / f"{_file_stem(name)}.png"))
            saved.append(_save_form(app, window, folder))
            saved.append(_save_note(app, window, folder))
            saved.append(_save_content(app, window, folder))
            saved.append(_save_detail(app, window, folder))
            saved.extend(_save_printed(app, window, engine, folder))
            saved.append(_save_list_by_date(app, window, engine, folder))
            saved.append(_save_assistant(app, window, folder))
            saved.append(_save_passphrase(app, window, folder))
            window.close()
        finally:
            engine.close()
    return saved


def _file_stem(section: str) -> str:
    """«Resúmenes y bajas» → «resumenes-y-bajas» (a file name without spaces or accents)."""
    plain = unicodedata.normalize("NFKD", section.lower()).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", plain).strip("-")


SHOWN_PORTS: dict[str, str] = {}  # a port picked at random (port 0) → the fixed one painted instead


def _show_fixed_ports(engine, sandboxes) -> None:
    """The listener is painted on its default port (8788) and each sandbox on 8901, 8902… in start order."""
    from app.core.api import SETTINGS

    SHOWN_PORTS.clear()
    for match in LOOPBACK_PORT.finditer(engine.messaging.listener_state().url or ""):
        SHOWN_PORTS[match.group(2)] = SETTINGS["listener_port"].default
    for number, sandbox in enumerate(sandboxes.running.values(), start=1):
        for match in LOOPBACK_PORT.finditer(sandbox.base_url):
            SHOWN_PORTS.setdefault(match.group(2), str(8900 + number))


def _fixed_ports(text: str) -> str:
    return LOOPBACK_PORT.sub(lambda m: f"{m.group(1)}:{SHOWN_PORTS.get(m.group(2), m.group(2))}", text)


def _paint_fixed_ports(widget) -> None:
    """Replace random ports in every text the widget shows (labels, inputs, buttons, table cells)."""
    from PySide6.QtWidgets import QAbstractButton, QLabel, QLineEdit, QTableWidget

    for kind in (QLabel, QLineEdit, QAbstractButton):
        for child in [widget, *widget.findChildren(kind)]:
            if isinstance(child, kind) and LOOPBACK_PORT.search(child.text()):
                child.setText(_fixed_ports(child.text()))
    for table in widget.findChildren(QTableWidget):
        for row in range(table.rowCount()):
            for column in range(table.columnCount()):
                item = table.item(row, column)
                if item is not None and LOOPBACK_PORT.search(item.text()):
                    item.setText(_fixed_ports(item.text()))


def _lay_out_status_bar(widget) -> None:
    """The status bar laid out for the texts it shows now: when «Trabajando…» was cleared just before the picture,
    its layout request may still be pending, and the permanent labels would stand where they stood with it."""
    from PySide6.QtWidgets import QApplication, QMainWindow

    if isinstance(widget, QMainWindow):
        layout = widget.statusBar().layout()
        if layout is not None:
            layout.invalidate()
            layout.activate()
        QApplication.processEvents()


def _save(widget, path: Path) -> Path:
    _paint_fixed_ports(widget)
    _lay_out_status_bar(widget)
    widget.grab().save(str(path))
    return path


def _save_form(app, window, folder: Path) -> Path:
    page = window.show_section("Comprobantes")
    form = page.new_voucher()
    _settle(app, window)
    form.fill_example("20601030013", "BODEGA SAN MARTÍN S.A.C.",
                      [("Arroz extra 5 kg", "4", "21.50", "10"), ("Aceite vegetal 1 L", "6", "8.90", "10"),
                       ("Libro de contabilidad", "1", "35.00", "20")])
    form.forma_pago.setCurrentIndex(form.forma_pago.findData("Credito"))
    form.instalments.add_cuota()
    _settle(app, window)
    path = _save(form, folder / "nuevo-comprobante.png")
    form.discard_and_close()
    return path


def _save_content(app, window, folder: Path) -> Path:
    """A service factura above S/ 700 with the detracción section open, a free line, a bag and a guía."""
    form = window.show_section("Comprobantes").new_voucher()
    _settle(app, window)
    form.fill_example("20601030013", "BODEGA SAN MARTÍN S.A.C.",
                      [("Mantenimiento de equipos de cómputo", "1", "1500.00", "10", "100.00"),
                       ("Mouse de cortesía", "1", "25.00", "15"), ("Bolsa plástica", "1", "0.10", "10", "", True)])
    form.extras.descuento_global.setText("50.00")
    form.extras.guias.setText("T001-123")
    form.extras.orden_compra.setText("OC-2026-15")
    form.detraccion_hint.button.click()
    form.detraccion.cuenta.setText("00-000-123456")
    _settle(app, window)
    path = _save(form, folder / "comprobante-con-detraccion.png")
    form.discard_and_close()
    return path


def _save_note(app, window, folder: Path) -> Path:
    """A credit note against the first sample factura."""
    form = window.show_section("Comprobantes").new_voucher()
    _settle(app, window)
    form.tipo.setCurrentIndex(form.tipo.findData("07"))
    if form.note.pick.count() > 1:
        form.note.choose(form.note.pick.count() - 2)
    form.note.motivo.setCurrentIndex(form.note.motivo.findData("07"))
    form.note.descripcion.setText("Devolución de 1 bolsa dañada")
    form.items.setRowCount(0)
    form.add_line("Arroz extra 5 kg", "1", "21.50", "10")
    _settle(app, window)
    path = _save(form, folder / "nota-de-credito.png")
    form.discard_and_close()
    return path


def _look_up_a_sample(app, window, page, sandboxes) -> None:
    registry = sandboxes.running.get("registry")
    if registry is None:
        return
    page.number.setText(next(iter(registry.records["ruc"])))
    page.search()
    _settle(app, window)


def _save_detail(app, window, folder: Path) -> Path:
    page = window.show_section("Comprobantes")
    _settle(app, window)
    detail = page.open_detail(0)
    _settle(app, window)
    path = _save(detail, folder / "detalle-comprobante.png")
    detail.close()
    return path


def _save_printed(app, window, engine, folder: Path) -> list[Path]:
    """A factura al crédito: its preview in the detail's «Representación impresa» tab, and one page of each
    format rendered from the PDF itself with poppler's pdftoppm (when installed)."""
    import shutil
    import subprocess

    from .emission import emit
    from .printing import write_pdf
    from .voucher_detail import VoucherDetail

    request = {"tipo": "01", "serie": "F002", "numero": 1, "emisor": {"ruc": "20100066603"},
               "receptor": {"ruc": "20601030013", "razon_social": "BODEGA SAN MARTÍN S.A.C."},
               "items": [{"descripcion": description, "cantidad": Decimal(quantity), "precio_unitario": Decimal(price),
                          "tipo_afectacion_igv": affectation}
                         for description, quantity, price, affectation in [
                             ("Arroz extra 5 kg", "4", "21.50", "10"), ("Aceite vegetal 1 L", "6", "8.90", "10"),
                             ("Azúcar rubia 1 kg", "10", "3.60", "10"), ("Libro de contabilidad", "1", "35.00", "20")]],
               "forma_pago": {"tipo": "Credito", "cuotas": [
                   {"monto": Decimal("80.00"), "fecha_vencimiento": _days_ahead(30)},
                   {"monto": Decimal("80.47"), "fecha_vencimiento": _days_ahead(60)}]}}
    try:
        emit(engine, request, lambda _: None)
        voucher_id = engine.invoicing.find_voucher("F002-1", tipo="01")
    except Exception as exc:  # noqa: BLE001 - the other screenshots are still useful
        print(f"aviso: no se generó el comprobante impreso de ejemplo: {exc}", file=sys.stderr)
        return []
    saved = []
    detail = VoucherDetail(window.context, voucher_id, window)
    detail.show()
    _settle(app, window)
    detail.tabs.setCurrentWidget(detail.print_panel)
    _settle(app, window)
    _repaint_preview_here(detail.print_panel)
    _settle(app, window)
    saved.append(_save(detail, folder / "representacion-impresa.png"))
    detail.close()
    if shutil.which("pdftoppm") is None:
        print("aviso: sin pdftoppm (poppler-utils) no se dibujan las páginas del PDF", file=sys.stderr)
        return saved
    with tempfile.TemporaryDirectory() as scratch:
        for formato, dpi in (("a4", "80"), ("ticket", "130")):
            pdf = write_pdf(engine, voucher_id, Path(scratch) / f"{formato}.pdf", formato)
            target = folder / f"pdf-{formato}"
            subprocess.run(["pdftoppm", "-r", dpi, "-png", "-singlefile", str(pdf), str(target)], check=True)
            saved.append(target.with_suffix(".png"))
    return saved


# Older facturas for the list filtered by date: (days before the sample day, customer).
EARLIER_SAMPLES = [(35, 1), (28, 0), (21, 3), (14, 1), (9, 2), (3, 0)]


def _save_list_by_date(app, window, engine, folder: Path) -> Path:
    """Comprobantes filtered by fecha de emisión: a few earlier facturas (generated, not sent), the range around
    them."""
    from PySide6.QtCore import QDate

    from app.core.api import clock

    today = clock.today()
    for numero, (days, customer) in enumerate(EARLIER_SAMPLES, start=1):
        ruc, name = SAMPLE_CUSTOMERS[customer]
        try:
            engine.invoicing.generate_xml({
                "tipo": "01", "serie": "F003", "numero": numero, "emisor": {"ruc": "20100066603"},
                "receptor": {"ruc": ruc, "razon_social": name},
                "fecha_emision": (today - timedelta(days=days)).isoformat(),
                "items": [{"descripcion": "Aceite vegetal 1 L", "cantidad": Decimal(numero * 2),
                           "precio_unitario": Decimal("8.90")}]})
        except Exception as exc:  # noqa: BLE001 - the list is still worth showing
            print(f"aviso: no se generó el comprobante anterior de ejemplo {numero}: {exc}", file=sys.stderr)
    _settle(app, window)  # the events of those vouchers (the list, the status bar) land before the picture
    page = window.show_section("Comprobantes")
    page.by_date.setChecked(True)
    start, end = today - timedelta(days=30), today - timedelta(days=5)
    page.desde.setDate(QDate(start.year, start.month, start.day))
    page.hasta.setDate(QDate(end.year, end.month, end.day))
    for _ in range(3):  # a read ends, its «Trabajando…» is cleared, the status bar lays itself out again
        _settle(app, window)
    path = _save(window, folder / "comprobantes-por-fecha.png")
    page.by_date.setChecked(False)
    _settle(app, window)
    return path


def _repaint_preview_here(panel) -> None:
    """The preview's pages painted again on this thread: painted on a worker while the windows paint too, their
    anti-aliasing varies by a few levels from run to run."""
    from PySide6.QtGui import QPixmap

    from .printing import page_image

    for label, page in zip(panel.page_labels, panel.pages, strict=True):
        label.setPixmap(QPixmap.fromImage(page_image(page, panel.family)))


def _days_ahead(days: int) -> str:
    from app.core.api import clock

    return (clock.today() + timedelta(days=days)).isoformat()


def _save_assistant(app, window, folder: Path) -> Path:
    assistant = window.open_assistant()
    form = assistant.company_page.form
    form.ruc.setText("20100066603")
    form.inputs["razon_social"].setText("COMERCIAL YUPANA S.A.C.")
    form.inputs["direccion"].setText("AV. ABANCAY 123, CERCADO DE LIMA")
    form.inputs["ubigeo"].setText("150101")
    _settle(app, window)
    path = _save(assistant, folder / "asistente.png")
    assistant.close()
    return path


def _save_passphrase(app, window, folder: Path) -> Path:
    """The dialog a PC with no system keyring shows on the first start."""
    from app.core.api import NEW_PASSPHRASE

    from .passphrase import PassphraseDialog

    dialog = PassphraseDialog(window.context, NEW_PASSPHRASE, lambda: None, window)
    dialog.show()
    _settle(app, window)
    path = _save(dialog, folder / "frase-secreta.png")
    dialog.close()
    return path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0] if args else "docs/screenshots")
    for path in render(folder):
        print(f"captura: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
