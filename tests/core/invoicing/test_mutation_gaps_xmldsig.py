"""The pure signer (app.core.invoicing.xmldsig), exactly: found by `make mutation` (docs/testing.md).

The canonical fast path's preconditions, its hash of the signed text on both of its paths, the signature's Id,
the Id a voucher points at, and a refusal's verdict."""

from __future__ import annotations

import hashlib

import pytest
from cryptography.hazmat.primitives import serialization
from lxml import etree

from app.core.errors import YupanaError
from app.core.invoicing import ubl, xmldsig
from app.core.invoicing.namespaces import CAC, CBC, DS, EXT
from app.sandbox.sunat_signer import self_signed
from tests.helpers.oracles import xmlsec_verify
from tests.helpers.voucher_matrix import factura, item

KEY, CERT = self_signed("FIRMA DE PRUEBA")
ROOT_NAMESPACES = f'xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:ds="{DS}" xmlns:ext="{EXT}"'


def canonical(root_attributes: str = ROOT_NAMESPACES, body: str = "<cbc:ID>F001-1</cbc:ID>") -> str:
    """A minimal text with the canonical generator's shape: the declaration, the root, one empty ExtensionContent."""
    return (f"{ubl.XML_DECLARATION}<Invoice {root_attributes} xmlns:cbc=\"{CBC}\"><ext:UBLExtensions><ext:UBLExtension>"
            f"{ubl.EMPTY_EXTENSION_CONTENT}</ext:UBLExtension></ext:UBLExtensions>{body}</Invoice>")


@pytest.mark.parametrize(("text", "end"), [(b'<a b=">">x', 8), (b'<a b="1" c=">>">', 15), (b"<a>", 2)])
def test_start_tag_end_skips_quoted_markup(text, end):
    assert xmldsig._start_tag_end(text) == end


def test_start_tag_end_without_an_end():
    with pytest.raises(ValueError, match="^no start tag$"):
        xmldsig._start_tag_end(b'<a b=">"')


def test_the_default_algorithm_is_rsa_sha1():
    pending = xmldsig.prepare_canonical(canonical())
    assert pending.algorithm is xmldsig.ALGORITHMS["rsa-sha1"]


@pytest.mark.parametrize("attributes", [
    f'xmlns="urn:x" xmlns:ds="{DS}"',  # no ext
    f'xmlns="urn:x" xmlns:ext="{EXT}"',  # no ds
])
def test_both_namespaces_must_be_declared_on_the_root(attributes):
    with pytest.raises(ValueError, match="^not a canonical voucher written by app.core.invoicing.ubl$"):
        xmldsig.prepare_canonical(canonical(attributes))


def test_two_empty_slots_are_refused():
    with pytest.raises(ValueError, match="^not a canonical voucher written by app.core.invoicing.ubl$"):
        xmldsig.prepare_canonical(canonical(body=ubl.EMPTY_EXTENSION_CONTENT))


@pytest.mark.parametrize("attributes", [ROOT_NAMESPACES, ROOT_NAMESPACES + ' nota="año"'],
                         ids=["ascii", "accent-before-the-slot"])
def test_the_signed_text_hash_is_of_the_signed_text(attributes):
    signed = xmldsig.sign_canonical(canonical(attributes, body="<cbc:Note>Cañete</cbc:Note>"), KEY, CERT)
    assert signed.sha256 == hashlib.sha256(signed.xml.encode("utf-8")).hexdigest()


def test_the_signature_takes_the_id_asked_for():
    signed = xmldsig.sign_canonical(canonical(), KEY, CERT, signature_id="FirmaTienda")
    assert 'Id="FirmaTienda"' in signed.xml and f'Id="{ubl.SIGNATURE_ID}"' not in signed.xml


def signature_block(uri: str | None, ident: str | None) -> etree._Element:
    root = etree.Element("Invoice")
    signature = etree.SubElement(root, f"{{{CAC}}}Signature")
    if ident is not None:
        etree.SubElement(signature, f"{{{CBC}}}ID").text = ident
    if uri is not None:
        reference = etree.SubElement(etree.SubElement(signature, f"{{{CAC}}}DigitalSignatureAttachment"),
                                     f"{{{CAC}}}ExternalReference")
        etree.SubElement(reference, f"{{{CBC}}}URI").text = uri
    return root


@pytest.mark.parametrize(("uri", "ident", "expected"), [
    (" #XSign ", "OTRO", "XSign"),  # the URI without its «#», nothing else stripped
    ("#X", "OTRO", "X"),
    ("#", "IDFIRMA", "IDFIRMA"),  # an empty reference: the cbc:ID
    (None, "IDFIRMA", "IDFIRMA"),
    (None, "  ", xmldsig.DEFAULT_SIGNATURE_ID),
    (None, None, xmldsig.DEFAULT_SIGNATURE_ID),
])
def test_signature_id_of(uri, ident, expected):
    assert xmldsig.signature_id_of(signature_block(uri, ident)) == expected


