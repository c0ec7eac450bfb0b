"""Padrón files for the tests, written by ../shared/tools/make_padron.py (the project's outside oracle)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import shared
from tests.helpers.shared import MAKE_PADRON


def make_padron(rows: int, out: Path, bad: int = 0, seed: int = 7) -> list[list[str]]:
    """Write the file; returns the known good rows make_padron prints (fields as in the file)."""
    shared.require()
    done = subprocess.run([sys.executable, str(MAKE_PADRON), str(rows), str(out), "--bad", str(bad), "--seed",
                           str(seed)], capture_output=True, text=True, check=True, timeout=120)
    return [line.split("|") for line in done.stderr.splitlines() if line.count("|") >= 14]
