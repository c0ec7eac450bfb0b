"""What every window shares: the engine, the worker pool, the event bridge and the sandboxes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .bridge import EngineEvents
from .sandbox_mode import SandboxMode
from .workers import Workers

ENVIRONMENTS = {
    # setting value: (label, badge colour)
    "sandbox": ("SANDBOX", "#00796b"),
    "beta": ("BETA", "#e65100"),
    "produccion": ("PRODUCCIÓN", "#c62828"),
}


@dataclass
class Context:
    engine: Any
    workers: Workers
    events: EngineEvents
    sandboxes: SandboxMode

    def ambiente(self, environment: str) -> str:
        """The contract's `ambiente` for the app's environment: the sandbox stands in for SUNAT beta."""
        return "produccion" if environment == "produccion" else "beta"
