"""The Windows smoke test's judgements (scripts/wine_smoke.py, run by installer/smoke_windows.sh on the installed app
under Wine, issues 30, 33, 34), each shown to refuse what it must refuse. The checks themselves run only there (a Wine
build takes minutes): these are the parts that decide, on crafted data."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.wine_smoke import SmokeFailed, second_apps, signing_workers, winpath

APP = r"C:\users\root\AppData\Local\Programs\Yupana\yupana.exe"
# As the installed app under Wine writes it: QtCore is in every process of the frozen app (PyInstaller's PySide6
# runtime hook imports it), QtGui in none of the workers.
GOOD = ("2026-12-06 17:40:01 INFO MainThread app.core.invoicing.batches: batch of 70 requests made by 2 signing "
        "processes: pid 412 signed 35 (Qt: PySide6, QtCore), pid 420 signed 35 (Qt: PySide6, QtCore)")


def test_two_workers_that_signed_the_whole_batch_without_qtgui_pass():
    assert signing_workers("first line\n" + GOOD + "\n", 70) == [(412, 35), (420, 35)]
    assert signing_workers(GOOD.replace("Qt: PySide6, QtCore", "Qt: none"), 70) == [(412, 35), (420, 35)]  # Linux


@pytest.mark.parametrize(("line", "why"), [
    (GOOD.replace("2 signing processes: pid 412 signed 35 (Qt: PySide6, QtCore), ", "1 signing processes: ")
     .replace("signed 35", "signed 70"), "1 worker"),
    (GOOD.replace("pid 420", "pid 412"), "one pid"),
    (GOOD.replace("pid 412 signed 35", "pid 412 signed 0").replace("pid 420 signed 35", "pid 420 signed 70"),
     "signed nothing"),
    (GOOD.replace("pid 420 signed 35", "pid 420 signed 30"), "65 signed by the workers of 70"),
    (GOOD.replace("pid 420 signed 35 (Qt: PySide6, QtCore)", "pid 420 signed 35 (Qt: PySide6, QtCore, QtGui)"),
     "QtGui or QtWidgets"),
    (GOOD.replace("pid 412 signed 35 (Qt: PySide6, QtCore)", "pid 412 signed 35 (Qt: QtWidgets)"), "QtGui or QtWidgets"),
    (GOOD.replace("batch of 70", "batch of 7"), "no line"),
])
def test_a_batch_not_signed_by_two_qt_free_workers_is_refused(line, why):
    with pytest.raises(SmokeFailed, match=why):
        signing_workers(line, 70)


def test_lote_and_its_workers_are_no_second_app():
    seen = {30: [APP, "--home", r"Z:\w\h", "lote", r"Z:\w\lote.jsonl", "--quiet"],
            31: [APP, "--multiprocessing-fork", "parent_pid=30", "pipe_handle=1184"],
            32: [APP, "--multiprocessing-fork", "parent_pid=30", "pipe_handle=1200"]}
    assert second_apps(seen, "lote") == ([31, 32], [])


def test_a_yupana_exe_that_is_neither_lote_nor_a_worker_is_a_second_app():
    lote = [APP, "--home", r"Z:\w\h", "lote", r"Z:\w\lote.jsonl"]
    worker = [APP, "--multiprocessing-fork", "parent_pid=30", "pipe_handle=1184"]
    assert second_apps({30: lote, 31: worker, 33: [APP]}, "lote") == ([31], [[APP]])  # the windows, started bare
    assert second_apps({30: lote, 34: lote}, "lote") == ([], [])  # Wine's loader and the program: one command line
    other_lote = [APP, "--home", r"Z:\w\otra", "lote", r"Z:\w\lote.jsonl"]
    assert second_apps({30: lote, 34: other_lote}, "lote") == ([], [lote, other_lote])  # a second, other command
    assert second_apps({31: worker}, "lote") == ([31], [])  # lote itself not seen: no second app, and
    # check_lote then refuses the run for another reason (its workers counted against the log's)


def test_paths_are_given_to_wine_on_drive_z():
    assert winpath(Path("/work/build/wine-smoke/lote.jsonl")) == \
        r"Z:\work\build\wine-smoke\lote.jsonl"
