"""`yupana anular`, `yupana resumen` and `yupana cdr` as real processes against the SUNAT sandbox (SUNAT's sheets):
the last line is each voucher's final state, the signed RA/RC written to --salida, a progress line while SUNAT's
ticket is pending, SUNAT's reason when it rejects."""

from __future__ import annotations

import os
import subprocess
import sys

from app.core.invoicing import statuses
from app.core.platform import clock
from tests.helpers.base import ISSUER_RUC, ROOT, run_cli
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import DNI_CUSTOMER, boleta, factura, item


def lines(done: subprocess.CompletedProcess) -> list[str]:
    return done.stdout.decode().strip().splitlines()


def test_anular_voids_a_factura_and_writes_the_signed_ra(voiding, voids_sandbox, home, tmp_path):
    voucher_id = issued(voiding, factura("F001", 7, [item("Servicio de consultoría", "1", "100")]))
    done = run_cli("anular", "F001-7", "--motivo", "ERROR EN EL RUC", "--salida", str(tmp_path / "xml"), home=home)
    assert done.returncode == 0, done.stderr.decode()
    assert lines(done)[-1] == "F001-7 anulado"
    ident = f"RA-{clock.today():%Y%m%d}-1"
    written = tmp_path / "xml" / f"{ISSUER_RUC}-{ident}.xml"
    assert f"<cbc:ID>{ident}</cbc:ID>" in written.read_text(encoding="utf-8")
    assert voiding.invoicing.voucher(voucher_id).status == statuses.ANULADO
    assert voids_sandbox.voucher_status(ISSUER_RUC, "01", "F001", 7) == statuses.ANULADO


def test_anular_shows_progress_while_the_ticket_is_pending(voiding, voids_sandbox, home):
    issued(voiding, boleta("B001", 5, [item("Polo de algodón", "2", "59")], receptor=DNI_CUSTOMER))
    voids_sandbox.summaries.hold()
    process = subprocess.Popen([sys.executable, "-m", "app", "anular", "B001-5", "--motivo", "VENTA CANCELADA"],
                               cwd=ROOT, env={**os.environ, "YUPANA_HOME": str(home)}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        assert voids_sandbox.summaries.wait_for_tickets(1, 60)
        [ticket] = voids_sandbox.summaries.tickets()
        assert voids_sandbox.summaries.wait_for_polls(ticket, 2, 60)
        voids_sandbox.summaries.release()
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err.decode()
    progress = f"Esperando la respuesta de SUNAT al resumen diario RC-{clock.today():%Y%m%d}-1 (ticket {ticket})"
    assert err.decode().count(progress) == 1  # once, though SUNAT was asked at least twice
    assert out.decode().strip().splitlines()[-1] == "B001-5 anulado"


def test_anular_no_esperar_leaves_the_ticket_pending(voiding, voids_sandbox, home):
    issued(voiding, factura("F001", 8, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.summaries.hold()
    done = run_cli("anular", "F001-8", "--motivo", "ERROR EN EL RUC", "--no-esperar", home=home)
    assert done.returncode == 3, done.stderr.decode()
    assert "aún no responde al ticket" in done.stdout.decode()
    assert lines(done)[-1] == f"F001-8 {statuses.BAJA_POR_CONFIRMAR}"  # stored aceptado; its baja not yet known
    assert len(voiding._voids.pending()) == 1


def test_anular_rejected_shows_sunats_reason_and_the_voucher_unchanged(voiding, voids_sandbox, home):
    issued(voiding, factura("F001", 9, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.fail_next("reject:2375", operation="sendSummary")
    done = run_cli("anular", "F001-9", "--motivo", "ERROR EN EL RUC", home=home)
    assert done.returncode == 1
    assert "rechazada por SUNAT (código 2375)" in done.stdout.decode()
    assert lines(done)[-1] == "F001-9 aceptado"


def test_anular_refuses_in_spanish_what_cannot_be_voided(voiding, voids_sandbox, home):
    voiding.invoicing.generate_xml(factura("F001", 10, [item("Servicio de consultoría", "1", "100")]))
    done = run_cli("anular", "F001-10", "--motivo", "ERROR EN EL RUC", home=home)
    assert done.returncode == 1
    assert "F001-10 no fue aceptado por SUNAT" in done.stderr.decode()
    assert voids_sandbox.summaries.tickets() == []


def test_resumen_reports_the_days_signed_boletas(voiding, voids_sandbox, home, tmp_path):
    xml = voiding.invoicing.generate_xml(
        boleta("B003", 1, [item("Polo de algodón", "2", "59")], receptor=DNI_CUSTOMER)).xml
    certificado_id = voiding.invoicing.default_certificate(ISSUER_RUC).certificado_id
    voiding.invoicing.sign({"xml": xml, "certificado_id": certificado_id})
    done = run_cli("resumen", "--fecha", clock.today().isoformat(), "--salida", str(tmp_path), home=home)
    assert done.returncode == 0, done.stderr.decode()
    assert lines(done)[-1] == "B003-1 aceptado"
    ident = f"RC-{clock.today():%Y%m%d}-1"
    assert f"Resumen diario {ident}: aceptado por SUNAT (ticket " in done.stdout.decode()  # «resumen … aceptado»
    assert list(tmp_path.glob(f"{ISSUER_RUC}-RC-*.xml"))
    assert voids_sandbox.voucher_status(ISSUER_RUC, "03", "B003", 1) == statuses.ACEPTADO
    bad = run_cli("resumen", "--fecha", "24-11-2026", home=home)
    assert bad.returncode == 1 and "«24-11-2026» (opción --fecha) no es AAAA-MM-DD" in bad.stderr.decode()


def test_cdr_asks_sunat_and_stores_ours(voiding, voids_sandbox, home):
    voucher_id = issued(voiding, factura("F001", 12, [item("Servicio de consultoría", "1", "100")]))
    done = run_cli("cdr", ISSUER_RUC, "01", "F001", "12", home=home)
    assert done.returncode == 0, done.stderr.decode()
    assert lines(done)[-1].startswith("F001-12 aceptado (código 0)")
    assert "CDR guardado en Yupana." in done.stdout.decode()
    assert voiding._voids.consulted_cdr(voucher_id) is not None
    missing = run_cli("cdr", ISSUER_RUC, "01", "F001", "999", home=home)
    assert missing.returncode == 1 and lines(missing)[-1] == "F001-999 sin CDR"


def test_a_killed_anular_leaves_its_ticket_stored_and_followed_when_yupana_opens(voiding, voids_sandbox, home):
    voucher_id = issued(voiding, factura("F001", 13, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.summaries.hold()
    process = subprocess.Popen([sys.executable, "-m", "app", "anular", "F001-13", "--motivo", "ERROR EN EL RUC"],
                               cwd=ROOT, env={**os.environ, "YUPANA_HOME": str(home)}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        assert voids_sandbox.summaries.wait_for_tickets(1, 60)
        [ticket] = voids_sandbox.summaries.tickets()
        assert voids_sandbox.summaries.wait_for_polls(ticket, 1, 60)
    finally:
        process.kill()  # SIGKILL while it waits for SUNAT: nothing runs on its way out
        process.communicate(timeout=60)
    assert [summary.ticket for summary in voiding.invoicing.summaries()] == [ticket]  # stored before the first poll
    assert voiding.invoicing.voucher(voucher_id).status == statuses.ACEPTADO
    voiding._voids.start_if_pending()  # what opening Yupana does
    voids_sandbox.summaries.release()
    assert voiding._voids.join(10)
    assert voiding.invoicing.voucher(voucher_id).status == statuses.ANULADO
