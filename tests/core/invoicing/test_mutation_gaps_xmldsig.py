"""The pure signer (app.core.invoicing.xmldsig), exactly: found by `make mutation` (docs/testing.md).

The canonical fast path's preconditions, its hash of the signed text on both of its paths, the signature's Id,
the Id a voucher points at, and a refusal's verdict."""

from __future__ import annotations

import hashlib

import pytest
from lxml import etree

from app.core.invoicing import ubl, xmldsig
from app.core.invoicing.namespaces import CAC, CBC, DS, EXT
from app.sandbox.sunat_signer import self_signed
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
    with pytest.raises(ValueError, match="no start tag"):
        xmldsig._start_tag_end(b'<a b=">"')


def test_the_default_algorithm_is_rsa_sha1():
    pending = xmldsig.prepare_canonical(canonical())
    assert pending.algorithm is xmldsig.ALGORITHMS["rsa-sha1"]


@pytest.mark.parametrize("attributes", [
    f'xmlns="urn:x" xmlns:ds="{DS}"',  # no ext
    f'xmlns="urn:x" xmlns:ext="{EXT}"',  # no ds
])
def test_both_namespaces_must_be_declared_on_the_root(attributes):
    with pytest.raises(ValueError, match="not a canonical voucher"):
        xmldsig.prepare_canonical(canonical(attributes))


def test_two_empty_slots_are_refused():
    with pytest.raises(ValueError, match="not a canonical voucher"):
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
    xml = engine.generar_xml(factura("F001", 1, [item("Servicio", "1", "10")])).xml
    signed = xmldsig.sign_canonical(xml, KEY, CERT).xml.replace("Servicio", "Servicios")
    verdict = xmldsig.verify_xml(signed)
    assert verdict.valid is False and verdict.reason