def test_a_tampered_voucher_is_invalid_not_unknown(engine, company):
    xml = engine.invoicing.generate_xml(factura("F001", 1, [item("Servicio", "1", "10")])).xml
    signed = xmldsig.sign_canonical(xml, KEY, CERT).xml.replace("Servicio", "Servicios")
    verdict = xmldsig.verify_xml(signed)
    assert verdict.valid is False and verdict.reason


# ------------------------------------------------------------------ the general path (sign_xml on any UBL text)

def document(extensions: str = "<ext:UBLExtension><ext:ExtensionContent/></ext:UBLExtension>", root_extra: str = "",
             body: str = "<cbc:ID>F001-1</cbc:ID>", declaration: str = '<?xml version="1.0" encoding="UTF-8"?>') -> str:
    return (f'{declaration}\n<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" '
            f'xmlns:ext="{EXT}" xmlns:cbc="{CBC}"{root_extra}><ext:UBLExtensions>{extensions}</ext:UBLExtensions>'
            f"{body}</Invoice>")


def verified_by_xmlsec(signed: bytes, folder) -> None:
    path = folder / "signed.xml"
    path.write_bytes(signed)
    done = xmlsec_verify(path, CERT)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(("text", "message"), [
    (document(body=f'<ds:Signature xmlns:ds="{DS}"/>'),
     "El campo «xml» ya está firmado: contiene una firma (ds:Signature). Firme el XML original, sin firma."),
    (document(extensions="<ext:UBLExtension><ext:ExtensionContent><cbc:Note>x</cbc:Note></ext:ExtensionContent>"
                         "</ext:UBLExtension>"),
     "El campo «xml» no tiene un ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent vacío donde colocar la "
     "firma."),
    (document(root_extra=' xmlns:ds="urn:otro"'),
     "El campo «xml» usa el prefijo «ds» para otro espacio de nombres: no se puede firmar."),
])
def test_sign_xml_refusals_name_the_field(text, message):
    with pytest.raises(YupanaError) as caught:
        xmldsig.sign_xml(text, KEY, CERT)
    assert caught.value.message == message
    assert [detail.field for detail in caught.value.details] == ["xml"]


def test_sign_xml_defaults_to_rsa_sha1_and_takes_the_id_asked_for():
    signed = xmldsig.sign_xml(document(), KEY, CERT, signature_id="FirmaTienda").xml
    assert b'Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"' in signed
    assert b'Id="FirmaTienda"' in signed


@pytest.mark.parametrize("case", ["comment", "xml-attributes", "xml-attribute-on-the-slot",
                                  "default-namespace-and-upper-prefix"])
def test_sign_xml_output_verifies_with_xmlsec1(case, tmp_path):
    text = {
        "comment": document(body="<!-- nota interna --><cbc:ID>F001-1</cbc:ID>"),
        "xml-attributes": document(root_extra=' xml:lang="es" xml:space="preserve"'),
        "xml-attribute-on-the-slot": document(
            extensions='<ext:UBLExtension><ext:ExtensionContent xml:lang="es"/></ext:UBLExtension>'),
        "default-namespace-and-upper-prefix": document(root_extra=' xmlns:A="urn:a" A:marca="1"'),
    }[case]
    verified_by_xmlsec(xmldsig.sign_xml(text, KEY, CERT).xml, tmp_path)


def test_the_signature_goes_in_the_first_empty_extension_content(tmp_path):
    text = document(extensions="<ext:UBLExtension><ext:ExtensionContent><cbc:Note>otra</cbc:Note>"
                               "</ext:ExtensionContent></ext:UBLExtension>"
                               "<ext:UBLExtension><ext:ExtensionContent></ext:ExtensionContent></ext:UBLExtension>",
                    root_extra=" marca='1'", body="<cbc:ID>F001-1</cbc:ID><cbc:Note/>")
    signed = xmldsig.sign_xml(text, KEY, CERT).xml
    assert b"marca='1'" in signed  # one empty slot, found in the text too: spliced, the rest kept as typed
    contents = etree.fromstring(signed).findall(f".//{{{EXT}}}ExtensionContent")
    assert [len(c.findall(f"{{{DS}}}Signature")) for c in contents] == [0, 1]
    verified_by_xmlsec(signed, tmp_path)


