"""The engine never knows the GUI: nothing under app/core imports Qt."""

import ast
from pathlib import Path

from tests.helpers.base import ROOT

QT_MODULES = ("PySide6", "shiboken6", "PyQt5", "PyQt6", "PySide2")


def qt_imports(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        found += [f"{path.relative_to(root)}:{node.lineno} {n}" for n in names if n.split(".")[0] in QT_MODULES]
    return found


def test_core_never_imports_qt():
    offenders = [hit for path in sorted((ROOT / "app" / "core").rglob("*.py")) for hit in qt_imports(path)]
    assert offenders == []


def test_the_guard_catches_an_import(tmp_path):
    sample = tmp_path / "probe.py"
    sample.write_text("import os\nfrom PySide6.QtCore import QObject\nimport shiboken6\n", encoding="utf-8")
    assert qt_imports(sample, tmp_path) == ["probe.py:2 PySide6.QtCore", "probe.py:3 shiboken6"]
