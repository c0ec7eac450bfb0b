"""The certificate store: digital certificates (PFX/P12 or PEM) with which vouchers are signed.

The database keeps each certificate's metadata and public certificate; the private key is kept only
in the secret store (`engine.secrets`, AES-GCM under the keyring or passphrase master key). Loading
an RSA key (and parsing a PFX) costs tens of milliseconds, so a key is loaded once per
`certificado_id` and kept in memory for the life of the engine: signing never re-reads it. Each issuer's
default certificate is kept in memory too, until a certificate is added, deleted or chosen as a default.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
from dataclasses import dataclass
from typing import Any

from app.core.errors import conflict, invalid, not_found
from app.core.platform import clock
from app.core.platform.crypto import hashes, pkcs12, rsa, serialization, x509, x509_oid
from app.core.platform.identifiers import check_ruc, ruc_problem
from app.core.platform.secrets import SecretStore
from app.core.storage.ports.certificates import CertificateRepository
from app.core.storage.ports.database import Database
from app.core.storage.read_cache import ReadCache

log = logging.getLogger(__name__)

EXPIRY_WARNING_DAYS = 30
TEST_CERTIFICATE_DAYS = 730
TEST_CERTIFICATE_NAME = "YUPANA PRUEBA"


def _now() -> dt.datetime:
    return clock.now()


# ------------------------------------------------------------------ what a certificate says

_RUC_PATTERN = re.compile(r"(?<!\d)((?:10|15|16|17|20)\d{9})(?!\d)")
# Where Peruvian CAs put the RUC, most specific first: serialNumber ("RUC20100066603"),
# organizationIdentifier ("20605446788", "NTRPE-20605446788"), then OU ("DNI 48004835 RUC 20210441213"), CN, O.
_RUC_ATTRIBUTES = ("SERIAL_NUMBER", "ORGANIZATION_IDENTIFIER", "ORGANIZATIONAL_UNIT_NAME", "COMMON_NAME",
                   "ORGANIZATION_NAME")  # NameOID's names (cryptography is loaded at the first certificate read)


def ruc_in_subject(subject: x509.Name) -> str | None:
    """The first valid RUC found in the usual attributes of a certificate's subject."""
    for oid in _RUC_ATTRIBUTES:
        for attribute in subject.get_attributes_for_oid(getattr(x509_oid.NameOID, oid)):
            for candidate in _RUC_PATTERN.findall(str(attribute.value)):
                if ruc_problem(candidate) is None:
                    return candidate
    return None


_READABLE_NAMES = {"SERIAL_NUMBER": "serialNumber", "ORGANIZATION_IDENTIFIER": "organizationIdentifier",
                   "EMAIL_ADDRESS": "emailAddress", "GIVEN_NAME": "GN", "SURNAME": "SN", "TITLE": "title"}


def _readable_names() -> dict[Any, str]:
    """rfc4514_string's names for the attributes it would print as dotted OIDs (NameOID's, by name above)."""
    return {getattr(x509_oid.NameOID, oid): name for oid, name in _READABLE_NAMES.items()}


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


@dataclass(frozen=True)
class CertificateInfo:
    """A stored certificate as the windows, the command and the API show it (Spanish field names)."""

    certificado_id: str
    sujeto: str
    ruc: str
    emisor: str
    serie: str
    valido_desde: dt.datetime
    valido_hasta: dt.datetime
    huella_sha256: str
    es_prueba: bool
    predeterminado: bool = False

    def dias_restantes(self, now: dt.datetime | None = None) -> int:
        return (self.valido_hasta - (now or _now())).days

    def vencido(self, now: dt.datetime | None = None) -> bool:
        return (now or _now()) >= self.valido_hasta

    def por_vencer(self, now: dt.datetime | None = None) -> bool:
        """True within the last 30 days of validity (the GUI's badge, the API's warning)."""
        moment = now or _now()
        return not self.vencido(moment) and self.valido_hasta - moment <= dt.timedelta(days=EXPIRY_WARNING_DAYS)

    def to_json(self, now: dt.datetime | None = None) -> dict[str, Any]:
        return {
            "certificado_id": self.certificado_id, "sujeto": self.sujeto, "ruc": self.ruc, "emisor": self.emisor,
            "serie": self.serie, "valido_desde": self.valido_desde.isoformat(),
            "valido_hasta": self.valido_hasta.isoformat(), "huella_sha256": self.huella_sha256,
            "es_prueba": self.es_prueba, "predeterminado": self.predeterminado,
            "vencido": self.vencido(now), "por_vencer": self.por_vencer(now), "dias_restantes": self.dias_restantes(now),
        }


