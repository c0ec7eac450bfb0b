"""Issue 35, windows: «Restaurar desde una copia» in the first-start assistant and «Restaurar…» in Ajustes → «Copias
de seguridad» run what `yupana respaldo restaurar` runs, on a worker with its progress: the backup verified and put into
an empty data folder, its keys opened with the recovery passphrase (asked in a dialog), the vouchers written as files
after the backup read back, SUNAT asked about the F series (the SUNAT sandbox on 127.0.0.1 port 0, getStatus and
getStatusCdr as SUNAT answers them), the last boleta printed asked in a Spanish dialog; then the list of what was found.
A wrong passphrase, a damaged backup and a folder that already has data are refused in Spanish, naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.invoicing import backups, statuses
from app.core.platform import secrets
from app.gui.restore import RestoreDialog
from tests.core.invoicing.test_backup_recovery import RECOVERY, keyring_shop, this_pc_keyring  # noqa: F401
from tests.helpers.base import ISSUER_RUC
from tests.helpers.damaged_backups import flipped_byte_copy
from tests.helpers.golden import COMPANY
from tests.helpers.gui import wait_idle
from tests.helpers.messaging_support import wait_for
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import boleta, factura, item

LINES = [item("Arroz superior 5 kg", "2", "10.00")]
pytestmark = pytest.mark.sunat_files


def _shop(home: Path, voids_sandbox):
    """«The PC that died»'s engine: the demo company on the SUNAT sandbox, its test certificate the default."""
    from app.core.engine import Engine

    shop = Engine(home)
    try:
        shop.admin.set_company(COMPANY)
        voids_sandbox.configure(shop)
        shop.admin.config_set("sunat_timeout_s", "5")
        shop.invoicing.create_test_certificate(ISSUER_RUC)
    except BaseException:
        shop.close()
        raise
    return shop


@pytest.fixture
def shop_backup(voids_sandbox, tmp_path):
    """«The PC that died»: F001-1…3 and B001-1…2 in a backup; after it F001-4, 5 and 7 reach SUNAT (6 never did: a
    number that may have been printed), B001-3 is printed and F001-2 voided (its RA accepted); the files written as they were made keep F001-4 and
    B001-3 (those of F001-5 and 7 were lost with the disk)."""
    usb = tmp_path / "usb"
    usb.mkdir()
    shop = _shop(tmp_path / "pc-que-murio", voids_sandbox)
    try:
        for n in range(1, 4):
            issued(shop, factura("F001", n, LINES))
        for n in (1, 2):
            shop.invoicing.issue(boleta("B001", n, LINES))
        path = shop.admin.create_backup(usb).path
        shop.admin.config_set("backup_folder", str(usb))
        for n in (4, 5, 7):
            issued(shop, factura("F001", n, LINES))
        shop.invoicing.issue(boleta("B001", 3, LINES))
        voided = shop.invoicing.void(shop.invoicing.find_voucher("F001-2", ISSUER_RUC), "ERROR EN EL RUC")
        assert voided.accepted
        written = [f"01-F001-{n}" for n in (4, 5, 7)] + ["03-B001-3"]
        wait_for(lambda: all(any(usb.glob(f"comprobantes/sandbox/*/R-{ISSUER_RUC}-{name}.xml")) for name in written)
                 and (usb / "resumenes" / "sandbox" / f"R-{ISSUER_RUC}-{voided.ident}.xml").is_file(), timeout=90)
    finally:
        shop.close()
    for lost in [*usb.glob("comprobantes/sandbox/*/*F001-5.*"), *usb.glob("comprobantes/sandbox/*/*F001-7.*")]:
        lost.unlink()
    return Path(path)


def answer(qtbot, dialog, value) -> str:
    """Answer the question the dialog is showing; returns its text."""
    qtbot.waitUntil(lambda: dialog.question is not None and dialog.question.isVisible(), timeout=60_000)
    box = dialog.question
    text = box.labelText()
    if isinstance(value, int):
        box.setIntValue(value)
    else:
        box.setTextValue(value)
    box.accept()
    return text


