"""Modules loaded at their first use rather than at import (issue 33, start-up).

`httpx = lazy_module("httpx")` at the top of a file, instead of `import httpx`, keeps httpx (and the click, rich and
pygments its command line brings) out of the start of the windows and the commands until a request is made; the
same for cryptography until a key or a certificate is read. The module is imported (through the import system, so
under its lock: two threads asking at once get the one module) when an attribute of it is first read, and every
attribute is read from the real module each time, so what a test patches on it is seen. A file keeps the ordinary
import under `if TYPE_CHECKING:` for the type checker:

    if TYPE_CHECKING:
        import httpx
    else:
        httpx = lazy_module("httpx")

Which modules are loaded this way, and what each saves, is listed in tests/core/test_package_layout.py (LAZY).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any


class LazyModule(types.ModuleType):
    """Stands for the module `name`; reading an attribute imports the module (once) and reads it there."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__dict__["_lazy_target"] = name

    def _module(self) -> types.ModuleType:
        name = self.__dict__["_lazy_target"]
        module = sys.modules.get(name)
        return module if module is not None else importlib.import_module(name)

    def __getattr__(self, attribute: str) -> Any:  # only for what the stand-in itself lacks: every real attribute
        return getattr(self._module(), attribute)

    def __dir__(self) -> list[str]:
        return dir(self._module())

    def __repr__(self) -> str:
        return f"<lazy module {self.__dict__['_lazy_target']!r}>"


def lazy_module(name: str) -> Any:
    """A stand-in for module `name` that imports it when one of its attributes is first read."""
    return LazyModule(name)
