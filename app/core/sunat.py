"""Operation 3: submission to SUNAT (SOAP, CDR, outbox) — filled in by the submission issue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .contract import EnviarRequest, EnviarResult
from .errors import not_configured

if TYPE_CHECKING:
    from .engine import Engine


def submit(engine: Engine, request: EnviarRequest) -> EnviarResult:
    raise not_configured("El envío a SUNAT todavía no está disponible en esta versión de Yupana.")
