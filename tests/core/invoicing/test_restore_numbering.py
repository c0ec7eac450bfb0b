"""Issue 35, item 2: a restore never gives a number twice. Vouchers issued after the backup (on «the PC that died»)
are not in it; restored, each F serie asks SUNAT's voucher status query (the SUNAT sandbox on 127.0.0.1 port 0 answers
billConsultService getStatus and getStatusCdr as SUNAT does, 0009/0010 for boletas) about the numbers after its last
one, until 50 in a row are unknown, recovers their CDRs, lists the unknown ones inside the found range as «números
dudosos», and goes on after the highest found: the next factura gets the next free number and SUNAT accepts it. A B
serie takes the last number printed the person confirms; today's RA/RC counters skip 10."""

from __future__ import annotations

import zipfile
from decimal import Decimal
from pathlib import Path

import pytest

from app.core.invoicing import backups, numbering, statuses
from tests.helpers.base import ISSUER_RUC, run_cli
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import boleta, factura, item

LINES = [item("Arroz superior 5 kg", "2", "10.00")]
pytestmark = pytest.mark.sunat_files


@pytest.fixture
def usb(tmp_path) -> Path:
    path = tmp_path / "usb"
    path.mkdir()
    return path


def _restored_engine(path: str, new_home: Path, sandbox):
    from app.core.engine import Engine

    backups.restore(path, new_home)
    engine = Engine(new_home)
    sandbox.configure(engine)
    engine.admin.config_set("sunat_timeout_s", "5")
    return engine


def test_a_restore_asks_sunat_for_the_f_series_and_never_reuses_a_number(voiding, voids_sandbox, usb, tmp_path):
    for n in range(1, 6):
        issued(voiding, factura("F001", n, LINES))
    for n in range(1, 4):
        voiding.invoicing.issue(boleta("B001", n, LINES))
    path = voiding.admin.create_backup(usb).path
    # After the backup, on the PC that then dies: F001-6, 7 and 9 reach SUNAT (8 never did: a number that may have
    # been printed), and boletas up to B001-5 are printed.
    for n in (6, 7, 9):
        issued(voiding, factura("F001", n, LINES))
    for n in (4, 5):
        voiding.invoicing.issue(boleta("B001", n, LINES))
    asked_before = sum(voids_sandbox.status_query_counts.values())

    restored = _restored_engine(path, tmp_path / "otro-equipo", voids_sandbox)
    try:
        assert restored.invoicing.next_number(ISSUER_RUC, "01", "F001") == 6  # the backup alone knows up to 5
        proposals = []

        def confirm(finding):
            proposals.append((finding.serie, finding.sigue_en - 1, finding.motivo))
            return 5  # the person reads the last boleta printed off the paper roll

        check = restored.invoicing.check_numbering(None, confirm, after_restore=True)
        by_serie = {finding.serie: finding for finding in check.series}
        f001, b001 = by_serie["F001"], by_serie["B001"]
        assert f001.consultado and [item["numero"] for item in f001.encontrados] == [6, 7, 9]
        assert {item["estado_sunat"] for item in f001.encontrados} == {"0001"}
        assert f001.dudosos == [8] and f001.sigue_en == 10
        # asked from 6 until 50 in a row were unknown: 10 … 59
        asked = sum(voids_sandbox.status_query_counts.values()) - asked_before
        assert asked == 4 + 50 and voids_sandbox.status_query_counts[f"{ISSUER_RUC}-01-F001-59"] == 1
        for found in f001.encontrados:  # each CDR recovered with getStatusCdr, for its own voucher
            with zipfile.ZipFile(found["cdr"]) as cdr:
                assert f"R-{ISSUER_RUC}-01-F001-{found['numero']}.xml" in cdr.namelist()
        assert not b001.consultado and "boletas" in b001.motivo and b001.confirmado == 5 and b001.sigue_en == 6
        assert proposals == [("B001", 3, b001.motivo)]  # the backup's last boleta was proposed
        assert restored.invoicing.next_number(ISSUER_RUC, "01", "F001") == 10
        assert restored.invoicing.next_number(ISSUER_RUC, "03", "B001") == 6

        emission = restored.invoicing.issue(factura("F001", 1, LINES), next_number=True)
        assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO, emission
        assert restored.invoicing.voucher(emission.voucher_id).numero == 10  # the next free number, accepted
        ra = {(row["tipo"], row["sigue_en"]) for row in check.resumenes if row["emisor_ruc"] == ISSUER_RUC}
        assert ra == {("RA", 1 + numbering.SUMMARY_MARGIN), ("RC", 1 + numbering.SUMMARY_MARGIN)}
        restored.invoicing.void(emission.voucher_id, "ERROR EN EL RUC")
        (summary,) = [s for s in restored.invoicing.summaries() if s.kind == "RA"]
        assert summary.ident.endswith(f"-{1 + numbering.SUMMARY_MARGIN}")  # RA-AAAAMMDD-11: 10 skipped
    finally:
        restored.close()


