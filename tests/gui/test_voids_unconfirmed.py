"""«Baja por confirmar» in the windows (issue 31, point 1): a voucher whose RA/RC SUNAT received without its answer
shows it in the Comprobantes list and in its detail, where «Anular» is disabled; once the void is taken as not made
(the status query still says accepted 48 hours later), the detail offers «Anular» again with the engine's warning
naming the first summary, in the badge and in the dialog."""

from __future__ import annotations

import datetime as dt

from app.core.invoicing import statuses
from app.core.platform import clock
from app.gui.voucher_detail import VoucherDetail
from app.gui.vouchers import VouchersPage
from tests.helpers.gui import open_widget, wait_idle
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import factura, item


def test_a_void_with_its_answer_lost_shows_baja_por_confirmar_then_offers_anular_with_a_warning(
        qtbot, context, engine, voiding):
    voucher_id = issued(engine, factura("F001", 61, [item("Servicio de consultoría", "1", "100")]))
    page = open_widget(qtbot, context, VouchersPage, show=True)
    assert page.status_of(0) == statuses.ACEPTADO
    voiding.summaries.hold()  # SUNAT has not processed the RA: its status query says accepted
    voiding.fail_next("drop_after_receive", operation="sendSummary")  # its answer to the first send is lost
    first = engine.invoicing.void(voucher_id, "ERROR EN EL RUC")
    assert first.received_without_ticket
    qtbot.waitUntil(lambda: page.status_of(0) == statuses.BAJA_POR_CONFIRMAR, timeout=10_000)  # told by the event
    assert page.text_of(0, 5) == "Baja por confirmar"
    detail = VoucherDetail(context, voucher_id)
    qtbot.addWidget(detail)
    detail.show()
    qtbot.waitUntil(lambda: bool(detail.record), timeout=10_000)
    wait_idle(qtbot, context.workers)
    assert detail.void_state.isVisible() and detail.void_state.text().strip() == "Baja por confirmar"
    assert first.ident in detail.void_state.toolTip() and not detail.void_button.isEnabled()
    # 48 hours later SUNAT still says accepted: the void is taken as not made.
    engine._voids.tickets.lost.now = lambda: clock.now() + dt.timedelta(hours=49)  # time seam
    assert engine._voids.check_ticket(first.summary_id).state == statuses.SUMMARY_UNCONFIRMED
    qtbot.waitUntil(lambda: detail.void_state.text().strip() == "Baja sin confirmar", timeout=10_000)
    assert first.ident in detail.void_state.toolTip() and detail.void_button.isEnabled()
    qtbot.waitUntil(lambda: page.status_of(0) == statuses.ACEPTADO, timeout=10_000)
    dialog = detail.void()
    assert dialog.banner.tone == "warning" and first.ident in dialog.banner.text.text()
    dialog.reject()
