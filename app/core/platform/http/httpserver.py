"""A threading HTTP server in a background thread: shared by the local API and the sandboxes."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

POLL_INTERVAL_S = 0.05  # how soon stop() is noticed; the default 0.5 s slowed every test teardown


class ServerThread:
    def __init__(self, name: str) -> None:
        self.name = name
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError(f"the {self.name} server is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self, host: str, port: int, handler: type[BaseHTTPRequestHandler]) -> str:
        """Bind (port 0 picks a free port) and serve in a daemon thread; raises OSError if it cannot bind."""
        self._server = ThreadingHTTPServer((host, port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(POLL_INTERVAL_S,),
                                        name=self.name, daemon=True)
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
