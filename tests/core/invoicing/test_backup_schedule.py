"""Issue 35: scheduled backups (app/core/invoicing/backup_schedule.py) — daily at the hour picked and after every N
vouchers, at most one every 10 minutes (the triggers inside the gap merge into the next), on the backups' loop
thread, into the folder of the settings. Time moves only through clock.frozen; real backups are written."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

import pytest

from app.core.errors import YupanaError
from app.core.invoicing import backup_schedule, backups
from app.core.invoicing.backup_schedule import ASKED, DAILY, VOUCHERS, reason_due
from app.core.platform import clock
from tests.helpers.base import ISSUER_RUC
from tests.helpers.messaging_support import wait_for
from tests.helpers.voucher_matrix import factura, item

LINES = [item("Arroz superior 5 kg", "2", "10.00")]
MORNING = dt.datetime(2026, 12, 7, 10, 0, tzinfo=clock.PERU)


def test_when_a_backup_is_due():
    at_ten = MORNING
    assert reason_due(at_ten, 20, None, 0, 50, False) is None  # before the hour
    assert reason_due(at_ten.replace(hour=20), 20, None, 0, 50, False) == DAILY
    assert reason_due(at_ten.replace(hour=21), 20, at_ten.replace(hour=20, minute=3), 0, 50, False) is None  # done
    assert reason_due(at_ten.replace(hour=21), 20, at_ten.replace(hour=19), 0, 50, False) == DAILY  # before 20:00
    assert reason_due(at_ten, 20, None, 49, 50, False) is None and reason_due(at_ten, 20, None, 50, 50, False) == VOUCHERS
    assert reason_due(at_ten, 20, None, 500, 0, False) is None  # 0: only the daily one
    assert reason_due(at_ten, 20, None, 0, 50, True) == ASKED


@pytest.fixture
def scheduled(engine, company, tmp_path):
    engine.invoicing.create_test_certificate(ISSUER_RUC)
    folder = tmp_path / "usb"
    folder.mkdir()
    with clock.frozen(MORNING):
        engine.admin.config_set("backup_hour", "20")
        engine.admin.config_set("backup_every_vouchers", "5")
        engine.admin.config_set("backup_folder", str(folder))
        yield engine, folder


def _backups(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if backups.NAME.match(path.name))


def _issue(engine, first: int, count: int) -> None:
    answers = list(engine.invoicing.issue_batch([factura("F001", n, LINES) for n in range(first, first + count)]))
    assert all(answer.success for answer in answers)


def _next_run(engine, previous=None):
    """The backups' loop's next finished backup (after `previous`)."""
    return wait_for(lambda: (run := engine.admin.backup_status().last_run) is not previous and run, timeout=60)


def _settled(engine) -> None:
    """The backups' loop has finished a round that began after now (whatever it decided)."""
    loop = engine._backup_scheduler.loop
    after = loop.rounds
    loop.wake()
    assert loop.wait_round(after, timeout=60)


def test_every_n_vouchers_a_backup_and_at_most_one_every_10_minutes(scheduled):
    engine, folder = scheduled
    _settled(engine)
    assert _backups(folder) == []  # 10:00, the daily one is at 20:00, no voucher yet
    _issue(engine, 1, 5)
    run = _next_run(engine)
    assert run.ok and run.reason == VOUCHERS and Path(run.path) == _backups(folder)[0]
    assert backups.verify(run.path).ok and backups.verify(run.path).info.vouchers == 5
    assert engine._backup_scheduler.loop.thread is not threading.current_thread()

    _issue(engine, 6, 5)  # due again, but inside the 10 minutes
    _settled(engine)
    _issue(engine, 11, 7)  # a third trigger, merged with the second
    _settled(engine)
    assert len(_backups(folder)) == 1

    assert engine.admin.backup_status().last_run is run

    with clock.frozen(MORNING + dt.timedelta(minutes=10)):
        _settled(engine)
        second = _next_run(engine, run)
        _settled(engine)
    assert engine.admin.backup_status().last_run is second  # one backup for both triggers
    assert second.ok and backups.verify(second.path).info.vouchers == 17
    assert _backups(folder) == [Path(second.path)]  # the day's newest kept by the rotation


def test_a_daily_backup_at_the_hour_picked_once_a_day(scheduled):
    engine, folder = scheduled
    with clock.frozen(MORNING.replace(hour=19, minute=59)):
        _settled(engine)
    assert _backups(folder) == []
    with clock.frozen(MORNING.replace(hour=20, minute=0)):
        _settled(engine)
        run = _next_run(engine)
    assert run.ok and run.reason == DAILY and len(_backups(folder)) == 1
    with clock.frozen(MORNING.replace(hour=23)):
        _settled(engine)
    assert len(_backups(folder)) == 1  # once a day
    with clock.frozen(MORNING.replace(hour=20, minute=1) + dt.timedelta(days=1)):
        _settled(engine)
        assert _next_run(engine, run).reason == DAILY
    assert len(_backups(folder)) == 2


def test_backup_now_runs_on_the_loop_and_a_missing_folder_is_reported(scheduled, tmp_path):
    engine, folder = scheduled
    engine.admin.backup_now()
    run = _next_run(engine)
    status = engine.admin.backup_status()
    assert status.last_run.ok and status.last_run.reason == ASKED and status.reachable and status.warning is None
    assert status.newest == MORNING.astimezone(dt.UTC).isoformat(timespec="seconds")

    with clock.frozen(MORNING + dt.timedelta(days=8)):  # the newest backup is 8 days old
        assert engine.admin.backup_status().warning == (
            f"La última copia de seguridad en «{folder}» es de hace 8 días: revise Ajustes → «Copias de seguridad».")

    folder.rename(tmp_path / "desconectada")  # the USB drive unplugged
    status = engine.admin.backup_status()
    assert not status.reachable and "No se encuentra la carpeta de las copias de seguridad" in status.warning
    engine.admin.backup_now()
    failed = _next_run(engine, run)
    assert not failed.ok and failed.reason == ASKED and f"La carpeta «{folder}» no existe" in failed.message


def test_backup_now_needs_a_folder(engine):
    with pytest.raises(YupanaError, match="Elija primero la carpeta"):
        engine.admin.backup_now()
    assert backup_schedule.status("", None).warning is None
