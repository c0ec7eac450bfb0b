"""The enveloped XML signature of vouchers (XML-DSig), pure, as SUNAT and its peers produce it.

The signature is computed by hand rather than through signxml: SUNAT's profile is fixed (inclusive
C14N 1.0, one Reference URI="" with only the enveloped transform, KeyInfo with the certificate), so
the whole work per document is one canonicalisation of the tree, one hash and one RSA operation.

- The enveloped transform removes the Signature from the document; hashing the canonical form of
  the tree while the target `ext:ExtensionContent` is still empty gives exactly that digest.
- `SignedInfo` is written as text directly in its canonical form (in-scope namespaces of the
  insertion point declared, attributes sorted, no empty-element tags), so it is hashed as built and
  never re-canonicalised. A test checks it equals lxml's C14N of the inserted element.
- The signed document is serialised once with a placeholder where the Signature goes, which is then
  replaced by the Signature's bytes.

Vouchers this engine generated are already canonical text (`app.core.invoicing.ubl`): `sign_canonical` signs
them with no parsing at all (hash the bytes after the XML declaration, sign the SignedInfo text,
insert the Signature text). `sign_xml` parses, for anything else (the sandbox's CDRs, old rows).

These functions (`sign_xml`, `sign_canonical`, `prepare_canonical`, `verify_xml`) know nothing of storage or
the engine; operation 2 (app.core.invoicing.signing) signs stored vouchers with them.
"""

from __future__ import annotations

import base64
import hashlib
import re
import warnings
from dataclasses import dataclass

from lxml import etree

from app.core.errors import invalid
from app.core.invoicing import ubl
from app.core.invoicing.namespaces import CAC, CBC, DS, EXT  # noqa: F401 - CAC, CBC are read through this module too
from app.core.platform import xml_limits
from app.core.platform.crypto import crypto_exceptions, hashes, padding, rsa, serialization, x509

C14N_10 = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"
DEFAULT_SIGNATURE_ID = "SignatureSP"
XML_ATTRIBUTE = "{http://www.w3.org/XML/1998/namespace}"


@dataclass(frozen=True)
class Algorithm:
    name: str
    signature_uri: str
    digest_uri: str
    hash_name: str  # cryptography's class in cryptography.hazmat.primitives.hashes, read at first use (lazy)
    hashlib_name: str

    @property
    def hash(self) -> type[hashes.HashAlgorithm]:
        hash_class: type[hashes.HashAlgorithm] = getattr(hashes, self.hash_name)  # SHA1 or SHA256
        return hash_class


ALGORITHMS: dict[str, Algorithm] = {
    a.name: a
    for a in [
        Algorithm("rsa-sha1", "http://www.w3.org/2000/09/xmldsig#rsa-sha1", "http://www.w3.org/2000/09/xmldsig#sha1",
                  "SHA1", "sha1"),
        Algorithm("rsa-sha256", "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
                  "http://www.w3.org/2001/04/xmlenc#sha256", "SHA256", "sha256"),
    ]
}
_BY_SIGNATURE_URI = {a.signature_uri: a for a in ALGORITHMS.values()}
_BY_DIGEST_URI = {a.digest_uri: a for a in ALGORITHMS.values()}

# Safe parsing: no network, no entities, no huge trees (rule of the house).
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, remove_comments=False)
_PLACEHOLDER = "yupana-signature-placeholder"
_PLACEHOLDER_BYTES = f"<!--{_PLACEHOLDER}-->".encode()


@dataclass(frozen=True)
class SignedXml:
    xml: bytes
    digest_value: str
    signature_value: str


@dataclass(frozen=True)
class CanonicalSignature:
    """A canonical voucher signed: the Signature's text and where it goes; `xml` is the signed document."""

    signature: str
    offset: int
    xml: str
    digest_value: str
    signature_value: str
    sha256: str  # hex SHA-256 of `xml` in UTF-8


@dataclass(frozen=True)
class Verification:
    valid: bool
    reason: str
    digest_value: str | None
    certificate: x509.Certificate | None


# ------------------------------------------------------------------ parsing helpers

