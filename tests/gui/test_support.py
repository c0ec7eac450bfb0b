"""The GUI tests' own fixtures (tests/gui/conftest.py) give a real, running main window."""


def test_support_fixtures_give_a_running_window(window, qtbot):
    assert window.isVisible()
    assert window.snapshot["companies"] == 1
