"""XML signature: our signatures verify with xmlsec1 and SUNAT's checker; tampering is caught by both."""

from __future__ import annotations

import base64
import datetime as dt
import re
import shutil

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from lxml import etree

from app.core.errors import YupanaError
from app.core.invoicing import xmldsig
from tests.helpers import shared
from tests.helpers.oracles import load_sunat_check, xmlsec_verify
from tests.helpers.shared import SHARED

SAMPLE = SHARED / "sunat" / "samples" / "vouchers" / "20605446788-01-F002-00000031.xml"
CDR_SAMPLE = SHARED / "sunat" / "samples" / "cdr" / "R-20600995805-01-F001-1.xml"
SAMPLE_RUC = "20605446788"


def make_key_and_certificate(ruc: str, days: int = 730):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "PRUEBA"),
                      x509.NameAttribute(NameOID.SERIAL_NUMBER, f"RUC{ruc}")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=days)).sign(key, hashes.SHA256()))
    return key, cert


@pytest.fixture(scope="module")
def key_and_cert():
    return make_key_and_certificate(SAMPLE_RUC)


def unsigned_sample() -> bytes:
    """SUNAT's real UBL 2.1 sample with its (broken) signature taken out: an empty ExtensionContent."""
    shared.require()
    tree = etree.parse(str(SAMPLE))
    for sig in tree.getroot().iter(f"{{{xmldsig.DS}}}Signature"):
        parent = sig.getparent()
        parent.remove(sig)
        parent.text = None
    return etree.tostring(tree, xml_declaration=True, encoding="UTF-8")


@pytest.fixture(scope="session")
def sunat_check():
    return load_sunat_check()


needs_xmlsec = pytest.mark.skipif(shutil.which("xmlsec1") is None, reason="xmlsec1 is not installed")


# ------------------------------------------------------------------ the pure functions

@needs_xmlsec
@pytest.mark.parametrize("algorithm", ["rsa-sha1", "rsa-sha256"])
def test_signed_sample_verifies_with_xmlsec1_and_our_verifier(tmp_path, key_and_cert, algorithm):
    key, cert = key_and_cert
    signed = xmldsig.sign_xml(unsigned_sample(), key, cert, algorithm=algorithm)
    path = tmp_path / f"{SAMPLE_RUC}-01-F002-00000031.xml"
    path.write_bytes(signed.xml)
    run = xmlsec_verify(path, cert)
    assert run.returncode == 0, run.stderr
    result = xmldsig.verify_xml(signed.xml)
    assert result.valid, result.reason
    assert result.digest_value == signed.digest_value
    assert result.certificate == cert


@needs_xmlsec
def test_signed_sample_passes_sunat_check_with_signature(tmp_path, key_and_cert, sunat_check):
    key, cert = key_and_cert
    signed = xmldsig.sign_xml(unsigned_sample(), key, cert)
    path = tmp_path / f"{SAMPLE_RUC}-01-F002-00000031.xml"
    path.write_bytes(signed.xml)
    result = sunat_check.check(str(path))
    assert result["signature"]["ok"] and "skipped" not in result["signature"], result["signature"]
    assert result["xsd"]["ok"], result["xsd"]
    assert result["ok"], result


def test_profile_is_sunats(key_and_cert):
    key, cert = key_and_cert
    signed = xmldsig.sign_xml(unsigned_sample(), key, cert)
    root = etree.fromstring(signed.xml)
    content = root.find(f"{{{xmldsig.EXT}}}UBLExtensions/{{{xmldsig.EXT}}}UBLExtension/"
                        f"{{{xmldsig.EXT}}}ExtensionContent")
    sig = content[0]
    assert sig.tag == f"{{{xmldsig.DS}}}Signature"
    assert sig.get("Id") == "NEOTECPERU-SIGN"  # the sample's cac:Signature points at #NEOTECPERU-SIGN
    ds = {"ds": xmldsig.DS}
    assert sig.xpath("ds:SignedInfo/ds:CanonicalizationMethod/@Algorithm", namespaces=ds) == [xmldsig.C14N_10]
    assert sig.xpath("ds:SignedInfo/ds:SignatureMethod/@Algorithm", namespaces=ds) == [
        "http://www.w3.org/2000/09/xmldsig#rsa-sha1"]
    assert sig.xpath("ds:SignedInfo/ds:Reference/@URI", namespaces=ds) == [""]
    assert sig.xpath("ds:SignedInfo/ds:Reference/ds:Transforms/ds:Transform/@Algorithm", namespaces=ds) == [
        xmldsig.ENVELOPED]
    embedded = sig.findtext(f"{{{xmldsig.DS}}}KeyInfo/{{{xmldsig.DS}}}X509Data/{{{xmldsig.DS}}}X509Certificate")
    assert base64.b64decode(embedded) == cert.public_bytes(serialization.Encoding.DER)
    assert sig.findtext(f".//{{{xmldsig.DS}}}DigestValue") == signed.digest_value
    assert sig.findtext(f"{{{xmldsig.DS}}}SignatureValue") == signed.signature_value