def describe(certificate: x509.Certificate, *, is_test: bool = False) -> CertificateInfo:
    fingerprint = certificate.fingerprint(hashes.SHA256()).hex()
    return CertificateInfo(
        certificado_id=f"cert-{fingerprint[:16]}",
        sujeto=certificate.subject.rfc4514_string(_readable_names()),
        ruc=ruc_in_subject(certificate.subject) or "",
        emisor=certificate.issuer.rfc4514_string(_readable_names()),
        serie=format(certificate.serial_number, "x"),
        valido_desde=_utc(certificate.not_valid_before_utc),
        valido_hasta=_utc(certificate.not_valid_after_utc),
        huella_sha256=fingerprint,
        es_prueba=is_test,
    )


# ------------------------------------------------------------------ reading files

def load_pfx(data: bytes, password: str | bytes | None) -> tuple[rsa.RSAPrivateKey, x509.Certificate]:
    """Key and certificate of a PFX/P12, modern (AES) or legacy (RC2-40, 3DES). Spanish 400s on `password`/`archivo`."""
    secret = password.encode("utf-8") if isinstance(password, str) else password
    if not data or data[:1] != b"\x30":
        raise invalid("archivo", "El archivo no es un certificado PFX/P12 (no tiene la estructura de uno).")
    try:
        key, certificate, _chain = pkcs12.load_key_and_certificates(data, secret or None)
    except ValueError as exc:
        if "password" in str(exc).lower():
            # PKCS#12 checks the password through the file's MAC: a wrong password and altered bytes look alike.
            raise invalid("password", "La contraseña del certificado no es correcta (o el archivo fue alterado).") from None
        raise invalid("archivo", "El archivo PFX/P12 está dañado o no se puede leer.") from None
    except Exception:  # unsupported algorithms inside the file
        raise invalid("archivo", "El archivo PFX/P12 usa un cifrado que no se puede leer.") from None
    if certificate is None or key is None:
        raise invalid("archivo", "El archivo PFX/P12 no contiene a la vez el certificado y su clave privada.")
    return _rsa_key(key), certificate


def load_pem(data: bytes, password: str | bytes | None = None,
             key_data: bytes | None = None) -> tuple[rsa.RSAPrivateKey, x509.Certificate]:
    """A PEM certificate and its key, in one file or two (the key may be encrypted with `password`)."""
    secret = password.encode("utf-8") if isinstance(password, str) else password
    try:
        certificate = x509.load_pem_x509_certificate(data)
    except ValueError:
        raise invalid("archivo", "El archivo PEM no contiene un certificado legible.") from None
    key_source = key_data if key_data is not None else data
    if b"PRIVATE KEY-----" not in key_source:
        raise invalid("clave", "No se encontró la clave privada (bloque «PRIVATE KEY») del certificado PEM.")
    try:
        key = serialization.load_pem_private_key(key_source, secret or None)
    except TypeError:
        raise invalid("password", "La clave privada está cifrada: indique su contraseña.") from None
    except ValueError:
        raise invalid("password", "La contraseña de la clave privada no es correcta o la clave está dañada.") from None
    return _rsa_key(key), certificate


def load_certificate_file(data: bytes, password: str | bytes | None = None,
                          key_data: bytes | None = None) -> tuple[rsa.RSAPrivateKey, x509.Certificate]:
    """PEM when it looks like text with a PEM header, otherwise PFX/P12."""
    if b"-----BEGIN" in data[:4096]:
        return load_pem(data, password, key_data)
    return load_pfx(data, password)


def _rsa_key(key: Any) -> rsa.RSAPrivateKey:
    if not isinstance(key, rsa.RSAPrivateKey):
        raise invalid("archivo", "La clave del certificado no es RSA: SUNAT solo acepta firmas RSA.")
    return key


