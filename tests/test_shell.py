"""The app starts: the main window opens, the self-test passes, settings docs are current."""

from app.core.settings import markdown
from tests.conftest import ROOT, run_cli


def test_main_window_opens(qtbot, engine):
    from app.gui.main_window import MainWindow

    window = MainWindow(engine)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.isVisible()
    assert "Yupana" in window.windowTitle()


def test_self_test_exits_zero(tmp_path):
    shot = tmp_path / "shot.png"
    done = run_cli("--self-test", "--screenshot", str(shot))
    assert done.returncode == 0, done.stderr.decode()
    assert "autoprueba correcta" in done.stdout.decode()
    assert shot.stat().st_size > 1000


def test_configuration_doc_is_current():
    assert (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8") == markdown()
