"""Operation 2: XML signature of vouchers — filled in by the certificates and signing issue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .contract import FirmarRequest, FirmarResult
from .errors import not_configured

if TYPE_CHECKING:
    from .engine import Engine


def sign_request(engine: Engine, request: FirmarRequest) -> FirmarResult:
    raise not_configured("La firma de comprobantes todavía no está disponible en esta versión de Yupana.")
