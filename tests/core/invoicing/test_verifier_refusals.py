"""The verifier's refusals of signatures outside SUNAT's profile, each with its Spanish reason.

Each document is signed for real and then changed in its SignedInfo and signed again with the same key, so the
signature value is right for what it states: only the profile check stands between it and «firma válida».
"""

from __future__ import annotations

import base64
import copy

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from lxml import etree

from app.core.invoicing import xmldsig
from app.sandbox.sunat_signer import self_signed
from tests.helpers.sunat_support import unsigned_sample

DS = xmldsig.DS
EXC_C14N = "http://www.w3.org/2001/10/xml-exc-c14n#"
C14N_WITH_COMMENTS = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments"
C14N_11 = "http://www.w3.org/2006/12/xml-c14n11"
RSA_MD5 = "http://www.w3.org/2001/04/xmldsig-more#rsa-md5"
RSA_SHA512 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512"
HMAC_SHA1 = "http://www.w3.org/2000/09/xmldsig#hmac-sha1"
DSA_SHA1 = "http://www.w3.org/2000/09/xmldsig#dsa-sha1"
XPATH = "http://www.w3.org/TR/1999/REC-xpath-19991116"
MD5 = "http://www.w3.org/2001/04/xmldsig-more#md5"
SHA512 = "http://www.w3.org/2001/04/xmlenc#sha512"

C14N_REASON = "el método de canonicalización no es C14N 1.0 inclusivo"
ALGORITHM_REASON = "el algoritmo de firma no es rsa-sha1 ni rsa-sha256"
URI_REASON = "la firma debe tener una sola referencia, con URI vacío (todo el documento)"
TRANSFORMS_REASON = "la referencia debe tener solo la transformación enveloped-signature"
DIGEST_REASON = "el algoritmo de resumen no es sha1 ni sha256"


@pytest.fixture(scope="module")
def credentials():
    return self_signed("EMPRESA DE PRUEBA")


@pytest.fixture(scope="module")
def signed(credentials) -> bytes:
    key, cert = credentials
    return xmldsig.sign_xml(unsigned_sample(), key, cert, algorithm="rsa-sha256").xml


def _q(name: str) -> str:
    return f"{{{DS}}}{name}"


def resigned(xml: bytes, key, change) -> bytes:
    """`xml` with its SignedInfo changed by `change(signed_info)` and signed again (SHA-256) with `key`."""
    root = etree.fromstring(xml)
    signature = xmldsig.find_signatures(root)[0]
    signed_info = signature.find(_q("SignedInfo"))
    change(signed_info)
    value = key.sign(xmldsig.canonical_subtree(signed_info), padding.PKCS1v15(), hashes.SHA256())
    signature.find(_q("SignatureValue")).text = base64.b64encode(value).decode()
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def _set(path: str, attribute: str, value: str | None):
    def change(signed_info):
        element = signed_info.find(path)
        if value is None:
            del element.attrib[attribute]
        else:
            element.set(attribute, value)
    return change


def _remove(path: str):
    def change(signed_info):
        element = signed_info.find(path)
        element.getparent().remove(element)
    return change


def _transforms(*algorithms: str):
    def change(signed_info):
        transforms = signed_info.find(f"{_q('Reference')}/{_q('Transforms')}")
        for old in list(transforms):
            transforms.remove(old)
        for algorithm in algorithms:
            etree.SubElement(transforms, _q("Transform"), Algorithm=algorithm)
    return change


def _second_reference(signed_info):
    signed_info.append(copy.deepcopy(signed_info.find(_q("Reference"))))


def test_the_unchanged_signature_and_a_resigned_identical_one_are_valid(signed, credentials):
    """The premise of every test below: re-signing without a change keeps the signature valid."""
    assert xmldsig.verify_xml(signed).valid
    again = resigned(signed, credentials[0], lambda signed_info: None)
    result = xmldsig.verify_xml(again)
    assert result.valid and result.reason == "firma válida"


def test_inclusive_c14n_followed_by_the_enveloped_transform_is_accepted(signed, credentials):
    accepted = resigned(signed, credentials[0], _transforms(xmldsig.ENVELOPED, xmldsig.C14N_10))
    assert xmldsig.verify_xml(accepted).valid


