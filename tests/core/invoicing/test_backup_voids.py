"""Issue 35, item 2: a void made after the backup is not lost with the PC. Every RA/RC is written into the backup
folder as it is made, with SUNAT's answer beside it once there is one (backup_files); a restore reads them back: those
SUNAT accepted are recorded and the vouchers they void are `anulado` again — by a RA, a factura the backup holds and
one issued after it that comes back from its file; by a resumen diario (RC, status 3), a boleta —, while one whose answer is not in the folder is listed for the person
as unknown (its voucher left as it was: nothing guessed). The SUNAT sandbox runs on 127.0.0.1, port 0."""

from __future__ import annotations

import shutil

import pytest

from app.core.invoicing import numbering, statuses
from tests.helpers.base import ISSUER_RUC, run_cli
from tests.helpers.messaging_support import wait_for
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import boleta, factura, item

pytestmark = pytest.mark.sunat_files
LINES = [item("Arroz superior 5 kg", "2", "10.00")]


def test_voids_made_after_the_backup_are_voided_again_after_a_restore(voiding, voids_sandbox, home, tmp_path):
    usb = tmp_path / "usb"
    usb.mkdir()
    voiding.admin.config_set("backup_folder", str(usb))
    ids = {n: issued(voiding, factura("F001", n, LINES)) for n in range(1, 4)}
    ticket = voiding.invoicing.issue(boleta("B001", 1, LINES)).voucher_id
    path = voiding.admin.create_backup(usb).path
    ids.update({n: issued(voiding, factura("F001", n, LINES)) for n in range(4, 6)})
    # After the backup: F001-2 (in the backup) and F001-5 (issued after it) voided and accepted, and B001-1 by a
    # resumen diario (RC, status 3); F001-4's RA accepted too, but its answer never reached the folder (the disk died
    # first).
    old = voiding.invoicing.void(ids[2], "ERROR EN EL RUC")
    new = voiding.invoicing.void(ids[5], "ERROR EN LA DESCRIPCION")
    by_rc = voiding.invoicing.void(ticket, "ERROR EN EL MONTO")
    lost = voiding.invoicing.void(ids[4], "ERROR EN EL MONTO")
    assert old.accepted and new.accepted and by_rc.accepted and lost.accepted and by_rc.kind == "RC"
    folder = usb / "resumenes" / "sandbox"
    wait_for(lambda: voiding._backup_files.pending() == 0 and all(
        (folder / f"R-{ISSUER_RUC}-{summary.ident}.xml").is_file() for summary in (old, new, by_rc, lost))
        and any(usb.rglob(f"R-{ISSUER_RUC}-01-F001-5.xml")), timeout=30)
    (folder / f"R-{ISSUER_RUC}-{lost.ident}.xml").unlink()
    voiding.close()
    shutil.rmtree(home)  # the PC dies

    new_home = tmp_path / "otro-equipo"
    done = run_cli("--home", str(new_home), "respaldo", "restaurar", path, home=new_home)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "Comprobantes anulados después de la copia (bajas aceptadas por SUNAT): F001-2, F001-5, B001-1" in out
    assert f"{by_rc.ident} (aceptado)" in out
    assert f"{lost.ident} (F001-4): sin la respuesta de SUNAT en la carpeta" in out

    from app.core.engine import Engine

    restored = Engine(new_home)
    try:
        status = {n: restored.invoicing.voucher(restored.invoicing.find_voucher(f"F001-{n}", ISSUER_RUC)).status
                  for n in range(1, 6)}
        assert status == {1: statuses.ACEPTADO, 2: statuses.ANULADO, 3: statuses.ACEPTADO, 4: statuses.ACEPTADO,
                          5: statuses.ANULADO}
        assert restored.invoicing.voucher(ticket).status == statuses.ANULADO
        kept = {summary.ident: summary for summary in restored.invoicing.summaries()}
        assert set(kept) == {old.ident, new.ident, by_rc.ident}  # the unknown one is not recorded: nothing guessed
        assert all(summary.state == statuses.SUBMISSION_DONE and summary.codigo == "0" for summary in kept.values())
        assert kept[new.ident].comprobantes == "F001-5"
        (by_voucher,) = restored.invoicing.voucher_summaries(restored.invoicing.find_voucher("F001-2", ISSUER_RUC))
        assert by_voucher.ident == old.ident and by_voucher.motivo == "ERROR EN EL RUC"
        with pytest.raises(Exception, match="ya está anulado"):  # a voucher voided again is refused as before
            restored.invoicing.void(restored.invoicing.find_voucher("F001-5", ISSUER_RUC), "OTRA VEZ")
        # the day's RA counter goes on after the highest file (the unknown one's too), plus the margin
        counter = int(lost.ident.rsplit("-", 1)[1])
        voided = restored.invoicing.void(restored.invoicing.find_voucher("F001-4", ISSUER_RUC), "ERROR EN EL MONTO")
        assert voided.ident.endswith(f"-{counter + numbering.SUMMARY_MARGIN + 1}")
    finally:
        restored.close()


def test_a_void_waiting_for_sunat_in_the_backup_takes_the_answer_written_after_it(voiding, voids_sandbox, tmp_path):
    """The backup holds the RA still waiting for its ticket; SUNAT accepted it after the backup. Restored where SUNAT
    does not answer its ticket (getStatus fails), the answer in the folder settles it."""
    from app.core.engine import Engine
    from app.core.invoicing import backups

    usb = tmp_path / "usb"
    usb.mkdir()
    voiding.admin.config_set("backup_folder", str(usb))
    ids = {n: issued(voiding, factura("F001", n, LINES)) for n in range(1, 3)}
    voids_sandbox.summaries.hold()
    waiting = voiding.invoicing.void(ids[2], "ERROR EN EL RUC", wait=False)
    assert waiting.state == statuses.SUBMISSION_PENDING and waiting.ticket
    path = voiding.admin.create_backup(usb).path
    voids_sandbox.summaries.release()  # the background poller gets SUNAT's answer; its file is written
    answer = usb / "resumenes" / "sandbox" / f"R-{ISSUER_RUC}-{waiting.ident}.xml"
    wait_for(answer.is_file, timeout=30)
    assert voiding.invoicing.voucher(ids[2]).status == statuses.ANULADO

    voids_sandbox.fail_next("500", count=1000, operation="getStatus")  # the restored desk's poller learns nothing
    new_home = tmp_path / "otro-equipo"
    backups.restore(path, new_home)
    restored = Engine(new_home)
    try:
        assert restored.invoicing.voucher(ids[2]).status == statuses.ACEPTADO  # as the backup has it
        check = restored.invoicing.check_numbering(usb, after_restore=True)
        assert check.archivos.summaries == [f"{waiting.ident} (aceptada)"] and check.archivos.voided == ["F001-2"]
        assert check.archivos.unknown_summaries == [] and check.archivos.skipped == []
        assert restored.invoicing.voucher(ids[2]).status == statuses.ANULADO
        (summary,) = restored.invoicing.summaries()
        assert (summary.ident, summary.state, summary.codigo) == (waiting.ident, statuses.SUBMISSION_DONE, "0")
    finally:
        restored.close()
        voids_sandbox.reset_failures()
