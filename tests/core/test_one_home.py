"""One home per concept (issue 14): a voucher status, an event name or an XML namespace is spelled in its home
module only; everywhere else imports the constant. A new spelling anywhere under app/ fails here.

SUNAT's catalogues too (issue 29): their codes and Spanish labels live in app/core/invoicing/sunat_catalogues.py; a
label written elsewhere, a collection of a catalogue's codes, or a document type, identity document, affectation or
reason compared with a code spelled in place fails."""

from __future__ import annotations

import ast
import functools
import re
import typing
from pathlib import Path

from app.core import contract
from app.core.invoicing import namespaces, soap, statuses
from app.core.invoicing import sunat_catalogues as catalogues
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


@functools.cache
def parsed(path: Path) -> tuple[ast.AST, frozenset[int]]:
    """A source file's tree and its docstrings' node ids, parsed once per test process (both scans read every file
    of app/; they do not change during a run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return tree, frozenset(_docstrings(tree))


def string_constants(path: Path) -> list[tuple[int, str]]:
    tree, skip = parsed(path)
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


@functools.cache  # two tests read the same scan of app/
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


# ---------------------------------------------------------------- SUNAT's catalogues (issue 29)

CATALOGUE_HOME = "app/core/invoicing/sunat_catalogues.py"
MIN_LABEL = 6  # shorter labels («RUC», «DNI», «Giro», «Otros») are words of their own


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


_LABEL_TABLES = (
    catalogues.DOCUMENT_TYPES, catalogues.SHORT_NAMES, catalogues.CDR_NAMES, catalogues.IDENTITY_DOCUMENTS,
    catalogues.IDENTITY_PRINTED, catalogues.AFFECTATIONS, catalogues.CREDIT_NOTE_REASONS,
    catalogues.DEBIT_NOTE_REASONS, catalogues.RELATED_DOCUMENTS, catalogues.PRICE_TYPES, catalogues.OPERATION_TYPES,
    catalogues.LEGENDS, catalogues.DISCOUNTS, catalogues.MEANS_OF_PAYMENT, catalogues.TRANSFER_MOTIVES,
    catalogues.TRANSPORT_MODES, catalogues.TRANSPORT_DOCUMENTS,
    {code: name for code, (name, _rate) in catalogues.DETRACCIONES.items()},
    {code: catalogues.printed_title(code) for code in catalogues.DOCUMENT_TYPES})
CATALOGUE_LABELS = {_fold(label) for table in _LABEL_TABLES for label in table.values() if len(label) >= MIN_LABEL}
# A collection (tuple, list, set, a dict's keys) of at least `size` strings, all codes of one catalogue.
CATALOGUE_CODES = {  # catalogue: (its codes, the smallest collection that counts)
    "01": (set(catalogues.DOCUMENT_TYPES), 2), "03": (set(catalogues.UNITS), 2),
    "06": (set(catalogues.IDENTITY_DOCUMENTS), 3), "07": (set(catalogues.AFFECTATIONS), 3),
    "09": ({*catalogues.CREDIT_NOTE_REASONS, catalogues.IVAP_REASON}, 3),
    "10": ({*catalogues.DEBIT_NOTE_REASONS, catalogues.IVAP_REASON}, 3),
    "51": (set(catalogues.OPERATION_TYPES), 2), "54": (set(catalogues.DETRACCIONES), 2),
    "59": (set(catalogues.MEANS_OF_PAYMENT), 2), "18": (set(catalogues.TRANSPORT_MODES), 2),
    "20": (set(catalogues.TRANSFER_MOTIVES), 3)}
_NOT_THE_TYPE = ("tipo_documento", "tipo_doc", "tipo_afectacion", "tipo_operacion", "tipo_cambio", "forma")
# What is compared with a code: (catalogue, whether an expression names it).
COMPARED = (
    ("01", lambda text: "tipo" in text and not any(word in text for word in _NOT_THE_TYPE)),
    ("06", lambda text: any(word in text for word in ("tipo_documento", "tipo_doc", "doc_type", "receptor_tipo"))),
    ("07", lambda text: "afectacion" in text),
    ("09", lambda text: "motivo" in text))
# Words of a catalogue that also name something else there (not the catalogue's entry).
CATALOGUE_EXCEPTIONS = {
    "app/gui/field_labels.py": {"label Descuento global"},  # the request field `descuento_global`, not reason 04
    # The RUC's first two digits, not IGV affectations (catalogue 07 gained 17, the IVAP, in issue 37).
    "app/core/platform/identifiers.py": {"codes 07: 10,15,16,17,20"},
}
# Spellings left in files other sessions are restructuring now (issue 29: voids are split by job) or that no session
# of the issue owns yet (the commands' choices); each goes when its file imports the home. A key is a path or the
# start of one (a module split into a package keeps its entries). An entry that is no longer needed fails too, so
# this list only shrinks.
CATALOGUE_PENDING: dict[str, set[str]] = {
    "app/core/invoicing/voids": {"compare 01: tipo 01", "compare 01: tipo 03", "codes 01: 07,08"},
    "app/commands/__init__.py": {"codes 01: 01,03,07,08"},
    "app/commands/cdr.py": {"codes 01: 01,03,07,08"},
}


def _string_elements(nodes: list) -> list[str]:
    return [node.value for node in nodes if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def _collection(node: ast.AST) -> list | None:
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return node.elts
    if isinstance(node, ast.Dict):
        return [key for key in node.keys if key is not None]
    return None


def _catalogue_of(texts: list[str]) -> str | None:
    for number, (codes, size) in CATALOGUE_CODES.items():
        if len(texts) >= size and set(texts) <= codes:
            return number
    return None


def _compared(node: ast.Compare) -> list[str]:
    found = []
    operands = [node.left, *node.comparators]
    for first, second in zip(operands, operands[1:], strict=False):
        for constant, other in ((first, second), (second, first)):
            if not (isinstance(constant, ast.Constant) and isinstance(constant.value, str)) or isinstance(
                    other, ast.Constant):
                continue
            text = ast.unparse(other)
            number = next((number for number, names in COMPARED if names(text)), None)
            if number is not None and constant.value in CATALOGUE_CODES[number][0]:
                found.append(f"compare {number}: {text} {constant.value}")
    return found


def catalogue_spellings(path: Path, relative: str) -> list[tuple[int, str]]:
    """(line, what) of every catalogue label, code collection or compared code spelled in `path` outside the home."""
    if relative == CATALOGUE_HOME:
        return []
    tree, skip = parsed(path)
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
                and _fold(node.value) in CATALOGUE_LABELS):
            found.append((node.lineno, f"label {node.value}"))
        elements = _collection(node)
        if elements:
            texts = _string_elements(elements)
            number = _catalogue_of(texts) if len(texts) == len(elements) else None
            if number is not None:
                found.append((node.lineno, f"codes {number}: {','.join(texts)}"))
        if isinstance(node, ast.Compare):
            found += [(node.lineno, what) for what in _compared(node)]
    return found


@functools.cache  # two tests read the same scan of app/
def catalogue_scan(root: Path = ROOT) -> dict[str, set[str]]:
    spelled: dict[str, set[str]] = {}
    for path in sorted((root / "app").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        for _, what in catalogue_spellings(path, relative):
            spelled.setdefault(relative, set()).add(what)
    return spelled


def _pending_for(relative: str) -> set[str]:
    return set().union(*(texts for key, texts in CATALOGUE_PENDING.items() if relative.startswith(key)))


def test_sunat_catalogues_are_spelled_in_their_home_only():
    unexpected = {}
    for relative, texts in catalogue_scan().items():
        allowed = CATALOGUE_EXCEPTIONS.get(relative, set()) | _pending_for(relative)
        if texts - allowed:
            unexpected[relative] = sorted(texts - allowed)
    assert unexpected == {}, "import the code or label from app/core/invoicing/sunat_catalogues.py (app.core.api)"


def test_the_catalogue_pending_list_only_shrinks():
    spelled = catalogue_scan()
    stale = {}
    for key, texts in CATALOGUE_PENDING.items():
        found = set().union(*(what for relative, what in spelled.items() if relative.startswith(key)))
        if texts - found:
            stale[key] = sorted(texts - found)
    assert stale == {}, "these spellings are gone: remove them from CATALOGUE_PENDING"


def test_the_catalogue_guard_catches_each_kind(tmp_path):
    probe = tmp_path / "app" / "probe.py"
    probe.parent.mkdir()
    probe.write_text('"""A docstring may say Nota de crédito and 01."""\n'
                     'TITLE = "Nota de Crédito"\n'
                     'NOTES = ("07", "08")\n'
                     'if request.tipo == "03":\n'
                     '    pass\n'
                     'UNITS = {"NIU": "unidad", "KGM": "kilo"}\n'
                     'if receptor.tipo_documento != "6":\n'
                     '    pass\n'
                     'RUC_PREFIXES = ("10", "20")\n'
                     'TEXT = "Emita una nota de crédito por la devolución"\n', encoding="utf-8")
    assert sorted(catalogue_spellings(probe, "app/probe.py")) == [
        (2, "label Nota de Crédito"), (3, "codes 01: 07,08"), (4, "compare 01: request.tipo 03"),
        (6, "codes 03: NIU,KGM"), (7, "compare 06: receptor.tipo_documento 6")]


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
