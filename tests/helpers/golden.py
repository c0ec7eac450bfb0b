"""What the golden-file tests share: the matrix's requests with fixed dates, built by the pure builder for one
registered issuer, and the check against a kept file (rewritten with YUPANA_UPDATE_GOLDEN=1, then reviewed)."""

from __future__ import annotations

import copy
import os
from datetime import date, time
from pathlib import Path

from app.core.contract import GenerarXmlRequest
from app.core.invoicing import ubl
from app.core.invoicing.builder import build_document
from app.core.platform.companies import Company
from tests.helpers.voucher_matrix import ISSUER, TODAY

UPDATE = os.environ.get("YUPANA_UPDATE_GOLDEN") == "1"
ISSUED = date(2026, 3, 2)
AT = time(10, 30, 5)
COMPANY = Company(ruc=ISSUER, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101", direccion="AV. ABANCAY 123",
                  nombre_comercial="YUPANA")


def company_of(ruc: str) -> Company | None:
    return COMPANY if ruc == ISSUER else None


def fixed_dates(value):
    """`value` with each date from today on moved by (ISSUED - today); earlier fixed dates stay."""
    if isinstance(value, dict):
        return {key: fixed_dates(item) for key, item in value.items()}
    if isinstance(value, list):
        return [fixed_dates(item) for item in value]
    if isinstance(value, str) and len(value) == 10 and value[4] == "-" and value[7] == "-":
        try:
            day = date.fromisoformat(value)
        except ValueError:
            return value
        return (day + (ISSUED - TODAY)).isoformat() if day >= TODAY else value
    return value


def fixed_request(request: dict) -> dict:
    """A copy of `request` issued on ISSUED at AT (unless it names its own earlier date)."""
    fixed = fixed_dates(copy.deepcopy(request))
    fixed.setdefault("fecha_emision", ISSUED.isoformat())
    fixed["hora_emision"] = AT.isoformat()
    return fixed


def rendered(request: dict, name_of=lambda ruc: None) -> str:
    doc = build_document(GenerarXmlRequest.model_validate(fixed_request(request)), company_of, name_of)
    return ubl.render(doc)


def check_golden(path: Path, text: str) -> None:
    """`text` equals the kept file `path`, byte for byte (written first when updating)."""
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    assert path.exists(), f"no golden file {path.name}: run with YUPANA_UPDATE_GOLDEN=1 and review it"
    assert text == path.read_bytes().decode("utf-8"), f"the text differs from {path.name}"
