"""Reading a CDR (constancia de recepción): the ApplicationResponse SUNAT returns inside a zip.

`hash_cdr` is the CDR's own `ds:DigestValue` (SUNAT signs every CDR it issues, so this is the
value that identifies it, as the voucher's DigestValue identifies the voucher). Old or unsigned
CDRs (some of SUNAT's own samples have an empty ExtensionContent) have none: then it is the
base64 SHA-1 of the CDR's XML bytes, the same form and length as a DigestValue. docs/sunat.md.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import zipfile
from dataclasses import dataclass, field

from lxml import etree

from app.core.errors import ErrorCode, YupanaError
from app.core.invoicing import sunat_codes
from app.core.invoicing.namespaces import APPLICATION_RESPONSE, CAC, CBC, DS
from app.core.invoicing.statuses import CdrStatus

NS = {"ar": APPLICATION_RESPONSE, "cac": CAC, "cbc": CBC, "ds": DS}
MAX_CDR_BYTES = 5 * 1024 * 1024  # a CDR is a few KiB; anything this big is not one


def safe_parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False)


@dataclass(frozen=True)
class Cdr:
    codigo: str  # ResponseCode as SUNAT wrote it: "0", "2800", "4031"...
    descripcion: str
    notas: list[str] = field(default_factory=list)  # cbc:Note, observations "4xxx - text"
    referencia: str = ""  # cbc:ReferenceID, e.g. F001-1
    hash_cdr: str = ""
    xml: bytes = b""
    zip: bytes = b""
    member: str = ""  # the ApplicationResponse's name inside the zip, e.g. R-20100066603-01-F001-1.xml

    @property
    def estado(self) -> CdrStatus | None:
        """aceptado, observado, rechazado; None for an exception (0100-1999: fix and send again)."""
        return sunat_codes.cdr_status(self.codigo, bool(self.notas))

    @property
    def zip_base64(self) -> str:
        return base64.b64encode(self.zip).decode("ascii")


def _bad(message: str) -> YupanaError:
    return YupanaError(ErrorCode.UPSTREAM_BAD_RESPONSE, f"La constancia (CDR) recibida de SUNAT no es válida: {message}")


def cdr_member(archive: zipfile.ZipFile) -> zipfile.ZipInfo:
    """The ApplicationResponse inside a CDR zip: SUNAT adds a `dummy` entry beside it at times."""
    xml_members = [m for m in archive.infolist() if not m.is_dir() and m.filename.lower().endswith(".xml")]
    preferred = [m for m in xml_members if m.filename.rsplit("/", 1)[-1].upper().startswith("R-")]
    chosen = (preferred or xml_members)[:1]
    if not chosen:
        raise _bad("el zip no contiene ningún XML.")
    if chosen[0].file_size > MAX_CDR_BYTES:
        raise _bad("el XML es demasiado grande.")
    return chosen[0]


def read_zip(data: bytes) -> Cdr:
    """Parse a CDR zip as returned by sendBill or getStatusCdr."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            member = cdr_member(archive)
            xml = archive.read(member)
    except (zipfile.BadZipFile, EOFError):
        raise _bad("el zip está dañado.") from None
    return dataclasses.replace(read_xml(xml, zip_bytes=data), member=member.filename)


# A rebuilt zip's one entry: a fixed date and attributes, so the same CDR always gives the same bytes.
REBUILT_DATE_TIME = (1980, 1, 1, 0, 0, 0)
REBUILT_LEVEL = 6


def document_link(xml: str) -> str | None:
    """The link a CDR gives the document it answers (cbc:DocumentDescription): SUNAT's GRE CDRs carry the address a
    guía's QR encodes. None when there is none."""
    if not xml:
        return None
    root = etree.fromstring(xml.encode("utf-8"), safe_parser())
    found = root.findtext("cac:DocumentResponse/cac:DocumentReference/cbc:DocumentDescription", namespaces=NS)
    return found.strip() if found and found.strip() else None


def xml_text(data: bytes | None) -> str:
    """A CDR's ApplicationResponse as text, for reading (the voucher's detail): taken out of its zip as stored or
    received; "" when there is no CDR."""
    if not data:
        return ""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            xml = archive.read(cdr_member(archive))
    except (zipfile.BadZipFile, EOFError):
        raise _bad("el zip está dañado.") from None
    return xml.decode("utf-8", errors="replace")


def rebuild_zip(member: str, xml: bytes) -> bytes:
    """A CDR's zip made again from its ApplicationResponse, as stored (docs/vouchers.md, «Muchos comprobantes»): one
    deflated entry named `member`, dated REBUILT_DATE_TIME. SUNAT signs the XML, not the zip: the XML inside is byte
    for byte the one SUNAT sent (its signature verifies); the container's bytes are Yupana's, the same every time."""
    info = zipfile.ZipInfo(member, date_time=REBUILT_DATE_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 0
    info.external_attr = 0
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(info, xml, compresslevel=REBUILT_LEVEL)
    return buffer.getvalue()


def _text(node: etree._Element | None) -> str:
    return " ".join((node.text or "").split()) if node is not None else ""


def read_xml(xml: bytes, zip_bytes: bytes = b"") -> Cdr:
    """Parse the ApplicationResponse itself (any prefixes: SUNAT's CDRs use several shapes)."""
    try:
        root = etree.fromstring(xml, safe_parser())
    except etree.XMLSyntaxError as exc:
        raise _bad(f"el XML no se puede leer ({exc.msg}).") from None
    if etree.QName(root).localname != "ApplicationResponse":
        raise _bad(f"se esperaba ApplicationResponse y llegó {etree.QName(root).localname}.")
    response = root.find("cac:DocumentResponse/cac:Response", NS)
    if response is None or response.find("cbc:ResponseCode", NS) is None:
        raise _bad("no tiene DocumentResponse/Response/ResponseCode.")
    digest = _text(root.find(".//ds:Signature/ds:SignedInfo/ds:Reference/ds:DigestValue", NS))
    return Cdr(
        codigo=_text(response.find("cbc:ResponseCode", NS)),
        descripcion=_text(response.find("cbc:Description", NS)),
        notas=[_text(n) for n in root.findall("cbc:Note", NS) if _text(n)],
        referencia=_text(response.find("cbc:ReferenceID", NS)),
        hash_cdr=digest or base64.b64encode(hashlib.sha1(xml).digest()).decode("ascii"),
        xml=xml,
        zip=zip_bytes,
    )
