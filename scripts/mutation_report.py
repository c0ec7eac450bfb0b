"""Killed and surviving mutants per module after `make mutation`, and the overall percentage.

Reads mutmut's result files (mutants/<module>.py.meta) for the modules listed in pyproject.toml's [tool.mutmut]
`only_mutate`. Killed counts mutants a test failed on, timed out on, or the type checker caught; mutants not yet
run are shown apart and left out of the percentage; a mutant no test reaches counts as surviving.

One kind of survivor is set apart as equivalent: a mutant that only changes the case of an SQL text (`SELECT` to
`select`, `sunat_cdrs` to `SUNAT_CDRS`) without touching a quoted literal, an alias or an expression a SELECT hands
back unaliased (`COUNT(*)`): SQLite does not tell the case of keywords and names apart, and names a selected column
as declared (`S.ID` comes back as `id`), so no test can kill it. A text split over several lines is judged whole.
The score is then killed / (killed + survived - equivalent). Prints one JSON object as its last line.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import textwrap
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KILLED = {1, 3, 36, 37, -24, 24, 152, 255}  # test failed, pytest internal error, timeouts, type check
SURVIVED = {0, 33}  # no test failed, or no test reaches the mutated function at all
NOT_RUN = {None, 2, 5, 34}  # not checked, interrupted, skipped
SQL_WORDS = re.compile(r"\b(SELECT|UPDATE|INSERT|DELETE|WHERE|FROM|JOIN|SET|VALUES|EXISTS|GROUP BY|ORDER BY|"
                       r"ON CONFLICT|COALESCE|INTO)\b", re.IGNORECASE)
SELECTED_NAMES = re.compile(r"SELECT\s+(.*?)\s+FROM", re.IGNORECASE | re.DOTALL)


def modules() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["mutmut"]["only_mutate"]


def function_texts(path: Path) -> dict[str, str]:
    """Every function of a mutated module by name (the original is `<name>__mutmut_orig`)."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    return {node.name: "\n".join(lines[node.lineno - 1:node.end_lineno]) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def _strings(function: str) -> list[str] | None:
    """The string constants of a function's text, in order (a text split over lines is one constant)."""
    try:
        tree = ast.parse(textwrap.dedent(function))
    except SyntaxError:
        return None
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def _same_sql(old: str, new: str) -> bool:
    """Whether two different texts are one SQL statement SQLite reads the same (they differ only in case)."""
    if old.lower() != new.lower() or not SQL_WORDS.search(old):
        return False
    if re.findall(r"'[^']*'", old) != re.findall(r"'[^']*'", new):
        return False  # a quoted literal ('enviado', a date format) is data, not a name
    return _result_names(old) == _result_names(new)


def _result_names(sql: str) -> list[str]:
    """The names the code reads a SELECT's rows by, with the case that matters: an alias (`AS n` is not `AS N`) and an
    expression without one (`COUNT(*)`) as written; a plain column (`s.id`, `S.ID`) SQLite names as declared."""
    names = []
    for selected in SELECTED_NAMES.findall(sql):
        for item in _top_level_items(selected):
            alias = re.search(r"\bAS\s+(\w+)\s*$", item, re.IGNORECASE)
            if alias:
                names.append(alias[1])
            elif re.fullmatch(r"\w+(\.\w+)?", item):
                names.append(item.rsplit(".", 1)[-1].lower())
            else:
                names.append(item)
    return names


def _top_level_items(select_list: str) -> list[str]:
    """A select list split at its commas, not those inside parentheses."""
    items, depth, current = [], 0, ""
    for char in select_list:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += char
    return [*items, current.strip()]


def only_sql_case(original: str, mutant: str) -> bool:
    """Whether `mutant` differs from `original` only in the case of SQL text that SQLite reads the same. The whole
    text is judged, also when it is split over several lines and the changed line holds no SQL word of its own."""
    if original == mutant or original.lower() != mutant.lower():
        return False
    old, new = _strings(original), _strings(mutant)
    if old is None or new is None or len(old) != len(new):
        return False
    changed = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
    return bool(changed) and all(_same_sql(a, b) for a, b in changed)


def equivalents(module: str, names: list[str]) -> int:
    path = ROOT / "mutants" / module
    if not names or not path.exists():
        return 0
    texts = function_texts(path)
    count = 0
    for name in names:
        function = name.rsplit(".", 1)[1]
        base = function.rsplit("__mutmut_", 1)[0]
        original, mutant = texts.get(base + "__mutmut_orig"), texts.get(function)
        if original is not None and mutant is not None:
            count += only_sql_case(original, mutant.replace(function, base + "__mutmut_orig", 1))
    return count


def counts(module: str) -> dict[str, int]:
    meta = ROOT / "mutants" / f"{module}.meta"
    codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {}) if meta.exists() else {}
    out = {"killed": 0, "survived": 0, "not_run": 0, "other": 0}
    survivors = []
    for name, code in codes.items():
        key = ("killed" if code in KILLED else "survived" if code in SURVIVED
               else "not_run" if code in NOT_RUN else "other")
        out[key] += 1
        if key == "survived":
            survivors.append(name)
    out["equivalent"] = equivalents(module, survivors)
    return out


def percent(killed: int, survived: int) -> float | None:
    return round(100 * killed / (killed + survived), 1) if killed + survived else None


def main() -> int:
    rows = {module: counts(module) for module in modules()}
    print(f"{'module':36} {'killed':>7} {'survived':>9} {'equiv.':>7} {'not run':>8} {'killed %':>9} {'score %':>8}")
    for module, row in rows.items():
        share = percent(row["killed"], row["survived"])
        score = percent(row["killed"], row["survived"] - row["equivalent"])
        print(f"{module:36} {row['killed']:7} {row['survived']:9} {row['equivalent']:7} "
              f"{row['not_run'] + row['other']:8} {'-' if share is None else f'{share:.1f}':>9} "
              f"{'-' if score is None else f'{score:.1f}':>8}")
    killed = sum(r["killed"] for r in rows.values())
    survived = sum(r["survived"] for r in rows.values())
    overall = percent(killed, survived)
    print(f"{'overall (modules run)':36} {killed:7} {survived:9} "
          f"{sum(r['equivalent'] for r in rows.values()):7} "
          f"{sum(r['not_run'] + r['other'] for r in rows.values()):8} {'-' if overall is None else overall:>9}")
    print(json.dumps({"modules": {m: {**r, "killed_percent": percent(r["killed"], r["survived"]),
                                      "score_percent": percent(r["killed"], r["survived"] - r["equivalent"])}
                                  for m, r in rows.items()},
                      "killed": killed, "survived": survived, "killed_percent": overall}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
