"""The type checker's rules (issue 27, item 4): `make lint` runs mypy over app/ with the bodies of every function
checked and no section that ignores errors; a `# type: ignore` names its error code and says why, at most 20."""

from __future__ import annotations

import re
import tomllib

from tests.helpers.base import ROOT

IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")
MAX_IGNORES = 20


def _mypy_config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def test_mypy_checks_every_body_of_app_and_ignores_no_errors():
    config = _mypy_config()
    assert config["files"] == ["app"]
    assert config["check_untyped_defs"] is True
    assert "ignore-without-code" in config["enable_error_code"]
    for override in config.get("overrides", []):
        assert "ignore_errors" not in override, override
    assert "mypy" in (ROOT / "Makefile").read_text(encoding="utf-8").split("lint:")[1].split("\n\n")[0]


def ignores() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = IGNORE.search(line)
            if match:
                found.append((f"{path.relative_to(ROOT)}:{number}", match.group("codes") or "", match.group("rest")))
    return found


def test_each_type_ignore_names_its_code_and_its_reason_and_there_are_few():
    found = ignores()
    assert len(found) <= MAX_IGNORES, [where for where, _codes, _rest in found]
    without_code = [where for where, codes, _rest in found if not codes]
    without_reason = [where for where, _codes, rest in found if not rest.strip().lstrip("#").strip()]
    assert without_code == [] and without_reason == []
