"""Operations 6-8: RUC, carnet de extranjería and plate lookups — filled in by the registry issue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .contract import CeRecord, PlacaRecord, RucRecord
from .errors import invalid, not_configured
from .identifiers import check_ruc

if TYPE_CHECKING:
    from .engine import Engine

_NOT_READY = "Las consultas todavía no están disponibles en esta versión de Yupana."


def lookup_ruc(engine: Engine, numero: str) -> RucRecord:
    check_ruc(numero, "numero")
    raise not_configured(_NOT_READY)


def lookup_ce(engine: Engine, numero: str) -> CeRecord:
    if not (numero or "").strip():
        raise invalid("numero", "El campo «numero» (carnet de extranjería) es obligatorio.")
    raise not_configured(_NOT_READY)


def lookup_placa(engine: Engine, numero: str) -> PlacaRecord:
    if not (numero or "").strip():
        raise invalid("numero", "El campo «numero» (placa) es obligatorio.")
    raise not_configured(_NOT_READY)
