"""The layout shows the design (docs/architecture.md): the engine's three groups beside the shared platform,
no import circle between the command, the windows and the commands, and engine tests that never load Qt."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.helpers.base import ROOT

CORE = ROOT / "app" / "core"
GROUPS = ("invoicing", "messaging", "lookup", "platform")


def app_imports(path: Path) -> set[str]:
    """The app.* modules a file imports, anywhere in it (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("app.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.startswith("app"):
                found.add(module)
                found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


def test_core_has_the_three_groups_beside_the_platform():
    for group in GROUPS:
        assert (CORE / group / "__init__.py").is_file(), group
    loose = sorted(p.name for p in CORE.glob("*.py") if p.name != "__init__.py")
    assert loose == ["contract.py", "engine.py", "errors.py"]


def _package_of(module: str) -> str | None:
    for top in ("app.cli", "app.gui", "app.commands"):
        if module == top or module.startswith(top + "."):
            return top
    return None


def test_no_import_circle_between_the_command_the_windows_and_the_commands():
    edges: dict[str, set[str]] = {"app.cli": set(), "app.gui": set(), "app.commands": set()}
    files = [ROOT / "app" / "cli.py", *(ROOT / "app" / "gui").rglob("*.py"), *(ROOT / "app" / "commands").rglob("*.py")]
    for path in files:
        source = _package_of(".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"))
        for module in app_imports(path):
            target = _package_of(module)
            if target and target != source:
                edges[source].add(target)
    # cli may use the windows and the commands; nothing below it may come back up, nor the two meet in a circle.
    assert "app.cli" not in edges["app.gui"] | edges["app.commands"]
    assert not ("app.gui" in edges["app.commands"] and "app.commands" in edges["app.gui"])


def test_engine_tests_never_import_qt():
    """Every module of tests/core and tests/helpers (but the GUI's), and the root conftest, imported in a fresh
    interpreter: PySide6 stays out (pytest-qt loads it in a pytest run, so this is checked without pytest)."""
    modules = ["tests.conftest"] + [
        ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for folder in ("tests/core", "tests/helpers") for p in sorted((ROOT / folder).rglob("*.py"))
        if p.name != "__init__.py" and p.name != "gui.py"]
    script = ("import importlib, sys\n"
              f"for name in {modules!r}:\n"
              "    importlib.import_module(name)\n"
              "    assert not any(m.split('.')[0] in ('PySide6', 'shiboken6') for m in sys.modules), name\n"
              "print(len(sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_gui_tests_are_marked(request):
    config = request.config
    items = [i for i in request.session.items if "tests/gui/" in str(i.fspath).replace("\\", "/")]
    if not items:  # this file was run alone: collect the GUI tests' marks through pytest itself
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "-m", "not gui", "-p",
                               "no:cacheprovider", "tests/gui"], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert "no tests collected" in done.stdout or " deselected" in done.stdout, done.stdout[-1000:]
        return
    assert all(item.get_closest_marker("gui") for item in items), config
