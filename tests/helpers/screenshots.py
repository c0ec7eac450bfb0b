"""The pictures `make screenshots` writes (`python -m app.gui.screenshots FOLDER`), read back and compared: two runs
give byte-identical PNGs (issue 16; tests/cli/test_make_targets.py runs them, tests/gui/test_screenshots_deterministic.py
holds the pieces that make them so)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers.base import ROOT


def render(folder) -> dict[str, bytes]:
    """The pictures `python -m app.gui.screenshots FOLDER` writes (what `make screenshots` runs), by name."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("YUPANA_HOME", None)
    done = subprocess.run([sys.executable, "-m", "app.gui.screenshots", str(folder)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "aviso:" not in done.stderr, done.stderr[-2000:]  # every sample (vouchers, messages, PDF) was made
    return pictures_in(folder)


def pictures_in(folder) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.png"))}


EXPECTED = {"comprobantes.png", "comprobantes-por-fecha.png", "mensajes.png", "detalle-comprobante.png",
            "certificados.png", "ajustes.png", "nuevo-comprobante.png", "representacion-impresa.png",
            "resumenes-y-bajas.png", "clientes.png", "productos.png", "frase-secreta.png"}


def assert_identical(first: dict[str, bytes], second: dict[str, bytes]) -> None:
    assert EXPECTED <= set(first)
    assert first.keys() == second.keys()
    differing = sorted(name for name in first if first[name] != second[name])
    assert differing == [], f"these pictures changed between two runs: {differing}"
