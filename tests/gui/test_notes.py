"""The voucher form's notes (07, 08) and sales on credit, against a real engine and the SUNAT sandbox."""

from __future__ import annotations

from decimal import Decimal

from app.gui.instalments import split_evenly
from app.gui.voucher_form import VoucherForm
from tests.helpers.base import ISSUER_RUC
from tests.helpers.gui import open_widget, wait_idle

CUSTOMER_RUC, CUSTOMER = "20601030013", "BODEGA SAN MARTÍN S.A.C."


def open_form(qtbot, context) -> VoucherForm:
    return open_widget(qtbot, context, VoucherForm, show=True)


def emit_and_wait(qtbot, context, form: VoucherForm) -> dict:
    form.emit_button.click()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert form.outcome is not None, (form.banner.text.text(), form.errors.visible())
    return form.outcome


def issue_factura(qtbot, context) -> dict:
    form = open_form(qtbot, context)
    form.fill_example(CUSTOMER_RUC, CUSTOMER, [("Arroz extra 5 kg", "2", "21.50", "10")])
    outcome = emit_and_wait(qtbot, context, form)
    assert outcome.estado == "aceptado", outcome
    form.close()
    return outcome


def note_form(qtbot, context, tipo: str) -> VoucherForm:
    form = open_form(qtbot, context)
    form.tipo.setCurrentIndex(form.tipo.findData(tipo))
    wait_idle(qtbot, context.workers)
    return form


def set_lines(form: VoucherForm, *lines: tuple[str, str, str, str]) -> None:
    form.items.setRowCount(0)
    for line in lines:
        form.add_line(*line)


def stored(engine, tipo: str) -> dict:
    rows = [row for row in engine.invoicing.vouchers() if row.tipo == tipo]
    assert len(rows) == 1, rows
    return engine.invoicing.voucher(rows[0].id)


def test_credit_note_against_an_issued_factura_is_accepted(qtbot, context, sunat, engine):
    issue_factura(qtbot, context)
    form = note_form(qtbot, context, "07")
    assert form.note.isVisible() and not form.instalments.isVisible()
    assert form.note.pick.count() == 2  # «type it in» and the factura just accepted
    form.note.choose(0)
    assert form.note.fields()["documento_referencia"] == {"tipo": "01", "serie": "F001", "numero": 1}
    assert (form.doc_type.currentData(), form.doc_number.text(), form.customer_name.text()) == (
        "6", CUSTOMER_RUC, CUSTOMER)  # the customer comes from the modified voucher
    assert form.serie.text() == "FC01" and form.numero.value() == 1
    form.note.motivo.setCurrentIndex(form.note.motivo.findData("06"))
    assert form.note.descripcion.placeholderText() == "Devolución total"
    form.note.descripcion.setText("Devolución total de la mercadería")
    set_lines(form, ("Arroz extra 5 kg", "2", "21.50", "10"))
    outcome = emit_and_wait(qtbot, context, form)
    assert outcome.estado == "aceptado", outcome
    assert form.result_badge.text().strip() == "Aceptado por SUNAT"
    xml = stored(engine, "07").xml_firmado
    assert "<cac:BillingReference>" in xml and ">F001-1<" in xml
    assert ">06<" in xml and "Devolución total de la mercadería" in xml
    form.emit_button.click()  # «Emitir otro»: the next note starts clean, numbered after this one
    wait_idle(qtbot, context.workers)
    assert form.note.fields() == {"documento_referencia": {"tipo": "01", "serie": "", "numero": 0},
                                  "codigo_motivo": "01", "descripcion_motivo": None}
    assert form.serie.text() == "FC01" and form.numero.value() == 2
    assert form.note.pick.count() == 2  # a note is not a voucher another note modifies


def test_debit_note_is_accepted(qtbot, context, sunat, engine):
    issue_factura(qtbot, context)
    form = note_form(qtbot, context, "08")
    assert [form.note.motivo.itemData(i) for i in range(form.note.motivo.count())] == ["01", "02", "03", "11", "12"]  # 12: IVAP (issue 37)
    form.note.choose(0)
    assert form.serie.text() == "FD01"
    set_lines(form, ("Intereses por mora", "1", "5.00", "10"))
    assert form.total_labels["total"].text() == "S/ 5.90"
    outcome = emit_and_wait(qtbot, context, form)
    assert outcome.estado == "aceptado", outcome
    assert outcome.nombre_archivo.startswith(f"{ISSUER_RUC}-08-FD01-1")
    assert "Intereses por mora" in stored(engine, "08").xml_firmado


