"""Oracles from outside the project: xmlsec1 for signatures, SUNAT's own checker for vouchers and summaries."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from tests.helpers import shared
from tests.helpers.shared import SUNAT_CHECK


def xmlsec_verify(path: Path, cert: x509.Certificate) -> subprocess.CompletedProcess:
    pem = path.with_suffix(".pem")
    pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return subprocess.run(["xmlsec1", "--verify", "--pubkey-cert-pem", str(pem), "--enabled-reference-uris", "empty",
                           str(path)], capture_output=True, text=True)


def run_sunat_check(path: Path, *options: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """../shared/tools/sunat_check.py on one file, in a process of its own (its sheet runner and Yupana's both register
    lxml's global dp:variable function, so they must not share one); skipped without SUNAT's files."""
    shared.require()
    return subprocess.run([sys.executable, str(SUNAT_CHECK), str(path), *options], capture_output=True, text=True,
                          timeout=timeout)


def load_sunat_check():
    """sunat_check.py imported as a module (in this process); skipped without SUNAT's files."""
    shared.require()
    spec = importlib.util.spec_from_file_location("sunat_check", SUNAT_CHECK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