def parse_xml(xml: bytes | str, field: str = "xml") -> etree._ElementTree:
    """Parse safely; a 400 naming `field` when it is not well-formed XML."""
    data = xml.encode("utf-8") if isinstance(xml, str) else xml
    if isinstance(xml, str) and data.lstrip().startswith(b"<?xml"):
        # A str cannot carry its own encoding declaration into lxml: drop it, the text is already decoded.
        data = data.split(b"?>", 1)[1]
    try:
        tree = etree.ElementTree(etree.fromstring(data, _PARSER))
    except etree.XMLSyntaxError as exc:
        raise invalid(field, f"El campo «{field}» no es XML bien formado: {exc.msg}.") from None
    if tree.docinfo.internalDTD is not None or tree.docinfo.doctype:
        raise invalid(field, f"El campo «{field}» trae una declaración DOCTYPE: los comprobantes no la usan "
                             "y no se admite.")
    return tree


def find_signatures(root: etree._Element) -> list[etree._Element]:
    return root.findall(f".//{{{DS}}}Signature")


def empty_extension_content(root: etree._Element) -> etree._Element | None:
    """The first `ext:UBLExtension/ext:ExtensionContent` with no element inside, where the signature goes."""
    for content in root.iterfind(f"{{{EXT}}}UBLExtensions/{{{EXT}}}UBLExtension/{{{EXT}}}ExtensionContent"):
        if len(content) == 0 and not (content.text or "").strip():
            return content
    return None


def signature_id_of(root: etree._Element) -> str:
    """The Id the voucher's `cac:Signature` points at: its URI (without «#»), else its cbc:ID, else SignatureSP."""
    uri = root.findtext(f"{{{CAC}}}Signature/{{{CAC}}}DigitalSignatureAttachment/{{{CAC}}}ExternalReference/"
                        f"{{{CBC}}}URI")
    if uri and uri.strip().lstrip("#"):
        return uri.strip().lstrip("#")
    found = root.findtext(f"{{{CAC}}}Signature/{{{CBC}}}ID")
    return found.strip() if found and found.strip() else DEFAULT_SIGNATURE_ID


# ------------------------------------------------------------------ canonical text

def _escape_attribute(value: str) -> str:
    """C14N 1.0 attribute-value escaping."""
    return (value.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
            .replace("\t", "&#x9;").replace("\n", "&#xA;").replace("\r", "&#xD;"))


def _namespace_declarations(namespaces: dict[str | None, str]) -> str:
    """Namespace nodes in C14N order: the default namespace first, then by prefix."""
    ordered = sorted(namespaces.items(), key=lambda item: item[0] or "")
    return "".join(f' xmlns="{_escape_attribute(uri)}"' if prefix is None
                   else f' xmlns:{prefix}="{_escape_attribute(uri)}"' for prefix, uri in ordered if uri)


def _inherited_xml_attributes(element: etree._Element) -> str:
    """Inclusive C14N of a subset carries the xml:* attributes (xml:lang, xml:space…) in scope at its apex."""
    found: dict[str, str] = {}
    for ancestor in element.iterancestors():
        for name, value in ancestor.attrib.items():
            if name.startswith(XML_ATTRIBUTE):
                found.setdefault(name[len(XML_ATTRIBUTE):], value)
    for name, value in element.attrib.items():
        if name.startswith(XML_ATTRIBUTE):
            found[name[len(XML_ATTRIBUTE):]] = value
    return "".join(f' xml:{name}="{_escape_attribute(value)}"' for name, value in sorted(found.items()))


def canonical_subtree(element: etree._Element) -> bytes:
    """Inclusive C14N 1.0 of one element's subtree inside its document, as xmlsec1 computes it.

    lxml's C14N of a non-root element mangles a redeclared default namespace (it emits xmlns="" on
    descendants, seen on a real SUNAT peer's SignedInfo), so the element is first serialised on its
    own (which declares every in-scope namespace on it), parsed back as a document and canonicalised
    whole. The xml:* attributes inherited from ancestors, which C14N 1.0 puts on the apex, are added.
    """
    standalone = etree.fromstring(etree.tostring(element), _PARSER)
    canonical = etree.tostring(standalone, method="c14n", with_comments=False)
    own = {name for name in element.attrib if name.startswith(XML_ATTRIBUTE)}
    inherited: dict[str, str] = {}
    for ancestor in element.iterancestors():
        for name, value in ancestor.attrib.items():
            if name.startswith(XML_ATTRIBUTE) and name not in own:
                inherited.setdefault(name[len(XML_ATTRIBUTE):], value)
    if not inherited:
        return canonical
    end = _start_tag_end(canonical)
    extra = "".join(f' xml:{name}="{_escape_attribute(value)}"' for name, value in sorted(inherited.items()))
    return canonical[:end] + extra.encode() + canonical[end:]


