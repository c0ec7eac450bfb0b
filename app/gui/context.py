"""What every window shares: the engine, the worker pool, the event bridge and the sandboxes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.platform.environments import ambiente_of
from app.sandbox.mode import SandboxMode

from .bridge import EngineEvents
from .workers import Workers


@dataclass
class Context:
    engine: Any
    workers: Workers
    events: EngineEvents
    sandboxes: SandboxMode

    def ambiente(self, environment: str) -> str:
        """The contract's `ambiente` for the app's environment (app.core.platform.environments)."""
        return ambiente_of(environment)