def test_the_source_text_is_kept_byte_for_byte_around_the_signature():
    """A text the tree would serialise differently (single quotes, a lower-case «utf8»): spliced, not rewritten."""
    text = document(root_extra=" marca='1'", declaration="<?xml version='1.0' encoding='utf8'?>")
    signed = xmldsig.sign_xml(text, KEY, CERT).xml
    start, end = signed.index(b"<ds:Signature"), signed.index(b"</ds:Signature>") + len(b"</ds:Signature>")
    assert signed[:start] + signed[end:] == text.encode("utf-8").replace(
        b"<ext:ExtensionContent/>", b"<ext:ExtensionContent></ext:ExtensionContent>")


def test_an_ambiguous_place_is_not_spliced_by_text():
    """Two places the tree counts as empty (one holds an empty CDATA section) but one the text pattern finds: the
    tree is serialised, the signature where the tree chose (the first)."""
    text = document(extensions="<ext:UBLExtension><ext:ExtensionContent><![CDATA[]]></ext:ExtensionContent>"
                               "</ext:UBLExtension><ext:UBLExtension><ext:ExtensionContent></ext:ExtensionContent>"
                               "</ext:UBLExtension>", root_extra=" marca='1'")
    signed = xmldsig.sign_xml(text, KEY, CERT).xml
    assert b"marca='1'" not in signed  # serialised by lxml, not spliced
    contents = etree.fromstring(signed).findall(f".//{{{EXT}}}ExtensionContent")
    assert [len(c.findall(f"{{{DS}}}Signature")) for c in contents] == [1, 0]


# ------------------------------------------------------------------ escaping, parsing, verifying: exact answers

def test_attribute_values_are_escaped_as_c14n_does():
    assert xmldsig._escape_attribute('a&b<c"d\te\nf\rg>h') == "a&amp;b&lt;c&quot;d&#x9;e&#xA;f&#xD;g>h"


def test_parse_xml_refusals_name_the_field():
    with pytest.raises(YupanaError) as caught:
        xmldsig.parse_xml("<a")
    assert [d.field for d in caught.value.details] == ["xml"] and "no es XML bien formado" in caught.value.message
    with pytest.raises(YupanaError) as caught:
        xmldsig.parse_xml('<!DOCTYPE a SYSTEM "a.dtd"><a/>')  # no internal subset: still a DOCTYPE
    assert [d.field for d in caught.value.details] == ["xml"]
    assert caught.value.message == ("El campo «xml» trae una declaración DOCTYPE: los comprobantes no la usan y no "
                                    "se admite.")


@pytest.mark.parametrize(("text", "expected"), [
    ('  <?xml version="1.0" encoding="ISO-8859-1"?><a>ñ</a>', "ñ"),  # a text's declared encoding is not its own
    ('<?xml version="1.0"?><a><?marca uno?>x</a>', "x"),  # a later processing instruction is not the declaration
])
def test_parse_xml_reads_a_text_whatever_its_declaration_says(text, expected):
    root = xmldsig.parse_xml(text).getroot()
    assert "".join(root.itertext()) == expected


def test_parse_xml_reads_bytes_in_their_declared_encoding():
    data = '<?xml version="1.0" encoding="ISO-8859-1"?><a>ñ</a>'.encode("iso-8859-1")
    assert xmldsig.parse_xml(data).getroot().text == "ñ"


def signed_document(tmp_path=None) -> str:
    return xmldsig.sign_xml(document(body="<!-- nota --><cbc:ID>F001-1</cbc:ID>"), KEY, CERT).xml.decode("utf-8")


def stated_digest(signed: str) -> str:
    return etree.fromstring(signed.encode()).findtext(f".//{{{DS}}}DigestValue")


def replace_text(signed: str, tag: str, value: str) -> str:
    start = signed.index(f"<ds:{tag}>") + len(f"<ds:{tag}>")
    return signed[:start] + value + signed[signed.index(f"</ds:{tag}>"):]


def test_a_valid_signature_with_a_wrapped_value_and_a_comment():
    signed = signed_document()
    value = etree.fromstring(signed.encode()).findtext(f".//{{{DS}}}SignatureValue")  # outside SignedInfo
    wrapped = replace_text(signed, "SignatureValue", "\n" + value[:40] + "\n" + value[40:] + "\n")
    verdict = xmldsig.verify_xml(wrapped)
    assert (verdict.valid, verdict.reason, verdict.digest_value) == (True, "firma válida", stated_digest(signed))


