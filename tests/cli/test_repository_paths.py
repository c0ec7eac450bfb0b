"""Every file of this repository that the docs, the workflows, pyproject.toml, the Makefile, .ci/ or a docstring or
comment names exists: a file that moves takes its mentions with it (a workflow once ran a test file that had moved).

A mention is a path ending in a file name with one of SUFFIXES (`app/core/invoicing/outbox.py`, `test_builder.py`,
`docs/pdf.md`); a partial path must be the end of a tracked one (`invoicing/outbox.py`). Names of the project's
`shared/` folder (`../shared/...`, and its two tools by name) are outside the repository and not checked here.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

from tests.helpers.base import ROOT

SUFFIXES = ("py", "md", "sh", "yml", "toml", "spec", "nsi")
MENTION = re.compile(r"(?<![\w.:/<-])((?:\.\./)?[\w.-]+(?:/[\w.*-]+)*\.(?:" + "|".join(SUFFIXES) + r"))\b")
# Tools of the project's shared/ folder, named alone in prose.
SHARED_TOOLS = {"sunat_check.py", "make_padron.py"}
# Files a test writes in a temporary project of its own (tests/cli/test_make_mutation.py).
TEMPORARY = {"tests/test_tiny.py", "app/tiny.py"}


def tracked_files() -> list[str]:
    done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout.split()


def prose_files(files: list[str]) -> list[str]:
    def named(path: str) -> bool:
        return (path.startswith("docs/") and path.endswith(".md")) or path.startswith((".github/", ".ci/")) \
            or path in ("pyproject.toml", "README.md", "Makefile")

    return [path for path in files if named(path)]


def docstrings_and_comments(source: str) -> list[str]:
    texts = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node)
            if docstring:
                texts.append(docstring)
    texts += [line.split("#", 1)[1] for line in source.splitlines() if "#" in line]
    return texts


def mentions(files: list[str]) -> dict[str, set[str]]:
    """Each path mentioned, with the files that mention it."""
    found: dict[str, set[str]] = {}

    def collect(text: str, where: str) -> None:
        for match in MENTION.finditer(text):
            found.setdefault(match.group(1), set()).add(where)

    for path in prose_files(files):
        collect((ROOT / path).read_text(encoding="utf-8"), path)
    for path in (p for p in files if p.endswith(".py")):
        for text in docstrings_and_comments((ROOT / path).read_text(encoding="utf-8")):
            collect(text, path)
    return found


def exists(mention: str, files: list[str]) -> bool:
    if mention.startswith(("../", "shared/")) or mention in SHARED_TOOLS or mention in TEMPORARY:
        return True
    if "*" in mention:
        pattern = re.compile(re.escape(mention).replace(r"\*", "[^/]*") + "$")
        return any(pattern.search(path) for path in files)
    return any(path == mention or path.endswith("/" + mention) for path in files)


def test_every_path_named_in_docs_workflows_config_and_docstrings_exists():
    files = tracked_files()
    found = mentions(files)
    assert len(found) > 200  # the scan reads what it should: hundreds of mentions today
    missing = {mention: sorted(where) for mention, where in found.items() if not exists(mention, files)}
    assert missing == {}


def test_the_scan_catches_a_moved_file():
    files = ["tests/cli/test_packaging.py", "app/core/invoicing/outbox.py"]
    found = {}
    for match in MENTION.finditer("runs tests/test_packaging.py; see invoicing/outbox.py and `golden/*.md`"):
        found[match.group(1)] = exists(match.group(1), files)
    assert found == {"tests/test_packaging.py": False, "invoicing/outbox.py": True, "golden/*.md": False}


def test_the_mutation_selection_names_test_modules_that_exist():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    selection = re.search(r"pytest_add_cli_args_test_selection = \[(.*?)\]", text, re.S).group(1)
    named = re.findall(r'"([^"]+)"', selection)
    assert len(named) > 20
    assert [path for path in named if not (ROOT / path).is_file()] == []
    assert not [path for path in named if Path(path).name.startswith("test_vouchers")]  # named after the builder