def _start_tag_end(canonical: bytes) -> int:
    """Index of the «>» closing the first start tag (quotes in attribute values skipped)."""
    quoted = False
    for index, byte in enumerate(canonical):
        if byte == 0x22:
            quoted = not quoted
        elif byte == 0x3E and not quoted:
            return index
    raise ValueError("no start tag")


def _signed_info_body(algorithm: Algorithm, digest_value: str) -> str:
    """Everything inside ds:SignedInfo, already canonical (no whitespace, explicit end tags)."""
    return (f'<ds:CanonicalizationMethod Algorithm="{C14N_10}"></ds:CanonicalizationMethod>'
            f'<ds:SignatureMethod Algorithm="{algorithm.signature_uri}"></ds:SignatureMethod>'
            '<ds:Reference URI="">'
            f'<ds:Transforms><ds:Transform Algorithm="{ENVELOPED}"></ds:Transform></ds:Transforms>'
            f'<ds:DigestMethod Algorithm="{algorithm.digest_uri}"></ds:DigestMethod>'
            f"<ds:DigestValue>{digest_value}</ds:DigestValue>"
            "</ds:Reference>")


_certificate_texts: dict[int, tuple[x509.Certificate, str]] = {}


def _certificate_base64(certificate: x509.Certificate) -> str:
    # Keyed by identity: hashing a Certificate (its DER) costs more than the rest of this lookup. The entry keeps
    # its certificate alive, so an id is not reused while it is in the table; bounded like an LRU of 64.
    entry = _certificate_texts.get(id(certificate))
    if entry is not None and entry[0] is certificate:
        return entry[1]
    text = base64.b64encode(certificate.public_bytes(serialization.Encoding.DER)).decode("ascii")
    if len(_certificate_texts) >= 64:
        _certificate_texts.clear()
    _certificate_texts[id(certificate)] = (certificate, text)
    return text


def _algorithm(name: str) -> Algorithm:
    if name not in ALGORITHMS:
        raise invalid("algorithm", f"El algoritmo de firma «{name}» no es válido. "
                                   f"Válidos: {', '.join(ALGORITHMS)}.")
    return ALGORITHMS[name]


# ------------------------------------------------------------------ signing

def sign_xml(xml: bytes | str, private_key: rsa.RSAPrivateKey, certificate: x509.Certificate, *,
             algorithm: str = "rsa-sha1", signature_id: str | None = None) -> SignedXml:
    """Sign a UBL document (Invoice, CreditNote, DebitNote, ApplicationResponse…) with an enveloped signature
    placed in its first empty `ext:ExtensionContent`. Raises a 400 on `xml` when it cannot be signed."""
    return sign_tree(parse_xml(xml), private_key, certificate, algorithm=algorithm, signature_id=signature_id,
                     source=xml)


def sign_tree(tree: etree._ElementTree, private_key: rsa.RSAPrivateKey, certificate: x509.Certificate, *,
              algorithm: str = "rsa-sha1", signature_id: str | None = None,
              source: bytes | str | None = None) -> SignedXml:
    """`sign_xml` on an already parsed document. With `source` (the text the tree was parsed from) the
    Signature is spliced into that text, which is otherwise returned byte for byte; else the tree is serialised."""
    chosen = _algorithm(algorithm)
    root = tree.getroot()
    if find_signatures(root):
        raise invalid("xml", "El campo «xml» ya está firmado: contiene una firma (ds:Signature). "
                             "Firme el XML original, sin firma.")
    target = empty_extension_content(root)
    if target is None:
        raise invalid("xml", "El campo «xml» no tiene un ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent "
                             "vacío donde colocar la firma.")
    namespaces = dict(target.nsmap)
    if namespaces.setdefault("ds", DS) != DS:
        raise invalid("xml", "El campo «xml» usa el prefijo «ds» para otro espacio de nombres: no se puede firmar.")
    sig_id = signature_id or signature_id_of(root)

    # Enveloped transform = the document without the Signature = the document as it is now.
    document = etree.tostring(tree, method="c14n", with_comments=False)
    digest_value = base64.b64encode(hashlib.new(chosen.hashlib_name, document).digest()).decode("ascii")
    body = _signed_info_body(chosen, digest_value)
    apex = f"<ds:SignedInfo{_namespace_declarations(namespaces)}{_inherited_xml_attributes(target)}>"
    canonical = f"{apex}{body}</ds:SignedInfo>".encode()
    signature = private_key.sign(canonical, padding.PKCS1v15(), chosen.hash())
    signature_value = base64.b64encode(signature).decode("ascii")

    declare_ds = "" if target.nsmap.get("ds") == DS else f' xmlns:ds="{DS}"'
    signature_xml = _signature_element(declare_ds, sig_id, body, signature_value, certificate).encode()
    spliced = _splice(source, root, signature_xml) if source is not None else None
    if spliced is not None:
        return SignedXml(spliced, digest_value, signature_value)
    target.append(etree.Comment(_PLACEHOLDER))
    try:
        out = etree.tostring(tree, xml_declaration=True, encoding="UTF-8")
    finally:
        target.remove(target[-1])
    return SignedXml(out.replace(_PLACEHOLDER_BYTES, signature_xml, 1), digest_value, signature_value)


