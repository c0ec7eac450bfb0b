"""The certificate store: imports (modern and legacy PFX, PEM), refusals, keys never in plain text, defaults."""

from __future__ import annotations

import datetime as dt
from unittest import mock

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import NameOID

from app.core.errors import YupanaError
from app.core.invoicing import certificates
from app.core.storage.ports.certificates import DuplicateCertificate
from app.core.storage.sqlite.certificates import SqliteCertificateRepository
from tests.helpers import certificates as files
from tests.helpers.base import ISSUER_RUC

OTHER_RUC = "20605446788"


@pytest.fixture(scope="module")
def material():
    """One key and certificate for the issuer, made once: RSA key generation is the slow part."""
    return files.key_and_certificate(files.subject_with_ruc(ISSUER_RUC))


def stored_count(engine) -> int:
    return engine._storage.query_one("SELECT COUNT(*) AS n FROM certificates")["n"]


def secret_count(engine) -> int:
    return engine._storage.query_one("SELECT COUNT(*) AS n FROM secrets")["n"]


@pytest.mark.parametrize("kind", ["modern", "triple_des", "rc2_40"])
def test_import_pfx_of_every_encryption(engine, material, kind, tmp_path):
    key, cert = material
    data = {"modern": lambda: files.pfx_modern(key, cert), "triple_des": lambda: files.pfx_triple_des(key, cert),
            "rc2_40": lambda: files.pfx_rc2_40(key, cert, tmp_path)}[kind]()
    if data is None:
        pytest.skip("openssl is not installed")
    info = engine.invoicing.import_certificate(data, files.PASSWORD)
    assert info.ruc == ISSUER_RUC
    assert info.huella_sha256 == cert.fingerprint(certificates.hashes.SHA256()).hex()
    assert info.serie == format(cert.serial_number, "x")
    assert info.valido_hasta == cert.not_valid_after_utc
    assert "RUC" + ISSUER_RUC in info.sujeto and info.emisor == info.sujeto
    assert info.predeterminado  # first certificate of the RUC
    loaded_key, loaded_cert = engine._certificates.signing_material(info.certificado_id)
    assert loaded_cert == cert
    assert loaded_key.private_numbers() == key.private_numbers()


def test_import_pem_in_one_or_two_files_with_encrypted_key(engine, material):
    key, cert = material
    cert_pem, key_pem = files.pem_pair(key, cert, password="secreto")
    info = engine.invoicing.import_certificate(cert_pem, "secreto", key_data=key_pem)
    assert engine.invoicing.import_certificate(cert_pem + key_pem, "secreto").certificado_id == info.certificado_id
    assert stored_count(engine) == 1  # the same certificate twice is stored once
    with pytest.raises(YupanaError) as no_password:
        engine._certificates.import_file(cert_pem, None, key_data=key_pem)
    assert "contraseña" in no_password.value.message