def test_signed_info_as_built_equals_lxml_c14n(key_and_cert, monkeypatch):
    """The SignedInfo bytes we hash are exactly the canonical form of the element once inserted."""
    key, cert = key_and_cert
    hashed: list[bytes] = []
    real_sign = key.sign

    class SpyKey:
        def sign(self, data, *args):
            hashed.append(data)
            return real_sign(data, *args)

    signed = xmldsig.sign_xml(unsigned_sample(), SpyKey(), cert)
    inserted = etree.fromstring(signed.xml).find(f".//{{{xmldsig.DS}}}SignedInfo")
    assert hashed == [etree.tostring(inserted, method="c14n", with_comments=False)]
    assert hashed == [xmldsig.canonical_subtree(inserted)]
    assert hashed[0].startswith(b'<ds:SignedInfo xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"')


@needs_xmlsec
def test_inherited_xml_lang_and_undeclared_ds_prefix(tmp_path, key_and_cert):
    """C14N 1.0 puts xml:* attributes in scope on the SignedInfo apex (xmlsec1 does; lxml's subtree c14n does not)."""
    key, cert = key_and_cert
    xml = unsigned_sample().replace(b' xmlns:ds="http://www.w3.org/2000/09/xmldsig#"', b' xml:lang="es"')
    signed = xmldsig.sign_xml(xml, key, cert)
    inserted = etree.fromstring(signed.xml).find(f".//{{{xmldsig.DS}}}SignedInfo")
    assert b'xml:lang="es">' in xmldsig.canonical_subtree(inserted).split(b"<ds:Canon")[0]
    assert xmldsig.verify_xml(signed.xml).valid
    path = tmp_path / "lang.xml"
    path.write_bytes(signed.xml)
    run = xmlsec_verify(path, cert)
    assert run.returncode == 0, run.stderr


@pytest.mark.sunat_files
def test_signs_an_application_response(key_and_cert):
    key, cert = key_and_cert
    tree = etree.parse(str(CDR_SAMPLE))
    for sig in list(tree.getroot().iter(f"{{{xmldsig.DS}}}Signature")):
        sig.getparent().remove(sig)
    signed = xmldsig.sign_xml(etree.tostring(tree), key, cert, signature_id="SignSUNAT")
    assert etree.fromstring(signed.xml).find(f".//{{{xmldsig.DS}}}Signature").get("Id") == "SignSUNAT"
    assert xmldsig.verify_xml(signed.xml).valid


@pytest.mark.parametrize("where", [b"<cbc:ID>F002-00000031</cbc:ID>", b"IfCzDuoe", b"SignatureValue>"])
def test_one_character_changed_fails_both_verifiers(tmp_path, key_and_cert, where):
    key, cert = key_and_cert
    signed = xmldsig.sign_xml(unsigned_sample(), key, cert)
    xml = signed.xml
    if where == b"IfCzDuoe":  # the digest itself
        position = xml.index(b"<ds:DigestValue>") + len(b"<ds:DigestValue>")
    elif where == b"SignatureValue>":
        position = xml.index(b"<ds:SignatureValue>") + len(b"<ds:SignatureValue>") + 5
    else:
        position = xml.index(where) + len(b"<cbc:ID>F002-0000003")
    replacement = b"A" if xml[position:position + 1] != b"A" else b"B"
    tampered = xml[:position] + replacement + xml[position + 1:]
    assert len(tampered) == len(xml) and tampered != xml
    result = xmldsig.verify_xml(tampered)
    assert not result.valid
    assert result.reason
    if shutil.which("xmlsec1"):
        path = tmp_path / "tampered.xml"
        path.write_bytes(tampered)
        assert xmlsec_verify(path, cert).returncode != 0


