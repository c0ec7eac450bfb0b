"""docs/commands.md documents every order and option of `yupana` (compared with the parser itself)."""

from __future__ import annotations

import argparse
import re

from app.cli import build_parser
from tests.helpers.base import ROOT


def commands(parser: argparse.ArgumentParser, path: str = "yupana"):
    """(command path, its long options) for the parser and every subcommand below it."""
    options = [max(action.option_strings, key=len) for action in parser._actions
               if action.option_strings and "--help" not in action.option_strings]
    yield path, options
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, f"{path} {name}")


def sections() -> dict[str, str]:
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    parts = re.split(r"^### `([^`]+)`\s*$", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def test_every_command_and_option_is_documented():
    documented = sections()
    missing = []
    for path, options in commands(build_parser()):
        if path not in documented:
            missing.append(path)
            continue
        missing += [f"{path} {option}" for option in options if f"`{option}" not in documented[path]]
    assert not missing, f"docs/commands.md no documenta: {missing}"


def test_the_docs_name_no_command_that_does_not_exist():
    real = {path for path, _ in commands(build_parser())}
    assert set(sections()) <= real
