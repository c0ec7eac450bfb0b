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
            timeout: float = 120, new_interpreter: bool = False) -> subprocess.CompletedProcess:
    """Run `yupana ARGS` as a real process (python -m app's main) in this checkout: forked from a process that has
    already imported it (tests/helpers/forked_cli.py), or with `new_interpreter` a new Python started for it."""
    from tests.helpers import forked_cli

    env = dict(os.environ)
    if home is not None:
        env["YUPANA_HOME"] = str(home)
    data = stdin.encode() if isinstance(stdin, str) else stdin
    if not new_interpreter:
        return forked_cli.run(args, data, env, ROOT, timeout)
    return subprocess.run([sys.executable, "-m", "app", *args], input=data, capture_output=True, cwd=ROOT, env=env,
                          timeout=timeout)
