"""The emission result says the state; the windows do not re-derive it (issue 29). Nothing under app/gui decides a
voucher's state from SUNAT's codes or the submission's error codes, nor opens a CDR: no `zipfile` or `base64`, no
call to sunat_codes' deciders (`refusal_status`, `cdr_status`, `is_rejection`…), no `ErrorCode.QUEUED` /
`UPSTREAM_REJECTED` / `UPSTREAM_TIMEOUT` read, no `read_zip`. The core hands out `EmissionOutcome` and the CDR's XML
text (`VoucherCdr.xml_text`, `ConsultedCdr.xml_text`); tests/core/invoicing/test_emission_outcome.py shows each
answer's outcome."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers.base import ROOT

GUI = ROOT / "app" / "gui"
FORBIDDEN_MODULES = {"zipfile", "base64"}
# sunat_codes' functions that turn a code into a state, and the CDR reader.
DECIDERS = {"refusal_status", "cdr_status", "is_rejection", "is_exception", "is_accepted", "is_observation",
            "is_held_by_sunat", "read_zip", "read_xml"}
# The submission's refusals whose meaning (rejected, pending) the core decides.
SUBMISSION_CODES = {"QUEUED", "UPSTREAM_REJECTED", "UPSTREAM_TIMEOUT"}


def offences(path: Path, root: Path = ROOT) -> list[str]:
    """What `path` does that only the core may do, each as «file:line what»."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = path.relative_to(root)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{where}:{node.lineno} import {a.name}" for a in node.names
                      if a.name.split(".")[0] in FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] in FORBIDDEN_MODULES:
                found.append(f"{where}:{node.lineno} from {node.module} import")
            found += [f"{where}:{node.lineno} imports {a.name}" for a in node.names if a.name in DECIDERS]
        elif isinstance(node, ast.Attribute):
            if node.attr in DECIDERS:
                found.append(f"{where}:{node.lineno} .{node.attr}")
            if node.attr in SUBMISSION_CODES and isinstance(node.value, ast.Name) and node.value.id == "ErrorCode":
                found.append(f"{where}:{node.lineno} ErrorCode.{node.attr}")
        elif isinstance(node, ast.Name) and node.id in DECIDERS | {"PENDING_REASONS"}:
            found.append(f"{where}:{node.lineno} {node.id}")
    return found


def test_the_windows_neither_derive_a_state_nor_open_a_cdr():
    files = sorted(GUI.rglob("*.py"))
    assert len(files) > 20 and GUI / "emission.py" in files
    assert [o for path in files for o in offences(path)] == []


def test_the_scan_finds_what_it_forbids(tmp_path):
    """The scan is not blind: the old emission module's re-derivations are each found."""
    path = tmp_path / "old_emission.py"
    path.write_text("import base64\nimport zipfile\nfrom app.core.api import ErrorCode, sunat_codes\n"
                    "state = sunat_codes.refusal_status('2800')\nif code == ErrorCode.QUEUED: pass\n"
                    "PENDING_REASONS = {ErrorCode.UPSTREAM_TIMEOUT: ''}\n", encoding="utf-8")
    found = sorted(offences(path, tmp_path), key=lambda o: (int(o.split(":")[1].split(" ")[0]), o))
    assert [o.split(" ", 1)[1] for o in found] == [
        "import base64", "import zipfile", ".refusal_status", "ErrorCode.QUEUED", "ErrorCode.UPSTREAM_TIMEOUT",
        "PENDING_REASONS"]
