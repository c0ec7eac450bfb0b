"""The windows call the engine's methods as they are (no probing with hasattr/getattr): every `engine.X` (and
`engine.group.X` of its group services) used under app/gui must exist on the Engine, so renaming an engine method
fails here instead of greying a button out."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers.base import ROOT

GUI = ROOT / "app" / "gui"
PROBES = ("hasattr", "getattr", "require")


def _is_engine(node: ast.expr) -> bool:
    """`engine`, `self.engine`, `context.engine`, `self.context.engine`: the windows' names for the engine."""
    if isinstance(node, ast.Name):
        return node.id == "engine"
    return isinstance(node, ast.Attribute) and node.attr == "engine"


def engine_attributes(path: Path, root: Path = ROOT) -> list[tuple[str, str]]:
    """(file:line, attribute) of every attribute read on the engine in `path`, in the order of the file; an attribute
    read on one of its group services is named with its group («invoicing.vouchers»)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_engine(node.value):
            name = node.attr
            parent = parents.get(id(node))
            if isinstance(parent, ast.Attribute) and parent.value is node:
                name = f"{name}.{parent.attr}"
            found.append((node.lineno, node.col_offset, f"{path.relative_to(root)}:{node.lineno}", name))
    return [(where, name) for _, _, where, name in sorted(found)]


def exists(engine, name: str) -> bool:
    """Whether `engine.name` («close», «invoicing.vouchers») is there."""
    target = engine
    for part in name.split("."):
        if not hasattr(target, part):
            return False
        target = getattr(target, part)
    return True


def engine_probes(path: Path, root: Path = ROOT) -> list[str]:
    """hasattr(engine, …), getattr(engine, …) and require(engine, …): asking whether the engine has a method."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [f"{path.relative_to(root)}:{node.lineno}" for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in PROBES
            and node.args and _is_engine(node.args[0])]


def test_every_engine_attribute_the_windows_use_exists(engine):
    used = [hit for path in sorted(GUI.rglob("*.py")) for hit in engine_attributes(path)]
    assert len(used) > 50  # the windows do use the engine: the walk found them
    missing = [f"{where} engine.{name}" for where, name in used if not exists(engine, name)]
    assert missing == []


def test_the_windows_never_probe_the_engine():
    assert [hit for path in sorted(GUI.rglob("*.py")) for hit in engine_probes(path)] == []


def test_a_renamed_method_is_caught(engine, tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def load(self, context, engine):\n"
                     "    self.engine.invoicing.vouchers()\n"
                     "    context.engine.invoicing.pdf(1, None)\n"
                     "    engine.invoicing.listar_comprobantes()\n"
                     "    if hasattr(self.context.engine, 'pending_submissions'):\n"
                     "        pass\n", encoding="utf-8")
    used = engine_attributes(probe, tmp_path)
    assert [name for _, name in used] == ["invoicing.vouchers", "invoicing.pdf", "invoicing.listar_comprobantes"]
    assert [name for _, name in used if not exists(engine, name)] == ["invoicing.listar_comprobantes"]
    assert engine_probes(probe, tmp_path) == ["probe.py:5"]
