"""TEMPORARY stand-in for app.core.signing's sign_xml/verify_xml until the signing work lands."""

from __future__ import annotations

from types import SimpleNamespace

from lxml import etree
from signxml import DigestAlgorithm, SignatureConfiguration, SignatureMethod, XMLSigner, XMLVerifier

DS = "http://www.w3.org/2000/09/xmldsig#"
EXT = "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2"
C14N = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"


def sign_xml(xml, private_key, certificate, *, algorithm="rsa-sha1", signature_id=None):
    root = etree.fromstring(xml)
    content = root.find(f".//{{{EXT}}}ExtensionContent")
    etree.SubElement(content, f"{{{DS}}}Signature", Id="placeholder")
    signer = XMLSigner(signature_algorithm="rsa-sha256", digest_algorithm="sha256", c14n_algorithm=C14N)
    signed = signer.sign(root, key=private_key, cert=[certificate], always_add_key_value=False)
    if signature_id:
        signed.find(f".//{{{DS}}}Signature").set("Id", signature_id)
    digest = signed.findtext(f".//{{{DS}}}DigestValue")
    return SimpleNamespace(xml=etree.tostring(signed, xml_declaration=True, encoding="UTF-8"), digest_value=digest,
                           signature_value=signed.findtext(f".//{{{DS}}}SignatureValue"))


def verify_xml(xml):
    import base64

    from cryptography import x509

    try:
        root = etree.fromstring(xml)
        cert_text = root.findtext(f".//{{{DS}}}X509Certificate")
        cert = x509.load_der_x509_certificate(base64.b64decode(cert_text))
        config = SignatureConfiguration(signature_methods=frozenset({SignatureMethod.RSA_SHA256}),
                                        digest_algorithms=frozenset({DigestAlgorithm.SHA256}))
        XMLVerifier().verify(root, x509_cert=cert, expect_config=config)
        return SimpleNamespace(valid=True, reason="", digest_value=root.findtext(f".//{{{DS}}}DigestValue"),
                               certificate=cert)
    except Exception as exc:  # noqa: BLE001
        return SimpleNamespace(valid=False, reason=str(exc), digest_value=None, certificate=None)
