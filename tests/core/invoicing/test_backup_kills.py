"""Issue 35: a backup SIGKILLed at random moments (10 times, real `yupana respaldo crear` processes) leaves the
data folder and the previous backup intact; the next backup succeeds and removes what the killed ones left in the
backup folder (their `.yupana-respaldo-*` work folders and half-written zips)."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from app.core.invoicing import backups
from tests.helpers.base import ISSUER_RUC, ROOT, run_cli
from tests.helpers.messaging_support import wait_for
from tests.helpers.voucher_matrix import factura, item

KILLS = 10
PADDING_BYTES = 16 << 20  # random bytes, so the copy and its compression take long enough to be caught midway


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _shop(engine) -> Path:
    """A data folder with 40 signed vouchers and a table of incompressible bytes; its database file, closed."""
    engine.invoicing.create_test_certificate(ISSUER_RUC)
    answers = engine.invoicing.issue_batch([factura("F001", n, [item("Arroz 5 kg", "2", "10.00")])
                                            for n in range(1, 41)])
    assert all(answer.success for answer in answers)
    database = Path(engine.admin.database_file())
    engine.close()
    conn = sqlite3.connect(database)
    with conn:
        conn.execute("CREATE TABLE relleno (datos BLOB)")
        conn.executemany("INSERT INTO relleno VALUES (?)", ((os.urandom(1 << 20),) for _ in range(PADDING_BYTES >> 20)))
    conn.close()
    return database


def _start(home: Path, folder: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "app", "respaldo", "crear", str(folder)], cwd=ROOT,
                            env={**os.environ, "YUPANA_HOME": str(home)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _leftovers(folder: Path) -> list[Path]:
    return [*folder.glob(f"{backups.WORK_PREFIX}*"), *folder.glob("*.partial")]


def _work_copy_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.glob(f"{backups.WORK_PREFIX}*/{backups.DATABASE}")
               if path.exists())


def _partial_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.glob("*.partial") if path.exists())


def _moment(rng: random.Random, folder: Path, database_bytes: int):
    """A random moment of a backup, as a condition on what it has written so far (never a sleep): as it starts,
    while it copies the database, while it writes the zip."""
    phase = rng.choice(["start", "copy", "zip"])
    share = rng.uniform(0.05, 0.9)
    if phase == "start":
        return phase, lambda: True
    if phase == "copy":
        return phase, lambda: _work_copy_bytes(folder) >= share * database_bytes
    return phase, lambda: _partial_bytes(folder) >= share * PADDING_BYTES


def test_sigkill_during_backups_leaves_the_data_and_the_previous_backup_intact(engine, company, home, tmp_path):
    database = _shop(engine)
    folder = tmp_path / "usb"
    folder.mkdir()
    first = run_cli("respaldo", "crear", str(folder), home=home)
    assert first.returncode == 0, first.stderr
    previous = Path(first.stdout.decode().strip().splitlines()[-1])
    data_before, previous_before = _sha256(database), _sha256(previous)

    rng = random.Random(35)
    phases = []
    for _ in range(KILLS):
        process = _start(home, folder)
        phase, reached = _moment(rng, folder, database.stat().st_size)
        wait_for(lambda reached=reached, process=process: reached() or process.poll() is not None,
                 timeout=60, interval=0.002)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        phases.append((phase, process.returncode))
    assert sum(1 for _, code in phases if code == -signal.SIGKILL) == KILLS, phases

    assert _sha256(database) == data_before
    assert _sha256(previous) == previous_before and backups.verify(previous).ok
    assert _leftovers(folder), "no kill caught a backup midway"

    after = run_cli("respaldo", "crear", str(folder), home=home)
    assert after.returncode == 0, after.stderr
    made = Path(after.stdout.decode().strip().splitlines()[-1])
    assert backups.verify(made).ok
    assert _leftovers(folder) == []
    assert _sha256(database) == data_before