def ended_or_asking(qtbot, dialog) -> bool:
    """Wait until the restore ended (True) or asks something (False)."""
    qtbot.waitUntil(lambda: dialog.outcome is not None or dialog.error is not None
                    or (dialog.question is not None and dialog.question.isVisible()), timeout=120_000)
    return dialog.outcome is not None or dialog.error is not None


def test_the_assistant_restores_a_backup_and_goes_on_with_the_numbering_checked(qtbot, engine, shop_backup):
    from app.gui.main_window import MainWindow

    window = MainWindow(engine, first_run=False)
    qtbot.addWidget(window)
    window.show()
    assistant = window.open_assistant()
    wait_idle(qtbot, window.workers)
    assert assistant.company_page.restore_button.text() == "Restaurar desde una copia…"

    dialog = assistant.restore_from(str(shop_backup))
    qtbot.waitUntil(lambda: dialog.question is not None and dialog.question.isVisible(), timeout=60_000)
    # asked while the steps wait on their worker: the window thread is free, the progress says where they are
    assert dialog.running and not dialog.close_button.isEnabled() and window.closing
    assert dialog.step.text().startswith("Comprobando la numeración") and dialog.progress.value() == 3
    asked = answer(qtbot, dialog, 4)  # B001-4 was printed too, its file lost: the person reads it off the roll
    assert asked.startswith(f"B001 (tipo 03, RUC {ISSUER_RUC}): SUNAT no responde la consulta del estado de boletas")
    assert "El último número conocido es el 3." in asked  # the backup's 2, the file written as made: 3
    qtbot.waitUntil(lambda: dialog.outcome is not None or dialog.error is not None, timeout=120_000)
    assert dialog.error is None
    text = dialog.done_text()
    assert f"Copia «{shop_backup.name}»" in text and "restaurada en" in text
    assert "Entorno de la copia: sandbox" in text  # the manifest's: the environment the folder was in
    assert "Comprobantes recuperados de los archivos escritos al emitir: 2 (2 con su CDR): F001-4, B001-3" in text
    assert "Comprobantes anulados después de la copia (bajas aceptadas por SUNAT): F001-2" in text
    assert (f"F001 (tipo 01, RUC {ISSUER_RUC}): sigue en 8; en SUNAT después "
            "de la copia: 5, 7; números dudosos (pueden estar impresos): 6") in text
    assert "F001-5: CDR recuperado" in text and "F001-7: CDR recuperado" in text
    assert f"B001 (tipo 03, RUC {ISSUER_RUC}): sigue en 5; último impreso confirmado: 4" in text
    assert dialog.progress.value() == dialog.progress.maximum()

    qtbot.waitUntil(lambda: window.successor is not None, timeout=10_000)
    successor = window.successor
    qtbot.addWidget(successor)
    try:
        assert not window.isVisible() and successor.isVisible() and window.engine_released
        assert dialog.parent() is successor and dialog.isVisible()
        restored = successor.engine
        assert restored.admin.home() == engine.admin.home()
        assert restored.invoicing.next_number(ISSUER_RUC, "01", "F001") == 8
        assert restored.invoicing.next_number(ISSUER_RUC, "03", "B001") == 5
        detail = restored.invoicing.voucher(restored.invoicing.find_voucher("F001-4", ISSUER_RUC))
        assert detail.status == statuses.ACEPTADO
        wait_idle(qtbot, successor.workers)
        assert successor.assistant is None  # the restored folder has its company: no assistant again
    finally:
        successor.close()
        successor.workers.wait()
        successor.engine.close()


