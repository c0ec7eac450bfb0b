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


def _core_files() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def _imports_of(path: Path, *, function_level: bool) -> list[tuple[int, str]]:
    """(line, module) of the imports in a file, module level or inside functions (not under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import | ast.ImportFrom) and inside == function_level:
                names = [a.name for a in child.names] if isinstance(child, ast.Import) else [child.module or ""]
                if isinstance(child, ast.ImportFrom) and child.module in ("app.core", "app.core.invoicing"):
                    names = [f"{child.module}.{a.name}" for a in child.names]
                found.extend((child.lineno, name) for name in names)
            visit(child, inside)

    visit(tree, False)
    return found


def test_only_the_engine_and_the_http_layer_know_the_engine():
    allowed = {CORE / "engine.py", *(CORE / "platform" / "http").glob("*.py")}
    offenders = [f"{p.relative_to(ROOT)}:{line}" for p in _core_files() if p not in allowed
                 for line, module in _imports_of(p, function_level=False) + _imports_of(p, function_level=True)
                 if module == "app.core.engine"]
    assert offenders == []


# Imports inside functions that only defer a heavy or optional module (never to dodge a circle).
DEFERRED = {
    ("engine.py", "app.core.platform.http.api"),  # FastAPI and uvicorn stay out of the window's start-up
    ("engine.py", "app.core.messaging.listener"),  # the same for the webhook listener
    ("invoicing/printing/__init__.py", "app.core.invoicing.printing.pdf"),  # fpdf2 with the first PDF
    ("invoicing/printing/fonts.py", "fontTools"),
    ("platform/companies.py", "PIL"),
    ("messaging/gateways/__init__.py", "app.core.messaging.gateways.evolution"),  # only the gateway in use
    ("messaging/gateways/__init__.py", "app.core.messaging.gateways.meta"),
    ("messaging/gateways/__init__.py", "app.core.messaging.gateways.yupana"),
    ("platform/http/api.py", "fastapi.openapi.utils"),
    ("messaging/forwarding.py", "standardwebhooks"),  # on the first delivery
    ("invoicing/printing/layout.py", "segno"),  # with the first QR code
    ("platform/secrets.py", "keyring"),  # the system keyring is asked only when a secret is
    ("platform/secrets.py", "keyring.backends"),
    ("platform/storage.py", "fcntl"),  # the file lock of each operating system
    ("platform/storage.py", "msvcrt"),
}


def test_imports_inside_functions_only_defer_heavy_modules():
    found = {(str(p.relative_to(CORE)), module) for p in _core_files()
             for _line, module in _imports_of(p, function_level=True)}
    assert found <= DEFERRED, sorted(found - DEFERRED)


def _closure(start: str) -> set[str]:
    """Every module the start module imports at module level, followed through app.core."""
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        path = ROOT / (module.replace(".", "/") + ".py")
        if not path.exists():
            path = ROOT / module.replace(".", "/") / "__init__.py"
        if not path.exists():
            continue
        for _line, imported in _imports_of(path, function_level=False):
            if imported.startswith("app."):
                todo.append(imported)
            else:
                seen.add(imported)
    return seen


def test_the_pure_builder_and_signer_import_neither_storage_nor_sqlite():
    for pure in ("app.core.invoicing.builder", "app.core.invoicing.xmldsig", "app.core.invoicing.ubl",
                 "app.core.invoicing.voucher_keys", "app.core.invoicing.soap", "app.core.invoicing.printing"):
        reached = _closure(pure)
        forbidden = {m for m in reached if m.split(".")[0] in ("sqlite3", "sqlite_utils")
                     or m in ("app.core.platform.storage", "app.core.engine")}
        assert forbidden == set(), (pure, forbidden)
