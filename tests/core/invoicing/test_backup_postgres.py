"""Issue 35 on several desks: a business on PostgreSQL is backed up too, in the same format as a folder (a SQLite
database of the same schema inside the zip, with its manifest), read in one REPEATABLE READ transaction; the backup
verifies, and restored into a new folder it is a single desk's folder with every voucher byte for byte, the
numbering going on, and its secrets opening with the business passphrase."""

from __future__ import annotations

import json
import zipfile

import pytest

from app.core.invoicing import backups
from app.core.invoicing.xmldsig import verify_xml
from app.core.platform import secrets
from app.core.platform.settings import DeskSettings
from tests.helpers.base import ISSUER_RUC
from tests.helpers.golden import COMPANY
from tests.helpers.voucher_matrix import factura, item

pytestmark = pytest.mark.postgres
BUSINESS_PASSPHRASE = "frase del negocio 2026"
LINES = [item("Arroz superior 5 kg", "2", "10.00")]


def test_a_shared_database_is_backed_up_and_restored_as_a_folder(postgres_server, tmp_path, monkeypatch):
    from app.core.engine import Engine

    monkeypatch.setenv(secrets.PASSPHRASE_ENV, BUSINESS_PASSPHRASE)
    desk_folder = tmp_path / "caja1"
    desk_folder.mkdir()
    DeskSettings(desk_folder).put("database_url", postgres_server.fresh_database())
    usb = tmp_path / "usb"
    usb.mkdir()
    desk = Engine(desk_folder)
    try:
        desk.admin.set_company(COMPANY)
        desk.invoicing.create_test_certificate(ISSUER_RUC)
        desk.invoicing.set_sol_credentials(ISSUER_RUC, "MODDATOS", "claveSOLsecreta")
        assert all(answer.success for answer in desk.invoicing.issue_batch(
            [factura("F001", n, LINES) for n in range(1, 13)]))
        originals = {n: desk.invoicing.voucher(desk.invoicing.find_voucher(f"F001-{n}", ISSUER_RUC)).xml_firmado
                     for n in range(1, 13)}
        assert not desk.admin.needs_recovery_passphrase()  # the business passphrase is the recovery
        check = desk.admin.create_backup(usb)
    finally:
        desk.close()
    assert check.ok and check.signatures_checked == 12, check.problems
    with zipfile.ZipFile(check.path) as archive:
        manifest = json.loads(archive.read(backups.MANIFEST))
        assert b"claveSOLsecreta" not in archive.read(backups.DATABASE)
    assert manifest["claves"] == {"origen": "passphrase", "frase_recuperacion": False}
    assert manifest["series"] == [{"entorno": "sandbox", "ruc": ISSUER_RUC, "tipo": "01", "serie": "F001",
                                   "ultimo": 12}]
    assert manifest["tablas"]["vouchers"] == 12 and manifest["tablas"]["desk_turns"] == 0  # no desks in a folder

    folder = tmp_path / "un-solo-puesto"
    backups.restore(check.path, folder)
    single = Engine(folder)  # SQLite: a single desk's folder
    try:
        for n, signed in originals.items():
            restored = single.invoicing.voucher(single.invoicing.find_voucher(f"F001-{n}", ISSUER_RUC)).xml_firmado
            assert restored == signed and verify_xml(restored).valid
        assert single.invoicing.sol_credentials(ISSUER_RUC) == ("MODDATOS", "claveSOLsecreta")
        assert single.invoicing.next_number(ISSUER_RUC, "01", "F001") == 13
        assert [v.serie for v in single.invoicing.vouchers(search="F001-12")] == ["F001"]  # the search index filled
        (answer,) = single.invoicing.issue_batch([factura("F001", 13, LINES)])
        assert answer.success
    finally:
        single.close()
