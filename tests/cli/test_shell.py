"""The app starts: the self-test passes, settings docs are current."""

from app.core.platform.settings import markdown
from tests.helpers.base import ROOT, run_cli


def test_self_test_exits_zero(tmp_path):
    shot = tmp_path / "shot.png"
    done = run_cli("--self-test", "--screenshot", str(shot))
    assert done.returncode == 0, done.stderr.decode()
    assert "autoprueba correcta" in done.stdout.decode()
    assert shot.stat().st_size > 1000


def test_configuration_doc_is_current():
    assert (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8") == markdown()
