"""The one error model of the contract: a code, a Spanish message that names the field, details.

Every layer (engine, CLI, local HTTP API, GUI) raises or shows `YupanaError`; the envelope it
turns into is `{"success": false, "error": {"code", "message", "details"}}`.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    INVALID_INPUT = "INVALID_INPUT"
    INVALID_JSON = "INVALID_JSON"
    UNAUTHORIZED = "UNAUTHORIZED"
    NOT_FOUND = "NOT_FOUND"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    REQUEST_TIMEOUT = "REQUEST_TIMEOUT"
    CONFLICT = "CONFLICT"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    UNSUPPORTED_MEDIA_TYPE = "UNSUPPORTED_MEDIA_TYPE"
    BUSY = "BUSY"
    RATE_LIMITED = "RATE_LIMITED"
    UPSTREAM_BAD_RESPONSE = "UPSTREAM_BAD_RESPONSE"
    UPSTREAM_REJECTED = "UPSTREAM_REJECTED"
    UPSTREAM_UNAVAILABLE = "UPSTREAM_UNAVAILABLE"
    QUEUED = "QUEUED"
    NOT_CONFIGURED = "NOT_CONFIGURED"
    UPSTREAM_TIMEOUT = "UPSTREAM_TIMEOUT"
    INTERNAL = "INTERNAL"


# Each code maps to exactly one HTTP status (docs/contract.md lists them).
HTTP_STATUS: dict[ErrorCode, int] = {
    ErrorCode.INVALID_INPUT: 400,
    ErrorCode.INVALID_JSON: 400,
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.REQUEST_TIMEOUT: 408,
    ErrorCode.CONFLICT: 409,
    ErrorCode.PAYLOAD_TOO_LARGE: 413,
    ErrorCode.UNSUPPORTED_MEDIA_TYPE: 415,
    ErrorCode.BUSY: 503,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.UPSTREAM_BAD_RESPONSE: 502,
    ErrorCode.UPSTREAM_REJECTED: 502,
    ErrorCode.UPSTREAM_UNAVAILABLE: 503,
    ErrorCode.QUEUED: 503,
    ErrorCode.NOT_CONFIGURED: 503,
    ErrorCode.UPSTREAM_TIMEOUT: 504,
    ErrorCode.INTERNAL: 500,
}


@dataclass
class ErrorDetail:
    """One problem: the field it is about (dotted path, e.g. `items[2].igv`), a Spanish message and,
    where SUNAT has one, SUNAT's error code for the same problem."""

    field: str | None
    message: str
    sunat_code: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"field": self.field, "message": self.message}
        if self.sunat_code:
            out["sunat_code"] = self.sunat_code
        return out


@dataclass
class YupanaError(Exception):
    code: ErrorCode
    message: str
    details: list[ErrorDetail] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    @property
    def http_status(self) -> int:
        return HTTP_STATUS[self.code]

    def to_envelope(self) -> dict[str, Any]:
        return {
            "success": False,
            "error": {
                "code": str(self.code),
                "message": self.message,
                "details": [d.to_json() for d in self.details],
            },
        }

    def __str__(self) -> str:
        return self.message


def invalid(field_name: str | None, message: str, sunat_code: str | None = None) -> YupanaError:
    """A 400 about one field; the message is Spanish and already names the field."""
    return YupanaError(ErrorCode.INVALID_INPUT, message, [ErrorDetail(field_name, message, sunat_code)])


def invalid_many(details: list[ErrorDetail]) -> YupanaError:
    """A 400 with several problems; the headline message is the first one's."""
    first = details[0].message
    if len(details) > 1:
        others = len(details) - 1
        first = first.rstrip(".") + f" (y {others} problema{'s' if others > 1 else ''} más)."
    return YupanaError(ErrorCode.INVALID_INPUT, first, details)


def not_found(field_name: str, message: str) -> YupanaError:
    return YupanaError(ErrorCode.NOT_FOUND, message, [ErrorDetail(field_name, message)])


def conflict(field_name: str | None, message: str) -> YupanaError:
    return YupanaError(ErrorCode.CONFLICT, message, [ErrorDetail(field_name, message)])


def not_configured(message: str) -> YupanaError:
    return YupanaError(ErrorCode.NOT_CONFIGURED, message)


# What the operating system says about a file, in Spanish (its own strerror is English on Linux).
_OS_REASONS = {
    errno.ENOENT: "no existe",
    errno.EACCES: "no tiene permiso para leerlo",
    errno.EPERM: "no tiene permiso para leerlo",
    errno.EISDIR: "es una carpeta, no un archivo",
    errno.ENOTDIR: "una parte de la ruta no es una carpeta",
    errno.ENAMETOOLONG: "la ruta es demasiado larga",
    errno.EADDRINUSE: "la dirección ya está en uso por otro programa",
    errno.EADDRNOTAVAIL: "esa dirección no pertenece a este equipo",
}


def os_reason(exc: OSError) -> str:
    """A short Spanish reason for an operating-system error (never the English strerror)."""
    return _OS_REASONS.get(exc.errno or 0, f"error del sistema {exc.errno}" if exc.errno else "error del sistema")


def unreadable_file(field_name: str, path: object, exc: OSError) -> YupanaError:
    """The 400 for a file the user named that cannot be read, naming the file and why."""
    return invalid(field_name, f"No se pudo leer el archivo «{path}»: {os_reason(exc)}.")
