"""«Consultar validez» (Comprobantes): SUNAT's consulta integrada of a voucher against the SUNAT sandbox, answered in
the window: a voucher that exists, one voided... and errors under the field they name, in Spanish."""

from __future__ import annotations

from app.core.platform import clock
from app.gui.vouchers import VouchersPage
from tests.helpers.base import ISSUER_RUC
from tests.helpers.gui import open_widget, wait_idle
from tests.helpers.voucher_matrix import factura, item


def test_consult_validity_in_the_window(qtbot, context, sunat, engine):
    issued = engine.invoicing.issue(factura("F001", 95, [item("Servicio de consultoría", "1", "100")]))
    assert issued.sent is not None and issued.sent.estado == "aceptado"
    page = open_widget(qtbot, context, VouchersPage)
    dialog = page.consult_validity()
    qtbot.addWidget(dialog)
    dialog.ruc.setText(ISSUER_RUC)
    dialog.serie.setText("F001")
    dialog.numero.setValue(95)
    dialog.fecha.setDate(clock.today())
    dialog.total.setText("118.00")
    dialog.consult_button.click()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert dialog.answer is not None, dialog.banner.text.text()
    assert dialog.badge.text().strip() == "F001-95: ACEPTADO"
    assert "Válido: comprobante aceptado por SUNAT." in dialog.answer_text.text()
    assert f"Contribuyente {ISSUER_RUC}: ACTIVO; domicilio fiscal: HABIDO." in dialog.answer_text.text()
    dialog.numero.setValue(96)  # never issued
    dialog.consult_button.click()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert dialog.badge.text().strip() == "F001-96: NO EXISTE"
    assert dialog.answer_text.text().startswith("No válido")
    dialog.serie.setText("F1")
    dialog.consult_button.click()
    wait_idle(qtbot, context.workers, timeout=30_000)
    assert "La serie «F1» no es válida" in dialog.errors.visible()["serie"]
    dialog.total.setText("ciento")
    dialog.consult_button.click()
    assert "El importe total «ciento» debe ser un monto" in dialog.errors.visible()["total"]
