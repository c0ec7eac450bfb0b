"""Drafts of «Nuevo comprobante» (issue 32, item 2): closing a typed voucher asks (Guardar borrador / Descartar /
Seguir editando), Escape never throws it away, a draft is saved a moment after the last change, survives the program
being killed, and is offered (and restored) when the form opens again."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from decimal import Decimal

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from app.gui.voucher_form import CONTINUE, DISCARD, KEEP_EDITING, LATER, SAVE_DRAFT, VoucherForm, draft_age
from tests.gui import drafts_runner
from tests.helpers.base import ROOT
from tests.helpers.gui import open_widget, wait_idle

CUSTOMER = ("20601030013", "BODEGA SAN MARTÍN S.A.C.")


def open_form(qtbot, context) -> VoucherForm:
    return open_widget(qtbot, context, VoucherForm, show=True)


def typed_form(qtbot, context) -> VoucherForm:
    form = open_form(qtbot, context)
    form.fill_example(*CUSTOMER, [("Arroz Costeño 5 kg", "10", "50.00", "10")])  # S/ 590.00
    return form


def answer(qtbot, box: QMessageBox | None, text: str) -> None:
    """Click the button `text` of an open message box, as a person would."""
    assert box is not None
    qtbot.waitUntil(box.isVisible, timeout=5000)
    button = next(b for b in box.buttons() if b.text() == text)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_escape_on_a_typed_form_asks_and_keep_editing_keeps_it_open(qtbot, context, company, engine):
    form = typed_form(qtbot, context)
    qtbot.keyClick(form, Qt.Key.Key_Escape)
    box = form.close_box
    assert box is not None and box.isVisible() and form.isVisible()
    assert {b.text() for b in box.buttons()} == {SAVE_DRAFT, DISCARD, KEEP_EDITING}
    qtbot.keyClick(form, Qt.Key.Key_Escape)  # a second Escape does not close either, nor open a second box
    assert form.close_box is box and form.isVisible()
    answer(qtbot, box, KEEP_EDITING)
    qtbot.waitUntil(lambda: not box.isVisible(), timeout=5000)
    assert form.isVisible() and form.customer_name.text() == CUSTOMER[1] and form.items.item(0, 0).text()
    assert form.close() is False  # the window's close button asks too
    assert form.close_box.isVisible() and form.isVisible()
    answer(qtbot, form.close_box, KEEP_EDITING)
    assert engine.invoicing.drafts() == []  # nothing stored by asking


def test_discard_closes_and_leaves_no_draft(qtbot, context, company, engine):
    form = typed_form(qtbot, context)
    assert form.save_draft_now()  # as the autosave would have done
    assert len(engine.invoicing.drafts()) == 1
    qtbot.keyClick(form, Qt.Key.Key_Escape)
    answer(qtbot, form.close_box, DISCARD)
    qtbot.waitUntil(lambda: not form.isVisible(), timeout=5000)
    assert engine.invoicing.drafts() == []
    assert form.save_draft_now() is False  # the program ending later (aboutToQuit) does not bring it back
    assert engine.invoicing.drafts() == []


def test_save_draft_closes_and_keeps_one(qtbot, context, company, engine):
    form = typed_form(qtbot, context)
    qtbot.keyClick(form, Qt.Key.Key_Escape)
    answer(qtbot, form.close_box, SAVE_DRAFT)
    qtbot.waitUntil(lambda: not form.isVisible(), timeout=5000)
    drafts = engine.invoicing.drafts()
    assert len(drafts) == 1
    assert drafts[0].cliente == CUSTOMER[1] and drafts[0].total == Decimal("590.00") and drafts[0].moneda == "PEN"
    assert drafts[0].content["items"][0]["descripcion"] == "Arroz Costeño 5 kg"


def test_an_empty_form_closes_without_asking(qtbot, context, company, engine):
    form = open_form(qtbot, context)
    assert form.close() is True
    assert form.close_box is None and not form.isVisible()
    form = open_form(qtbot, context)
    qtbot.keyClick(form, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not form.isVisible(), timeout=5000)
    assert form.close_box is None and engine.invoicing.drafts() == []


def test_the_draft_is_saved_a_moment_after_the_last_change(qtbot, context, company, engine):
    form = typed_form(qtbot, context)
    with qtbot.waitSignal(form.draft_saved, timeout=10_000) as saved:
        form.customer_address.setText("Jr. Huallaga 320")
    draft_id = saved.args[0]
    assert [d.id for d in engine.invoicing.drafts()] == [draft_id]
    with qtbot.waitSignal(form.draft_saved, timeout=10_000) as again:  # the same draft, replaced
        form.items.item(0, 1).setText("12")
    assert again.args[0] == draft_id
    [draft] = engine.invoicing.drafts()
    assert draft.content["items"][0]["cantidad"] == "12" and draft.content["receptor"]["direccion"] == "Jr. Huallaga 320"
    assert draft.total == Decimal("708.00")


def test_a_saved_draft_is_offered_and_restored(qtbot, context, company, engine):
    form = typed_form(qtbot, context)
    form.prices_with_igv.setChecked(True)
    form.add_line("Bolsa plástica", "2", "0.50", "10", "", True)
    assert form.save_draft_now()
    content = form.draft_content()
    form.close()
    answer(qtbot, form.close_box, SAVE_DRAFT)
    again = open_form(qtbot, context)
    box = again.draft_box
    assert box is not None
    qtbot.waitUntil(box.isVisible, timeout=5000)
    assert box.text().startswith(f"Tiene un comprobante sin terminar ({CUSTOMER[1]}, S/ ")
    assert "hace un momento" in box.text() and box.text().endswith("¿Continuar?")
    answer(qtbot, box, CONTINUE)
    wait_idle(qtbot, context.workers)
    assert again.draft_content() == content
    assert again.customer_name.text() == CUSTOMER[1] and again.doc_number.text() == CUSTOMER[0]
    assert [again.items.item(row, 0).text() for row in range(again.items.rowCount())] == \
        ["Arroz Costeño 5 kg", "Bolsa plástica"]
    assert again.prices_with_igv.isChecked() and again.draft_id == engine.invoicing.drafts()[0].id
    third = open_form(qtbot, context)  # the draft is open in a form: not offered twice
    assert third.draft_box is None


def test_a_draft_offered_can_be_left_for_later_or_discarded(qtbot, context, company, engine):
    engine.invoicing.save_draft({"receptor": {"razon_social": "Rosa"}, "items": []}, cliente="Rosa", total="12.50")
    form = open_form(qtbot, context)
    answer(qtbot, form.draft_box, LATER)
    assert len(engine.invoicing.drafts()) == 1 and form.customer_name.text() == ""
    form = open_form(qtbot, context)
    answer(qtbot, form.draft_box, DISCARD)
    assert engine.invoicing.drafts() == []
    assert draft_age(59) == "hace un momento" and draft_age(60 * 7) == "hace 7 min" and draft_age(3 * 3600) == "hace 3 h"


@pytest.mark.sunat_files
def test_an_issued_voucher_takes_its_draft_away(qtbot, context, company, engine, sunat):
    form = typed_form(qtbot, context)
    assert form.save_draft_now() and len(engine.invoicing.drafts()) == 1
    form.emit_button.click()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert form.outcome is not None and form.outcome.digest_value, form.banner.text.text()
    assert engine.invoicing.drafts() == []
    assert form.close() is True  # what is shown was issued: nothing to ask


def next_start(qtbot, engine) -> VoucherForm:
    """The main window opened on the folder: with a draft left, it opens «Nuevo comprobante», which offers it."""
    from app.gui.main_window import MainWindow

    main = MainWindow(engine, first_run=False)
    qtbot.addWidget(main)
    main.show()
    qtbot.waitUntil(lambda: getattr(main.page("Comprobantes"), "form", None) is not None, timeout=10_000)
    form = main.page("Comprobantes").form
    qtbot.waitUntil(lambda: form.draft_box is not None and form.draft_box.isVisible(), timeout=10_000)
    return form


def test_the_main_window_offers_a_draft_left_on_this_desk(qtbot, company, engine):
    engine.invoicing.save_draft({"receptor": {"razon_social": "Rosa"}, "items": [{"descripcion": "Pan"}]},
                                cliente="Rosa", total="12.50")
    form = next_start(qtbot, engine)
    assert "(Rosa, S/ 12.50, hace un momento)" in form.draft_box.text()
    answer(qtbot, form.draft_box, CONTINUE)
    assert form.customer_name.text() == "Rosa" and form.items.item(0, 0).text() == "Pan"


def test_the_main_window_opens_no_form_without_drafts(qtbot, window):
    wait_idle(qtbot, window.workers)
    assert window.snapshot["drafts"] == 0  # the status was read: there was nothing to offer
    assert window.drafts_offered is False and getattr(window.page("Comprobantes"), "form", None) is None


def _lines(stream, into: queue.Queue) -> None:
    for line in iter(stream.readline, ""):
        into.put(line.strip())
    into.put(None)


def _expect(lines: queue.Queue, prefix: str, timeout: float = 60.0) -> str:
    while True:
        line = lines.get(timeout=timeout)  # queue.Empty: the runner never said it
        assert line is not None, f"the runner ended before «{prefix}»"
        if line.startswith(prefix):
            return line


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL is POSIX")
def test_a_draft_survives_a_sigkill_and_is_offered_on_the_next_start(qtbot, context, company, engine, home):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", YUPANA_HOME=str(home))
    child = subprocess.Popen([sys.executable, "-m", "tests.gui.drafts_runner", str(home)], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(child.stdout, lines), daemon=True).start()
    try:
        _expect(lines, "TYPED")
        saved = _expect(lines, "DRAFT-SAVED")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    draft_id = int(saved.split()[1])
    assert [d.id for d in engine.invoicing.drafts()] == [draft_id]
    form = next_start(qtbot, engine)  # another process on the same folder
    answer(qtbot, form.draft_box, CONTINUE)
    wait_idle(qtbot, form.context.workers)
    assert (form.doc_number.text(), form.customer_name.text()) == drafts_runner.CUSTOMER
    typed = [tuple(form.items.item(row, column).text() for column in range(3)) for row in range(form.items.rowCount())]
    assert typed == [line[:3] for line in drafts_runner.LINES]
    assert form.total_labels["total"].text() == "S/ 696.20"  # (250 + 340) × 1.18
    assert form.draft_id == draft_id