def _signature_element(declare_ds: str, sig_id: str, signed_info_body: str, signature_value: str,
                       certificate: x509.Certificate) -> str:
    return (f'<ds:Signature{declare_ds} Id="{_escape_attribute(sig_id)}">'
            f"<ds:SignedInfo>{signed_info_body}</ds:SignedInfo>"
            f"<ds:SignatureValue>{signature_value}</ds:SignatureValue>"
            f"<ds:KeyInfo><ds:X509Data><ds:X509Certificate>{_certificate_base64(certificate)}"
            "</ds:X509Certificate></ds:X509Data></ds:KeyInfo></ds:Signature>")


_DS_DECLARATION = f' xmlns:ds="{DS}"'
_EXT_DECLARATION = f' xmlns:ext="{EXT}"'


def sign_canonical(xml: str, private_key: rsa.RSAPrivateKey, certificate: x509.Certificate, *,
                   algorithm: str = "rsa-sha1", signature_id: str = ubl.SIGNATURE_ID,
                   encoded: bytes | None = None) -> CanonicalSignature:
    """Sign a voucher written by `app.core.invoicing.ubl`, without parsing it.

    Precondition (the generator's, checked by tests/core/invoicing/test_ubl_canonical.py): `xml` is `ubl.XML_DECLARATION`
    followed by its own inclusive C14N, every namespace declared on the root (ds and ext among them), no
    xml:* attribute, one empty `ext:ExtensionContent` and no signature. Then the enveloped digest is the
    hash of the bytes after the declaration, and the SignedInfo's canonical form declares the root's
    namespaces. The cheap parts of that precondition are checked here (ValueError otherwise).

    `encoded` is `xml` in UTF-8 when the caller has it: a voucher with accents or ñ costs ~15 µs per encoding of
    its ~14 kB, so the text is encoded once and both hashes are taken over slices of those bytes.
    """
    pending = prepare_canonical(xml, algorithm=algorithm, encoded=encoded)
    return pending.complete(private_key.sign(pending.signed_info, padding.PKCS1v15(), pending.algorithm.hash()),
                            certificate, signature_id)


@dataclass(slots=True)
class PendingSignature:
    """A canonical voucher's signature before and after the RSA operation (`sign_canonical` in two steps, so
    that a batch can run its RSA operations together)."""

    xml: str
    data: bytes
    slot: int
    algorithm: Algorithm
    digest_value: str
    body: str
    signed_info: bytes  # the canonical SignedInfo: what RSA signs

    def complete(self, signature_bytes: bytes, certificate: x509.Certificate,
                 signature_id: str = ubl.SIGNATURE_ID) -> CanonicalSignature:
        xml = self.xml
        signature_value = base64.b64encode(signature_bytes).decode("ascii")
        signature = _signature_element("", signature_id, self.body, signature_value, certificate)
        offset = self.slot + len("<ext:ExtensionContent>")
        signed = xml[:offset] + signature + xml[offset:]
        if xml.isascii() or xml[:offset].isascii():  # then the character offset is also the byte offset
            whole = memoryview(self.data)
            signed_hash = hashlib.sha256(whole[:offset])
            signed_hash.update(signature.encode("utf-8"))
            signed_hash.update(whole[offset:])
            signed_sha256 = signed_hash.hexdigest()
        else:
            signed_sha256 = hashlib.sha256(signed.encode("utf-8")).hexdigest()
        return CanonicalSignature(signature, offset, signed, self.digest_value, signature_value, signed_sha256)