@pytest.mark.parametrize(("change", "reason"), [
    (_set(_q("CanonicalizationMethod"), "Algorithm", EXC_C14N), C14N_REASON),
    (_set(_q("CanonicalizationMethod"), "Algorithm", C14N_WITH_COMMENTS), C14N_REASON),
    (_set(_q("CanonicalizationMethod"), "Algorithm", C14N_11), C14N_REASON),
    (_set(_q("CanonicalizationMethod"), "Algorithm", "urn:desconocido"), C14N_REASON),
    (_set(_q("CanonicalizationMethod"), "Algorithm", None), C14N_REASON),
    (_remove(_q("CanonicalizationMethod")), C14N_REASON),
    (_set(_q("SignatureMethod"), "Algorithm", RSA_MD5), ALGORITHM_REASON),
    (_set(_q("SignatureMethod"), "Algorithm", HMAC_SHA1), ALGORITHM_REASON),
    (_set(_q("SignatureMethod"), "Algorithm", DSA_SHA1), ALGORITHM_REASON),
    (_set(_q("SignatureMethod"), "Algorithm", RSA_SHA512), ALGORITHM_REASON),
    (_set(_q("SignatureMethod"), "Algorithm", "urn:desconocido"), ALGORITHM_REASON),
    (_remove(_q("SignatureMethod")), ALGORITHM_REASON),
    (_set(_q("Reference"), "URI", "#SignatureSP"), URI_REASON),
    (_set(_q("Reference"), "URI", "#otro-elemento"), URI_REASON),
    (_set(_q("Reference"), "URI", "https://example.com/factura.xml"), URI_REASON),
    (_set(_q("Reference"), "URI", "file:///etc/passwd"), URI_REASON),
    (_set(_q("Reference"), "URI", None), URI_REASON),
    (_second_reference, URI_REASON),
    (_remove(_q("Reference")), URI_REASON),
    (_transforms(), TRANSFORMS_REASON),
    (_transforms(xmldsig.C14N_10), TRANSFORMS_REASON),
    (_transforms(xmldsig.ENVELOPED, XPATH), TRANSFORMS_REASON),
    (_transforms(xmldsig.ENVELOPED, EXC_C14N), TRANSFORMS_REASON),
    (_transforms(xmldsig.C14N_10, xmldsig.ENVELOPED), TRANSFORMS_REASON),
    (_transforms(xmldsig.ENVELOPED, xmldsig.ENVELOPED), TRANSFORMS_REASON),
    (_transforms(xmldsig.ENVELOPED, xmldsig.C14N_10, xmldsig.C14N_10), TRANSFORMS_REASON),
    (_set(f"{_q('Reference')}/{_q('DigestMethod')}", "Algorithm", MD5), DIGEST_REASON),
    (_set(f"{_q('Reference')}/{_q('DigestMethod')}", "Algorithm", SHA512), DIGEST_REASON),
    (_remove(f"{_q('Reference')}/{_q('DigestMethod')}"), DIGEST_REASON),
], ids=["exc-c14n", "c14n-comments", "c14n-1.1", "c14n-unknown", "c14n-no-algorithm", "c14n-missing",
        "rsa-md5", "hmac-sha1", "dsa-sha1", "rsa-sha512", "algorithm-unknown", "algorithm-missing",
        "uri-signature", "uri-other", "uri-external", "uri-file", "uri-missing", "two-references", "no-reference",
        "no-transforms", "only-c14n", "xpath", "exc-c14n-transform", "c14n-first", "enveloped-twice",
        "c14n-twice", "digest-md5", "digest-sha512", "digest-missing"])
def test_a_signature_outside_sunats_profile_is_refused(signed, credentials, change, reason):
    result = xmldsig.verify_xml(resigned(signed, credentials[0], change))
    assert not result.valid
    assert result.reason == reason


def test_two_signatures_are_refused(signed):
    root = etree.fromstring(signed)
    signature = xmldsig.find_signatures(root)[0]
    extension = signature.getparent().getparent()
    twin = copy.deepcopy(extension)
    extension.addnext(twin)
    result = xmldsig.verify_xml(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
    assert not result.valid and result.reason == "el documento tiene más de una firma"


def test_a_signature_without_signed_info_is_refused(signed):
    root = etree.fromstring(signed)
    signature = xmldsig.find_signatures(root)[0]
    signature.remove(signature.find(_q("SignedInfo")))
    result = xmldsig.verify_xml(etree.tostring(root))
    assert not result.valid and result.reason == "la firma no tiene ds:SignedInfo"


def test_refusals_come_before_the_digest_is_computed(signed, credentials):
    """A profile refusal is reported even when the document was also modified: the profile is checked first."""
    modified = resigned(signed, credentials[0], _set(_q("Reference"), "URI", "#x")).replace(b"F002", b"F003", 1)
    result = xmldsig.verify_xml(modified)
    assert not result.valid and result.reason == URI_REASON


def test_the_signature_with_the_document_changed_is_refused_as_modified(signed):
    result = xmldsig.verify_xml(signed.replace(b"F002-00000031", b"F002-00000032", 1))
    assert not result.valid
    assert result.reason == "el documento fue modificado después de firmarlo (el resumen no coincide)"
    assert result.digest_value is not None and result.certificate is not None
