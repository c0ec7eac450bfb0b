"""Issue 35, windows: Ajustes → «Copias de seguridad» (the folder and schedule fields, the newest backup and this
desk's last try, «Hacer copia ahora» made on the engine's backups loop, «Restaurar…» into a new empty folder with the
numbering checked, in test_restore_window.py's dialog) and the main window's banner when the newest backup is older than 7 days or its folder is unreachable."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

import pytest

from app.core.invoicing import backups
from app.core.platform import clock
from app.gui.settings import SettingsPage
from tests.gui.test_restore_window import answer, ended_or_asking
from tests.helpers.base import ISSUER_RUC
from tests.helpers.gui import open_widget, wait_idle
from tests.helpers.voucher_matrix import factura, item

TAB = "Copias de seguridad"
NIGHT = dt.datetime(2026, 12, 7, 1, 0, tzinfo=clock.PERU)


@pytest.fixture
def usb(engine, company, tmp_path) -> Path:
    engine.invoicing.create_test_certificate(ISSUER_RUC)
    assert all(answer.success for answer in engine.invoicing.issue_batch(
        [factura("F001", n, [item("Arroz 5 kg", "2", "10.00")]) for n in range(1, 4)]))
    folder = tmp_path / "usb"
    folder.mkdir()
    return folder


def test_the_tab_makes_a_backup_now_off_the_window_thread_and_restores_one(qtbot, context, usb, tmp_path):
    # Before the day's backup hour (20:00 in Peru): from 20:00 the folder set would make the daily backup first,
    # and the result shown would be that one (a failure seen at 20:25)
    with clock.frozen(NIGHT):
        context.engine.admin.config_set("backup_folder", str(usb))
        page = open_widget(qtbot, context, SettingsPage)
        titles = [page.tabs.tabText(n) for n in range(page.tabs.count())]
        assert TAB in titles
        form = page.forms[TAB]
        assert form.value("backup_folder") == str(usb) and form.value("backup_hour") == "20"
        assert form.value("backup_every_vouchers") == "50"
        box = page.backups
        assert box.status.text().startswith(f"Todavía no hay ninguna copia de seguridad en «{usb}»")

        box.backup_button.click()
        qtbot.waitUntil(lambda: "verificada" in box.result.text(), timeout=60_000)
        made = [path for path in usb.iterdir() if backups.NAME.match(path.name)]
        assert len(made) == 1 and backups.verify(made[0]).ok
        assert "1b5e20" in box.result.styleSheet() and "(pedida a mano)" in box.result.text()
    loop_thread = context.engine._backup_scheduler.loop.thread
    assert loop_thread is None or loop_thread is not threading.main_thread()
    wait_idle(qtbot, context.workers)
    assert box.status.text().startswith("La copia más reciente en la carpeta es del")

    new_folder = tmp_path / "otra-pc"
    new_folder.mkdir()
    dialog = box.restore(str(made[0]), str(new_folder))  # the steps of `yupana respaldo restaurar`, in a dialog
    while not ended_or_asking(qtbot, dialog):  # SUNAT not reachable here: the last number printed is asked
        answer(qtbot, dialog, 3)
    assert dialog.error is None
    qtbot.waitUntil(lambda: box.result.text().startswith(f"Copia «{made[0].name}» restaurada en"), timeout=10_000)
    assert "F001 hasta el 3" in box.result.text() and "Numeración comprobada" in box.result.text()
    assert f'yupana --home "{new_folder}"' in box.result.text() and (new_folder / backups.DATABASE).is_file()
    assert "F001 (tipo 01, RUC 20100066603): sigue en 4" in dialog.done_text()
    wait_idle(qtbot, dialog.workers)  # the restored folder's engine is closed: another Yupana opens it
    dialog.close()

    dialog = box.restore(str(made[0]), str(new_folder))  # not an empty folder any more
    qtbot.waitUntil(lambda: "ya tiene una base de datos de Yupana" in box.result.text(), timeout=60_000)
    assert "b71c1c" in box.result.styleSheet() and "ya tiene una base de datos" in dialog.banner.text.text()


def test_backup_now_without_a_folder_says_so(qtbot, context, company):
    page = open_widget(qtbot, context, SettingsPage)
    box = page.backups
    assert box.status.text().startswith("Elija una carpeta para las copias de seguridad")
    box.backup_button.click()
    qtbot.waitUntil(lambda: box.result.text() == "Elija primero la carpeta de las copias de seguridad.", timeout=10_000)


def test_the_main_window_warns_of_an_old_backup_and_an_unreachable_folder(qtbot, engine, usb, tmp_path):
    from app.gui.main_window import MainWindow

    with clock.frozen(NIGHT - dt.timedelta(days=8)):
        old = engine.admin.create_backup(usb)
    assert old.ok
    engine.admin.config_set("backup_hour", "23")
    engine.admin.config_set("backup_every_vouchers", "0")
    with clock.frozen(NIGHT):  # before the day's backup hour
        engine.admin.config_set("backup_folder", str(usb))
        window = MainWindow(engine, first_run=False)
        qtbot.addWidget(window)
        window.show()
        wait_idle(qtbot, window.workers)
        banner = window.backup_banner
        qtbot.waitUntil(banner.isVisible, timeout=10_000)
        assert banner.text.text() == (f"La última copia de seguridad en «{usb}» es de hace 8 días: revise Ajustes → "
                                      "«Copias de seguridad».")

        usb.rename(tmp_path / "desconectada")  # the USB drive unplugged
        window.refresh_status()
        qtbot.waitUntil(lambda: banner.text.text().startswith("No se encuentra la carpeta de las copias"),
                        timeout=10_000)

        (tmp_path / "desconectada").rename(usb)
        assert engine.admin.create_backup(usb).ok  # a fresh backup
        window.refresh_status()
        qtbot.waitUntil(lambda: not banner.isVisible(), timeout=10_000)
    window.close()


def test_the_tab_keeps_a_recovery_passphrase_on_a_worker(qtbot, context, company):
    page = open_widget(qtbot, context, SettingsPage)
    box = page.backups
    box.set_recovery("corta")
    qtbot.waitUntil(lambda: "al menos 8 caracteres" in box.result.text(), timeout=10_000)
    assert not context.engine._secrets.has_recovery()
    box.set_recovery("frase de recuperación de la tienda")
    qtbot.waitUntil(lambda: box.result.text().startswith("Frase de recuperación guardada"), timeout=30_000)
    assert context.engine._secrets.has_recovery() and "1b5e20" in box.result.styleSheet()


def test_the_tab_offers_to_change_the_recovery_passphrase_once_there_is_one(qtbot, context, company):
    from app.core.errors import YupanaError
    from app.gui.backups import CHANGE_RECOVERY, CHOOSE_RECOVERY

    page = open_widget(qtbot, context, SettingsPage)
    box = page.backups
    qtbot.waitUntil(lambda: box.recovery is not None, timeout=10_000)
    assert box.recovery_button.text() == CHOOSE_RECOVERY
    box.set_recovery("frase de recuperación de la tienda")
    qtbot.waitUntil(lambda: box.recovery_button.text() == CHANGE_RECOVERY, timeout=30_000)
    box.change_recovery("corta")
    qtbot.waitUntil(lambda: "al menos 8 caracteres" in box.result.text(), timeout=10_000)
    box.change_recovery("la nueva frase de la tienda")
    qtbot.waitUntil(lambda: box.result.text().startswith("Frase de recuperación cambiada"), timeout=30_000)
    assert "Las copias hechas antes siguen abriéndose solo con la frase anterior" in box.result.text()
    kept = context.engine._secrets
    assert kept._unwrap("la nueva frase de la tienda") == kept.master_key()  # the backups from now on
    with pytest.raises(YupanaError, match="no es correcta"):
        kept._unwrap("frase de recuperación de la tienda")
    assert box.recovery_button.text() == CHANGE_RECOVERY
