"""Scheduled backups (issue 35): daily at the hour the user picks and after every N vouchers signed on this desk,
into the folder of the settings (`backup_folder`, `backup_hour`, `backup_every_vouchers`).

One background loop (platform.loops) makes them, so a backup never runs on the GUI thread and never two at a time
from this desk (a backup into a folder also holds the folder's lock: backups.create). At most one backup starts
every 10 minutes: a trigger inside that gap waits for its end and every trigger that came meanwhile is served by the
same backup. «Hacer copia ahora» (`request_now`) is the one trigger that does not wait for the gap: the user asked.

The wall clock is app.core.platform.clock (tests move it with `clock.frozen`); the daily backup is due once the
hour has come today in Peru and no backup in the folder (this desk's or one made with `yupana respaldo crear`) was
made since that moment. The N vouchers are counted from the engine's events while it runs: a restart starts the
count again (the daily backup still comes).

On a database several desks share, the daily and N-voucher backups are made by the desk holding the backups' turn
(the one whose loop writes the voucher files: backup_files), into its folder; the vouchers it counts are every desk's
(each desk hears the others' events). A desk without the turn drops its count when one is due and looks again later
(it makes them once it takes the turn over). A holder whose folder stays unreachable lets the turn go (backup_files):
the backups go on in the folder of a desk that can write them. «Hacer copia ahora» is made on the desk where it was
asked, turn or not.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import YupanaError
from app.core.invoicing import backups
from app.core.invoicing.backups import BackupCheck
from app.core.platform import clock
from app.core.platform.loops import UNTIL_WOKEN, BackgroundLoop, Due

log = logging.getLogger(__name__)

MIN_GAP = dt.timedelta(minutes=10)
CHECK_EVERY_S = 60.0
BACKGROUND_NICE = 10  # how often an idle loop looks at the clock for the daily hour
DAILY, VOUCHERS, ASKED = "diaria", "comprobantes", "pedida"  # why a backup was made (shown in Ajustes)


@dataclass(frozen=True)
class BackupRun:
    """One backup this desk tried: when it started (UTC, ISO 8601), why, and its result."""

    started_at: str
    reason: str  # DAILY, VOUCHERS or ASKED
    ok: bool
    path: str = ""  # the backup written (when ok)
    message: str = ""  # the problem, in Spanish (when not ok)


def daily_moment(now: dt.datetime, hour: int) -> dt.datetime:
    """Today's (in Peru) backup moment at `hour`, as an aware instant."""
    today = now.astimezone(clock.PERU)
    return today.replace(hour=hour, minute=0, second=0, microsecond=0)


def reason_due(now: dt.datetime, hour: int, last_made: dt.datetime | None, signed: int, every: int,
               asked: bool) -> str | None:
    """Why a backup is due now (ASKED, VOUCHERS or DAILY), or None."""
    if asked:
        return ASKED
    if every > 0 and signed >= every:
        return VOUCHERS
    moment = daily_moment(now, hour)
    if now >= moment and (last_made is None or last_made < moment):
        return DAILY
    return None


def newest_in(folder: Path) -> dt.datetime | None:
    """When the newest backup in `folder` was made (from its name: UTC), or None (no backup, folder unreachable)."""
    try:
        names = [match.group(1) for path in folder.iterdir() if (match := backups.NAME.match(path.name))]
    except OSError:
        return None
    return dt.datetime.strptime(max(names), "%Y%m%d-%H%M%S").replace(tzinfo=dt.UTC) if names else None