def test_the_assistant_refuses_a_damaged_backup_and_a_folder_with_data(qtbot, engine, shop_backup, tmp_path):
    from app.core.platform.companies import Company
    from app.gui.main_window import MainWindow

    damaged = flipped_byte_copy(shop_backup, tmp_path / shop_backup.name, 0xFF)  # a flip that changes the data
    window = MainWindow(engine, first_run=False)
    qtbot.addWidget(window)
    window.show()
    assistant = window.open_assistant()
    wait_idle(qtbot, window.workers)

    dialog = assistant.restore_from(str(damaged))
    qtbot.waitUntil(lambda: dialog.error is not None, timeout=60_000)
    assert dialog.banner.text.text().startswith(f"No se restaura «{damaged.name}»")
    assert dialog.step.text() == f"No se restauró «{damaged.name}»."
    assert not window.engine_released and not window.closing  # nothing changed: the window goes on
    assert engine.admin.companies() == []
    dialog.close()

    engine.admin.set_company(Company(ruc=ISSUER_RUC, razon_social="OTRA TIENDA S.A.C.", ubigeo="150101",
                                     direccion="AV. ABANCAY 123"))
    dialog = assistant.restore_from(str(shop_backup))
    qtbot.waitUntil(lambda: dialog.error is not None, timeout=60_000)
    assert "ya tiene datos de Yupana (OTRA TIENDA S.A.C." in dialog.banner.text.text()
    assert engine.admin.company(ISSUER_RUC).razon_social == "OTRA TIENDA S.A.C."  # the folder untouched
    assert not window.engine_released
    window.close()


def test_a_wrong_recovery_passphrase_is_refused_and_the_right_one_opens_the_keys(
        qtbot, keyring_shop, tmp_path, monkeypatch):  # noqa: F811 - the imported fixture
    from app.core.engine import Engine

    usb = tmp_path / "usb"
    usb.mkdir()
    shop = Engine(keyring_shop)
    try:
        path = shop.admin.create_backup(usb, RECOVERY).path
    finally:
        shop.close()
    monkeypatch.setenv(secrets.KEYRING_ENV, "0")  # «another PC»: no keyring at all
    new_home = tmp_path / "otro-equipo"
    dialog = RestoreDialog(path, new_home)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.start()
    first = answer(qtbot, dialog, "otra frase cualquiera")
    assert f"Las claves de la copia «{Path(path).name}»" in first
    again = answer(qtbot, dialog, RECOVERY)
    assert "frase de recuperación no es correcta" in again and "Las claves de la copia" in again
    while not ended_or_asking(qtbot, dialog):  # no SUNAT here: the last number printed is asked
        answer(qtbot, dialog, 5)
    assert dialog.error is None and dialog.outcome.keys_open
    assert "Las claves de la copia (certificados, clave SOL) siguen cerradas" not in dialog.done_text()
    wait_idle(qtbot, dialog.workers)  # the restored folder's engine closed: it opens with the keys from now on
    monkeypatch.setenv(secrets.RECOVERY_ENV, RECOVERY)
    again_engine = Engine(new_home)
    try:
        assert again_engine.invoicing.sol_credentials(ISSUER_RUC) == ("MODDATOS", "claveSOLsecreta")
    finally:
        again_engine.close()
    assert (new_home / backups.DATABASE).is_file()


def test_the_restore_steps_put_a_production_backup_back_in_production_and_check_it_there(voids_sandbox, tmp_path):
    """What the dialog runs on its worker: a backup made in production (its addresses the SUNAT sandbox's on
    127.0.0.1) restores into production, and SUNAT is asked about production's F001."""
    from app.gui.restore import restore_steps
    from tests.core.invoicing.test_restore_numbering import _production_at_the_sandbox

    class Steps:
        def __init__(self) -> None:
            self.reported: list[tuple[str, int, int]] = []

        def report(self, step: tuple[str, int, int]) -> None:
            self.reported.append(step)

    usb = tmp_path / "usb"
    usb.mkdir()
    shop = _shop(tmp_path / "pc-que-murio", voids_sandbox)
    try:
        _production_at_the_sandbox(shop, voids_sandbox)
        issued(shop, factura("F001", 1, LINES))
        path = shop.admin.create_backup(usb).path
        issued(shop, factura("F001", 2, LINES))
    finally:
        shop.close()
    outcome = restore_steps(Steps(), path, tmp_path / "otro-equipo", lambda question: None)  # a Job's `report` only
    try:
        assert outcome.engine is not None and outcome.engine.admin.config_get("environment") == "produccion"
        assert outcome.numbering is not None
        (f001,) = outcome.numbering.series
        assert f001.consultado and [item["numero"] for item in f001.encontrados] == [2] and f001.sigue_en == 3
        assert outcome.lines[1].startswith("Entorno de la copia: produccion")
    finally:
        if outcome.engine is not None:
            outcome.engine.close()
