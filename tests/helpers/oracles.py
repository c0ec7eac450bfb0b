"""Oracles from outside the project: xmlsec1 for signatures, SUNAT's own checker for vouchers and summaries."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from tests.helpers.base import SUNAT_CHECK


def xmlsec_verify(path: Path, cert: x509.Certificate) -> subprocess.CompletedProcess:
    pem = path.with_suffix(".pem")
    pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return subprocess.run(["xmlsec1", "--verify", "--pubkey-cert-pem", str(pem), "--enabled-reference-uris", "empty",
                           str(path)], capture_output=True, text=True)


def load_sunat_check():
    spec = importlib.util.spec_from_file_location("sunat_check", SUNAT_CHECK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
