"""Killed and surviving mutants per module after `make mutation`, and the overall percentage.

Reads mutmut's result files (mutants/<module>.py.meta) for the modules listed in pyproject.toml's [tool.mutmut]
`only_mutate`. Killed counts mutants a test failed on, timed out on, or the type checker caught; mutants not yet
run are shown apart and left out of the percentage; a mutant no test reaches counts as surviving. Prints one JSON object as its last line.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KILLED = {1, 3, 36, 37, -24, 24, 152, 255}  # test failed, pytest internal error, timeouts, type check
SURVIVED = {0, 33}  # no test failed, or no test reaches the mutated function at all
NOT_RUN = {None, 2, 5, 34}  # not checked, interrupted, skipped


def modules() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["mutmut"]["only_mutate"]


def counts(module: str) -> dict[str, int]:
    meta = ROOT / "mutants" / f"{module}.meta"
    codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {}) if meta.exists() else {}
    out = {"killed": 0, "survived": 0, "not_run": 0, "other": 0}
    for code in codes.values():
        key = ("killed" if code in KILLED else "survived" if code in SURVIVED
               else "not_run" if code in NOT_RUN else "other")
        out[key] += 1
    return out


def percent(killed: int, survived: int) -> float | None:
    return round(100 * killed / (killed + survived), 1) if killed + survived else None


def main() -> int:
    rows = {module: counts(module) for module in modules()}
    print(f"{'module':28} {'killed':>7} {'survived':>9} {'not run':>8} {'killed %':>9}")
    for module, row in rows.items():
        share = percent(row["killed"], row["survived"])
        print(f"{module:28} {row['killed']:7} {row['survived']:9} {row['not_run'] + row['other']:8} "
              f"{'-' if share is None else f'{share:.1f}':>9}")
    killed = sum(r["killed"] for r in rows.values())
    survived = sum(r["survived"] for r in rows.values())
    overall = percent(killed, survived)
    print(f"{'overall (modules run)':28} {killed:7} {survived:9} "
          f"{sum(r['not_run'] + r['other'] for r in rows.values()):8} {'-' if overall is None else overall:>9}")
    print(json.dumps({"modules": {m: {**r, "killed_percent": percent(r["killed"], r["survived"])}
                                  for m, r in rows.items()},
                      "killed": killed, "survived": survived, "killed_percent": overall}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
