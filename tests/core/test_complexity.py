"""No function in app/core above cyclomatic complexity 20 (issue 29): a function past it is split into named steps.

Scored with radon (`radon cc`'s count: 1, plus 1 per if/elif/conditional expression, loop (and its else), except
handler (and try's else), boolean operator, comprehension `for` and `if`, match case, assert). Every def is scored on
its own, wherever it is: functions, methods, closures and the methods of classes inside functions (the closures'
branches do not count in the function around them, as with radon)."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass

from radon.visitors import ComplexityVisitor

from tests.helpers.base import ROOT

CORE = ROOT / "app" / "core"
LIMIT = 20


@dataclass(frozen=True)
class Score:
    name: str  # qualified: «Class.method», «function.<locals>.closure»
    path: str  # relative to the repository
    line: int
    complexity: int

    def __str__(self) -> str:
        return f"{self.name} ({self.path}:{self.line}): {self.complexity}"


def _defs(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(qualified name, node) of every function definition in `tree`, at any depth."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield prefix + node.name, node
            yield from _defs(node, f"{prefix}{node.name}.<locals>.")
        elif isinstance(node, ast.ClassDef):
            yield from _defs(node, f"{prefix}{node.name}.")
        else:
            yield from _defs(node, prefix)


def complexity(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """radon's cyclomatic complexity of one definition, its nested definitions left out."""
    visitor = ComplexityVisitor.from_ast(ast.Module(body=[node], type_ignores=[]))
    (function,) = visitor.functions
    return int(function.complexity)


def scores(source: str, path: str = "<source>") -> list[Score]:
    tree = ast.parse(source)
    return [Score(name, path, node.lineno, complexity(node)) for name, node in _defs(tree)]


def over_limit(found: list[Score]) -> list[Score]:
    return sorted((score for score in found if score.complexity > LIMIT), key=lambda s: -s.complexity)


def test_no_function_in_the_core_is_above_the_limit():
    found: list[Score] = []
    for path in sorted(CORE.rglob("*.py")):
        found += scores(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert len(found) > 500  # the walk saw the engine, not an empty folder
    offenders = over_limit(found)
    report = "\n".join(f"  {score}" for score in offenders)
    print(f"Functions in app/core above cyclomatic complexity {LIMIT}:\n{report or '  none'}")
    assert not offenders, f"Above cyclomatic complexity {LIMIT} (split them into named steps):\n{report}"


# ---------------------------------------------------------------- the counter itself


def _branches(count: int) -> str:
    """A function of complexity `count` + 1: `count` ifs in a row."""
    body = "".join(f"    if x == {n}:\n        return {n}\n" for n in range(count))
    return f"def branches(x):\n{body}    return -1\n"


def test_a_function_of_complexity_21_is_caught_and_one_of_20_is_not():
    (twenty_one,) = scores(_branches(20))
    (twenty,) = scores(_branches(19))
    assert (twenty_one.complexity, twenty.complexity) == (21, 20)
    assert over_limit([twenty_one, twenty]) == [twenty_one]


def test_the_counter_scores_each_kind_of_branch():
    source = textwrap.dedent("""
        def mixed(items, flag):
            if flag and items:                       # if: 1, and: 1
                pass
            elif flag or not items or None:          # elif: 1, two or: 2
                pass
            for item in items:                       # for: 1, else: 1
                pass
            else:
                pass
            while flag:                              # while: 1
                flag = False
            try:
                pass
            except ValueError:                       # two handlers: 2, else: 1
                pass
            except KeyError:
                pass
            else:
                pass
            finally:
                pass
            value = 1 if flag else 2                 # conditional expression: 1
            evens = [i for i in items if i % 2 if i] # comprehension: 1, two ifs: 2
            match value:                             # two cases besides _: 2
                case 1:
                    pass
                case 2:
                    pass
                case _:
                    pass
            with open(__file__):                     # with: 0
                pass
            return evens, lambda: 1 if flag else 2   # a lambda's branches count too: 1
    """)
    (mixed,) = scores(source)
    assert mixed.complexity == 1 + 2 + 3 + 2 + 1 + 3 + 1 + 3 + 2 + 1


def test_closures_methods_and_classes_inside_functions_are_scored_on_their_own():
    source = textwrap.dedent("""
        def outer(x):
            def inner(y):
                if y:
                    if y > 1:
                        return 2
                return 0
            class Local:
                def method(self, z):
                    return z if z else 0
            return inner(x) if x else Local()

        class Outside:
            async def method(self, a):
                for _ in a:
                    pass
    """)
    found = {score.name: score.complexity for score in scores(source)}
    assert found == {"outer": 2, "outer.<locals>.inner": 3, "outer.<locals>.Local.method": 2,
                     "Outside.method": 2}
