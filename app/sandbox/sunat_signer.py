"""The SUNAT sandbox's own certificate: made at start, kept in memory, signs every CDR it issues.

Signing and verification are Yupana's own (app.core.invoicing.signing): the CDR is signed as SUNAT signs
its CDRs (rsa-sha1, the signature in the first ExtensionContent, Id SignSUNAT).
"""

from __future__ import annotations

import datetime as dt

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from app.core.sandbox_kit import clock, sign_xml, verify_xml


def self_signed(common_name: str = "SUNAT SANDBOX YUPANA", days: int = 365) -> tuple[rsa.RSAPrivateKey,
                                                                                      x509.Certificate]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "PE"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "SUNAT (sandbox de Yupana)"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = clock.now()
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
                   .not_valid_after(now + dt.timedelta(days=days))
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    return key, certificate


class SandboxSigner:
    def __init__(self) -> None:
        self.private_key, self.certificate = self_signed()

    def sign(self, xml: bytes) -> bytes:
        return sign_xml(xml, self.private_key, self.certificate, algorithm="rsa-sha1",
                        signature_id="SignSUNAT").xml


def signature_is_valid(xml: bytes) -> bool:
    """The voucher's enveloped signature verifies against the certificate it carries."""
    return verify_xml(xml).valid
