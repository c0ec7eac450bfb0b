"""One home per concept (issue 14): a voucher status, an event name or an XML namespace is spelled in its home
module only; everywhere else imports the constant. A new spelling anywhere under app/ fails here."""

from __future__ import annotations

import ast
import re
import typing
from pathlib import Path

from app.core import contract
from app.core.invoicing import namespaces, soap, statuses
from app.core.messaging import events as messaging_events
from app.core.platform import events
from tests.helpers.base import ROOT

STATUS_HOME = "app/core/invoicing/statuses.py"
EVENT_HOME = "app/core/platform/events.py"
NAMESPACE_HOME = "app/core/invoicing/namespaces.py"
SOAP_HOME = "app/core/invoicing/soap.py"

STATUS_WORDS = {*statuses.VOUCHER_STATUSES, statuses.NO_ENVIADO, *statuses.SUBMISSION_STATES}
EVENT_NAMES = {value for name, value in vars(events).items() if name.isupper() and isinstance(value, str)}
UBL_NAMESPACES = {value for name, value in vars(namespaces).items() if name.isupper() and isinstance(value, str)}
SOAP_NAMESPACES = {soap.SOAP_ENV, soap.WSSE, soap.SERVICE_NS}

# The contract's own schema spells the values its models accept (pydantic's Literal); they are checked below to be
# exactly the homes' constants, so they cannot drift apart.
SCHEMA_EXCEPTIONS = {"app/core/contract.py": STATUS_WORDS | EVENT_NAMES}

# Spellings left in files the lead is restructuring (issue 14, points 1-3); each goes when that file imports the
# constant instead. An entry that is no longer needed fails too, so this list only shrinks.
LEAD_PENDING: dict[str, set[str]] = {}  # every spelling moved to its home (issue 14)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the Constant nodes that are docstrings (text about a name is fine; code is not)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            found.add(id(body[0].value))
    return found


def string_constants(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skip = _docstrings(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip]


def _spells_namespace(text: str, uri: str) -> bool:
    """`uri` written inside `text` as a namespace, not as the start of a longer URI (xmldsig#rsa-sha1 is an
    algorithm's name, not the DS namespace)."""
    return re.search(re.escape(uri) + r"(?![\w#-])", text) is not None


def misplaced(path: Path, relative: str) -> list[tuple[int, str]]:
    """(line, literal) of every status, event name or namespace spelled in `path` outside its home."""
    found = []
    for line, text in string_constants(path):
        if text in STATUS_WORDS and relative != STATUS_HOME:
            found.append((line, text))
        elif text in EVENT_NAMES and relative != EVENT_HOME:
            found.append((line, text))
        elif relative not in (NAMESPACE_HOME, SOAP_HOME):
            for uri in (UBL_NAMESPACES | SOAP_NAMESPACES):
                if _spells_namespace(text, uri):
                    found.append((line, uri))
            if relative != NAMESPACE_HOME and namespaces.UBL_SCHEMA in text and text != namespaces.UBL_SCHEMA:
                found.append((line, namespaces.UBL_SCHEMA))
    return found


def scan(root: Path = ROOT) -> dict[str, set[str]]:
    spelled: dict[str, set[str]] = {}
    for path in sorted((root / "app").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        for _, text in misplaced(path, relative):
            spelled.setdefault(relative, set()).add(text)
    return spelled


def test_statuses_events_and_namespaces_are_spelled_in_their_home_only():
    spelled = scan()
    unexpected = {}
    for relative, texts in spelled.items():
        allowed = SCHEMA_EXCEPTIONS.get(relative, set()) | LEAD_PENDING.get(relative, set())
        if texts - allowed:
            unexpected[relative] = sorted(texts - allowed)
    assert unexpected == {}, "import the constant from its home instead of spelling it"


def test_the_lead_pending_list_only_shrinks():
    spelled = scan()
    stale = {relative: sorted(texts - spelled.get(relative, set())) for relative, texts in LEAD_PENDING.items()
             if texts - spelled.get(relative, set())}
    assert stale == {}, "these spellings are gone: remove them from LEAD_PENDING"


def test_the_contract_schema_says_what_the_homes_say():
    assert set(typing.get_args(contract.EventName)) == set(messaging_events.CONTRACT_EVENTS)
    estado = contract.EnviarResult.model_fields["estado"].annotation
    literal = next(arg for arg in typing.get_args(estado) if typing.get_origin(arg) is typing.Literal)
    assert set(typing.get_args(literal)) == set(statuses.CDR_STATUSES)


def test_the_guard_catches_each_kind(tmp_path):
    probe = tmp_path / "app" / "probe.py"
    probe.parent.mkdir()
    probe.write_text('"""A docstring may name voucher.changed and aceptado."""\n'
                     'STATUS = "aceptado"\n'
                     'bus.emit("voucher.changed", {})\n'
                     'NS = f\'xmlns:ds="http://www.w3.org/2000/09/xmldsig#" {x}\'\n'
                     'ALGORITHM = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"\n'
                     'ROOT = f"urn:oasis:names:specification:ubl:schema:xsd:{root}-2"\n'
                     'TEXT = "El comprobante fue aceptado"\n', encoding="utf-8")
    assert sorted(misplaced(probe, "app/probe.py")) == [
        (2, "aceptado"), (3, "voucher.changed"), (4, namespaces.DS), (6, namespaces.UBL_SCHEMA)]
