"""The worker pool: work off the GUI thread, outcomes on it, busy buttons, progress, failures."""

from __future__ import annotations

import threading

from PySide6.QtCore import QThread
from PySide6.QtWidgets import QPushButton, QWidget

from app.core.errors import YupanaError, invalid
from app.gui.workers import Workers


def test_job_runs_off_the_gui_thread_and_answers_on_it(qtbot):
    owner, button = QWidget(), QPushButton("Hacer")
    qtbot.addWidget(owner)
    workers = Workers()
    release = threading.Event()
    seen: dict = {}

    def work() -> str:
        seen["worker_thread"] = QThread.currentThread()
        release.wait(5)
        return "hecho"

    def done(value: str) -> None:
        seen["value"], seen["done_thread"] = value, QThread.currentThread()

    workers.run(owner, work, done=done, busy=[button])
    assert not button.isEnabled()  # disabled while its work runs
    release.set()
    qtbot.waitUntil(lambda: "value" in seen and button.isEnabled())
    gui_thread = owner.thread()
    assert seen["value"] == "hecho"
    assert seen["done_thread"] == gui_thread
    assert seen["worker_thread"] != gui_thread
    assert workers.running == 0


def test_failure_and_progress_reach_the_owner(qtbot):
    owner = QWidget()
    qtbot.addWidget(owner)
    workers = Workers()
    steps, errors = [], []

    def work(job):
        for step in range(3):
            job.report(step)
        raise invalid("items[0].cantidad", "La cantidad de «items[0].cantidad» debe ser mayor que cero.")

    workers.run(owner, work, pass_job=True, progress=steps.append, failed=errors.append)
    qtbot.waitUntil(lambda: bool(errors))
    assert steps == [0, 1, 2]
    assert isinstance(errors[0], YupanaError) and errors[0].details[0].field == "items[0].cantidad"


def test_a_closed_owner_does_not_break_a_late_answer(qtbot):
    workers = Workers()
    owner = QWidget()
    release = threading.Event()
    delivered = []
    job = workers.run(owner, lambda: release.wait(5), done=delivered.append)
    owner.deleteLater()
    qtbot.waitUntil(lambda: not _alive(owner))
    release.set()
    assert job.done.wait(5)
    qtbot.waitUntil(lambda: workers.running == 0)
    assert delivered == []  # nobody to tell: the answer is dropped, nothing crashes


def _alive(widget) -> bool:
    try:
        widget.objectName()
        return True
    except RuntimeError:
        return False


def test_garbage_is_collected_on_the_gui_thread(qtbot):
    import gc

    from PySide6.QtCore import QObject

    from app.gui.collector import GuiThreadCollector

    holder = QObject()
    collector = GuiThreadCollector(holder, interval_ms=5)
    try:
        assert not gc.isenabled()
        for _ in range(gc.get_threshold()[0] + 10):  # enough new objects to pass generation 0's threshold
            cycle = []
            cycle.append(cycle)
        qtbot.waitUntil(lambda: gc.get_count()[0] < gc.get_threshold()[0])
    finally:
        collector.stop()
    assert gc.isenabled()


def test_the_outcome_decides_the_busy_widgets_state(qtbot):
    """Busy widgets are given back before the outcome is shown, so a callback that disables one (e.g. a
    voucher just accepted cannot be resent) is not overridden when the job ends."""
    owner, button = QWidget(), QPushButton("Reenviar")
    qtbot.addWidget(owner)
    workers = Workers()
    seen: dict = {}

    def done(value: str) -> None:
        seen["enabled_when_shown"] = button.isEnabled()
        button.setEnabled(False)

    workers.run(owner, lambda: "aceptado", done=done, busy=[button])
    qtbot.waitUntil(lambda: workers.running == 0)
    assert seen["enabled_when_shown"] is True
    assert not button.isEnabled()