def prepare_canonical(xml: str, *, algorithm: str = "rsa-sha1", encoded: bytes | None = None) -> PendingSignature:
    """The digest and canonical SignedInfo of a canonical voucher (see `sign_canonical`)."""
    chosen = _algorithm(algorithm)
    start = len(ubl.XML_DECLARATION)
    root_end = xml.find(">", start)
    slot = xml.find(ubl.EMPTY_EXTENSION_CONTENT, root_end)
    root_attributes = xml[xml.find(" ", start, root_end):root_end]
    if (not xml.startswith(ubl.XML_DECLARATION) or slot < 0 or _DS_DECLARATION not in root_attributes
            or _EXT_DECLARATION not in root_attributes or xml.find(ubl.EMPTY_EXTENSION_CONTENT, slot + 1) >= 0):
        raise ValueError("not a canonical voucher written by app.core.invoicing.ubl")
    data = encoded if encoded is not None else xml.encode("utf-8")
    document = memoryview(data)[start:]  # the declaration is ASCII: its bytes are its characters
    digest_value = base64.b64encode(hashlib.new(chosen.hashlib_name, document).digest()).decode("ascii")
    body = _signed_info_body(chosen, digest_value)
    # In inclusive C14N the apex of a subset carries every namespace in scope: here, the root's declarations.
    signed_info = f"<ds:SignedInfo{root_attributes}>{body}</ds:SignedInfo>".encode()
    return PendingSignature(xml, data, slot, chosen, digest_value, body, signed_info)


_EMPTY_CONTENT = re.compile(rb"<((?:[A-Za-z_][\w.-]*:)?)ExtensionContent(?:\s[^>]*)?(?:/>|>(\s*)</\1ExtensionContent>)")
_DECLARED_ENCODING = re.compile(r"^\s*<\?xml[^>]*encoding=[\"']([^\"']+)")


def _splice(source: bytes | str, root: etree._Element, signature_xml: bytes) -> bytes | None:
    """The source text with the Signature inside its empty ExtensionContent, or None when that place cannot be
    found unambiguously in the text (then the caller serialises the tree instead)."""
    if isinstance(source, str):
        declared = _DECLARED_ENCODING.match(source)
        if declared and declared.group(1).lower().replace("_", "-") not in ("utf-8", "utf8"):
            return None
        source = source.encode("utf-8")
    matches = list(_EMPTY_CONTENT.finditer(source))
    empties = [c for c in root.iter(f"{{{EXT}}}ExtensionContent") if len(c) == 0 and not (c.text or "").strip()]
    if len(matches) != 1 or len(empties) != 1:
        return None
    found = matches[0]
    prefix, space = found.group(1), found.group(2) or b""
    opening = found.group(0)[: found.group(0).index(b">") + 1].removesuffix(b"/>").removesuffix(b">") + b">"
    element = opening + space + signature_xml + b"</" + prefix + b"ExtensionContent>"
    return source[: found.start()] + element + source[found.end():]


# ------------------------------------------------------------------ verification

def _fail(reason: str, digest_value: str | None = None,
          certificate: x509.Certificate | None = None) -> Verification:
    return Verification(False, reason, digest_value, certificate)


def _remove_keeping_tail(element: etree._Element) -> None:
    """Remove an element but not the text after it (lxml drops the tail with the element)."""
    parent = element.getparent()
    if element.tail:
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + element.tail
        else:
            parent.text = (parent.text or "") + element.tail
    parent.remove(element)


