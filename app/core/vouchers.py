"""Operation 1: UBL 2.1 vouchers (factura, boleta, notas) — filled in by the vouchers issue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .contract import GenerarXmlRequest, GenerarXmlResult
from .errors import not_configured

if TYPE_CHECKING:
    from .engine import Engine


def generate(engine: Engine, request: GenerarXmlRequest) -> GenerarXmlResult:
    raise not_configured("La generación de comprobantes todavía no está disponible en esta versión de Yupana.")
