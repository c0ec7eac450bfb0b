"""A voucher being typed when the program is killed (issue 32): run by tests/gui/test_voucher_drafts.py as
`QT_QPA_PLATFORM=offscreen python -m tests.gui.drafts_runner <home>`.

It opens «Nuevo comprobante» on the folder, types a customer and two lines as a person would (the form's own fields),
prints `TYPED` once the form holds them, then `DRAFT-SAVED <id>` when the autosave stored the draft, and waits to
be killed (SIGKILL: nothing of the program runs after it)."""

from __future__ import annotations

import sys
import time

from PySide6.QtWidgets import QApplication

CUSTOMER = ("20601030013", "BODEGA SAN MARTÍN S.A.C.")
LINES = [("Arroz Costeño 5 kg", "10", "25.00", "10"), ("Aceite Primor 1 L", "4", "85.00", "10")]


def main(home: str) -> None:
    from app.core.api import Engine
    from app.gui.bridge import EngineEvents
    from app.gui.context import Context
    from app.gui.voucher_form import VoucherForm
    from app.gui.workers import Workers
    from app.sandbox.mode import SandboxMode

    app = QApplication(sys.argv[:1])
    engine = Engine(home)
    workers = Workers()
    context = Context(engine, workers, EngineEvents(engine), SandboxMode(engine))
    form = VoucherForm(context)
    form.draft_saved.connect(lambda draft_id: print(f"DRAFT-SAVED {draft_id}", flush=True))
    form.show()
    deadline = time.monotonic() + 30
    while workers.running and time.monotonic() < deadline:  # the companies loaded: the typing is not overwritten
        app.processEvents()
        workers.pool.waitForDone(10)
    form.doc_number.setText(CUSTOMER[0])
    form.customer_name.setText(CUSTOMER[1])
    form.items.setRowCount(0)
    for line in LINES:
        form.add_line(*line)
    print("TYPED", flush=True)
    app.exec()  # until killed


if __name__ == "__main__":
    main(sys.argv[1])
