"""The printed voucher in the windows: the preview shows, «Guardar PDF» writes the file, «Imprimir» prints the
same pages (to Qt's own PDF printer here, read back with pdftotext and zbarimg), «Imprimir» after «Emitir»."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from PySide6.QtPrintSupport import QPrintDialog, QPrinter

from app.gui.voucher_detail import VoucherDetail
from tests.core.invoicing.test_pdf import expected_qr
from tests.helpers.gui import open_widget, wait_idle
from tests.helpers.oracles import decode_qr, needs_poppler, pdf_text
from tests.helpers.voucher_matrix import MATRIX


@pytest.fixture
def signed_id(engine, company) -> int:
    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    request = next(request for name, request in MATRIX if name == "factura-credito")
    generated = engine.invoicing.generate_xml(request)
    engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado_id})
    return engine.invoicing.find_voucher("F001-9", tipo="01")


def open_detail(qtbot, context, voucher_id) -> VoucherDetail:
    detail = VoucherDetail(context, voucher_id)
    qtbot.addWidget(detail)
    detail.show()
    qtbot.waitUntil(lambda: bool(detail.print_panel.page_labels), timeout=10_000)
    wait_idle(qtbot, context.workers)
    return detail


def dark_share(image) -> float:
    """The share of dark pixels on a grid over the image (blank page: 0)."""
    dark = total = 0
    for y in range(0, image.height(), 4):
        for x in range(0, image.width(), 4):
            total += 1
            dark += image.pixelColor(x, y).lightness() < 128
    return dark / total


def test_the_detail_shows_a_preview_of_the_page(qtbot, context, signed_id):
    detail = open_detail(qtbot, context, signed_id)
    panel = detail.print_panel
    assert detail.pdf_button.isEnabled()
    detail.pdf_button.click()
    assert detail.tabs.currentWidget() is panel
    pixmap = panel.page_labels[0].pixmap()
    assert (pixmap.width(), pixmap.height()) == (794, 1123)  # A4 at 96 dpi, the company's default
    assert 0.01 < dark_share(panel.images[0]) < 0.5  # text and the QR are painted, not a blank page
    assert "1 página · A4" == panel.status.text()
    panel.format_box.setCurrentIndex(panel.format_box.findData("ticket"))
    qtbot.waitUntil(lambda: panel.formato == "ticket", timeout=10_000)
    wait_idle(qtbot, context.workers)
    ticket = panel.page_labels[-1].pixmap()
    assert len(panel.page_labels) == 1 and ticket.width() == 302  # 80 mm at 96 dpi
    assert ticket.height() > 2 * ticket.width()


def test_save_pdf_writes_the_file_chosen(qtbot, context, signed_id, tmp_path, engine):
    detail = open_detail(qtbot, context, signed_id)
    panel = detail.print_panel
    dialog = panel.choose_file()
    assert dialog.isVisible()
    wait_idle(qtbot, context.workers)
    assert dialog.selectedFiles()[0].endswith("20100066603-01-F001-9.pdf")  # the usual name is proposed
    target = tmp_path / "venta.pdf"
    dialog.fileSelected.emit(str(target))
    dialog.close()
    wait_idle(qtbot, context.workers)
    assert target.read_bytes() == engine.invoicing.pdf(signed_id, "a4").content
    assert str(target) in detail.banner.text.text()


@needs_poppler
@pytest.mark.parametrize("formato, width_mm", [("a4", 210), ("ticket", 80)])
def test_print_paints_the_same_pages_on_the_printer(qtbot, context, signed_id, engine, tmp_path, formato,
                                                     width_mm):
    detail = open_detail(qtbot, context, signed_id)
    panel = detail.print_panel
    panel.load(signed_id, formato)
    qtbot.waitUntil(lambda: panel.formato == formato, timeout=10_000)
    wait_idle(qtbot, context.workers)
    printer = QPrinter(QPrinter.PrinterMode.HighResolution)
    printer.setOutputFormat(QPrinter.OutputFormat.PdfFormat)
    output = tmp_path / "impreso.pdf"
    printer.setOutputFileName(str(output))
    printed = []
    panel.print_to(printer, printed.append)
    wait_idle(qtbot, context.workers)
    assert printed == [1]
    record = engine.invoicing.voucher(signed_id)
    text = pdf_text(output)
    assert "F001-9" in text and record.digest_value in text and "Cuota 001" in text
    info = subprocess.run(["pdfinfo", str(output)], capture_output=True).stdout.decode()
    width_pt = float(re.search(r"Page size:\s+([\d.]+) x", info).group(1))
    assert abs(width_pt * 25.4 / 72 - width_mm) < 0.5  # A4, or 80 mm wide for the ticket printer
    assert decode_qr(output, tmp_path) == [expected_qr(record)]


def test_print_opens_qt_print_dialog_without_blocking(qtbot, context, signed_id):
    detail = open_detail(qtbot, context, signed_id)
    dialog = detail.print_panel.choose_printer()
    assert isinstance(dialog, QPrintDialog) and dialog.isVisible()
    dialog.reject()
    assert detail.print_panel.print_button.isEnabled()


def test_unsigned_voucher_explains_why_there_is_no_pdf(qtbot, context, engine, company):
    from tests.helpers.voucher_matrix import factura, item

    engine.invoicing.generate_xml(factura("F080", 1, [item("Pan", "1", "1")]))
    detail = VoucherDetail(context, engine.invoicing.find_voucher("F080-1"))
    qtbot.addWidget(detail)
    qtbot.waitUntil(lambda: bool(detail.record))
    wait_idle(qtbot, context.workers)
    assert not detail.pdf_button.isEnabled()
    assert "todavía no está firmado" in detail.print_panel.status.text()
    assert not detail.print_panel.save_button.isEnabled()


@pytest.mark.skipif(shutil.which("xmlsec1") is None, reason="xmlsec1 is not installed")
def test_print_is_one_click_away_after_emitir(qtbot, context, sunat, engine):
    from app.gui.voucher_form import VoucherForm

    form = open_widget(qtbot, context, VoucherForm, show=True)
    form.fill_example("20601030013", "BODEGA SAN MARTÍN S.A.C.", [("Arroz extra 5 kg", "2", "21.50", "10")])
    assert not form.print_button.isVisible()
    form.emit_button.click()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert form.outcome and form.outcome.estado == "aceptado", form.banner.text.text()
    assert form.print_button.isVisible()
    form.print_button.click()
    qtbot.waitUntil(lambda: form.printing is not None and form.printing.print_dialog is not None, timeout=10_000)
    dialog = form.printing.print_dialog
    assert dialog.isVisible() and form.printing.pages
    dialog.reject()
    form.start_next()
    assert not form.print_button.isVisible()


def test_ajustes_sets_the_company_print_format_and_logo(qtbot, context, engine, company, tmp_path):
    import io

    from PIL import Image

    from app.gui.company_form import CompanyForm
    from app.gui.widgets import MessageBanner

    banner = MessageBanner()
    form = CompanyForm(context, banner)
    qtbot.addWidget(form)
    qtbot.addWidget(banner)
    form.reload_companies()
    qtbot.waitUntil(lambda: form.ruc.text() == company.ruc)
    wait_idle(qtbot, context.workers)
    assert form.print_format.currentData() == "a4" and form.logo_label.text() == "Sin logo"
    logo = tmp_path / "logo.png"
    buffer = io.BytesIO()
    Image.new("RGB", (200, 80), (0, 90, 160)).save(buffer, "PNG")
    logo.write_bytes(buffer.getvalue())
    form.print_format.setCurrentIndex(form.print_format.findData("ticket"))
    form.logo_chosen(str(logo))
    form.save()
    wait_idle(qtbot, context.workers)
    options = engine.admin.print_options(company.ruc)
    assert options.formato == "ticket" and options.logo_px == (200, 80)
    assert form.logo_label.text() == "Logo de 200 × 80 px"
    form.logo_chosen(str(tmp_path / "gone.png"))
    form.save()
    wait_idle(qtbot, context.workers)
    assert "No se pudo leer el logo" in form.errors.visible().get("logo", "") + banner.text.text()
    form.remove_logo()
    form.save()
    wait_idle(qtbot, context.workers)
    assert engine.admin.print_options(company.ruc).logo is None


def test_send_by_whatsapp_reaches_the_gateway_with_the_pdf(qtbot, context, signed_id, engine, gateway):
    import hashlib

    engine.admin.config_set("listener_port", "0")
    engine.messaging.start_listener()
    gateway.configure(engine)
    detail = open_detail(qtbot, context, signed_id)
    assert detail.whatsapp_button.isEnabled()
    detail.whatsapp_button.click()
    dialog = detail.send_dialog
    qtbot.waitUntil(lambda: dialog.send_button.isEnabled(), timeout=10_000)
    assert dialog.instance.currentData() == "demo"
    assert "F001-9" in dialog.text.toPlainText() and "S/ " in dialog.text.toPlainText()
    dialog.number.setText("+51 987 654 321")
    dialog.send_button.click()
    qtbot.waitUntil(lambda: dialog.sent is not None, timeout=15_000)
    [sent] = gateway.wait_sent(1)
    printed = engine.invoicing.pdf(signed_id)
    pdf, name = printed.content, printed.name
    assert sent["number"].endswith("987654321") and sent["fileName"] == name and name.endswith(".pdf")
    assert sent["media_sha256"] == hashlib.sha256(pdf).hexdigest()  # the voucher's own PDF, whole
    kept = engine.admin.home() / "enviados" / name  # the copy that was sent stays, readable by its owner only
    assert kept.read_bytes() == pdf and (os.name == "nt" or kept.stat().st_mode & 0o077 == 0)
    assert "Enviado por WhatsApp" in detail.banner.text.text()


def test_send_by_whatsapp_names_a_wrong_number(qtbot, context, signed_id, engine, gateway):
    engine.admin.config_set("listener_port", "0")
    engine.messaging.start_listener()
    gateway.configure(engine)
    detail = open_detail(qtbot, context, signed_id)
    dialog = detail.send_by_whatsapp()
    qtbot.waitUntil(lambda: dialog.send_button.isEnabled(), timeout=10_000)
    dialog.number.setText("987")
    dialog.send_button.click()
    qtbot.waitUntil(lambda: dialog.banner.isVisible(), timeout=10_000)
    assert dialog.sent is None and "987" in dialog.banner.text.text()
    assert gateway.sent_messages() == []


def test_characters_no_font_has_are_said_in_the_detail(qtbot, context, engine, company):
    """A voucher with Arabic text (outside the fonts on purpose: docs/pdf.md) is previewed with its marks, and the
    detail says which characters could not be printed instead of keeping quiet."""
    from tests.helpers.voucher_matrix import factura, item

    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    generated = engine.invoicing.generate_xml(factura("F105", 1, [item("Té شاي", "1", "10")]))
    engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado_id})
    detail = open_detail(qtbot, context, engine.invoicing.find_voucher("F105-1", tipo="01"))
    qtbot.waitUntil(lambda: detail.banner.isVisible(), timeout=10_000)
    assert detail.banner.tone == "warning"
    assert "no se pueden imprimir" in detail.banner.text.text()
    assert "«ش» (U+0634)" in detail.banner.details.toPlainText()
