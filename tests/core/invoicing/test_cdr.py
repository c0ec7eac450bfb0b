"""The CDR reader against SUNAT's real CDRs (../shared/sunat/samples/cdr/)."""

from __future__ import annotations

import io
import zipfile

import pytest

from app.core.errors import YupanaError
from app.core.invoicing import cdr
from tests.helpers.shared import SAMPLES as SHARED_SAMPLES
from tests.helpers.shared import sample_files

pytestmark = pytest.mark.sunat_files
SAMPLES = SHARED_SAMPLES / "cdr"


def _all_samples() -> list:
    return sample_files("cdr")


def _read(path) -> cdr.Cdr:
    data = path.read_bytes()
    return cdr.read_zip(data) if path.suffix == ".zip" else cdr.read_xml(data)


def test_samples_folder_is_there():
    assert len(_all_samples()) >= 7


@pytest.mark.parametrize("path", _all_samples(), ids=lambda p: p.name)
def test_every_sample_parses(path):
    answer = _read(path)
    assert answer.codigo.isdigit()
    assert answer.descripcion
    assert answer.referencia
    assert len(answer.hash_cdr) == 28  # base64 of a SHA-1: the form of a DigestValue


def test_accepted_factura():
    answer = _read(SAMPLES / "R-20600995805-01-F001-1.xml")
    assert (answer.codigo, answer.estado, answer.referencia) == ("0", "aceptado", "F001-1")
    assert answer.notas == []


def test_accepted_with_observations_lists_the_notes():
    answer = _read(SAMPLES / "R-20600995805-01-F001-3.xml")
    assert answer.codigo == "0"
    assert answer.estado == "observado"
    assert answer.notas == ["4031 - Debe indicar el nombre comercial", "4001 - El numero de RUC del receptor no existe."]


def test_zip_with_dummy_entry_reads_the_application_response():
    answer = _read(SAMPLES / "cdr-rechazo.zip")
    assert (answer.codigo, answer.referencia) == ("0109", "F001-2")
    assert answer.estado is None  # 0100-1999: an exception, the number is not used up
    assert answer.zip == (SAMPLES / "cdr-rechazo.zip").read_bytes()


def test_other_prefix_shapes():
    assert _read(SAMPLES / "efact_cdr1.xml").descripcion == "La Factura F001-1 ha sido aceptada."
    assert _read(SAMPLES / "cdrBaja.zip").referencia == "RA-20171001-1"


def test_hash_cdr_is_the_digest_value_when_signed():
    xml = (SAMPLES / "R-20600995805-01-F001-1.xml").read_bytes().replace(
        b"<ext:ExtensionContent></ext:ExtensionContent>",
        b"<ext:ExtensionContent><ds:Signature><ds:SignedInfo><ds:Reference URI=''>"
        b"<ds:DigestValue>abcdefghijklmnopqrstuvwxyz0=</ds:DigestValue></ds:Reference></ds:SignedInfo>"
        b"</ds:Signature></ext:ExtensionContent>")
    assert cdr.read_xml(xml).hash_cdr == "abcdefghijklmnopqrstuvwxyz0="


@pytest.mark.parametrize("code,notes,estado", [("0", False, "aceptado"), ("0", True, "observado"),
                                               ("4031", False, "observado"), ("2800", False, "rechazado"),
                                               ("3999", False, "rechazado"), ("0109", False, None),
                                               ("1033", False, None)])
def test_estado_by_code(code, notes, estado):
    assert cdr.Cdr(codigo=code, descripcion="", notas=["4031 - x"] if notes else []).estado == estado


def test_entities_are_not_expanded():
    evil = (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
            b'<ApplicationResponse xmlns="urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2" '
            b'xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" '
            b'xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">'
            b'<cac:DocumentResponse><cac:Response><cbc:ReferenceID>F001-1</cbc:ReferenceID>'
            b'<cbc:ResponseCode>0</cbc:ResponseCode><cbc:Description>&e;</cbc:Description></cac:Response>'
            b'</cac:DocumentResponse></ApplicationResponse>')
    assert "root:" not in cdr.read_xml(evil).descripcion


@pytest.mark.parametrize("data", [b"not a zip", b""])
def test_broken_zip_is_a_bad_upstream_answer(data):
    with pytest.raises(YupanaError) as caught:
        cdr.read_zip(data)
    assert caught.value.http_status == 502


def test_zip_without_xml_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("dummy/", b"")
    with pytest.raises(YupanaError, match="ningún XML"):
        cdr.read_zip(buffer.getvalue())
