"""Parts that arrive with later features (a sandbox, a window, a command) are found by name."""

from __future__ import annotations

import importlib
from typing import Any


def load_optional(target: str) -> Any | None:
    """The object named "package.module:Name" (or the module for "package.module"), or None when that
    module does not exist in this version. A module that exists but fails to import still raises."""
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        return None
    return getattr(module, attribute) if attribute else module
