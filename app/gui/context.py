"""What every window shares: the engine, the worker pool, the event bridge and the sandboxes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.sandbox.mode import SandboxMode

from .bridge import EngineEvents
from .workers import Workers

if TYPE_CHECKING:
    from app.core.api import Engine


@dataclass
class Context:
    engine: Engine  # its methods are called as they are: tests/gui/test_engine_usage.py checks they exist
    workers: Workers
    events: EngineEvents
    sandboxes: SandboxMode