class BackupScheduler:
    """The loop that makes the scheduled backups (module doc). `backup(folder)` makes one verified backup (the
    engine's `admin.create_backup`); `setting(key)` reads a setting."""

    def __init__(self, backup: Callable[[str], BackupCheck], setting: Callable[[str], str],
                 holding: Callable[[], bool] | None = None) -> None:
        self._backup = backup
        self._setting = setting
        self._holding = holding  # several desks: whether this desk holds the backups' turn (None: always)
        self._lock = threading.Lock()
        self._signed = 0  # vouchers signed since the last backup started
        self._asked = False
        self._last_started: dt.datetime | None = None
        self.last: BackupRun | None = None  # the last backup this desk tried
        self.loop = BackgroundLoop("yupana-backups", self._round, what="scheduled backup", logger=log)

    def start(self) -> None:
        """Start the loop when a folder is set (a new folder or schedule: `wake`)."""
        if self._setting("backup_folder"):
            self.loop.start()

    def wake(self) -> None:
        self.loop.wake()

    def vouchers_signed(self, count: int) -> None:
        """`count` new vouchers were signed: a backup is due after every `backup_every_vouchers` of them."""
        with self._lock:
            self._signed += count
            reached = 0 < self._every() <= self._signed
        if reached and self._setting("backup_folder"):
            self.loop.wake()

    def request_now(self) -> None:
        """«Hacer copia ahora»: a backup at once on the loop (not waiting for the 10-minute gap)."""
        with self._lock:
            self._asked = True
        self.loop.wake()

    def stop(self) -> None:
        self.loop.stop()

    # ------------------------------------------------------------ the loop's round

    def _every(self) -> int:
        return int(self._setting("backup_every_vouchers") or 0)

    def _round(self) -> Due:
        folder = self._setting("backup_folder")
        if not folder:
            return UNTIL_WOKEN
        now = clock.now()
        made = [when for when in (self._last_started, newest_in(Path(folder).expanduser())) if when is not None]
        last_made = max(made) if made else None
        with self._lock:
            reason = reason_due(now, int(self._setting("backup_hour")), last_made, self._signed, self._every(),
                                self._asked)
            if reason is None:
                return min(CHECK_EVERY_S, self._until_daily(now))
            if reason != ASKED and last_made is not None and now < last_made + MIN_GAP:
                return (last_made + MIN_GAP - now).total_seconds()  # the triggers merge into the next backup
            if reason != ASKED and self._holding is not None and not self._holding():
                self._signed = 0  # another desk's turn: it counts the same vouchers and makes the backup
                return CHECK_EVERY_S
            self._signed, self._asked, self._last_started = 0, False, now
        self.last = self._make(folder, reason, now)
        return 0  # look again at once: what came during the backup

    def _until_daily(self, now: dt.datetime) -> float:
        moment = daily_moment(now, int(self._setting("backup_hour")))
        if moment <= now:
            moment += dt.timedelta(days=1)
        return max(1.0, (moment - now).total_seconds())

    def _make(self, folder: str, reason: str, now: dt.datetime) -> BackupRun:
        started = now.isoformat(timespec="seconds")
        _yield_the_cpu()
        try:
            check = self._backup(folder)
        except YupanaError as exc:
            log.warning("scheduled backup (%s) into %s failed: %s", reason, folder, exc.message)
            return BackupRun(started, reason, False, message=exc.message)
        except OSError as exc:
            log.warning("scheduled backup (%s) into %s failed: %s", reason, folder, exc)
            return BackupRun(started, reason, False, message=f"No se pudo escribir la copia en «{folder}»: {exc}")
        log.info("scheduled backup (%s) written: %s", reason, check.path)
        return BackupRun(started, reason, True, path=check.path)


def _yield_the_cpu() -> None:
    """Where the system allows it (Linux: a thread's own nice value), the backups' thread runs behind issuing: its
    compression and checks take CPU only when «Emitir» does not need it (bench/backup.py)."""
    if hasattr(os, "setpriority") and sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)
        except OSError:
            pass  # not allowed here: the backup runs at the same priority


# ---------------------------------------------------------------- what Ajustes and the main window show

STALE_AFTER = dt.timedelta(days=7)


# A folder whose keys the keyring keeps, with no recovery passphrase yet: its backups open no secret on another PC.
NO_RECOVERY_WARNING = ("Las copias de seguridad no llevan una frase de recuperación: sin ella, los certificados y la "
                       "clave SOL no se abren en otro equipo. Elíjala en Ajustes → «Copias de seguridad» → «Frase de "
                       "recuperación…».")


@dataclass(frozen=True)
class BackupStatus:
    """The scheduled backups as the windows show them: the folder, whether it is reachable, the newest backup in it,
    this desk's last try and, when the user should act, a warning (Spanish) for the main window's banner."""

    folder: str
    reachable: bool
    newest: str | None  # when the newest backup in the folder was made (UTC, ISO 8601)
    last_run: BackupRun | None
    warning: str | None


def status(folder: str, last_run: BackupRun | None) -> BackupStatus:
    """A warning when the folder is unreachable or the newest good backup is older than 7 days (none: no folder
    chosen, nothing to warn about beyond Ajustes' own text)."""
    if not folder:
        return BackupStatus("", False, None, last_run, None)
    path = Path(folder).expanduser()
    if not path.is_dir():
        return BackupStatus(folder, False, None, last_run,
                            f"No se encuentra la carpeta de las copias de seguridad «{folder}» (¿está conectada la "
                            "memoria USB?): no se están haciendo copias.")
    newest = newest_in(path)
    shown = newest.isoformat(timespec="seconds") if newest else None
    if newest is None:
        return BackupStatus(folder, True, None, last_run,
                            f"Todavía no hay ninguna copia de seguridad en «{folder}»: haga una en Ajustes → «Copias "
                            "de seguridad».")
    if clock.now() - newest > STALE_AFTER:
        days = (clock.now() - newest).days
        return BackupStatus(folder, True, shown, last_run,
                            f"La última copia de seguridad en «{folder}» es de hace {days} días: revise Ajustes → "
                            "«Copias de seguridad».")
    return BackupStatus(folder, True, shown, last_run, None)