def test_the_restore_command_lists_what_sunat_has_and_takes_the_last_boleta_printed(voiding, voids_sandbox, usb,
                                                                                   tmp_path):
    for n in range(1, 3):
        issued(voiding, factura("F001", n, LINES))
    voiding.invoicing.issue(boleta("B001", 1, LINES))
    path = voiding.admin.create_backup(usb).path
    issued(voiding, factura("F001", 3, LINES))
    new_home = tmp_path / "otro-equipo"  # the sandbox's addresses come in the backup (sandbox_endpoints)
    done = run_cli("--home", str(new_home), "respaldo", "restaurar", path, "--ultimo", "B001=7", home=new_home)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "F001 (tipo 01, RUC 20100066603): sigue en 4; en SUNAT después de la copia: 3" in out
    assert "B001 (tipo 03, RUC 20100066603): sigue en 8; último impreso confirmado: 7" in out
    assert "F001-3: CDR recuperado en" in out

    again = run_cli("--home", str(new_home), "numeracion", "verificar", home=new_home)  # on demand, no terminal
    assert again.returncode == 0, again.stderr
    assert "F001 (tipo 01, RUC 20100066603): sigue en 4; SUNAT no tiene números posteriores" in again.stdout.decode()
    assert "B001 (tipo 03, RUC 20100066603): sigue en 8; SIN CONFIRMAR" in again.stdout.decode()


# ---------------------------------------------------------------- item 2: the files written as made, read back

def _files_written(folder: Path, names: list[str]) -> bool:
    return all(any((folder / "comprobantes").rglob(name)) for name in names)


@pytest.mark.parametrize("layout", ["entorno", "sin-entorno"])
def test_a_restore_reads_back_the_vouchers_and_cdrs_written_as_files_after_the_backup(voiding, voids_sandbox, usb,
                                                                                   tmp_path, layout):
    """`sin-entorno`: the files as versions before the environment was recorded wrote them (`comprobantes/AAAAMM/`,
    `resumenes/RUC-….xml`): read back as the current environment's, as they always were."""
    from app.core.invoicing.xmldsig import verify_xml
    from tests.helpers.messaging_support import wait_for

    voiding.admin.config_set("backup_folder", str(usb))
    for n in range(1, 4):
        issued(voiding, factura("F001", n, LINES))
    path = voiding.admin.create_backup(usb).path
    after = {n: issued(voiding, factura("F001", n, LINES)) for n in range(4, 7)}
    originals = {n: voiding.invoicing.voucher(voucher_id).xml_firmado for n, voucher_id in after.items()}
    cdrs = {n: voiding.invoicing.voucher_cdr(voucher_id) for n, voucher_id in after.items()}
    voided = voiding.invoicing.void(voiding.invoicing.find_voucher("F001-2", ISSUER_RUC), "ERROR EN EL RUC")
    assert voided.accepted and voided.ident.endswith("-1")  # RA-AAAAMMDD-1, made after the backup
    ra_file = usb / "resumenes" / "sandbox" / f"{ISSUER_RUC}-{voided.ident}.xml"
    wait_for(lambda: _files_written(usb, [f"R-{ISSUER_RUC}-01-F001-{n}.xml" for n in after])
             and (usb / "resumenes" / "sandbox" / f"R-{ISSUER_RUC}-{voided.ident}.xml").is_file(), timeout=30)
    assert ra_file.read_text(encoding="utf-8") == voided.xml_firmado  # every RA/RC written as it is made
    if layout == "sin-entorno":  # moved where an older Yupana wrote them
        for month in (usb / "comprobantes" / "sandbox").iterdir():
            month.rename(usb / "comprobantes" / month.name)
        for summary in (usb / "resumenes" / "sandbox").iterdir():
            summary.rename(usb / "resumenes" / summary.name)
        (usb / "comprobantes" / "sandbox").rmdir()
        (usb / "resumenes" / "sandbox").rmdir()
        assert len(list((usb / "comprobantes").glob("*/*.xml"))) == 2 * 6 and len(list(usb.rglob("*RA-*.xml"))) == 2

    restored = _restored_engine(path, tmp_path / "otro-equipo", voids_sandbox)
    try:
        check = restored.invoicing.check_numbering(usb, after_restore=True)
        assert check.archivos.stored == ["F001-4", "F001-5", "F001-6"] and check.archivos.with_cdr == 3
        assert check.archivos.skipped == []
        for n, signed in originals.items():
            voucher_id = restored.invoicing.find_voucher(f"F001-{n}", ISSUER_RUC)
            detail = restored.invoicing.voucher(voucher_id)
            assert detail.xml_firmado == signed and verify_xml(detail.xml_firmado).valid  # byte for byte
            assert detail.status == statuses.ACEPTADO and detail.total == Decimal("23.60")
            cdr = restored.invoicing.voucher_cdr(voucher_id)
            assert cdr is not None and cdr.codigo == "0" and cdr.xml_text == cdrs[n].xml_text
        (f001,) = check.series
        assert f001.en_base == 6 and f001.consultado and f001.encontrados == [] and f001.sigue_en == 7
        ra = [row for row in check.resumenes if row["tipo"] == "RA"]
        assert [row["sigue_en"] for row in ra] == [1 + 1 + numbering.SUMMARY_MARGIN]  # after the file's RA-…-1, +10
        emission = restored.invoicing.issue(factura("F001", 1, LINES), next_number=True)
        assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO, emission
        assert restored.invoicing.voucher(emission.voucher_id).numero == 7
    finally:
        restored.close()


