"""SUNAT's ubigeo table (departamento, provincia, distrito by six-digit code), shipped in app/data."""

from __future__ import annotations

import csv
from functools import lru_cache
from typing import NamedTuple

from app.core.platform.paths import package_data


class Place(NamedTuple):
    departamento: str
    provincia: str
    distrito: str


@lru_cache(maxsize=1)
def table() -> dict[str, Place]:
    with open(package_data("ubigeo-sunat.csv"), encoding="utf-8", newline="") as handle:
        return {row["ubigeo"]: Place(row["departamento"], row["provincia"], row["distrito"])
                for row in csv.DictReader(handle)}


def lookup(code: str | None) -> Place | None:
    return table().get((code or "").strip())
