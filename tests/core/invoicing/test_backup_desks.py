"""Issue 35 on several desks (one PostgreSQL, issue 34): every desk hears every voucher, and the desk holding the
backups' turn alone writes the backup folder's files and makes the scheduled backups; when it leaves, the other desk
takes the turn over and writes what came afterwards and what it kept (the files the holder never wrote). «Hacer copia
ahora» is made on the desk where it is asked; a holder SIGKILLed (a desk process, tests/helpers/desk_process.py) is
replaced at once, and what it never wrote is written by the desk that takes over. A holder whose USB drive stays out
lets the turn go to the other desk, which writes what it kept and makes the day's backup; its drive back, it writes
what it kept into it and competes for the turn again. Which desk wrote what is observed on each desk's writer."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.invoicing import backup_files, backups
from app.core.invoicing.backup_schedule import ASKED, DAILY, VOUCHERS
from app.core.platform import clock, secrets
from app.core.platform.settings import DeskSettings
from tests.helpers.base import ISSUER_RUC, ROOT
from tests.helpers.golden import COMPANY
from tests.helpers.messaging_support import wait_for
from tests.helpers.postgres import desk_engine
from tests.helpers.voucher_matrix import factura, item

pytestmark = pytest.mark.postgres
LINES = [item("Arroz superior 5 kg", "2", "10.00")]
MORNING = dt.datetime(2026, 12, 7, 10, 0, tzinfo=clock.PERU)  # before the daily hour (20): no daily backup due
EVENING = dt.datetime(2026, 12, 7, 20, 30, tzinfo=clock.PERU)  # past it: the day's backup is due


@pytest.fixture
def desks(postgres_server, tmp_path, monkeypatch):
    """Two desks on one fresh database, both with the same backup folder; the first holds the backups' turn."""
    monkeypatch.setenv(secrets.PASSPHRASE_ENV, "frase del negocio 2026")
    url = postgres_server.fresh_database()
    folder = tmp_path / "carpeta-compartida"
    folder.mkdir()
    opened = []
    try:
        with clock.frozen(MORNING):
            for name in ("caja1", "caja2"):
                desk = desk_engine(tmp_path / name, url)
                opened.append(desk)
                if name == "caja1":
                    desk.admin.set_company(COMPANY)
                    desk.invoicing.create_test_certificate(ISSUER_RUC)
                desk.admin.config_set("backup_hour", "20")
                desk.admin.config_set("backup_every_vouchers", "0")
                desk.admin.config_set("backup_folder", str(folder))
                if name == "caja1":
                    wait_for(desk._backup_files.holding, timeout=30)  # the first desk with a folder takes the turn
            yield opened, folder
    finally:
        for desk in opened:
            desk.close()


def _watch_puts(desk, monkeypatch) -> list[str]:
    """The names this desk's writer puts into the folder (observation: the real write goes on)."""
    names: list[str] = []
    writer = desk._backup_files
    real_put = writer._put

    def put(target: Path, data: bytes) -> None:
        names.append(target.name)
        real_put(target, data)

    monkeypatch.setattr(writer, "_put", put)
    return names


def _issue(desk, serie: str, numbers: range) -> set[str]:
    """Issue (sign) vouchers; the names of their signed XML files."""
    answers = list(desk.invoicing.issue_batch([factura(serie, n, LINES) for n in numbers]))
    assert all(answer.success for answer in answers), answers
    return {answer.voucher.nombre_archivo for answer in answers}


def _files(folder: Path) -> set[str]:
    return {path.name for path in (folder / "comprobantes").rglob("*.xml")}


