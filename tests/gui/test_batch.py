"""«Emitir lote…» on Comprobantes: a file of vouchers issued in the background with progress, the result in
plain words, errors per voucher, cancel between blocks."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from app.core.invoicing import batches
from app.gui import batch_issue
from app.gui.vouchers import VouchersPage
from tests.helpers.gui import open_widget, wait_idle
from tests.helpers.voucher_matrix import factura, item


def write_batch(path, count: int, bad_at: int | None = None):
    lines = [json.dumps(factura("F950", n, [item("Café 250 g", "3", "12.40")]), default=str)
             for n in range(1, count + 1)]
    if bad_at is not None:
        lines[bad_at] = json.dumps(factura("F950", 99, [item("Café", "0", "12.40")]), default=str)
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def with_default_certificate(engine, company):
    certificate = engine.invoicing.create_test_certificate(company.ruc)
    engine.invoicing.set_default_certificate(company.ruc, certificate.certificado_id)


def test_a_batch_file_is_issued_with_progress_and_its_errors_named(qtbot, context, engine, company, tmp_path):
    with_default_certificate(engine, company)
    page = open_widget(qtbot, context, VouchersPage)
    seen = []
    page.batch.progress.valueChanged.connect(seen.append)
    with qtbot.waitSignal(page.batch.finished, timeout=30_000) as finished:
        page.batch.issue_file(str(write_batch(tmp_path / "lote.jsonl", 4, bad_at=3)))
        assert not page.batch.start_button.isEnabled() and not page.batch.progress.isHidden()
    assert finished.args[0] == {"emitidos": 3, "con_error": 1, "cancelado": False}
    assert seen and seen[-1] == 100
    assert page.banner.tone == "warning" and "Lote: 3 comprobantes emitidos y firmados" in page.banner.text.text()
    assert "Comprobante 4 del archivo" in page.banner.details.toPlainText()
    assert "items[0].cantidad" in page.banner.details.toPlainText()
    qtbot.waitUntil(lambda: page.model.rowCount() == 3, timeout=10_000)  # the list follows the engine's events
    assert {page.status_of(row) for row in range(3)} == {"firmado"}
    assert page.batch.start_button.isEnabled() and page.batch.progress.isHidden()


def test_cancel_stops_between_blocks_and_says_what_is_left(qtbot, context, engine, company, tmp_path, monkeypatch):
    with_default_certificate(engine, company)
    monkeypatch.setattr(batches, "BLOCK", 2)
    monkeypatch.setattr(batch_issue, "CHUNK", 2)  # the window hands the engine one block at a time
    page = open_widget(qtbot, context, VouchersPage)
    cancel_pressed = threading.Event()
    real = context.engine.invoicing.issue_batch

    def held(requests, certificado_id=None):
        yield from real(requests, certificado_id)
        # hold the end of the first block until the user has pressed Cancelar
        assert cancel_pressed.wait(10), "Cancelar lote was never pressed"

    monkeypatch.setattr(context.engine.invoicing, "issue_batch", held)
    with qtbot.waitSignal(page.batch.finished, timeout=30_000) as finished:
        page.batch.issue_file(str(write_batch(tmp_path / "lote.jsonl", 5)))
        page.batch.cancel_button.click()
        cancel_pressed.set()
    assert finished.args[0] == {"emitidos": 2, "con_error": 0, "cancelado": True}
    assert "quedaron sin emitir 3" in page.banner.text.text()
    assert len(engine.invoicing.vouchers()) == 2


def test_an_unreadable_file_is_said_in_spanish(qtbot, context, engine, company, tmp_path):
    page = open_widget(qtbot, context, VouchersPage)
    broken = tmp_path / "lote.json"
    broken.write_text("[{\"tipo\": ", encoding="utf-8")
    page.batch.issue_file(str(broken))
    wait_idle(qtbot, context.workers)
    assert page.banner.tone == "error"
    assert "no es un arreglo JSON válido" in page.banner.text.text()


def test_exportar_xml_y_cdr_writes_the_periods_zip_off_the_gui_thread(qtbot, context, engine, company, tmp_path):
    """Issue 35: «Exportar XML y CDR…» writes the accountant's zip on a worker, with progress, and says where."""
    import zipfile

    from app.gui.period_export import zip_name

    with_default_certificate(engine, company)
    list(engine.invoicing.issue_batch([factura("F950", n, [item("Café 250 g", "3", "12.40")]) for n in range(1, 13)]))
    page = open_widget(qtbot, context, VouchersPage)
    desde, hasta = page.export_period()
    seen = []
    page.export.progress.valueChanged.connect(seen.append)
    gui_thread = threading.get_ident()
    threads = []
    original = engine.invoicing.export_period_steps

    def watched(*args, **kwargs):
        threads.append(threading.get_ident())
        return original(*args, **kwargs)

    engine.invoicing.export_period_steps = watched
    with qtbot.waitSignal(page.export.finished, timeout=30_000) as finished:
        page.export.export_to(str(tmp_path))
        assert not page.export.start_button.isEnabled() and not page.export.progress.isHidden()
    result = finished.args[0]
    assert threads and gui_thread not in threads and seen and seen[-1] == 100
    assert result.vouchers == 12 and Path(result.path) == tmp_path / zip_name(desde, hasta)
    with zipfile.ZipFile(result.path) as archive:
        assert len([name for name in archive.namelist() if name.startswith("XML/")]) == 12
    assert page.banner.tone == "success" and "Exportados 12 comprobantes" in page.banner.text.text()
    assert page.export.start_button.isEnabled() and page.export.progress.isHidden()
    wait_idle(qtbot, context.workers)