def _check_profile(signed_info: etree._Element) -> tuple[Algorithm, etree._Element] | str:
    """The signature's algorithms and its single Reference, or why this profile is not supported."""
    c14n = signed_info.find(f"{{{DS}}}CanonicalizationMethod")
    if c14n is None or c14n.get("Algorithm") != C14N_10:
        return "el método de canonicalización no es C14N 1.0 inclusivo"
    method = signed_info.find(f"{{{DS}}}SignatureMethod")
    chosen = _BY_SIGNATURE_URI.get(method.get("Algorithm") if method is not None else "")
    if chosen is None:
        return "el algoritmo de firma no es rsa-sha1 ni rsa-sha256"
    references = signed_info.findall(f"{{{DS}}}Reference")
    if len(references) != 1 or references[0].get("URI") != "":
        return "la firma debe tener una sola referencia, con URI vacío (todo el documento)"
    transforms = [t.get("Algorithm") for t in references[0].iterfind(f"{{{DS}}}Transforms/{{{DS}}}Transform")]
    if transforms not in ([ENVELOPED], [ENVELOPED, C14N_10]):
        return "la referencia debe tener solo la transformación enveloped-signature"
    return chosen, references[0]


def _embedded_certificate(signature: etree._Element) -> x509.Certificate | str:
    text = signature.findtext(f"{{{DS}}}KeyInfo/{{{DS}}}X509Data/{{{DS}}}X509Certificate")
    if not text or not text.strip():
        return "la firma no incluye el certificado (ds:X509Certificate)"
    try:
        with warnings.catch_warnings():  # certificates of real CAs with a non-positive serial still load today
            warnings.simplefilter("ignore")
            return x509.load_der_x509_certificate(base64.b64decode("".join(text.split())))
    except ValueError:
        return "el certificado incluido en la firma está dañado"


def verify_xml(xml: bytes | str) -> Verification:
    """Check the enveloped signature of a document with the certificate it carries.

    Valid means: the reference digest matches the document without its Signature, and the
    SignatureValue is the RSA signature of the canonical SignedInfo under the embedded certificate.
    Whether that certificate is trusted, current or the issuer's is the caller's question.
    """
    try:
        xml_limits.check_bytes(xml.encode("utf-8") if isinstance(xml, str) else xml)
        tree = parse_xml(xml)
        xml_limits.check_tree(tree.getroot())  # before any canonicalisation: its cost grows with these
    except xml_limits.LimitExceeded as exc:
        return _fail(f"el documento {exc}")
    except Exception:
        return _fail("el documento no es XML bien formado")
    signatures = find_signatures(tree.getroot())
    if not signatures:
        return _fail("el documento no está firmado")
    if len(signatures) > 1:
        return _fail("el documento tiene más de una firma")
    signature = signatures[0]
    signed_info = signature.find(f"{{{DS}}}SignedInfo")
    if signed_info is None:
        return _fail("la firma no tiene ds:SignedInfo")
    profile = _check_profile(signed_info)
    if isinstance(profile, str):
        return _fail(profile)
    chosen, reference = profile
    digest_method = reference.find(f"{{{DS}}}DigestMethod")
    digest_algorithm = _BY_DIGEST_URI.get(digest_method.get("Algorithm") if digest_method is not None else "")
    if digest_algorithm is None:
        return _fail("el algoritmo de resumen no es sha1 ni sha256")
    stated_digest = "".join((reference.findtext(f"{{{DS}}}DigestValue") or "").split())
    certificate = _embedded_certificate(signature)
    if isinstance(certificate, str):
        return _fail(certificate, stated_digest)
    try:
        signature_bytes = base64.b64decode("".join((signature.findtext(f"{{{DS}}}SignatureValue") or "").split()),
                                           validate=True)
    except ValueError:
        return _fail("el valor de la firma (ds:SignatureValue) no es base64 válido", stated_digest, certificate)

    canonical_signed_info = canonical_subtree(signed_info)
    _remove_keeping_tail(signature)
    document = etree.tostring(tree, method="c14n", with_comments=False)
    actual_digest = base64.b64encode(hashlib.new(digest_algorithm.hashlib_name, document).digest()).decode()
    if actual_digest != stated_digest:
        return _fail("el documento fue modificado después de firmarlo (el resumen no coincide)", stated_digest,
                     certificate)
    public_key = certificate.public_key()
    if not isinstance(public_key, rsa.RSAPublicKey):
        return _fail("el certificado no tiene una clave RSA", stated_digest, certificate)
    try:
        public_key.verify(signature_bytes, canonical_signed_info, padding.PKCS1v15(), chosen.hash())
    except crypto_exceptions.InvalidSignature:
        return _fail("el valor de la firma no corresponde al certificado o a la información firmada",
                     stated_digest, certificate)
    return Verification(True, "firma válida", stated_digest, certificate)
