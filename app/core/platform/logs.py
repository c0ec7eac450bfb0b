"""Logging to a rotating file in the data folder, with secrets masked before anything is written."""

from __future__ import annotations

import logging
import re
from logging.handlers import RotatingFileHandler
from pathlib import Path

from app.core.platform.paths import log_dir, private_file

LOG_FILE = "yupana.log"

_SECRET_PATTERNS = [
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S), "[clave privada]"),
    (re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+"), r"\1***"),
    (re.compile(r"(?i)((?:password|passwd|clave(?:_sol)?|token|secret|passphrase)\s*[\"']?\s*[:=]\s*[\"']?)[^\s\"',;&<]+"),
     r"\1***"),
    (re.compile(r"(?i)(<(?:\w+:)?Password[^>]*>)[^<]*(</)"), r"\1***\2"),
]


def redact(text: str) -> str:
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class PrivateRotatingFileHandler(RotatingFileHandler):
    """Log files readable by their owner only (0600 on POSIX), the first one and each one after a rotation."""

    def _open(self):  # noqa: ANN202 - the base class's signature
        private_file(Path(self.baseFilename))
        return super()._open()


class RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def setup_logging(home: Path, level: str = "INFO") -> Path:
    """Attach (once per data folder) a rotating file handler to the `app` logger; return the file."""
    path = log_dir(home) / LOG_FILE
    logger = logging.getLogger("app")
    logger.setLevel(level)
    for handler in logger.handlers:
        if isinstance(handler, RotatingFileHandler) and Path(handler.baseFilename) == path:
            return path
    handler = PrivateRotatingFileHandler(path, maxBytes=2 * 1024 * 1024, backupCount=5, encoding="utf-8", delay=True)
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    return path


def close_logging(home: Path) -> None:
    path = log_dir(home) / LOG_FILE
    logger = logging.getLogger("app")
    for handler in list(logger.handlers):
        if isinstance(handler, RotatingFileHandler) and Path(handler.baseFilename) == path:
            logger.removeHandler(handler)
            handler.close()