# ---------------------------------------------------------------- each environment's files apart

@pytest.mark.parametrize("checked_in", ["produccion", "sandbox"])
def test_a_sandbox_trial_in_the_same_backup_folder_is_never_read_back_into_production(voiding, voids_sandbox, usb,
                                                                                      tmp_path, checked_in):
    """A shop tries Yupana in the sandbox with its backup folder set, then issues for real: after a restore, the
    sandbox's voucher and RA files in that folder are neither stored as production vouchers nor push production's
    numbering (nor its RA counter); production's files written after the backup come back into production."""
    from tests.helpers.messaging_support import wait_for

    voiding.admin.config_set("backup_folder", str(usb))
    trial = [voiding.invoicing.issue(boleta("B001", n, LINES)).voucher_id for n in range(1, 5)]  # sandbox B001-1…4
    voided = voiding.invoicing.void(issued(voiding, factura("F001", 1, LINES)), "ERROR EN EL RUC")
    assert voided.accepted and voided.ident.endswith("-1")
    wait_for(lambda: _files_written(usb, [f"{ISSUER_RUC}-03-B001-{n}.xml" for n in range(1, 5)])
             and any(usb.rglob(f"R-{ISSUER_RUC}-{voided.ident}.xml")), timeout=30)

    voiding.admin.config_set("environment", "produccion")  # for real now: signed here (SUNAT is not asked)
    real = {n: _signed_only(voiding, boleta("B001", n, LINES)) for n in (1, 2)}
    path = voiding.admin.create_backup(usb).path
    real[3] = _signed_only(voiding, boleta("B001", 3, LINES))  # after the backup: only its file keeps it
    wait_for(lambda: all(any(path.read_bytes() == signed for path in usb.rglob(f"{ISSUER_RUC}-03-B001-{n}.xml"))
                         for n, signed in real.items()), timeout=30)

    restored = _restored_engine(path, tmp_path / "otro-equipo", voids_sandbox)
    try:
        assert restored.admin.config_get("environment") == "produccion"  # the backup's: made in production
        if checked_in == "sandbox":
            restored.admin.config_set("environment", "sandbox")  # the person switches before checking
        check = restored.invoicing.check_numbering(usb, after_restore=True)
        restored.admin.config_set("environment", "produccion")
        # Checked in production, production's B001-3 is read back (not the sandbox's B001-4 nor F001-1); checked in
        # the sandbox (where an older backup without its environment restores), production's file still goes into
        # production.
        assert check.archivos.stored == (["B001-3"] if checked_in == "produccion" else ["B001-3 (produccion)"])
        assert check.archivos.skipped == []
        b001 = {finding.serie: finding for finding in check.series}["B001"]
        assert (b001.en_base, b001.en_archivos, b001.sigue_en) == ((3, 3, 4) if checked_in == "produccion"
                                                                   else (4, 4, 5))  # the sandbox's own B001-1…4
        assert restored.invoicing.next_number(ISSUER_RUC, "03", "B001") == 4
        (listed,) = [row for row in restored.invoicing.vouchers() if row.serie_numero == "B001-3"]  # production's
        stored = restored.invoicing.voucher(listed.id)
        assert stored.environment == "produccion" and stored.xml_firmado.encode("utf-8") == real[3]
        if checked_in == "produccion":
            ra = [row["sigue_en"] for row in check.resumenes if row["tipo"] == "RA"]
            assert ra == [1 + numbering.SUMMARY_MARGIN]  # the sandbox's RA-…-1 does not count here
        restored.admin.config_set("environment", "sandbox")  # the trial is still there, in its own environment
        assert sorted(row.id for row in restored.invoicing.vouchers() if row.serie == "B001") == trial
        assert restored.invoicing.next_number(ISSUER_RUC, "03", "B001") == 5
    finally:
        restored.close()
    assert len(list(usb.rglob(f"{ISSUER_RUC}-03-B001-1.xml"))) == 2  # each environment's B001-1 kept apart


