"""Issue 35's round trip: vouchers issued and sent to the SUNAT sandbox (127.0.0.1, port 0) from a folder whose keys
the keyring keeps, a backup with its recovery passphrase, more vouchers issued and sent after it (their files written
into the backup folder as they are made), the data folder deleted; restored on «another PC» (a new folder, no
keyring, the recovery passphrase): every voucher is there byte for byte with a valid signature and its CDR (the later
ones from their files), and the next factura is the next free number and accepted. With those files deleted too,
the later F001 ones are found at SUNAT (getStatus, their CDRs by getStatusCdr), and B001 goes on after the last
number printed the person confirms.

The issue's figure is 1,000 vouchers and 100 after the backup: `YUPANA_ROUNDTRIP_VOUCHERS=1000` runs it (some
minutes here); by default 40 and 10, to keep CI's run short."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import keyring
import pytest

from app.core.invoicing import backups, statuses
from app.core.invoicing.xmldsig import verify_xml
from app.core.platform import secrets
from app.core.platform.companies import Company
from tests.helpers.base import ISSUER_RUC, run_cli
from tests.helpers.file_keyring import BACKEND, FILE_ENV, FileKeyring
from tests.helpers.messaging_support import wait_for
from tests.helpers.voucher_matrix import boleta, factura, item

pytestmark = pytest.mark.sunat_files
BEFORE = int(os.environ.get("YUPANA_ROUNDTRIP_VOUCHERS", "40"))
AFTER = max(BEFORE // 10, 4)
RECOVERY = "frase de recuperación de la tienda"
LINES = [item("Arroz superior 5 kg", "2", "10.00")]


def _split(count: int) -> tuple[int, int]:
    """Facturas and boletas of `count` vouchers: three in four are facturas."""
    facturas = count * 3 // 4
    return facturas, count - facturas


def _issue(engine, first_f: int, first_b: int, count: int) -> list[tuple[str, str, int]]:
    facturas, boletas = _split(count)
    made = []
    for n in range(first_f, first_f + facturas):
        emission = engine.invoicing.issue(factura("F001", n, LINES))
        assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO, emission
        made.append(("01", "F001", n))
    for n in range(first_b, first_b + boletas):
        assert engine.invoicing.issue(boleta("B001", n, LINES)).voucher_id
        made.append(("03", "B001", n))
    return made


def _texts(engine, made: list[tuple[str, str, int]]) -> dict[tuple[str, str, int], tuple[str, str]]:
    """Each voucher's signed XML and its CDR's XML ("" without one)."""
    out = {}
    for tipo, serie, n in made:
        voucher_id = engine.invoicing.find_voucher(f"{serie}-{n}", ISSUER_RUC, tipo)
        cdr = engine.invoicing.voucher_cdr(voucher_id)
        out[(tipo, serie, n)] = (engine.invoicing.voucher(voucher_id).xml_firmado, cdr.xml_text if cdr else "")
    return out


@pytest.fixture
def first_pc(tmp_path, monkeypatch):
    monkeypatch.setenv(FILE_ENV, str(tmp_path / "llavero-pc1.json"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", BACKEND)
    monkeypatch.setenv(secrets.KEYRING_ENV, "1")
    monkeypatch.delenv(secrets.PASSPHRASE_ENV, raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(FileKeyring())
    yield
    keyring.set_keyring(previous)


def test_round_trip_to_another_pc(first_pc, home, voids_sandbox, tmp_path, monkeypatch):
    from app.core.engine import Engine

    usb = tmp_path / "usb"
    usb.mkdir()
    engine = Engine(home)
    try:
        voids_sandbox.configure(engine)
        engine.admin.set_company(Company(ruc=ISSUER_RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                         direccion="AV. ABANCAY 123", nombre_comercial="YUPANA"))
        engine.invoicing.create_test_certificate(ISSUER_RUC)
        engine.admin.config_set("backup_folder", str(usb))
        before = _issue(engine, 1, 1, BEFORE)
        assert engine._secrets.key_source() == secrets.SOURCE_KEYRING
        path = engine.admin.create_backup(usb, RECOVERY).path
        f_before, b_before = _split(BEFORE)
        after = _issue(engine, f_before + 1, b_before + 1, AFTER)
        wait_for(lambda: engine._backup_files.pending() == 0 and all(
            any(usb.glob(f"comprobantes/sandbox/*/{ISSUER_RUC}-{tipo}-{serie}-{n}.xml")) for tipo, serie, n in after)
            and all(any(usb.glob(f"comprobantes/sandbox/*/R-{ISSUER_RUC}-01-F001-{n}.xml"))
                    for tipo, _, n in after if tipo == "01"), timeout=60)
        originals = _texts(engine, before + after)
    finally:
        engine.close()
    shutil.rmtree(home)  # the PC dies
    last_f, last_b = max(n for t, _, n in after if t == "01"), max(n for t, _, n in after if t == "03")

    # «Another PC»: no keyring at all; the recovery passphrase for scripts
    monkeypatch.setenv(secrets.KEYRING_ENV, "0")
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND")
    monkeypatch.setenv(secrets.RECOVERY_ENV, RECOVERY)
    new_home = tmp_path / "otro-equipo"
    done = run_cli("--home", str(new_home), "respaldo", "restaurar", path, "--ultimo", f"B001={last_b}",
                   home=new_home, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"Comprobantes recuperados de los archivos escritos al emitir: {AFTER} " in done.stdout.decode()
    assert "Claves abiertas" in done.stderr.decode()
    restored = Engine(new_home)
    try:
        assert _texts(restored, before + after) == originals  # byte for byte, CDRs included
        for signed, _cdr in originals.values():
            assert verify_xml(signed).valid
        assert all(cdr for (tipo, _, _), (_, cdr) in originals.items() if tipo == "01")
        assert restored.invoicing.next_number(ISSUER_RUC, "01", "F001") == last_f + 1
        assert restored.invoicing.next_number(ISSUER_RUC, "03", "B001") == last_b + 1
        emission = restored.invoicing.issue(factura("F001", 1, LINES), next_number=True)  # the certificate opens
        assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO, emission
        assert restored.invoicing.voucher(emission.voucher_id).numero == last_f + 1
    finally:
        restored.close()

    # The files lost too: SUNAT tells the F001 numbers; B001 takes the last number printed
    shutil.rmtree(usb / "comprobantes")
    third = tmp_path / "tercer-equipo"
    backups.restore(path, third)
    again = Engine(third)
    try:
        proposed = []

        def confirm(finding):
            proposed.append((finding.serie, finding.sigue_en - 1))
            return last_b + 3  # three more boletas were printed than the backup says

        check = again.invoicing.check_numbering(Path(path).parent, confirm, after_restore=True)
        by_serie = {finding.serie: finding for finding in check.series}
        assert [found["numero"] for found in by_serie["F001"].encontrados] == list(range(f_before + 1, last_f + 2))
        assert all(found["cdr"] for found in by_serie["F001"].encontrados) and by_serie["F001"].dudosos == []
        assert proposed == [("B001", b_before)] and by_serie["B001"].sigue_en == last_b + 4
        emission = again.invoicing.issue(factura("F001", 1, LINES), next_number=True)
        assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO, emission
        assert again.invoicing.voucher(emission.voucher_id).numero == last_f + 2
        assert again.invoicing.next_number(ISSUER_RUC, "03", "B001") == last_b + 4
    finally:
        again.close()