def test_factura_on_credit_with_two_cuotas_is_accepted(qtbot, context, sunat, engine):
    form = open_form(qtbot, context)
    form.fill_example(CUSTOMER_RUC, CUSTOMER, [("Cemento Sol 42.5 kg", "10", "25.00", "10")])
    form.forma_pago.setCurrentIndex(form.forma_pago.findData("Credito"))
    assert form.instalments.isVisible() and form.instalments.count() == 1
    assert form.instalments.read()[0][0]["monto"] == Decimal("295.00")  # one cuota for the whole amount
    form.instalments.add_button.click()
    cuotas, problems = form.instalments.read()
    assert not problems
    assert [c["monto"] for c in cuotas] == [Decimal("147.50"), Decimal("147.50")]
    assert cuotas[1]["fecha_vencimiento"] > cuotas[0]["fecha_vencimiento"]
    assert form.instalments.sum_label.text() == "Suma de las cuotas: 295.00 de 295.00"
    outcome = emit_and_wait(qtbot, context, form)
    assert outcome.estado == "aceptado", outcome
    xml = stored(engine, "01").xml_firmado
    assert ">Credito<" in xml and ">Cuota001<" in xml and ">Cuota002<" in xml


def test_a_wrong_reference_shows_the_message_next_to_the_field(qtbot, context, company):
    form = note_form(qtbot, context, "07")
    form.note.ref_numero.setValue(5)  # serie left empty
    form.fill_example(CUSTOMER_RUC, CUSTOMER, [("Arroz", "1", "10", "10")])
    form.emit_button.click()
    wait_idle(qtbot, context.workers)
    shown = form.errors.visible()
    assert "documento_referencia" in shown, (shown, form.banner.text.text())
    assert "-5" in shown["documento_referencia"] and form.errors.labels["documento_referencia"].isVisible()
    assert form.banner.text.text() == "Revise los campos marcados en rojo."
    assert form.outcome is None and form.emit_button.isEnabled()


def test_a_boleta_reference_switches_the_serie_letter_and_document(qtbot, context, company):
    form = note_form(qtbot, context, "07")
    assert form.serie.text() == "FC01" and form.note.pick.count() == 1  # nothing issued yet
    form.note.ref_tipo.setCurrentIndex(form.note.ref_tipo.findData("03"))
    assert form.serie.text() == "BC01"
    form.tipo.setCurrentIndex(form.tipo.findData("08"))
    assert form.serie.text() == "BD01" and form.doc_type.currentData() == "1"
    form.tipo.setCurrentIndex(form.tipo.findData("01"))
    assert not form.note.isVisible() and form.serie.text() == "F001"
    assert "documento_referencia" not in form.request()


def test_cuotas_follow_the_total_until_the_user_types_an_amount(qtbot, context, company):
    assert split_evenly(Decimal("100.00"), 3) == [Decimal("33.33"), Decimal("33.33"), Decimal("33.34")]
    form = open_form(qtbot, context)
    form.forma_pago.setCurrentIndex(form.forma_pago.findData("Credito"))
    form.fill_example(CUSTOMER_RUC, CUSTOMER, [("Arroz", "1", "100", "10")])
    form.instalments.add_cuota()
    assert [c["monto"] for c in form.instalments.read()[0]] == [Decimal("59.00"), Decimal("59.00")]
    form.instalments.table.item(0, 0).setText("100")  # typed by the user: kept from now on
    form.items.item(0, 1).setText("2")
    assert [c["monto"] for c in form.instalments.read()[0]] == [Decimal("100"), Decimal("59.00")]
    assert form.instalments.sum_label.text() == "Suma de las cuotas: 159.00 de 236.00"
    form.instalments.table.item(1, 0).setText("nada")
    form.emit_button.click()
    assert "Cuota 2" in form.errors.visible()["forma_pago"]
    assert form.instalments.table.item(1, 0).toolTip().startswith("Cuota 2")
    request_sent = form.instalments.read()[1]
    assert [p.field for p in request_sent] == ["forma_pago.cuotas[1].monto"]
