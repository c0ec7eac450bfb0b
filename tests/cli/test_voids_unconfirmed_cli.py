"""`yupana anular` and a baja SUNAT received without its answer (issue 31, point 1), as real processes against the
SUNAT sandbox: refused while the outcome is unknown («Baja por confirmar»), naming the voucher and the first summary;
once that baja is taken as not made, voided again with the warning that names the first summary."""

from __future__ import annotations

import datetime as dt

from app.core.invoicing import statuses
from app.core.platform import clock
from tests.helpers.base import run_cli
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import factura, item


def test_anular_refuses_while_the_baja_is_por_confirmar_then_warns_once_it_was_taken_as_not_made(
        voiding, voids_sandbox, home):
    voucher_id = issued(voiding, factura("F001", 62, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.summaries.hold()
    voids_sandbox.fail_next("drop_after_receive", operation="sendSummary")
    first = voiding.invoicing.void(voucher_id, "ERROR EN EL RUC")
    assert first.received_without_ticket
    voiding.close()  # the command opens the folder in its own process
    refused = run_cli("anular", "F001-62", "--motivo", "OTRA VEZ", "--no-esperar", home=home)
    assert refused.returncode == 1, refused.stdout.decode()
    said = refused.stderr.decode()
    assert "F001-62" in said and first.ident in said and "Baja por confirmar" in said
    assert voids_sandbox.summaries.stats()["summaries"] == {f"{first.emisor_ruc}-{first.ident}": 2}

    from app.core.engine import Engine

    reopened = Engine(home)
    try:  # 48 hours later the status query still says accepted: the void is taken as not made
        reopened._voids.tickets.lost.now = lambda: clock.now() + dt.timedelta(hours=49)  # time seam
        assert reopened._voids.check_ticket(first.summary_id).state == statuses.SUMMARY_UNCONFIRMED
    finally:
        reopened.close()
    voids_sandbox.summaries.release()
    again = run_cli("anular", "F001-62", "--motivo", "ERROR EN EL RUC", home=home)
    assert again.returncode == 0, again.stderr.decode()
    out = again.stdout.decode().strip().splitlines()
    assert any(first.ident in line and line.startswith("Atención") for line in out)
    assert out[-1] == "F001-62 anulado"
