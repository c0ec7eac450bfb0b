"""What every window shares: the engine, the worker pool, the event bridge and the sandboxes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.environments import ambiente_of

from .bridge import EngineEvents
from .sandbox_mode import SandboxMode
from .workers import Workers


@dataclass
class Context:
    engine: Any
    workers: Workers
    events: EngineEvents
    sandboxes: SandboxMode

    def ambiente(self, environment: str) -> str:
        """The contract's `ambiente` for the app's environment (app.core.environments)."""
        return ambiente_of(environment)
