"""The layout shows the design (docs/architecture.md): the engine's three groups beside the shared platform, the
adapters (windows, commands, HTTP API, sandboxes) reaching the engine through its published modules only, no import
circle anywhere in app/, imports inside functions only for a listed few heavy modules, and engine tests that never
load Qt."""

from __future__ import annotations

import ast
import re
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
    assert (CORE / "services" / "protocols.py").is_file()  # the engine's face, one Protocol per group service
    loose = sorted(p.name for p in CORE.glob("*.py") if p.name != "__init__.py")
    assert loose == ["api.py", "contract.py", "engine.py", "errors.py", "records.py", "sandbox_kit.py"]


# ---------------------------------------------------------------- the published modules

APP = ROOT / "app"
PUBLISHED = {"app.core.api"}
SANDBOX_PUBLISHED = {"app.core.api", "app.core.sandbox_kit"}


def _all_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of a file: module level, inside functions and under TYPE_CHECKING; a name
    imported from a package counts as its submodule when there is one (`from app.core import api`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    if path.name == "__init__.py":
        package = ".".join(path.relative_to(ROOT).parts[:-1])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                found.append((node.lineno, submodule if _module_path(submodule) else module))
    return found


def _module_path(module: str) -> Path | None:
    """The file of an app.* module or package, None for anything else."""
    if not module.startswith("app"):
        return None
    base = ROOT / module.replace(".", "/")
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _core_imports(files: list[Path]) -> dict[str, set[str]]:
    return {f"{path.relative_to(ROOT)}:{line}": module for path in files for line, module in _all_imports(path)
            if module == "app.core" or module.startswith("app.core.")}


ADAPTERS = [APP / "cli.py", APP / "selftest.py", *(APP / "gui").rglob("*.py"), *(APP / "commands").rglob("*.py"),
            *(APP / "api").rglob("*.py")]


def test_adapters_import_only_the_published_module():
    """The windows, the commands, the HTTP API and the self-test reach the engine through app/core/api.py alone."""
    assert len(ADAPTERS) > 50
    offenders = {where: module for where, module in _core_imports(ADAPTERS).items() if module not in PUBLISHED}
    assert offenders == {}


def test_sandboxes_import_only_the_published_module_and_the_wire_kit():
    files = sorted((APP / "sandbox").rglob("*.py"))
    offenders = {where: module for where, module in _core_imports(files).items() if module not in SANDBOX_PUBLISHED}
    assert offenders == {}


def test_the_scan_of_adapter_imports_sees_every_form():
    import tempfile

    with tempfile.TemporaryDirectory(dir=ROOT / "tests") as folder:
        probe = Path(folder) / "probe.py"
        probe.write_text("from typing import TYPE_CHECKING\nfrom app.core.api import Engine\n"
                         "from app.core import engine\nif TYPE_CHECKING:\n    from app.core.records import Voucher\n"
                         "def f():\n    import app.core.platform.clock\n", encoding="utf-8")
        found = sorted(module for _line, module in _all_imports(probe) if module.startswith("app.core"))
    assert found == ["app.core.api", "app.core.engine", "app.core.platform.clock", "app.core.records"]


# ---------------------------------------------------------------- no import circle anywhere in app/

def import_graph() -> dict[str, set[str]]:
    """app module -> the app modules it imports, every import counted (inside functions and type-only too)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(APP.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if path.name == "__init__.py" else parts)
        graph[name] = {module for _line, module in _all_imports(path) if _module_path(module) and module != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = iter(range(10**9))

    def visit(node: str) -> None:
        index[node] = low[node] = next(counter)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_anywhere_in_app():
    graph = import_graph()
    assert len(graph) > 140 and "app.core.engine" in graph["app.core.api"]
    assert circles(graph) == []


def test_the_circle_finder_finds_a_circle_through_a_function_level_import():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


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


def test_only_the_engine_and_the_published_module_know_the_engine():
    allowed = {CORE / "engine.py", CORE / "api.py"}
    offenders = [f"{p.relative_to(ROOT)}:{line}" for p in _core_files() if p not in allowed
                 for line, module in _imports_of(p, function_level=False) + _imports_of(p, function_level=True)
                 if module == "app.core.engine"]
    assert offenders == []


# Imports inside functions that only defer a heavy module (never to dodge a circle), each with what it saves: the
# module's cumulative time in `python -X importtime -c "import app.core.engine; import MODULE"` (median of three
# runs on the 2-core development machine, warm disk cache). Measured again with that command after a dependency
# changes; a module that costs less than ~4 ms goes back to the top of its file unless it is part of the web stack.
DEFERRED = {
    ("services/messaging.py", "app.core.messaging.listener"): "176 ms: FastAPI, uvicorn (the webhook listener)",
    ("invoicing/printing/__init__.py", "app.core.invoicing.printing.pdf"): "178 ms: fpdf2 (the first PDF)",
    ("invoicing/printing/fonts.py", "fontTools"): "27 ms: fontTools.ttLib (the first printed voucher)",
    ("platform/secrets.py", "keyring"): "21 ms: the system keyring, asked only when a secret is",
    ("platform/secrets.py", "keyring.backends"): "(with keyring)",
    ("platform/companies.py", "PIL"): "14 ms: PIL.Image (only a company logo being saved)",
    # app.core.api loads every published name's module at its first reading (importlib, from its table _PUBLISHED:
    # the engine, ~360 ms, on a worker after the main window's first paint; uvicorn, 24 ms, only for the local HTTP
    # API); these two are what its computed names need.
    ("api.py", "app.core.invoicing.documents.registry"): "with the engine: SERIE_LETTER at its first reading",
    ("api.py", "app.core.lookup"): "with the engine: the lookups' clock (registry_now, the local HTTP API)",
    # The web stack stays out of the window's start-up (tests/core/messaging/test_messaging_process.py), cheap or not:
    ("messaging/forwarding.py", "standardwebhooks"): "1 ms: standardwebhooks (the first delivery)",
    ("invoicing/printing/layout.py", "segno"): "5 ms: segno (the first QR code)",
    # psycopg and the PostgreSQL engine: only a desk whose `database_url` names a shared database (issue 34).
    ("storage/engines.py", "app.core.storage.postgres"): "170-300 ms: psycopg (a desk on a shared database)",
    ("storage/shared.py", "app.core.storage.postgres"): "(with psycopg: `yupana db` on a shared database)",
    ("messaging/evolution_stream.py", "socketio"): "140-280 ms: python-socketio (an instance set to stream, issue 30)",
    ("invoicing/accountant.py", "openpyxl"): "~90 ms: openpyxl (only the accountant's .xlsx, issue 35)",
}


def test_imports_inside_functions_only_defer_heavy_modules():
    found = {(str(p.relative_to(CORE)), module) for p in _core_files()
             for _line, module in _imports_of(p, function_level=True)}
    assert found == set(DEFERRED), (sorted(found - set(DEFERRED)), sorted(set(DEFERRED) - found))


# Modules loaded at their first use through app.core.platform.lazy.lazy_module (a stand-in read like the module,
# for modules read in many places: `except httpx.HTTPError` and the like), each with what it keeps out of the main
# window's start (tests/cli/test_startup_imports.py). Cumulative wall time of importing it after app.core.engine,
# median of three runs on the 2-core development machine under load 4-5 (06-12-2026): these shrink on an idle one.
LAZY = {
    "httpx": "~300 ms under load: httpx, httpcore, and rich and pygments (httpx's command line)",
    "cryptography.x509": "~260 ms under load with the rest of cryptography (the first key or certificate read)",
    "cryptography.exceptions": "(with cryptography)",
    "cryptography.hazmat.primitives.hashes": "(with cryptography)",
    "cryptography.hazmat.primitives.serialization": "(with cryptography)",
    "cryptography.hazmat.primitives.serialization.pkcs12": "(with cryptography)",
    "cryptography.hazmat.primitives.asymmetric.padding": "(with cryptography)",
    "cryptography.hazmat.primitives.asymmetric.rsa": "(with cryptography)",
    "cryptography.hazmat.primitives.ciphers.aead": "(with cryptography)",
    "cryptography.hazmat.primitives.kdf.scrypt": "(with cryptography)",
    "cryptography.x509.oid": "(with cryptography)",
    "charset_normalizer": "~15 ms: charset_normalizer (the first CSV import)",
    "asyncio": "~110 ms under load: asyncio and ssl (only a request from an event loop: listener, local API)",
}


def _lazy_modules() -> set[tuple[str, str]]:
    found = set()
    for path in _core_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "lazy_module"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                found.add((str(path.relative_to(CORE)), node.args[0].value))
    return found


def test_modules_loaded_at_first_use_are_listed_with_what_they_save():
    found = {module for _file, module in _lazy_modules()}
    assert found == set(LAZY), (sorted(found - set(LAZY)), sorted(set(LAZY) - found))


def test_a_lazy_module_is_imported_for_the_type_checker_too():
    """Each file that loads a module at first use also imports it under TYPE_CHECKING (mypy reads its types)."""
    missing = []
    for file, module in _lazy_modules():
        tree = ast.parse((CORE / file).read_text(encoding="utf-8"))
        typed = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                for child in ast.walk(node):
                    if isinstance(child, ast.Import):
                        typed |= {a.name for a in child.names}
                    elif isinstance(child, ast.ImportFrom):
                        typed |= {f"{child.module}.{a.name}" for a in child.names}
        if module not in typed:
            missing.append((file, module))
    assert missing == []


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


# ---------------------------------------------------------------- storage behind ports (issue 28)

DRIVERS = ("sqlite3", "sqlite_utils", "psycopg", "psycopg2", "apsw")
SQL_STATEMENT = re.compile(
    r"\b(SELECT\s[\s\S]*?\sFROM\s|INSERT\s+(OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|"
    r"CREATE\s+(TABLE|INDEX|UNIQUE|VIRTUAL|TRIGGER)\s|ALTER\s+TABLE\s|DROP\s+(TABLE|INDEX|TRIGGER)\s|PRAGMA\s+\w+|"
    r"BEGIN\s+IMMEDIATE|ON\s+CONFLICT)")
STORAGE = CORE / "storage"


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def sql_statements(path: Path) -> list[str]:
    """The string literals of a file (f-strings' constant parts too, docstrings not) that hold an SQL statement."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstring_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else " x " for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
        else:
            continue
        if SQL_STATEMENT.search(text):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text[:60]!r}")
    return found


def test_no_module_outside_storage_imports_a_database_driver():
    """app/ and what runs beside it (benchmarks, scripts) reach the database through the storage package; only tests
    that read a folder's raw file as an outside oracle (its schema, a legacy folder) open it with the driver."""
    outside = [p for folder in (APP, ROOT / "bench", ROOT / "scripts") for p in folder.rglob("*.py")
               if STORAGE not in p.parents]
    offenders = {f"{p.relative_to(ROOT)}:{line}": module for p in outside for line, module in _all_imports(p)
                 if module.split(".")[0] in DRIVERS}
    assert offenders == {}


def test_no_module_outside_storage_holds_an_sql_statement():
    outside = [p for p in sorted(APP.rglob("*.py")) if STORAGE not in p.parents]
    assert [found for p in outside for found in sql_statements(p)] == []


def test_the_sql_scan_sees_statements_and_not_prose():
    import tempfile

    with tempfile.TemporaryDirectory(dir=ROOT / "tests") as folder:
        probe = Path(folder) / "probe.py"
        probe.write_text('"""Reads PRAGMA data_version and SELECT rows FROM a table."""\n'
                         'a = "SELECT id FROM vouchers WHERE x = ?"\nb = f"UPDATE {t} SET y = 1"\n'
                         'c = "INSERT OR IGNORE INTO t (a) VALUES (?)"\nd = "the selected rows, from a table"\n',
                         encoding="utf-8")
        found = sql_statements(probe)
    assert [line.split(":")[1] for line in found] == ["2", "3", "4"]
