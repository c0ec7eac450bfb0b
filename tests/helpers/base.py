"""Paths and constants every test may use, and `run_cli` (the real `yupana` process). No Qt here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A real, valid RUC used as the demo issuer throughout the tests.
ISSUER_RUC = "20100066603"
TEST_PASSPHRASE = "frase de prueba de los tests"


def run_cli(*args: str, stdin: str | bytes | None = None, home: Path | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `yupana ARGS` as a real process (python -m app) in this checkout."""
    env = dict(os.environ)
    if home is not None:
        env["YUPANA_HOME"] = str(home)
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, "-m", "app", *args], input=data, capture_output=True, cwd=ROOT, env=env,
                          timeout=timeout)
