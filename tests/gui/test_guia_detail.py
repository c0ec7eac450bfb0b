"""A guía de remisión's detail in the windows (issue 36, point 4): its state and SUNAT's CDR, and «Guardar PDF»
writing the guía's A4, read back with pdftotext and zbarimg: the QR is the link of the CDR (the GRE sandbox's CDRs
carry it as SUNAT's do). The guía here is issued by the engine; «Nueva guía de remisión» is not in the windows yet."""

from __future__ import annotations

from lxml import etree

from app.core.api import statuses
from tests.gui.test_pdf import open_detail
from tests.helpers.gui import save_pdf
from tests.helpers.guia_matrix import remitente
from tests.helpers.oracles import decode_qr, needs_poppler, pdf_text

CBC = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"


@needs_poppler
def test_an_accepted_guias_detail_shows_its_state_cdr_and_pdf_with_the_cdr_link(qtbot, context, guias, tmp_path):
    emission = guias.invoicing.issue(remitente(1))
    assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO, emission.refusal
    detail = open_detail(qtbot, context, emission.voucher_id)
    assert detail.title.text() == "Guía de remisión remitente T001-1"
    assert detail.status_badge.property("status") == statuses.ACEPTADO
    link = etree.fromstring(guias.invoicing.voucher_cdr(emission.voucher_id).xml_text.encode()).findtext(
        f".//{{{CBC}}}DocumentDescription")
    assert link in detail.cdr_view.toPlainText()
    target = tmp_path / "guia.pdf"
    save_pdf(qtbot, context, detail.print_panel, target)
    text = pdf_text(target)
    assert "GUÍA DE REMISIÓN REMITENTE ELECTRÓNICA" in text and "T001-1" in text and "01 - Venta" in text
    assert "ABC123 (principal)" in text and "Cemento Portland tipo I, bolsa de 42.5 kg" in text
    assert decode_qr(target, tmp_path) == [link]
