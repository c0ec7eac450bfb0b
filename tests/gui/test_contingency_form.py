"""«Nuevo comprobante» for contingency (issue 37, item c): a factura and a boleta of a numeric serie (0001, SUNAT's
1001 admits four digits) and a credit note correcting a factura printed on paper (0001-5, SUNAT's 2117 admits 1 to
4 digits), made in the form and accepted by the SUNAT sandbox."""

from __future__ import annotations

from app.gui.voucher_form import VoucherForm
from tests.helpers.base import ISSUER_RUC
from tests.helpers.gui import open_widget, wait_idle
from tests.helpers.voucher_matrix import CUSTOMER_RUC


def emitted(qtbot, context, form: VoucherForm):
    form.emit_button.click()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert form.outcome is not None, (form.banner.text.text(), form.errors.visible())
    return form.outcome


def test_a_contingency_factura_and_boleta_made_in_the_form(qtbot, context, sunat):
    form = open_widget(qtbot, context, VoucherForm, show=True)
    assert form.serie.text() == "F001"
    form.contingencia.setChecked(True)
    assert form.serie.text() == "0001"
    qtbot.waitUntil(lambda: form.proposed_numero == 1)
    form.fill_example(CUSTOMER_RUC, "BODEGA SAN MARTÍN S.A.C.", [("Servicio de instalación eléctrica", "1", "850",
                                                                 "10")])
    assert form.request()["serie"] == "0001"
    outcome = emitted(qtbot, context, form)
    assert (outcome.estado, outcome.nombre_archivo) == ("aceptado", f"{ISSUER_RUC}-01-0001-1.xml"), outcome
    form.start_next()
    form.tipo.setCurrentIndex(form.tipo.findData("03"))  # a boleta keeps the contingency: a numeric serie
    assert form.serie.text() == "0001" and form.contingencia.isChecked()
    form.serie.setText("0002")  # another contingency serie, typed
    form.propose_numero()
    wait_idle(qtbot, context.workers)
    form.fill_example("", "CLIENTES VARIOS", [("Menú del día", "3", "10.17", "10")])
    form.doc_type.setCurrentIndex(form.doc_type.findData("0"))
    outcome = emitted(qtbot, context, form)
    assert (outcome.estado, outcome.nombre_archivo) == ("aceptado", f"{ISSUER_RUC}-03-0002-1.xml"), outcome
    form.contingencia.setChecked(False)  # back to the electronic serie of the type
    assert form.serie.text() == "B001"


def test_a_credit_note_correcting_a_factura_printed_on_paper(qtbot, context, sunat):
    form = open_widget(qtbot, context, VoucherForm, show=True)
    form.tipo.setCurrentIndex(form.tipo.findData("07"))
    note = form.note
    note.ref_tipo.setCurrentIndex(note.ref_tipo.findData("01"))
    qtbot.keyClicks(note.ref_serie, "0001")  # the paper factura 0001-5, typed by hand
    note.ref_numero.setValue(5)
    note.motivo.setCurrentIndex(note.motivo.findData("07"))
    assert form.serie.text() == "FC01"  # the note itself is electronic: the letter of the factura it corrects
    form.fill_example(CUSTOMER_RUC, "BODEGA SAN MARTÍN S.A.C.", [("Devolución de 2 focos LED", "2", "12.50", "10")])
    request = form.request()
    assert request["documento_referencia"] == {"tipo": "01", "serie": "0001", "numero": 5}
    outcome = emitted(qtbot, context, form)
    assert (outcome.estado, outcome.nombre_archivo) == ("aceptado", f"{ISSUER_RUC}-07-FC01-1.xml"), outcome
