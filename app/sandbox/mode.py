"""«Modo sandbox»: the local stand-ins for SUNAT, the registry and the gateway, started in-process.

Each available sandbox starts on a free loopback port and becomes what the engine's sandbox environment
uses (never written into the settings: beta and production keep their addresses), so a newcomer can try
everything offline. They stop when the environment changes away from sandbox or the engine closes, and
their addresses go with them (app.core.platform.environments).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.api import Engine
    from app.sandbox.base import Sandbox

log = logging.getLogger(__name__)


class SandboxMode:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.running: dict[str, Sandbox] = {}
        self._lock = threading.Lock()
        engine.admin.on_close(self.stop)

    def start(self) -> dict[str, str]:
        """Start (once) every sandbox of this version and configure the engine; returns name → base URL."""
        from app.sandbox import available

        with self._lock:
            for name, cls in available().items():
                if name in self.running:
                    continue
                sandbox = cls(host="127.0.0.1", port=0)
                sandbox.start()
                try:
                    sandbox.configure(self.engine)
                except BaseException:
                    sandbox.stop()
                    raise
                self.running[name] = sandbox  # listed once the sandbox environment can use it
                log.info("sandbox %s running at %s", name, sandbox.base_url)
            return {name: sandbox.base_url for name, sandbox in self.running.items()}

    def stop(self) -> None:
        with self._lock:
            for sandbox in self.running.values():
                try:
                    sandbox.unconfigure(self.engine)
                except Exception:  # the engine may be closing: the rows are purged at the next open
                    log.exception("sandbox %s: addresses not released", sandbox.name)
                sandbox.stop()
            self.running.clear()
