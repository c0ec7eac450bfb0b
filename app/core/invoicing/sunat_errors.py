"""SUNAT's error catalogue (CatalogoErrores.xml): the official text of each response or fault code.

When `sunat_rules_dir` points at SUNAT's VALI folder the whole catalogue is read from there;
otherwise Yupana's own copy of the subset it needs (app/data/sunat-errores.csv: every code below
2000, which covers the SOAP faults, plus the few rejections the sandbox gives itself and the guías' codes the
builder refuses with) is used.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path

from lxml import etree

from app.core.platform.paths import package_data

BUNDLED = package_data("sunat-errores.csv")
CATALOGUE_IN_RULES_DIR = Path("commons") / "cpe" / "catalogo" / "CatalogoErrores.xml"


def _safe_parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False)


@functools.cache
def _bundled() -> dict[str, str]:
    with open(BUNDLED, encoding="utf-8", newline="") as handle:
        return {row["codigo"]: row["descripcion"] for row in csv.DictReader(handle)}


@functools.cache
def _from_rules_dir(rules_dir: str) -> dict[str, str]:
    path = Path(rules_dir) / CATALOGUE_IN_RULES_DIR
    if not path.is_file():
        return {}
    root = etree.parse(str(path), _safe_parser()).getroot()
    return {e.get("numero"): " ".join((e.text or "").split()) for e in root if e.get("numero")}


def normalize(code: str | int) -> str:
    """SUNAT writes codes with four digits ('0102'); faults and CDRs sometimes drop the zeros."""
    text = str(code).strip()
    return text.zfill(4) if text.isdigit() else text


def describe(code: str | int, rules_dir: str = "") -> str:
    """The catalogue's Spanish text for a code, or a generic sentence naming the code."""
    key = normalize(code)
    text = (_from_rules_dir(rules_dir).get(key) if rules_dir else None) or _bundled().get(key)
    return text or f"Código {key} de SUNAT (no figura en el catálogo de errores)."
