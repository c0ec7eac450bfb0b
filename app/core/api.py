"""The optional local HTTP API: the contract's operations on /api/v1/... for a point of sale on this PC.

It only binds loopback addresses and every request needs `Authorization: Bearer <token>`; the
token is a secret of the data folder (`yupana serve --show-token`). It is a thin layer: each
request becomes one `Engine.call`.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import re
import secrets as random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from .contract import MAX_BODY_BYTES
from .errors import ErrorCode, YupanaError, invalid

if TYPE_CHECKING:
    from .engine import Engine

log = logging.getLogger(__name__)
TOKEN_SECRET = "api.token"
_LOOKUP_PATH = re.compile(r"^/api/v1/(ruc|ce|placa)/([^/?#]*)$")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def api_token(engine: Engine, *, renew: bool = False) -> str:
    """The local API's token, created on first use and kept encrypted."""
    stored = None if renew else engine.secrets.get(TOKEN_SECRET)
    if stored is None:
        stored = random.token_urlsafe(32).encode()
        engine.secrets.put(TOKEN_SECRET, stored)
    return stored.decode()


def route(method: str, path: str) -> tuple[str, str | None]:
    """(operation name, numero) for a request line, or a 404/405 YupanaError."""
    from .engine import OPERATIONS

    path = path.split("?", 1)[0]
    found = _LOOKUP_PATH.match(path)
    if found:
        operation, numero = found.group(1), found.group(2)
        if method != "GET":
            raise YupanaError(ErrorCode.INVALID_INPUT, f"Use GET para {path}.")
        return operation, numero
    for op in OPERATIONS.values():
        if op.path == path:
            if method != op.method:
                raise YupanaError(ErrorCode.INVALID_INPUT, f"Use {op.method} para {path}.")
            return op.name, None
    raise YupanaError(ErrorCode.NOT_FOUND, f"No existe la ruta {path}. Las rutas están en /api/v1/… (docs/contract.md).")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "Yupana"
    api: LocalApi

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        log.debug("api %s", format % args)

    def _send(self, status: int, envelope: dict[str, Any]) -> None:
        body = json.dumps(envelope, ensure_ascii=False, default=str).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _authorized(self) -> bool:
        header = self.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), self.api.token.encode())

    def _handle(self, method: str) -> None:
        try:
            if not self._authorized():
                raise YupanaError(ErrorCode.UNAUTHORIZED,
                                  "Falta el token de la API local o no es válido (cabecera Authorization: Bearer …).")
            operation, numero = route(method, self.path)
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self.close_connection = True
                raise YupanaError(ErrorCode.PAYLOAD_TOO_LARGE,
                                  f"La solicitud supera el tamaño máximo de {MAX_BODY_BYTES // (1024 * 1024)} MiB.")
            body = self.rfile.read(length) if length else b""
        except YupanaError as exc:
            self._send(exc.http_status, exc.to_envelope())
            return
        status, envelope = self.api.engine.call(operation, body if numero is None else None, numero=numero)
        self._send(status, envelope)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._handle("PUT")

    def do_DELETE(self) -> None:  # noqa: N802
        self._handle("DELETE")


class LocalApi:
    """The API server in a background thread; `start()` returns its base URL."""

    def __init__(self, engine: Engine, host: str | None = None, port: int | None = None) -> None:
        self.engine = engine
        self.host = host or engine.config_get("api_host")
        self.port = engine.settings.get_int("api_port") if port is None else port
        if not is_loopback(self.host):
            raise invalid("api_host", f"La API local solo escucha en este equipo (127.0.0.1); «{self.host}» no se permite.")
        self.token = api_token(engine)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> str:
        handler = type("LocalApiHandler", (_Handler,), {"api": self})
        try:
            self._server = ThreadingHTTPServer((self.host, self.port), handler)
        except OSError as exc:
            raise YupanaError(ErrorCode.CONFLICT,
                              f"No se pudo abrir la API local en {self.host}:{self.port}: {exc.strerror}.") from None
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="local-api", daemon=True)
        self._thread.start()
        self.engine.on_close(self.stop)
        log.info("local API listening on %s", self.base_url)
        return self.base_url

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