def test_text_change_in_an_amount_is_reported_as_modified(key_and_cert):
    key, cert = key_and_cert
    signed = xmldsig.sign_xml(unsigned_sample(), key, cert)
    tampered = re.sub(rb"(<cbc:PayableAmount currencyID=\"PEN\">)1", rb"\g<1>9", signed.xml, count=1)
    assert tampered != signed.xml
    result = xmldsig.verify_xml(tampered)
    assert not result.valid and "modificado" in result.reason


@pytest.mark.sunat_files
def test_already_signed_and_no_place_for_a_signature_are_400(key_and_cert):
    key, cert = key_and_cert
    with pytest.raises(YupanaError) as signed_twice:
        xmldsig.sign_xml(SAMPLE.read_bytes(), key, cert)
    assert signed_twice.value.http_status == 400 and "ya está firmado" in signed_twice.value.message
    assert signed_twice.value.details[0].field == "xml"
    with pytest.raises(YupanaError) as nowhere:
        xmldsig.sign_xml(b"<Invoice xmlns='urn:oasis:names:specification:ubl:schema:xsd:Invoice-2'/>", key, cert)
    assert nowhere.value.http_status == 400 and "ExtensionContent" in nowhere.value.message
    with pytest.raises(YupanaError) as broken:
        xmldsig.sign_xml(b"<Invoice>", key, cert)
    assert broken.value.http_status == 400 and "XML" in broken.value.message


def test_doctype_and_entities_are_refused(key_and_cert):
    key, cert = key_and_cert
    evil = (b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            b'<r xmlns:ext="' + xmldsig.EXT.encode() + b'"><ext:UBLExtensions><ext:UBLExtension>'
            b'<ext:ExtensionContent/></ext:UBLExtension></ext:UBLExtensions><a>&x;</a></r>')
    with pytest.raises(YupanaError) as refused:
        xmldsig.sign_xml(evil, key, cert)
    assert refused.value.http_status == 400 and "DOCTYPE" in refused.value.message
    assert not xmldsig.verify_xml(evil).valid


@pytest.mark.sunat_files
def test_unsigned_and_garbage_do_not_verify():
    assert xmldsig.verify_xml(unsigned_sample()).reason == "el documento no está firmado"
    assert not xmldsig.verify_xml(b"not xml").valid
    # SUNAT's sample was altered after signing (shared/sunat/README.md): our verifier must say so too.
    original = xmldsig.verify_xml(SAMPLE.read_bytes())
    assert not original.valid and original.certificate is not None


@pytest.mark.sunat_files
def test_real_sunat_peer_signature_verifies():
    """The UBL 2.0 sample's signature verifies with xmlsec1 (README): it must verify with ours."""
    result = xmldsig.verify_xml((SHARED / "sunat" / "samples" / "vouchers" / "20600055519-01-F001-00000001.xml")
                                .read_bytes())
    assert result.valid, result.reason


def test_signed_text_is_the_source_plus_the_signature(key_and_cert):
    key, cert = key_and_cert
    source = unsigned_sample()
    signed = xmldsig.sign_xml(source, key, cert)
    without = re.sub(rb"<ds:Signature .*</ds:Signature>", b"", signed.xml, flags=re.S)
    assert without == source.replace(b"<ext:ExtensionContent/>", b"<ext:ExtensionContent></ext:ExtensionContent>")


def test_text_in_another_declared_encoding_is_serialised_and_verifies(key_and_cert):
    key, cert = key_and_cert
    source = unsigned_sample().decode("utf-8").replace("encoding='UTF-8'", "encoding='ISO-8859-1'")
    assert "ISO-8859-1" in source
    signed = xmldsig.sign_xml(source, key, cert)
    assert signed.xml.startswith(b"<?xml version='1.0' encoding='UTF-8'?>")
    assert xmldsig.verify_xml(signed.xml).valid