def test_one_desk_writes_every_desks_files_and_the_other_takes_over_what_it_kept_when_the_holder_leaves(
        desks, monkeypatch):
    (first, second), folder = desks
    by_first, by_second = _watch_puts(first, monkeypatch), _watch_puts(second, monkeypatch)
    expected = _issue(first, "F001", range(1, 6)) | _issue(second, "F002", range(1, 6))
    wait_for(lambda: _files(folder) == expected, timeout=60)
    assert set(by_first) == expected and by_second == []  # one writer: the turn's holder, for both desks' vouchers
    wait_for(lambda: second._backup_files.pending() == 10, timeout=30)  # kept, in case the holder dies
    assert not second._backup_files.holding()

    def dying_put(target: Path, data: bytes) -> None:  # fault injection: the holder never gets these written
        raise OSError("el puesto se cuelga")

    monkeypatch.setattr(first._backup_files, "_put", dying_put)
    unwritten = _issue(first, "F001", range(6, 9))
    wait_for(lambda: second._backup_files.pending() == 13, timeout=30)  # heard and kept by the other desk
    wait_for(lambda: first._backup_files.pending() == 3, timeout=30)  # tried and failed on the holder
    assert _files(folder) == expected and first._backup_files.holding() and not second._backup_files.holding()
    first.close()  # the holder leaves with its files unwritten; its turn is free

    later = _issue(second, "F002", range(6, 8))
    wait_for(lambda: _files(folder) == expected | unwritten | later, timeout=60)
    assert second._backup_files.holding() and unwritten | later <= set(by_second)
    assert set(by_first) == expected  # the holder wrote nothing after it stopped writing


def test_the_scheduled_backups_are_made_by_the_turns_holder_and_backup_now_on_any_desk(desks):
    (first, second), folder = desks
    with clock.frozen(MORNING):
        for desk in (first, second):
            desk.admin.config_set("backup_every_vouchers", "2")
        _issue(second, "F002", range(1, 3))  # signed on the desk without the turn: counted on both
        run = wait_for(lambda: first.admin.backup_status().last_run, timeout=120)
        assert run.ok and run.reason == VOUCHERS, run.message
        loop = second._backup_scheduler.loop
        after = loop.rounds
        loop.wake()
        assert loop.wait_round(after, timeout=60)  # the other desk's loop looked too, and left it to the holder
        assert second.admin.backup_status().last_run is None
        assert [path.name for path in folder.iterdir() if backups.NAME.match(path.name)] == [Path(run.path).name]

        second.admin.backup_now()  # asked by a person: made where asked, turn or not
        asked = wait_for(lambda: second.admin.backup_status().last_run, timeout=120)
        assert asked.ok and asked.reason == ASKED, asked.message


def test_a_holder_whose_usb_drive_stays_out_lets_the_turn_go_to_a_desk_that_can_write_and_competes_again_once_back(
        desks, tmp_path, monkeypatch):
    (first, second), folder = desks
    # The writers' clocks shortened (both desks run in this process): a retry every 0.3 s, the turn let go after 1 s
    # unreachable, renewed and looked at again every 0.5 s. The order of events is the shipped one; the test takes
    # seconds instead of the two minutes the shipped times (30 s, 60 s, 20 s) would take.
    monkeypatch.setattr(backup_files, "RETRY_S", 0.3)
    monkeypatch.setattr(backup_files, "UNREACHABLE_S", 1.0)
    monkeypatch.setattr(backup_files, "RENEW_S", 0.5)
    monkeypatch.setattr(backup_files, "LOOK_AGAIN_S", 0.5)
    usb = tmp_path / "usb-caja1"
    usb.mkdir()
    first.admin.config_set("backup_folder", str(usb))  # the holder writes into its own USB drive, the other desk not
    assert first._backup_files.holding()
    shutil.rmtree(usb)  # pulled out, and left out
    expected = _issue(first, "F001", range(1, 4)) | _issue(second, "F002", range(1, 3))
    wait_for(second._backup_files.holding, timeout=60)  # the holder let the turn go (UNREACHABLE_S); the other took it
    wait_for(lambda: _files(folder) == expected, timeout=60)  # what it kept while the holder could not write
    assert not first._backup_files.holding() and first._backup_files.pending() == 5  # and the holder still keeps them
    later = _issue(first, "F001", range(4, 6))  # issued on the desk that let go: written by the turn's holder
    wait_for(lambda: _files(folder) == expected | later, timeout=60)
    wait_for(lambda: first._backup_files.pending() == 7, timeout=30)  # ... and kept by the desk whose folder is out

    with clock.frozen(EVENING):  # the day's backup is due: made by the turn's holder, into its folder
        second._backup_scheduler.wake()
        run = wait_for(lambda: second.admin.backup_status().last_run, timeout=120)
        assert run.ok and run.reason == DAILY and Path(run.path).parent == folder, run.message
        loop = first._backup_scheduler.loop
        after = loop.rounds
        loop.wake()
        assert loop.wait_round(after, timeout=60)  # the desk that let go looked too, and left it to the holder
        assert first.admin.backup_status().last_run is None

    usb.mkdir()  # plugged in again: the desk that let go writes what it kept into its own folder
    wait_for(lambda: _files(usb) == expected | later and first._backup_files.pending() == 0, timeout=90)
    assert second._backup_files.holding() and not first._backup_files.holding()  # the turn stays with its holder
    second.close()  # until it leaves: the desk whose folder is back competes again, and takes the turn
    wait_for(first._backup_files.holding, timeout=60)