def _signed_only(engine, request: dict) -> bytes:
    """Operations 1 and 2 (generated and signed, not sent: no SUNAT in production here); the signed bytes."""
    (item,) = list(engine.invoicing.issue_batch([request]))
    assert item.success, item.refusal
    return item.voucher.xml_firmado.encode("utf-8")


# ---------------------------------------------------------------- the environment the folder was in

def _production_at_the_sandbox(engine, sandbox) -> None:
    """Production's billService and billConsultService are the SUNAT sandbox's (never the internet), with the SOL
    user it accepts; the folder then works in production."""
    engine.admin.config_set("sunat_url_produccion", sandbox.bill_url)
    engine.admin.config_set("sunat_url_consulta", sandbox.consult_url)
    engine.invoicing.set_sol_credentials(ISSUER_RUC, sandbox.usuario, sandbox.clave)
    engine.admin.config_set("environment", "produccion")


def test_a_backup_made_in_production_restores_into_production_and_checks_production(voiding, voids_sandbox, usb,
                                                                                   tmp_path):
    """The environment is the desk's (puesto.json), not the database's: the backup's manifest records it, the
    restored folder's desk takes it, and the numbering check asks SUNAT about production's F series. Production's
    addresses point at the SUNAT sandbox on 127.0.0.1 (settings kept in the database: they come in the backup)."""
    _production_at_the_sandbox(voiding, voids_sandbox)
    for n in range(1, 3):
        issued(voiding, factura("F001", n, LINES))
    path = voiding.admin.create_backup(usb).path
    issued(voiding, factura("F001", 3, LINES))  # after the backup, on the PC that dies

    restored = _restored_engine(path, tmp_path / "otro-equipo", voids_sandbox)
    try:
        assert restored.admin.config_get("environment") == "produccion"
        check = restored.invoicing.check_numbering(None, lambda finding: None, after_restore=True)
        (f001,) = check.series
        assert f001.consultado and [item["numero"] for item in f001.encontrados] == [3]
        assert f001.sigue_en == 4 and restored.invoicing.next_number(ISSUER_RUC, "01", "F001") == 4
    finally:
        restored.close()


def test_the_restore_command_says_which_environment_and_checks_it(voiding, voids_sandbox, usb, tmp_path):
    _production_at_the_sandbox(voiding, voids_sandbox)
    issued(voiding, factura("F001", 1, LINES))
    path = voiding.admin.create_backup(usb).path
    issued(voiding, factura("F001", 2, LINES))
    new_home = tmp_path / "otro-equipo"
    done = run_cli("--home", str(new_home), "respaldo", "restaurar", path, home=new_home)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "Entorno de la copia: produccion" in out
    assert "F001 (tipo 01, RUC 20100066603): sigue en 3; en SUNAT después de la copia: 2" in out


def test_an_older_backup_without_its_environment_restores_into_the_sandbox_and_says_so(voiding, voids_sandbox, usb,
                                                                                      tmp_path):
    import json

    issued(voiding, factura("F001", 1, LINES))
    path = Path(voiding.admin.create_backup(usb).path)
    older = path.with_name("yupana-respaldo-20260101-000000.zip")  # as a version before the environment was kept
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(older, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            data = source.read(name)
            if name == backups.MANIFEST:
                manifest = json.loads(data)
                del manifest["entorno"]
                data = json.dumps(manifest).encode("utf-8")
            target.writestr(name, data)
    new_home = tmp_path / "otro-equipo"
    done = run_cli("--home", str(new_home), "respaldo", "restaurar", str(older), "--ultimo", "F001=1", home=new_home)
    assert done.returncode == 0, done.stderr
    assert "no dice en qué entorno" in done.stdout.decode() and "sandbox" in done.stdout.decode()
