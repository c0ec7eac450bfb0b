"""Oracles from outside the project: xmlsec1 for signatures, SUNAT's own checker for vouchers and summaries."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
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


# ---------------------------------------------------------------- printed documents: poppler and zbar

PDF_TOOLS = ("pdftotext", "pdftoppm", "zbarimg")
needs_poppler = pytest.mark.skipif(any(shutil.which(tool) is None for tool in PDF_TOOLS),
                                   reason="poppler-utils and zbar-tools are installed by .ci/run")


def pdf_text(path: Path) -> str:
    """The PDF's text as poppler's pdftotext reads it, its whitespace folded to single spaces."""
    out = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, check=True).stdout.decode("utf-8")
    return " ".join(out.split())


def decode_qr(path: Path, tmp_path: Path) -> list[str]:
    """The QR codes of the PDF's first page as zbarimg decodes them (rendered at 200 dpi by pdftoppm, in grey: an
    uncompressed PGM, where a colour PNG cost two thirds of the time in encoding and decoding it again)."""
    image = tmp_path / "qr"
    subprocess.run(["pdftoppm", "-r", "200", "-gray", "-singlefile", str(path), str(image)], check=True)
    # QR codes only: the other symbologies read a false barcode in some lines of text (a ticket's «C25D», 07-12-2026)
    done = subprocess.run(["zbarimg", "-q", "--raw", "-Sdisable", "-Sqrcode.enable", str(image) + ".pgm"],
                          capture_output=True)
    return done.stdout.decode("utf-8").split()