def _ask(desk: subprocess.Popen, line: str) -> str:
    assert desk.stdin is not None and desk.stdout is not None
    desk.stdin.write(line + "\n")
    desk.stdin.flush()
    return desk.stdout.readline().strip()


def test_the_turns_holder_killed_the_other_desk_takes_over_at_once_and_writes_what_it_left(
        postgres_server, tmp_path, monkeypatch):
    monkeypatch.setenv(secrets.PASSPHRASE_ENV, "frase del negocio 2026")
    url = postgres_server.fresh_database()
    unplugged = tmp_path / "usb-caja1"
    unplugged.mkdir()
    # The holder is a process of its own, where the test's frozen clock does not reach: a backup made just now (its
    # name is what the schedule reads) keeps its daily backup from being due, whatever the hour (after 20:00 in Peru
    # it made one at once, into the folder this test pulls out).
    (unplugged / f"yupana-respaldo-{clock.now().astimezone(dt.UTC):%Y%m%d-%H%M%S}.zip").write_bytes(b"")
    home = tmp_path / "caja1"
    home.mkdir()
    DeskSettings(home).put("database_url", url)
    DeskSettings(home).put("backup_folder", str(unplugged))
    holder = subprocess.Popen([sys.executable, "-m", "tests.helpers.desk_process", "backups", str(home)], cwd=ROOT,
                              env=dict(os.environ, YUPANA_HOME=str(home)), text=True, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    second = None
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        folder = tmp_path / "carpeta-caja2"
        folder.mkdir()
        second = desk_engine(tmp_path / "caja2", url)
        second.admin.set_company(COMPANY)
        second.invoicing.create_test_certificate(ISSUER_RUC)
        second.admin.config_set("backup_every_vouchers", "0")
        second.admin.config_set("backup_folder", str(folder))
        # The holder's USB drive pulled out: it hears the vouchers and cannot write them (it keeps the turn until its
        # folder has been unreachable for UNREACHABLE_S; it is killed as soon as it has tried).
        shutil.rmtree(unplugged)
        expected = _issue(second, "F001", range(1, 4))
        wait_for(lambda: _ask(holder, "count") == "3", timeout=60)  # the holder tried: kept for its retry
        wait_for(lambda: second._backup_files.pending() == 3, timeout=30)  # and the other desk kept them too
        assert not second._backup_files.holding() and _files(folder) == set()

        os.kill(holder.pid, signal.SIGKILL)  # the holder's PC dies: its turn is left behind, its files unwritten
        holder.communicate(timeout=30)
        wait_for(lambda: _files(folder) == expected, timeout=60)  # its process gone: the turn taken over (DeskTurn)
        assert second._backup_files.holding()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.communicate()
        if second is not None:
            second.close()