def _ec_certificate_base64() -> str:
    import base64
    import datetime as dt

    from cryptography import x509 as x509_
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509_.Name([x509_.NameAttribute(NameOID.COMMON_NAME, "EC")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509_.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + dt.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()


@pytest.mark.parametrize("case", ["not-xml", "signature-not-base64", "tampered", "not-rsa", "wrong-signature"])
def test_each_refusal_is_exact(case):
    import base64

    signed = signed_document()
    digest = stated_digest(signed)
    text, reason, with_digest, with_certificate = {
        "not-xml": ("<a", "el documento no es XML bien formado", False, False),
        "signature-not-base64": (replace_text(signed, "SignatureValue", "¡no!"),
                                 "el valor de la firma (ds:SignatureValue) no es base64 válido", True, True),
        "tampered": (signed.replace("F001-1", "F001-2"),
                     "el documento fue modificado después de firmarlo (el resumen no coincide)", True, True),
        "not-rsa": (replace_text(signed, "X509Certificate", _ec_certificate_base64()),
                    "el certificado no tiene una clave RSA", True, True),
        "wrong-signature": (replace_text(signed, "SignatureValue", base64.b64encode(bytes(256)).decode()),
                            "el valor de la firma no corresponde al certificado o a la información firmada", True,
                            True),
    }[case]
    verdict = xmldsig.verify_xml(text)
    assert verdict.valid is False and verdict.reason == reason
    assert verdict.digest_value == (digest if with_digest else None)
    assert (verdict.certificate is not None) == with_certificate
    if case in ("signature-not-base64", "tampered", "wrong-signature"):
        assert verdict.certificate.public_bytes(serialization.Encoding.DER) == CERT.public_bytes(
            serialization.Encoding.DER)


def test_a_signature_without_its_certificate_names_it_with_the_stated_digest():
    signed = signed_document()
    start, end = signed.index("<ds:KeyInfo>"), signed.index("</ds:KeyInfo>") + len("</ds:KeyInfo>")
    verdict = xmldsig.verify_xml(signed[:start] + signed[end:])
    assert verdict.valid is False and verdict.certificate is None and verdict.digest_value == stated_digest(signed)
    assert "certificado" in verdict.reason


def test_sign_tree_without_its_source_serialises_and_reports_what_it_wrote(tmp_path):
    """A parsed tree and no text: the default algorithm, the tree serialised, the digest and signature values the
    result states are the ones written in it."""
    signed = xmldsig.sign_tree(xmldsig.parse_xml(document()), KEY, CERT)
    root = etree.fromstring(signed.xml)
    assert root.find(f".//{{{DS}}}SignatureMethod").get("Algorithm").endswith("#rsa-sha1")
    assert root.findtext(f".//{{{DS}}}DigestValue") == signed.digest_value
    assert root.findtext(f".//{{{DS}}}SignatureValue") == signed.signature_value
    verified_by_xmlsec(signed.xml, tmp_path)


def test_an_unknown_algorithm_is_refused_naming_the_choices():
    with pytest.raises(YupanaError) as caught:
        xmldsig.sign_xml(document(), KEY, CERT, algorithm="md5")
    assert [d.field for d in caught.value.details] == ["algorithm"]
    assert caught.value.message == (f"El algoritmo de firma «md5» no es válido. "
                                    f"Válidos: {', '.join(xmldsig.ALGORITHMS)}.")


@pytest.mark.parametrize(("certificate", "reason"), [
    (None, "la firma no incluye el certificado (ds:X509Certificate)"),
    ("AAAA", "el certificado incluido en la firma está dañado"),
])
def test_a_missing_or_damaged_certificate_is_named(certificate, reason):
    signed = signed_document()
    if certificate is None:
        start = signed.index("<ds:X509Certificate>")
        signed = signed[:start] + signed[signed.index("</ds:X509Certificate>") + len("</ds:X509Certificate>"):]
    else:
        signed = replace_text(signed, "X509Certificate", certificate)
    verdict = xmldsig.verify_xml(signed)
    assert (verdict.valid, verdict.reason, verdict.certificate) == (False, reason, None)


def test_a_wrapped_certificate_and_a_signature_followed_by_text_still_verify():
    """Base64 folded over lines is the same certificate; text after the Signature (its tail) is part of the
    document the digest covered, wherever the Signature stood in it."""
    signed = xmldsig.sign_xml(document(extensions="<ext:UBLExtension><ext:ExtensionContent>\n  "
                                                  "</ext:ExtensionContent></ext:UBLExtension>"), KEY, CERT).xml.decode()
    certificate = etree.fromstring(signed.encode()).findtext(f".//{{{DS}}}X509Certificate")
    signed = replace_text(signed, "X509Certificate", "\n".join(certificate[i:i + 64]
                                                                for i in range(0, len(certificate), 64)))
    moved = signed.replace("<ext:ExtensionContent>\n  <ds:Signature", "<ext:ExtensionContent><ds:Signature")
    moved = moved.replace("</ds:Signature></ext:ExtensionContent>", "</ds:Signature>\n  </ext:ExtensionContent>")
    assert moved != signed
    verdict = xmldsig.verify_xml(moved)
    assert (verdict.valid, verdict.reason) == (True, "firma válida")
