"""Every window and dialog fits a shop's laptop: a 1366×768 screen at 100 % (a 1366×728 work area above the taskbar)
and a 1920×1080 screen at 125 % (1536×832 device-independent pixels above the taskbar).

Qt's platform (and so the screen) is chosen when the QApplication is created, so each screen is a subprocess:
tests/gui/fits_screen_runner.py on Qt's offscreen platform with a screen configuration file (its keys, from
qtbase's src/plugins/platforms/offscreen/qoffscreenintegration.cpp: "screens": [{"name", "x", "y", "width",
"height", "logicalDpi", "logicalBaseDpi", "dpr"}]). The 125 % screen is given as Windows gives it to Qt: 1920×1040
physical pixels at 120 dpi (Qt derives the 1.25 scale from logicalDpi / logicalBaseDpi, as on Windows); the
plugin's "dpr" would instead take the geometry as already device-independent, as macOS does. The runner opens
each window with DejaVu Sans 9 pt as the application font (what the Windows bundle's Segoe UI 9 pt is replaced
with on Linux: wider, so a text that fits here fits there) and prints what it measured; these tests judge it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.gui.widgets import FRAME_ALLOWANCE

ROOT = Path(__file__).resolve().parents[2]

SCREENS = {
    # name: (offscreen screen, the work area Qt must report, device pixel ratio)
    "1366x768 al 100 %": ({"name": "laptop", "x": 0, "y": 0, "width": 1366, "height": 728, "logicalDpi": 96,
                          "logicalBaseDpi": 96, "dpr": 1.0}, [0, 0, 1366, 728], 1.0),
    "1920x1080 al 125 %": ({"name": "fullhd", "x": 0, "y": 0, "width": 1920, "height": 1040, "logicalDpi": 120,
                           "logicalBaseDpi": 96, "dpr": 1.0}, [0, 0, 1536, 832], 1.25),
}

# Every window the runner must have opened (a window that silently failed to open would otherwise pass).
EXPECTED = [
    "Ventana principal: Comprobantes", "Ventana principal: Resúmenes y bajas", "Ventana principal: Clientes",
    "Ventana principal: Productos", "Ventana principal: Certificados", "Ventana principal: Mensajes",
    "Ventana principal: Consultas", "Ventana principal: Ajustes", "Ajustes → Empresas", "Ajustes → Consultas",
    "Sugerencias de clientes", "Nuevo comprobante (vacío)", "Nuevo comprobante", "Nuevo comprobante (con IGV, sin documento)",
    "Nuevo comprobante (al crédito, con errores)", "Nuevo comprobante (con detracción)",
    "Nuevo comprobante (nota de crédito)", "Comprobante (detalle)",
    "Anular", "Enviar por WhatsApp", "Frase secreta (frase_nueva)", "Frase secreta (abierto)", "Asistente",
    "Producto", "Importar productos (CSV)", "Contraseña del certificado", "Conectar WhatsApp",
    "Conectar WhatsApp (Meta)", "Nueva guía de remisión (desde un comprobante)",
    "Nueva guía de remisión (transportista)", "Restaurar desde una copia", "Restaurar: frase de recuperación",
    "Restaurar: último número impreso",
]
VOUCHER_FORMS = [name for name in EXPECTED if name.startswith("Nuevo comprobante")]
QT_SCALING = ("QT_FONT_DPI", "QT_SCALE_FACTOR", "QT_SCREEN_SCALE_FACTORS", "QT_ENABLE_HIGHDPI_SCALING",
              "QT_AUTO_SCREEN_SCALE_FACTOR", "QT_SCALE_FACTOR_ROUNDING_POLICY")


@pytest.fixture(scope="module", params=list(SCREENS))
def measured(request, tmp_path_factory):
    """The runner's measurements on one screen (one subprocess per screen, shared by this module's tests)."""
    screen, area, dpr = SCREENS[request.param]
    folder = tmp_path_factory.mktemp("screen")
    config = folder / "screen.json"
    config.write_text(json.dumps({"screens": [screen]}), encoding="utf-8")
    home = folder / "yupana"
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if key not in QT_SCALING}
    env.update(QT_QPA_PLATFORM=f"offscreen:configfile={config}", YUPANA_HOME=str(home), YUPANA_KEYRING="0",
               YUPANA_PASSPHRASE="pantallas de prueba", XDG_CONFIG_HOME=str(folder / "config"))
    done = subprocess.run([sys.executable, "-m", "tests.gui.fits_screen_runner", str(home)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return request.param, area, dpr, result


def _windows(result: dict) -> dict[str, dict]:
    return {window["name"]: window for window in result["windows"]}


def test_the_screen_is_the_one_configured_and_every_window_opened(measured):
    name, area, dpr, result = measured
    assert result["area"] == area, name
    assert result["dpr"] == pytest.approx(dpr)
    assert result["font"] == "DejaVu Sans"
    missing = [window for window in EXPECTED if window not in _windows(result)]
    assert not missing, f"{name}: no se abrieron {missing}"


def test_every_window_lies_inside_the_work_area_with_room_for_its_title_bar(measured):
    name, area, _, result = measured
    x0, y0, width, height = area
    wrong = []
    for window in result["windows"]:
        x, y, w, h = window["frame"]
        client_w, client_h = window["client"]
        if x < x0 or y < y0 or x + w > x0 + width or y + h > y0 + height:
            wrong.append(f"{window['name']}: marco {window['frame']} fuera de {area}")
        if window["name"] != "Sugerencias de clientes" and (
                client_h + FRAME_ALLOWANCE.height() > height or client_w + FRAME_ALLOWANCE.width() > width):
            wrong.append(f"{window['name']}: {client_w}×{client_h} no deja lugar a la barra de título")
    assert not wrong, f"{name}:\n" + "\n".join(wrong)


def test_the_primary_buttons_are_on_the_screen(measured):
    name, _, _, result = measured
    windows = _windows(result)
    outside = {window["name"]: window["outside"] for window in result["windows"] if window["outside"]}
    assert not outside, f"{name}: {outside}"
    # the dialogs have buttons to judge (a measurement that found none would prove nothing)
    for dialog in [*VOUCHER_FORMS, "Anular", "Enviar por WhatsApp", "Frase secreta (abierto)", "Asistente",
                   "Producto", "Importar productos (CSV)", "Contraseña del certificado", "Conectar WhatsApp",
                   "Conectar WhatsApp (Meta)", "Nueva guía de remisión (desde un comprobante)",
                   "Nueva guía de remisión (transportista)", "Restaurar desde una copia",
                   "Restaurar: frase de recuperación", "Restaurar: último número impreso"]:
        assert windows[dialog]["buttons"] >= 1, dialog


def test_the_lines_table_always_shows_five_rows(measured):
    """Whatever the form shows above and below the lines (errors on every field, every total, a note), at least
    five lines are in view."""
    name, _, _, result = measured
    windows = _windows(result)
    short = {form: windows[form]["lines"] for form in VOUCHER_FORMS if windows[form]["lines"] < 5}
    assert not short, f"{name}: {short}"


def test_no_text_is_cut(measured):
    """Labels, column headers (e.g. «Precio unitario (con IGV)», «Descuento (sin IGV)»), lists (the company, the
    afectación of a free line), placeholders («Sin documento: no hace falta número»), the CSV preview and the
    customers' suggestions are shown whole."""
    name, _, _, result = measured
    cut = {window["name"]: window["cut"] for window in result["windows"] if window["cut"]}
    assert not cut, f"{name}: {json.dumps(cut, ensure_ascii=False, indent=1)}"
    assert _windows(result)["Sugerencias de clientes"]["shown"] >= 1  # the popup was there to measure
    assert _windows(result)["Importar productos (CSV)"]["cells"] >= 2  # and the file's rows in the preview


def test_an_error_strip_follows_its_label_and_scrolls_past_three_lines(qtbot):
    """The lines' error label: shown and hidden with its text, never taller than three lines (then it scrolls)."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from app.gui.widgets import ErrorStrip, FieldErrors

    errors = FieldErrors()
    holder = QWidget()
    qtbot.addWidget(holder)
    strip = ErrorStrip(errors.label_for("items"))
    QVBoxLayout(holder).addWidget(strip)
    holder.show()
    assert not strip.isVisible()
    label = errors.labels["items"]
    label.setText("\n".join(f"Línea {n}: la cantidad debe ser un número mayor que cero." for n in range(1, 13)))
    label.show()
    qtbot.waitUntil(strip.isVisible, timeout=2000)
    assert strip.height() <= 3 * label.fontMetrics().lineSpacing() + 6 < label.sizeHint().height()
    errors.clear()
    assert not strip.isVisible()