def test_wrong_password_corrupt_and_expired_are_refused_and_nothing_stored(engine, material):
    key, cert = material
    good = files.pfx_modern(key, cert)
    cases = {
        "wrong password": (good, "otra clave", "password", "contraseña del certificado no es correcta"),
        "truncated": (good[: len(good) // 2], files.PASSWORD, "archivo", "dañado"),
        "altered": (good[:200] + bytes(50) + good[250:], files.PASSWORD, None, "no es correcta (o el archivo fue"),
        "not a pfx": (b"hola, no soy un certificado", files.PASSWORD, "archivo", "no es un certificado PFX/P12"),
    }
    expired_key, expired_cert = files.key_and_certificate(files.subject_with_ruc(ISSUER_RUC), not_before_days=-400,
                                                          not_after_days=-2, key=key)
    cases["expired"] = (files.pfx_modern(expired_key, expired_cert), files.PASSWORD, "archivo", "venció el")
    no_ruc_key, no_ruc_cert = files.key_and_certificate([(NameOID.COMMON_NAME, "SIN RUC")], key=key)
    cases["no RUC"] = (files.pfx_modern(no_ruc_key, no_ruc_cert), files.PASSWORD, "archivo", "No se encontró un RUC")
    for name, (data, password, field, text) in cases.items():
        with pytest.raises(YupanaError) as refused:
            engine.invoicing.import_certificate(data, password)
        assert refused.value.http_status == 400, name
        assert text in refused.value.message, (name, refused.value.message)
        if field:
            assert refused.value.details[0].field == field, name
    assert stored_count(engine) == 0 and secret_count(engine) == 0


def test_key_that_does_not_match_the_certificate_is_refused(engine, material):
    _key, cert = material
    other_key, _other_cert = files.key_and_certificate(files.subject_with_ruc(ISSUER_RUC))
    cert_pem, key_pem = files.pem_pair(other_key, cert)
    with pytest.raises(YupanaError) as refused:
        engine.invoicing.import_certificate(cert_pem, key_data=key_pem)
    assert "no corresponde" in refused.value.message
    assert stored_count(engine) == 0


def test_private_key_never_in_the_database_file_in_plain_text(engine, material, home):
    key, cert = material
    info = engine.invoicing.import_certificate(files.pfx_modern(key, cert), files.PASSWORD)
    test_info = engine.invoicing.create_test_certificate(OTHER_RUC)
    keys = [key, engine._certificates.signing_material(test_info.certificado_id)[0]]
    assert engine._certificates.signing_material(info.certificado_id)[0].private_numbers() == key.private_numbers()
    engine.close()
    raw = b"".join(path.read_bytes() for path in home.glob("yupana.db*"))
    assert b"PRIVATE KEY" not in raw
    for each in keys:
        for encoding, fmt in [(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8),
                              (serialization.Encoding.DER, serialization.PrivateFormat.TraditionalOpenSSL),
                              (serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8)]:
            assert each.private_bytes(encoding, fmt, serialization.NoEncryption()) not in raw
        # Not even the private exponent's bytes.
        d = each.private_numbers().d
        assert d.to_bytes((d.bit_length() + 7) // 8, "big") not in raw
    # The certificate itself (public) is there: the check above would have found keys had they been stored.
    assert cert.public_bytes(serialization.Encoding.PEM) in raw


def test_keys_survive_reopening_and_need_the_same_passphrase(home, material, monkeypatch):
    from app.core.engine import Engine

    key, cert = material
    with Engine(home) as first:
        certificado_id = first.invoicing.import_certificate(files.pfx_modern(key, cert), files.PASSWORD).certificado_id
    with Engine(home) as second:
        assert second._certificates.signing_material(certificado_id)[0].private_numbers() == key.private_numbers()
    monkeypatch.setenv("YUPANA_PASSPHRASE", "otra frase")
    with Engine(home) as third, pytest.raises(YupanaError) as wrong:
        third._certificates.signing_material(certificado_id)
    assert wrong.value.http_status == 401


def test_signing_material_is_loaded_once(engine, material):
    key, cert = material
    info = engine.invoicing.import_certificate(files.pfx_modern(key, cert), files.PASSWORD)
    with mock.patch.object(certificates.serialization, "load_der_private_key",
                           wraps=certificates.serialization.load_der_private_key) as loads:
        first = engine._certificates.signing_material(info.certificado_id)
        for _ in range(5):
            assert engine._certificates.signing_material(info.certificado_id)[0] is first[0]
    assert loads.call_count == 1


def test_test_certificate_defaults_listing_and_deletion(engine, company):
    first = engine.invoicing.create_test_certificate(ISSUER_RUC)
    assert first.es_prueba and first.ruc == ISSUER_RUC and first.predeterminado
    assert "RUC" + ISSUER_RUC in first.sujeto and "COMERCIAL YUPANA" in first.sujeto
    assert 725 <= first.dias_restantes() <= 730
    second = engine.invoicing.create_test_certificate(ISSUER_RUC)
    assert not engine.invoicing.certificate(second.certificado_id).predeterminado
    assert engine.invoicing.set_default_certificate(ISSUER_RUC, second.certificado_id).predeterminado
    assert engine.invoicing.default_certificate(ISSUER_RUC).certificado_id == second.certificado_id
    with pytest.raises(YupanaError) as wrong_ruc:
        engine.invoicing.set_default_certificate(OTHER_RUC, first.certificado_id)
    assert wrong_ruc.value.http_status == 400
    assert {c.certificado_id for c in engine.invoicing.certificates(ISSUER_RUC)} == {first.certificado_id,
                                                                                     second.certificado_id}
    engine.invoicing.delete_certificate(second.certificado_id)
    assert engine.invoicing.default_certificate(ISSUER_RUC).certificado_id == first.certificado_id  # falls back
    assert engine._secrets.get(f"certificate-key:{second.certificado_id}") is None
    with pytest.raises(YupanaError) as gone:
        engine._certificates.signing_material(second.certificado_id)
    assert gone.value.http_status == 404 and "certificado_id" in gone.value.message
    with pytest.raises(YupanaError) as bad_ruc:
        engine.invoicing.create_test_certificate("20100066604")
    assert bad_ruc.value.http_status == 400


def test_the_certificate_repository_keeps_one_default_per_ruc(engine):
    repo = SqliteCertificateRepository(engine._storage)

    def row(certificate_id: str, not_after: str, ruc: str = ISSUER_RUC) -> dict:
        return {"id": certificate_id, "subject": "CN=x", "ruc": ruc, "issuer": "CN=x", "serial": "1",
                "not_before": "2026-01-01T00:00:00+00:00", "not_after": not_after,
                "fingerprint_sha256": certificate_id, "certificate_pem": f"PEM {certificate_id}", "is_test": 1}

    for certificate_id, not_after in (("a", "2027-01-01"), ("b", "2028-01-01"), ("c", "2027-06-01")):
        repo.add(row(certificate_id, not_after + "T00:00:00+00:00"))
    repo.add(row("z", "2029-01-01T00:00:00+00:00", OTHER_RUC))
    with pytest.raises(DuplicateCertificate):
        repo.add(row("a", "2030-01-01T00:00:00+00:00"))
    repo.propose_default(ISSUER_RUC, "a")
    repo.propose_default(ISSUER_RUC, "b")  # the RUC has one already: kept
    assert repo.default_of(ISSUER_RUC) == "a" and repo.default_of(OTHER_RUC) is None and repo.default_ids() == {"a"}
    assert [r["id"] for r in repo.all(ISSUER_RUC)] == ["b", "c", "a"] and len(repo.all()) == 4
    assert repo.latest_of(ISSUER_RUC) == "b" and repo.latest_of("20601030013") is None
    repo.set_default(ISSUER_RUC, "c")
    assert repo.default_of(ISSUER_RUC) == "c"
    repo.delete("c")
    assert repo.default_of(ISSUER_RUC) is None and repo.find("c") is None and repo.certificate_pem("c") is None
    assert repo.find("a")["not_after"] == "2027-01-01T00:00:00+00:00" and repo.certificate_pem("b") == "PEM b"


def test_deleting_the_default_certificate_makes_the_one_that_expires_last_the_default(engine, material):
    key, cert = material
    shorter_key, shorter = files.key_and_certificate(files.subject_with_ruc(ISSUER_RUC), not_after_days=100, key=key)
    first = engine.invoicing.import_certificate(files.pfx_modern(shorter_key, shorter), files.PASSWORD)
    longer = engine.invoicing.import_certificate(files.pfx_modern(key, cert), files.PASSWORD)
    third = engine.invoicing.create_test_certificate(ISSUER_RUC)
    assert first.predeterminado and not longer.predeterminado and not third.predeterminado
    assert first.valido_hasta < longer.valido_hasta and third.valido_hasta > first.valido_hasta
    expected = max((longer, third), key=lambda c: c.valido_hasta)
    engine.invoicing.delete_certificate(first.certificado_id)
    assert engine.invoicing.default_certificate(ISSUER_RUC).certificado_id == expected.certificado_id


def test_expiry_warning_in_the_last_30_days(engine, material):
    key, cert = material
    info = engine.invoicing.import_certificate(files.pfx_modern(key, cert), files.PASSWORD)
    ends = info.valido_hasta
    assert not info.por_vencer(ends - dt.timedelta(days=31))
    assert info.por_vencer(ends - dt.timedelta(days=29))
    data = info.to_json(ends - dt.timedelta(days=10))
    assert data["por_vencer"] is True and data["dias_restantes"] == 10 and data["vencido"] is False
    assert info.to_json(ends + dt.timedelta(seconds=1))["vencido"] is True


@pytest.mark.parametrize("subject,expected", [
    ([(NameOID.SERIAL_NUMBER, "RUC20100066603")], "20100066603"),
    ([(NameOID.ORGANIZATIONAL_UNIT_NAME, "DNI 48004835 RUC 20210441213")], "20210441213"),
    ([(NameOID.SERIAL_NUMBER, "DNI:72630420"), (NameOID.ORGANIZATION_IDENTIFIER, "20605446788")], "20605446788"),
    ([(NameOID.ORGANIZATION_IDENTIFIER, "NTRPE-20605446788")], "20605446788"),
    ([(NameOID.COMMON_NAME, "EMPRESA 20100066604 SAC")], None),  # wrong check digit: not a RUC
])
def test_ruc_found_where_peruvian_cas_put_it(subject, expected):
    name = certificates.x509.Name([certificates.x509.NameAttribute(oid, value) for oid, value in subject])
    assert certificates.ruc_in_subject(name) == expected
