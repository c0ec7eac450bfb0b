"""`yupana --self-test`: start the app offscreen, check the database, show the main window, exit 0.

Used by `make package`, the Windows installer smoke test and support staff. It prints each step
in Spanish and returns non-zero at the first one that fails.
"""

from __future__ import annotations

import os
import sys
import tempfile


def _step(text: str) -> None:
    print(f"[autoprueba] {text}", flush=True)


def run_self_test(screenshot: str | None = None) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from app.core.engine import Engine
    from app.gui.app import application
    from app.gui.main_window import MainWindow

    with tempfile.TemporaryDirectory(prefix="yupana-selftest-") as scratch:
        home = os.environ.get("YUPANA_HOME") or scratch
        app = application()
        engine = Engine(home)
        try:
            check = engine.storage.query_one("PRAGMA quick_check")
            if not check or next(iter(check.values())) != "ok":
                _step(f"la base de datos {engine.storage.path} está dañada: {check}")
                return 1
            _step(f"base de datos correcta: {engine.storage.path}")
            window = MainWindow(engine)
            window.show()
            app.processEvents()
            _step("ventana principal abierta")
            if screenshot:
                window.grab().save(screenshot)
                _step(f"captura guardada en {screenshot}")
            window.close()
        finally:
            engine.close()
    _step("autoprueba correcta")
    sys.stdout.flush()
    return 0