def make_test_certificate(ruc: str, name: str = TEST_CERTIFICATE_NAME,
                          days: int = TEST_CERTIFICATE_DAYS) -> tuple[rsa.RSAPrivateKey, x509.Certificate]:
    """A self-signed RSA-2048 certificate carrying the RUC as SUNAT's CAs do (serialNumber «RUC…» and OU)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([
        x509.NameAttribute(x509_oid.NameOID.COUNTRY_NAME, "PE"),
        x509.NameAttribute(x509_oid.NameOID.ORGANIZATION_NAME, name[:64] or TEST_CERTIFICATE_NAME),
        x509.NameAttribute(x509_oid.NameOID.ORGANIZATIONAL_UNIT_NAME, f"RUC {ruc}"),
        x509.NameAttribute(x509_oid.NameOID.COMMON_NAME, f"{TEST_CERTIFICATE_NAME} {ruc}"),
        x509.NameAttribute(x509_oid.NameOID.SERIAL_NUMBER, f"RUC{ruc}"),
    ])
    now = _now()
    certificate = (
        x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=True, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, certificate


# ------------------------------------------------------------------ the store

def _secret_name(certificate_id: str) -> str:
    return f"certificate-key:{certificate_id}"


class CertificateStore:
    """Import, list, choose and delete certificates; hand out loaded keys for signing."""

    def __init__(self, db: Database, repository: CertificateRepository, secrets: SecretStore) -> None:
        self._db = db
        self._repository = repository
        self._secrets = secrets
        self._loaded: dict[str, tuple[CertificateInfo, rsa.RSAPrivateKey, x509.Certificate]] = {}
        self._lock = threading.Lock()
        # Each issuer's default, read by every «Emitir»: kept until a certificate is added, deleted or chosen (here,
        # or by any other connection: ReadCache)
        self._defaults_read = ReadCache(db)

    # -------------------------------------------------------------- adding

    def import_file(self, data: bytes, password: str | bytes | None = None, *,
                    key_data: bytes | None = None) -> CertificateInfo:
        """Import a PFX/P12 or PEM certificate with its key. Nothing is stored when anything is wrong."""
        key, certificate = load_certificate_file(data, password, key_data)
        return self.add(key, certificate)

    def create_test_certificate(self, ruc: str, name: str = TEST_CERTIFICATE_NAME) -> CertificateInfo:
        clean = check_ruc(ruc, "ruc")
        key, certificate = make_test_certificate(clean, name)
        return self.add(key, certificate, is_test=True)

    def add(self, key: rsa.RSAPrivateKey, certificate: x509.Certificate, *, is_test: bool = False) -> CertificateInfo:
        info = describe(certificate, is_test=is_test)
        self._check_importable(key, certificate, info)
        existing = self.find(info.certificado_id)
        if existing is not None:
            return existing  # the same certificate again: keep the one stored
        # The key goes in first: if that fails (no passphrase, no keyring) no metadata is left behind.
        der_key = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        self._secrets.put(_secret_name(info.certificado_id), der_key)
        try:
            with self._db.transaction():
                self._repository.add({
                    "id": info.certificado_id, "subject": info.sujeto, "ruc": info.ruc, "issuer": info.emisor,
                    "serial": info.serie, "not_before": info.valido_desde.isoformat(),
                    "not_after": info.valido_hasta.isoformat(), "fingerprint_sha256": info.huella_sha256,
                    "certificate_pem": certificate.public_bytes(serialization.Encoding.PEM).decode("ascii"),
                    "is_test": int(is_test)})
                # The first certificate of a RUC becomes its default.
                self._repository.propose_default(info.ruc, info.certificado_id)
        except BaseException:
            self._secrets.delete(_secret_name(info.certificado_id))
            raise
        finally:
            self._defaults_read.clear()
        log.info("certificate %s imported for RUC %s (expires %s)", info.certificado_id, info.ruc,
                 info.valido_hasta.date())
        return self.get(info.certificado_id)

    @staticmethod
    def _check_importable(key: rsa.RSAPrivateKey, certificate: x509.Certificate, info: CertificateInfo) -> None:
        public = certificate.public_key()
        if not isinstance(public, rsa.RSAPublicKey) or public.public_numbers() != key.public_key().public_numbers():
            raise invalid("clave", "La clave privada no corresponde al certificado.")
        if info.vencido():
            raise invalid("archivo", f"El certificado venció el {info.valido_hasta.date().isoformat()}: "
                                     "no se puede usar para firmar. Renuévelo con su entidad certificadora.")
        if _now() < info.valido_desde:
            raise invalid("archivo", f"El certificado aún no es válido (desde {info.valido_desde.date().isoformat()}).")
        if not info.ruc:
            raise invalid("archivo", "No se encontró un RUC en el sujeto del certificado "
                                     f"({info.sujeto}): no se puede asociar a una empresa emisora.")

    # -------------------------------------------------------------- reading

    def _defaults(self) -> set[str]:
        return self._repository.default_ids()

    @staticmethod
    def _from_row(row: dict, defaults: set[str]) -> CertificateInfo:
        return CertificateInfo(
            certificado_id=row["id"], sujeto=row["subject"], ruc=row["ruc"], emisor=row["issuer"],
            serie=row["serial"], valido_desde=dt.datetime.fromisoformat(row["not_before"]),
            valido_hasta=dt.datetime.fromisoformat(row["not_after"]), huella_sha256=row["fingerprint_sha256"],
            es_prueba=bool(row["is_test"]), predeterminado=row["id"] in defaults)

    def find(self, certificate_id: str) -> CertificateInfo | None:
        row = self._repository.find(certificate_id.strip())
        return self._from_row(row, self._defaults()) if row else None

    def get(self, certificate_id: str, field: str = "certificado_id") -> CertificateInfo:
        info = self.find(certificate_id or "")
        if info is None:
            raise not_found(field, f"No existe el certificado «{certificate_id}» (campo «{field}»). "
                                   "Vea `yupana cert list`.")
        return info

    def all(self, ruc: str | None = None) -> list[CertificateInfo]:
        defaults = self._defaults()
        return [self._from_row(row, defaults) for row in self._repository.all(ruc or None)]

    def default_for(self, ruc: str) -> CertificateInfo | None:
        return self._defaults_read.get(ruc, lambda: self._read_default(ruc))

    def _read_default(self, ruc: str) -> CertificateInfo | None:
        certificate_id = self._repository.default_of(ruc)
        return self.find(certificate_id) if certificate_id is not None else None

    # -------------------------------------------------------------- changing

    def set_default(self, ruc: str, certificate_id: str) -> CertificateInfo:
        info = self.get(certificate_id)
        clean = check_ruc(ruc, "ruc")
        if info.ruc != clean:
            raise invalid("certificado_id", f"El certificado «{certificate_id}» es del RUC {info.ruc}, "
                                            f"no del RUC {clean}.")
        try:
            self._repository.set_default(clean, info.certificado_id)
        finally:
            self._defaults_read.clear()
        return self.get(certificate_id)

    def delete(self, certificate_id: str) -> None:
        info = self.get(certificate_id)
        with self._db.transaction():
            self._repository.delete(info.certificado_id)
            # Another certificate of the same RUC, if any (the one that expires last), becomes the default.
            successor = self._repository.latest_of(info.ruc)
            if successor is not None:
                self._repository.propose_default(info.ruc, successor)
        self._defaults_read.clear()
        self._secrets.delete(_secret_name(info.certificado_id))
        with self._lock:
            self._loaded.pop(info.certificado_id, None)
        log.info("certificate %s deleted", info.certificado_id)

    # -------------------------------------------------------------- signing material

    def signing_material(self, certificate_id: str) -> tuple[rsa.RSAPrivateKey, x509.Certificate]:
        """The loaded key and certificate; read and decrypted once, then served from memory."""
        _info, key, certificate = self.for_signing(certificate_id)
        return key, certificate

    def for_signing(self, certificate_id: str) -> tuple[CertificateInfo, rsa.RSAPrivateKey, x509.Certificate]:
        """What signing needs, from memory after the first call (a certificate never changes once stored)."""
        with self._lock:
            cached = self._loaded.get(certificate_id)
        if cached is not None:
            return cached
        info = self.get(certificate_id)
        pem = self._repository.certificate_pem(info.certificado_id)
        der_key = self._secrets.get(_secret_name(info.certificado_id))
        if pem is None or der_key is None:
            raise conflict("certificado_id", f"La clave privada del certificado «{certificate_id}» no está "
                                             "guardada: vuelva a importar el certificado.")
        key = _rsa_key(serialization.load_der_private_key(der_key, None))
        cached = (info, key, x509.load_pem_x509_certificate(pem.encode("ascii")))
        with self._lock:
            self._loaded[certificate_id] = cached
        return cached
